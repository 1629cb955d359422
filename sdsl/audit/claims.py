"""The checkable claims of the paper's figure captions, computed from the chapters' artifacts.

``data/paper_claims.csv`` lists each claim of the captions of Figures 1 to 5 with the quantity that
tests it (a share of the cases in which it holds; the claim implies 1). :func:`claim_values` says how
each is computed from the artifacts tree and the scorecard's own rows (a claim about Table 3 or 4
reads their statuses); :func:`latency_claims` is Figure 4's test on the paper's Table 6.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl import data as _data
from sdsl.audit.reproduction import AS_PRINTED
from sdsl.tolerance import EQUAL, WITHIN

__all__ = ["LATENCY_METRICS", "latency_claims", "claim_values"]

#: The latency metrics of Table 6.
LATENCY_METRICS = ("ttft", "ttot", "tpot")


def _read(root: Path, rel: str, columns: tuple[str, ...]) -> pd.DataFrame:
    df = pd.read_csv(root / rel)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{root / rel}: the scorecard needs column(s) {missing}; the file has {list(df.columns)}")
    return df


def latency_claims(table6: pd.DataFrame) -> pd.DataFrame:
    """For each draft family with at least two drafts and each latency metric (TTFT, TTOT, TPOT):
    whether latency rises at every step to a draft farther from ``N*`` (``rises``) and whether the
    draft nearest ``N*`` is the fastest (``nearest_fastest``)."""
    rows = []
    for fam, g in table6.groupby("draft_family", sort=True):
        if len(g) < 2:
            continue
        g = g.sort_values("distance")
        for m in LATENCY_METRICS:
            if f"{m}_s" not in g.columns:
                raise ValueError(f"latency table lacks column {m + '_s'!r}")
            v = g[f"{m}_s"].to_numpy(dtype=float)
            rows.append(
                {
                    "draft_family": fam,
                    "metric": m.upper(),
                    "drafts": len(g),
                    "rises": bool(np.all(np.diff(v) > 0)),
                    "nearest_fastest": bool(v[0] == v.min()),
                }
            )
    return pd.DataFrame(rows, columns=["draft_family", "metric", "drafts", "rises", "nearest_fastest"])


def claim_values(root: Path, card: pd.DataFrame) -> dict[str, Callable[[], tuple[float, str]]]:
    """Per claim of ``data/paper_claims.csv``: how its share is computed, and a detail for the reader."""
    printed = card[card["reading"] == AS_PRINTED]

    def reproduced(table: str, pattern: str) -> tuple[float, str]:
        sub = printed[(printed["table"] == table) & printed["item"].str.contains(pattern)]
        ok = sub["status"].isin([EQUAL, WITHIN])
        return float(ok.mean()), f"{int(ok.sum())} of {len(sub)} reproduced"

    def latency(column: str) -> tuple[float, str]:
        table = latency_claims(
            _read(root, "latency/table6.csv", ("draft_family", "distance", "ttft_s", "ttot_s", "tpot_s"))
        )
        fails = ", ".join(
            f"{f} {m}" for f, m in table.loc[~table[column], ["draft_family", "metric"]].itertuples(index=False)
        )
        return float(table[column].mean()), (f"it fails for {fails}" if fails else "")

    def families() -> tuple[float, str]:
        fams = set(_read(root, "latency/table6.csv", ("draft_family",))["draft_family"])
        named = ("OPT", "Qwen1.5", "Qwen2.5")
        return float(np.mean([f in fams for f in named])), "Table 6 has " + ", ".join(sorted(fams)) + " drafts"

    def stars() -> tuple[float, str]:
        from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5
        from sdsl.model.optimum import throughput_curve

        t5, tol = _data.load("paper_table5"), _data.printed_tolerance("paper_table5")
        ours = _read(root, "optimal_draft/table5.csv", ("target", "draft_family", "tokens_per_flop"))
        best = ours.set_index(["target", "draft_family"])["tokens_per_flop"]
        ok = []
        for (_, p), (_, t) in zip(t5.iterrows(), tol.iterrows()):
            at = throughput_curve(
                np.array([p["n_star"]]), p["m"], p["d_draft"], p["d_target"], BESIROGLU_2024, PAPER_EQ5
            )
            top = float(best.loc[(p["target"], p["draft_family"])])
            ok.append(top - float(np.asarray(at["tokens_per_flop"])[0]) <= t["tokens_per_flop"])
        return float(np.mean(ok)), f"{sum(ok)} of {len(ok)} stars at their curve's maximum"

    def linear(threshold: float = 0.95) -> tuple[float, str]:
        sol = _read(root, "scaling/grid_solution.csv", ("m", "d_draft", "d_target", "n_star"))
        r2, worst = [], 0.0
        for _, g in sol.groupby(["d_draft", "d_target"]):
            fit = np.polyfit(g["m"], g["n_star"], 1)
            resid = g["n_star"] - np.polyval(fit, g["m"])
            r2.append(1.0 - float(np.sum(resid**2) / np.sum((g["n_star"] - g["n_star"].mean()) ** 2)))
            worst = max(worst, float(np.max(np.abs(resid) / g["n_star"])))
        eff = _read(root, "scaling/data_effects.csv", ("factor", "elasticity_median")).set_index("factor")
        return (
            float(np.mean(np.asarray(r2) >= threshold)),
            f"R^2 {min(r2):.3f} to {max(r2):.3f}; the line bends (d ln N*/d ln M = "
            f"{eff.loc['M', 'elasticity_median']:.2f}, largest residual {100 * worst:.0f} % of N*)",
        )

    def second_order() -> tuple[float, str]:
        eff = _read(root, "scaling/data_effects.csv", ("factor", "change_min", "change_max")).set_index("factor")
        m_min = float(eff.loc["M", "change_min"])
        big = {f: float(max(abs(eff.loc[f, "change_min"]), abs(eff.loc[f, "change_max"]))) for f in ("D", "D'")}
        return (
            float(np.mean([v < m_min for v in big.values()])),
            f"N* changes by at most {100 * big['D']:.1f} % over D and {100 * big[chr(68) + chr(39)]:.2f} % over D', "
            f"by at least {100 * m_min:.0f} % over M",
        )

    return {
        "latency_rises_with_distance": lambda: latency("rises"),
        "nearest_draft_fastest": lambda: latency("nearest_fastest"),
        "fig1_least_squares_plane": lambda: reproduced("Table 3", r"^[ABC] estimate$"),
        "fig2_stars_at_maximum": stars,
        "fig3_curves_are_table4": lambda: reproduced("Table 4", r" p[12]$"),
        "fig4_families": families,
        "fig5_linear_in_m": linear,
        "fig5_data_second_order": second_order,
    }
