"""Plan a draft for your own target: N*, gamma*, the gain, and how sure we are.

Given a target (a preset of ``data/presets.csv``, or its size ``M`` and pre-training tokens ``D'``),
the pre-training tokens ``D`` of the draft family, the loss-law constants and a source for the
acceptance plane (the paper's Eq. 5), this package answers "how big should my draft be, and what
will I gain?". This module holds the plan of one target:

* :class:`Target` and :func:`resolve_target` -- a preset (its model card's size and tokens,
  :func:`get_preset`) or given numbers, with :func:`resolve_draft_tokens`, :func:`resolve_n_range`
  and :func:`resolve_candidates` for the rest of the plan's inputs;
* :class:`AlphaModel` and :func:`resolve_alpha_source` -- the acceptance plane with the covariance
  the bootstrap draws from and the perplexities it was fitted on;
* :func:`plan` -- ``N*``, ``gamma*``, ``alpha(N*)``, ``T(N*)`` and the speedup over plain decoding
  (method notes, section 6; :func:`sdsl.model.optimum.optimal_draft_size`), one row per ``D``
  in :func:`plan_table`;
* :func:`candidate_shares` -- the throughput of given drafts as a share of the optimum;
* :func:`bootstrap_n_star` -- a seeded parametric bootstrap of ``N*`` from the covariance of the
  acceptance coefficients (Table 3's standard errors, or a refit's covariance), and
  :func:`n_star_interval` -- its percentile interval.

The package's other modules build on it: :mod:`sdsl.plan.interval` (the interval of ``N*`` over
acceptance laws, loss-law constants and the plane's coefficients), :mod:`sdsl.plan.deployment`
(what ``sdsl plan`` adds to make the optimum deployable: integer draft length, wall-clock speedup,
step-time model, engine settings) and :mod:`sdsl.plan.lookup` (the table of every preset). The
throughput figure is :func:`sdsl.chapters.plan_draft.figure_throughput`.

Every input is checked up front by :func:`check_inputs`, which raises one ``ValueError`` per
problem with a one-line message; the command line (:mod:`sdsl.cli`) prints the same message.

Alpha sources (:func:`resolve_alpha_source`):

* ``"paper"``: Table 3's coefficients. The paper prints standard errors only, not the covariance
  of ``(A, B, C)``; the bootstrap therefore draws them independently (a diagonal covariance).
  :func:`covariance_sensitivity` measures what that omission does on our refit, where the full
  covariance is known.
* ``"refit"``: OLS of ``alpha`` on the draft and target perplexities of ``data/acceptance.csv``
  (Tables 1 and 2), with its full covariance.
* ``"published"``: the acceptance law fitted to published deployments of draft-model speculative
  decoding (:func:`sdsl.plan.published.published_law`): Eq. 5 with the paper's ``A`` and ``B`` and
  an intercept that depends on the sampling temperature, ``C = c0 + cT T``, chosen over other forms
  and over a constant by its error on held-out targets and sources. It needs the ``temperature``
  (the other sources know none and refuse one).
* a path to a CSV of the user's own measurements (columns ``draft_ppl``, ``target_ppl``, ``alpha``;
  other columns are ignored), refitted the same way.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sdsl import validation as V
from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients, LossConstants, resolve_constants
from sdsl.model.optimum import DraftOptimum, log_grid, optimal_draft_size, plane_alpha, solve, throughput_curve
from sdsl.validation import show, shown

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

__all__ = [
    "ALPHA_SOURCES",
    "DEFAULT_N_LOW",
    "MEASUREMENT_COLUMNS",
    "Target",
    "AlphaModel",
    "PlanInputs",
    "presets",
    "preset_names",
    "preset_records",
    "get_preset",
    "positive_number",
    "resolve_target",
    "resolve_draft_tokens",
    "resolve_n_range",
    "resolve_candidates",
    "read_measurements",
    "fit_acceptance_plane",
    "resolve_alpha_source",
    "check_inputs",
    "plan",
    "candidate_shares",
    "bootstrap_n_star",
    "n_star_interval",
    "plan_table",
    "covariance_sensitivity",
]

# ---------------------------------------------------------------------------------------------
# the target, its presets, the draft family's tokens, the search range and the candidates

#: Smallest draft size searched by default (parameters).
DEFAULT_N_LOW = 1e7


@dataclass(frozen=True)
class Target:
    """The target to plan for: its size ``M``, its tokens ``D'`` and (from a preset) the default
    ``D`` of a draft of its family."""

    name: str
    params: float
    tokens: float
    draft_tokens: float | None = None
    draft_family: str | None = None
    hf_id: str | None = None
    """Repository id of the model on the Hugging Face hub (for engine settings), if known."""
    shape: Mapping[str, float] | None = None
    """Architecture for the hardware model: ``layers``, ``hidden``, ``heads``, ``kv_heads``,
    ``head_dim``, ``vocab``, ``tied_embeddings`` (from the preset's configuration), or None."""
    tokenizer: str | None = None
    """Tokenizer group of the preset (drafts of the same group can be paired with it)."""
    dropped_hf_id: str | None = None
    """The preset's repository id, left out of the engine settings because a given size is not the
    preset model's."""


def presets() -> pd.DataFrame:
    """The validated table of presets (``data/presets.csv``)."""
    from sdsl import data

    return data.load("presets")


def preset_records() -> tuple[dict[str, Any], ...]:
    """The presets as validated rows (:func:`sdsl.data.records`, no pandas)."""
    from sdsl.data import records

    return records("presets")


def preset_names() -> list[str]:
    """Preset names, as accepted by ``--preset`` and the notebook's ``preset`` parameter."""
    return [r["preset"] for r in preset_records()]


_SHAPE_COLUMNS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings")


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _target_of_row(row: Mapping[str, Any]) -> Target:
    """A preset row as a :class:`Target`; a mixture-of-experts row raises ``ValueError``."""
    if row.get("architecture") == "moe":
        active = row.get("active_params")
        act = f", {active / 1e9:.3g}B active per token" if active is not None and _known(active) else ""
        raise ValueError(
            f"{shown('preset')} {row['preset']!r} ({row['model']}) is a mixture-of-experts model "
            f"({row['params'] / 1e9:.4g}B parameters in all{act}): the scaling law (Eq. 5 on the loss "
            f"law L(N, D)) was fitted on dense targets and says nothing about a sparse one; choose a "
            f"dense target ('sdsl presets' marks them)"
        )
    shape = {c: float(row[c]) for c in _SHAPE_COLUMNS if _known(row.get(c))}
    draft_tokens = row["draft_tokens"]
    return Target(
        name=str(row["model"]),
        params=float(row["params"]),
        tokens=float(row["tokens"]),
        draft_tokens=float(draft_tokens) if _known(draft_tokens) else None,
        draft_family=str(row["draft_family"]),
        hf_id=row.get("hf_id") or None,
        shape=shape if len(shape) == len(_SHAPE_COLUMNS) else None,
        tokenizer=row.get("tokenizer") or None,
    )


def get_preset(name: str) -> Target:
    """The :class:`Target` of a preset, by preset name or model name (case-insensitive).

    An unknown name raises ``ValueError`` suggesting the closest names (difflib)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{shown('preset')} must be a preset name such as 'llama-3-70b', got {V.show(name)}")
    rows = preset_records()
    seen: dict[str, str] = {}
    for r in rows:  # names are matched without case: two that differ only in case would be one
        other = seen.setdefault(r["preset"].lower(), r["preset"])
        if other != r["preset"]:
            raise ValueError(
                f"data/presets.csv names presets {other!r} and {r['preset']!r}, which differ only in case: "
                f"{shown('preset')} is matched without case, so give each preset a name of its own"
            )
    key = name.strip().lower()
    hit = [r for r in rows if key in (r["preset"].lower(), r["model"].lower())]
    if not hit:
        names = [r["preset"] for r in rows]
        close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(f"unknown {shown('preset')} {name!r}; {hint}known presets: {', '.join(names)}")
    if len({r["preset"] for r in hit}) > 1:
        raise ValueError(
            f"{shown('preset')} {name!r} matches presets {', '.join(repr(r['preset']) for r in hit)} (a preset "
            f"name and a model name are matched without case): give the preset's own name"
        )
    row = hit[0]
    if row.get("role") == "draft":
        raise ValueError(
            f"{shown('preset')} {row['preset']!r} ({row['model']}) is a draft-only preset (role 'draft' in "
            f"data/presets.csv: a candidate draft, not a target to plan for); choose a target preset ('sdsl "
            f"presets' marks the drafts), or give {shown('target_params')} and {shown('target_tokens')}"
        )
    return _target_of_row(row)


def positive_number(value: Any, name: str, unit: str, bounds: tuple[float, float] | None = None) -> float:
    """``value`` as a finite float > 0 (and inside ``bounds``, if given); otherwise a ``ValueError``
    naming ``name`` (as the user typed it: :func:`sdsl.validation.shown`) and its unit.

    Accepts numbers and numeric strings (``"70.6e9"``), as given on the command line."""
    if bounds is None:
        return V.number(value, name, low=0, low_open=True, what=unit)
    if isinstance(value, str) and V.float_problem(value):  # 1e400, 1e-320: the range is what to give
        V.number(value, name, low=bounds[0], high=bounds[1], what=unit)
    x = V.number(value, name, low=0, low_open=True, what=unit)
    if not bounds[0] <= x <= bounds[1]:
        raise ValueError(
            f"{shown(name)} must lie in [{bounds[0]:g}, {bounds[1]:g}] ({unit}; outside it the loss law is "
            f"extrapolated beyond any trained model and N* means nothing), got {V.show(value)}"
        )
    return x


def resolve_target(preset: str | None = None, target_params: Any = None, target_tokens: Any = None) -> Target:
    """The target from a preset and/or explicit ``target_params`` (M) and ``target_tokens`` (D').

    Explicit values override the preset's. Without a preset both are required. ``M`` must lie in
    :data:`sdsl.validation.TARGET_PARAMS` and ``D'`` in :data:`sdsl.validation.TOKENS`."""
    base = get_preset(preset) if preset is not None else None
    if base is None and (target_params is None or target_tokens is None):
        missing = [
            shown(n) for n, v in (("target_params", target_params), ("target_tokens", target_tokens)) if v is None
        ]
        raise ValueError(
            f"no target: give a preset ({shown('preset')}) or both {shown('target_params')} (M, parameters) and "
            f"{shown('target_tokens')} (D', tokens); missing {', '.join(missing)}"
        )
    m = (
        positive_number(target_params, "target_params", "parameters M of the target", V.TARGET_PARAMS)
        if target_params is not None or base is None  # no preset: both were given (checked above)
        else base.params
    )
    d_t = (
        positive_number(target_tokens, "target_tokens", "pre-training tokens D' of the target", V.TOKENS)
        if target_tokens is not None or base is None
        else base.tokens
    )
    if base is not None and not math.isfinite(d_t):  # given tokens are finite: only a preset's can be NaN
        raise ValueError(
            f"the pre-training tokens D' of {base.name} are not stated by its model card (data/presets.yml): "
            f"give {shown('target_tokens')} yourself"
        )
    if base is None:
        return Target(name=f"M = {m:.4g}", params=m, tokens=d_t)
    same = target_params is None and target_tokens is None
    resized = m != base.params  # another size is another model: the preset's is not what is planned
    return Target(
        name=base.name if same else f"{base.name} (modified)",
        params=m,
        tokens=d_t,
        draft_tokens=base.draft_tokens,
        draft_family=base.draft_family,
        hf_id=None if resized else base.hf_id,
        dropped_hf_id=base.hf_id if resized else None,
        shape=None if resized else base.shape,
        tokenizer=base.tokenizer,
    )


def resolve_draft_tokens(draft_tokens: Any, target: Target) -> tuple[float, ...]:
    """The draft family's pre-training tokens ``D``: one number or several; ``None`` takes the
    preset's default (the family's own tokens)."""
    if draft_tokens is None:
        if target.draft_tokens is None:
            why = (
                "the draft family's tokens are not stated by its model cards (data/presets.yml)"
                if target.draft_family
                else "the target is not a preset"
            )
            raise ValueError(f"{shown('draft_tokens')} (pre-training tokens D of the draft family) is required: {why}")
        return (target.draft_tokens,)
    values = list(draft_tokens) if isinstance(draft_tokens, (list, tuple, np.ndarray)) else [draft_tokens]
    if not values:
        raise ValueError(
            f"{shown('draft_tokens')} (pre-training tokens D of the draft family) is empty: give at least one value"
        )
    out = tuple(
        positive_number(v, "draft_tokens", "pre-training tokens D of the draft family", V.TOKENS) for v in values
    )
    again = next((d for i, d in enumerate(out) if d in out[:i]), None)
    if again is not None:  # the same plan twice, not two plans
        raise ValueError(f"{shown('draft_tokens')} gives D = {again:g} twice: each value once")
    return out


def resolve_n_range(n_range: Any, m: float) -> tuple[float, float]:
    """The searched range of draft sizes ``(low, high)`` in parameters: ``low < high <= M``, both
    in :data:`sdsl.validation.MODEL_PARAMS`.

    ``None``: ``(1e7, M/2)`` (``(M/4, M/2)`` for a target under 4e7)."""
    if n_range is None:
        return (min(DEFAULT_N_LOW, m / 4), m / 2)
    lo, hi = V.interval(
        n_range, "n_range", low=V.MODEL_PARAMS[0], high=V.MODEL_PARAMS[1], what="draft sizes searched, in parameters"
    )
    if hi > m:
        raise ValueError(
            f"{shown('n_range')} high = {hi:.6g} exceeds the target size M = {m:.6g}: a draft must be "
            f"smaller than its target"
        )
    return (lo, hi)


def resolve_candidates(candidates: Any, m: float | None = None) -> dict[str, float]:
    """Candidate drafts as ``{label: parameters}``: a mapping, a list of sizes (labelled by size)
    or ``None``; each size in :data:`sdsl.validation.MODEL_PARAMS` and below ``m`` if given."""
    if candidates is None:
        return {}
    if isinstance(candidates, Mapping):
        items = list(candidates.items())
    else:
        values = [candidates] if isinstance(candidates, (int, float, str)) else list(candidates)
        items = []
        for v in values:
            x = positive_number(v, "candidates", "draft parameters", V.MODEL_PARAMS)
            if m is not None and x >= m:
                raise ValueError(f"{shown('candidates')} {x:.6g} is not smaller than the target size M = {m:.6g}")
            items.append((f"{x / 1e9:.3g}B" if x >= 1e9 else f"{x / 1e6:.3g}M", x))
    out: dict[str, float] = {}
    for k, v in items:
        x = positive_number(v, f"candidates {k!r}", "draft parameters", V.MODEL_PARAMS)
        if m is not None and x >= m:
            raise ValueError(f"{shown('candidates')} {k!r} = {x:.6g} is not smaller than the target size M = {m:.6g}")
        if str(k) in out:
            raise ValueError(f"{shown('candidates')} gives {str(k)!r} twice: each candidate once")
        out[str(k)] = x
    return out


# ---------------------------------------------------------------------------------------------
# the acceptance plane: the paper's Table 3, our refit on Tables 1 and 2, or the user's measurements

#: Named sources of the acceptance plane; any other string is read as a measurements file.
ALPHA_SOURCES = ("paper", "refit", "published")
#: Columns a measurements file must have (the acceptance plane's variables).
MEASUREMENT_COLUMNS = ("draft_ppl", "target_ppl", "alpha")


@dataclass(frozen=True)
class AlphaModel:
    """Coefficients of Eq. 5 with the covariance used by the bootstrap."""

    coefficients: AcceptanceCoefficients
    cov: np.ndarray
    """3 x 3 covariance of (A, B, C)."""
    label: str
    n_obs: int | None = None
    r2: float | None = None
    note: str = ""
    ppl_range: tuple[float, float, float, float] | None = None
    """Perplexities the plane was fitted on: draft (min, max), target (min, max); None if unknown."""
    key: str = "measurements"
    """The source: ``"paper"``, ``"refit"``, ``"published"`` or ``"measurements"`` (a user's file)."""
    temperature: float | None = None
    """The sampling temperature the plane is for (the ``"published"`` source only)."""


def read_measurements(path: str | os.PathLike) -> pd.DataFrame:
    """A user's acceptance measurements: a CSV with columns ``draft_ppl``, ``target_ppl`` and
    ``alpha`` (other columns, e.g. those of ``data/acceptance.csv``, are ignored), validated with
    the constraints of the ``acceptance`` schema (perplexities >= 1, alpha in (0, 1)).

    Every problem raises a ``ValueError`` with one line naming the file (and line and column)."""
    import pandas as pd

    from sdsl import data

    p = Path(path).expanduser()
    if not p.is_file():
        why = "is a folder, not a file" if p.is_dir() else "does not exist"
        raise ValueError(
            f"measurements file {str(path)!r} {why} ({shown('alpha_source')} must be 'paper', "
            f"'refit' or the path of a CSV file)"
        )
    # the package's one CSV reader: encoding, NUL bytes, header, quoting, blank lines, each with its line
    table = data.read_csv_text(p, source=f"measurements file {p}")
    data.check_sha256(p)  # a provenance file beside it records the file's sha256
    raw = pd.DataFrame(table.rows, columns=table.header, dtype=object)
    missing = [c for c in MEASUREMENT_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"measurements file {p}: missing column(s) {missing}; it needs {list(MEASUREMENT_COLUMNS)}")
    acc = data.schema("acceptance")
    columns: list[dict[str, Any]] = []
    for c in MEASUREMENT_COLUMNS:
        col = acc.column(c)
        entry = {"name": c, "type": col.type, "unit": col.unit, "description": col.description}
        for k in ("min", "max", "min_exclusive", "max_exclusive"):
            if getattr(col, k) is not None:
                entry[k] = getattr(col, k)
        columns.append(entry)
    sub = {"name": "measurements", "columns": columns, "key": []}
    df = data.validate(raw[list(MEASUREMENT_COLUMNS)], sub, source=f"measurements file {p}", line_offset=table.lines)
    if len(df) < 4:
        raise ValueError(
            f"measurements file {p}: {len(df)} row(s); the plane alpha = A x + B y + C needs at least 4 "
            f"measurements (3 coefficients and an error estimate)"
        )
    for c, what in (("draft_ppl", "drafts"), ("target_ppl", "targets")):
        if df[c].nunique() < 2:
            raise ValueError(
                f"measurements file {p}: every row has the same {c}; the plane needs at least two "
                f"{what} with different perplexities"
            )
    design = np.column_stack([df["draft_ppl"].to_numpy(float), df["target_ppl"].to_numpy(float), np.ones(len(df))])
    if np.linalg.matrix_rank(design) < 3:
        raise ValueError(
            f"measurements file {p} ({shown('alpha_source')}): the (draft_ppl, target_ppl) pairs lie on one line, so "
            f"the plane alpha = A x + B y + C has no unique fit; give pairs whose perplexities do not move together"
        )
    return df


def fit_acceptance_plane(df: pd.DataFrame, label: str = "refit") -> AlphaModel:
    """OLS fit of the paper's Eq. 5, ``alpha = A x + B y + C`` (``x = draft_ppl``,
    ``y = target_ppl``), with the coefficients' covariance: :func:`sdsl.model.alpha_fits.fit_plane`
    (statsmodels, non-robust, as the paper's Table 3 standard errors), wrapped as an
    :class:`AlphaModel` for the bootstrap."""
    from sdsl.model.alpha_fits import fit_plane

    fit = fit_plane(df)
    cov = fit.covariance.loc[["A", "B", "C"], ["A", "B", "C"]].to_numpy(dtype=float)
    c = fit.coefficients
    return AlphaModel(
        coefficients=AcceptanceCoefficients(A=c.A, B=c.B, C=c.C, source=label),
        cov=cov,
        label=label,
        n_obs=int(fit.n),
        r2=float(fit.r2),
        note=f"OLS on {int(fit.n)} measurements, full covariance of (A, B, C)",
        ppl_range=(
            float(df["draft_ppl"].min()),
            float(df["draft_ppl"].max()),
            float(df["target_ppl"].min()),
            float(df["target_ppl"].max()),
        ),
    )


def _paper_alpha_model() -> AlphaModel:
    from sdsl.data import records

    t3 = {r["parameter"]: r for r in records("paper_table3")}
    se = np.array([t3[k]["std_error"] for k in ("A", "B", "C")], dtype=float)
    acc = records("acceptance")  # the pairs of the paper's fit that its Tables 1 and 2 print
    x = [r["draft_ppl"] for r in acc]
    y = [r["target_ppl"] for r in acc]
    return AlphaModel(
        coefficients=PAPER_EQ5,
        cov=np.diag(se**2),
        label="paper (Table 3)",
        note=(
            "Table 3 prints standard errors but not the covariance of (A, B, C); the bootstrap "
            "draws them independently (diagonal covariance)"
        ),
        ppl_range=(min(x), max(x), min(y), max(y)),
        key="paper",
    )


def _published_alpha_model(temperature: float) -> AlphaModel:
    """The plane of the law fitted to published deployments at ``temperature``
    (:func:`sdsl.plan.published.published_law`): ``A`` and ``B`` with their variances (Table 3's
    standard errors where they are the paper's), ``C = c0 + cT T`` with the variance of its OLS fit."""
    from sdsl.plan.published import SELECTION_SCHEME, published_law

    law = published_law()
    if law.form == "constant":  # no form beat the constant: alpha does not depend on the draft
        raise ValueError(
            f"{shown('alpha_source')} 'published' is a constant alpha of {law.coefficients['one']:.4f} (the median of "
            f"{law.n_settings} published settings: no extended law beat it on held-out targets and sources), which "
            f"does not depend on the draft's size, so there is no N*; give {shown('alpha_source')} paper or refit"
        )
    a, b, c = law.plane(temperature)
    var_ab = (0.0, 0.0)
    if law.form.startswith("paper_slopes"):
        from sdsl.data import records

        t3 = {r["parameter"]: r for r in records("paper_table3")}
        var_ab = (float(t3["A"]["std_error"]) ** 2, float(t3["B"]["std_error"]) ** 2)
    own, base = law.held_out(SELECTION_SCHEME)
    return AlphaModel(
        coefficients=AcceptanceCoefficients(A=a, B=b, C=c, source=f"published deployments, T = {temperature:g}"),
        cov=np.diag([var_ab[0], var_ab[1], law.var_c(temperature)]),
        label=f"published deployments ({law.label}; T = {temperature:g})",
        n_obs=law.n_settings,
        r2=law.r2,
        note=(
            f"fitted on {law.n_settings} published settings ({law.n_targets} targets, {law.n_sources} sources); "
            f"{SELECTION_SCHEME}: mean absolute error {own['mae']:.3f} against {base['mae']:.3f} for a constant"
        ),
        ppl_range=law.ppl_range,
        key="published",
        temperature=temperature,
    )


def resolve_alpha_source(source: Any, temperature: Any = None) -> AlphaModel:
    """``"paper"`` (Table 3), ``"refit"`` (OLS on ``data/acceptance.csv``), ``"published"`` (the law
    fitted to published deployments, at the sampling ``temperature`` T >= 0, which it requires) or the
    path of a measurements CSV (see :func:`read_measurements`), refitted on the fly. A temperature
    with any other source is refused: they know none."""
    if isinstance(source, AlphaModel):
        return source
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    allowed = "'paper', 'refit', 'published' or the path of a measurements CSV"
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"{shown('alpha_source')} must be {allowed}, got {show(source)}")
    key = source.strip()
    if key.lower() == "published":
        if temperature is None:
            raise ValueError(
                f"{shown('alpha_source')} 'published' needs {shown('temperature')} T, the sampling temperature (a "
                f"number >= 0; 0 for greedy decoding): its acceptance law depends on it"
            )
        t = V.number(temperature, "temperature", low=0, what="the sampling temperature; 0 is greedy decoding")
        return _published_alpha_model(t)
    if temperature is not None:
        which = {"paper": "the paper's", "refit": "the refitted"}.get(key.lower(), "a measured")
        raise ValueError(
            f"{shown('temperature')} is used only with {shown('alpha_source')} 'published': {which} acceptance "
            f"plane knows no temperature; drop {shown('temperature')} or give {shown('alpha_source')} published"
        )
    if key.lower() == "paper":
        return _paper_alpha_model()
    if key.lower() == "refit":
        from sdsl import data

        model = fit_acceptance_plane(data.load("acceptance"), label="refit (Tables 1 and 2)")
        return replace(model, key="refit")
    if not (key.lower().endswith(".csv") or "/" in key or os.sep in key or Path(key).exists()):
        raise ValueError(f"{shown('alpha_source')} must be {allowed}, got {show(source)}")
    df = read_measurements(key)
    return fit_acceptance_plane(df, label=f"measurements {Path(key).name}")


# ---------------------------------------------------------------------------------------------
# the plan: inputs checked at once, N* and the gain, candidates, the bootstrap of N*


@dataclass(frozen=True)
class PlanInputs:
    """Every input of a plan, validated."""

    target: Target
    draft_tokens: tuple[float, ...]
    constants: LossConstants
    alpha: AlphaModel
    integer: bool
    n_range: tuple[float, float]
    candidates: dict[str, float] = field(default_factory=dict)
    n_boot: int = 0
    seed: int | None = None


def _check_int(value: Any, name: str, low: int) -> int:
    return V.integer(value, name, low=low)


def _resolve_constants(constants: Any) -> LossConstants:
    if isinstance(constants, str) and "," in constants:
        constants = [v.strip() for v in constants.split(",")]
    try:
        return resolve_constants(constants)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{shown('constants')}: {V.one_line(exc)}") from None


def _check_range(
    m: float,
    d: float,
    d_target: float,
    c: LossConstants,
    alpha: AlphaModel,
    integer: bool,
    lo: float,
    hi: float,
    cands: dict[str, float],
) -> DraftOptimum:
    """The plan's numbers checked where they are used, with the user's names: the loss law finite
    (no overflow of exp(L)), the plane inside (0, 1) at both ends of the range (alpha is monotone in
    N) and at every candidate, and an optimum strictly inside the range."""
    where = f"{shown('n_range')} [{lo:.4g}, {hi:.4g}]"
    for n, dd, what in (
        (lo, d, "the draft at the low end of"),
        (hi, d, "the draft at the high end of"),
        (m, d_target, "the target, for"),
    ):
        loss = c.E + c.A * n**-c.a + c.B * dd**-c.b
        if not loss < 700:
            raise ValueError(
                f"the loss-law constants ({shown('constants')}: E={c.E:g}, A={c.A:g}, B={c.B:g}, a={c.a:g}, "
                f"b={c.b:g}) give a loss of {loss:.4g} nats for {what} {where}: its perplexity "
                f"exp(L) overflows; E is in nats (1.8172 in besiroglu2024)"
            )
    sizes = [(f"draft size n = {n:.6g} inside {where}", n) for n in (lo, hi)]
    sizes += [(f"{shown('candidates')} {k!r} = {v:.6g}", v) for k, v in cands.items()]
    y = math.exp(c.E + c.A * m**-c.a + c.B * d_target**-c.b)
    cf = alpha.coefficients
    for label, n in sizes:
        a = cf.A * math.exp(c.E + c.A * n**-c.a + c.B * d**-c.b) + cf.B * y + cf.C
        if not 0 < a < 1:
            fix = f"narrow {shown('n_range')}" if label.startswith("draft size") else "drop it"
            raise ValueError(
                f"the acceptance rate leaves (0, 1) at {label}: alpha = {a:.6g} (Eq. 5 with A={cf.A}, "
                f"B={cf.B}, C={cf.C}, {alpha.label}); {fix}"
            )
    o = _optimum(m, d, d_target, c, cf, integer, (lo, hi))
    if not o.interior:
        raise ValueError(
            f"{o.status}: N* lies outside the searched draft sizes {where}; widen {shown('n_range')} "
            f"(within [{V.MODEL_PARAMS[0]:g}, M = {m:.4g}])"
        )
    return o


def check_inputs(
    preset: str | None = None,
    target_params: Any = None,
    target_tokens: Any = None,
    draft_tokens: Any = None,
    constants: Any = "besiroglu2024",
    alpha_source: Any = "paper",
    integer_gamma: Any = False,
    n_range: Any = None,
    candidates: Any = None,
    n_boot: Any = 0,
    seed: Any = None,
    temperature: Any = None,
) -> PlanInputs:
    """Validate every input of a plan at once, before anything is computed or drawn.

    Parameters
    ----------
    preset : preset name (``data/presets.csv``), or None with ``target_params`` and ``target_tokens``.
    target_params, target_tokens : target size ``M`` (parameters) and pre-training tokens ``D'``.
    draft_tokens : pre-training tokens ``D`` of the draft family; one number or several.
    constants : loss-law constants: ``"besiroglu2024"``, ``"hoffmann2022"`` or five numbers
        ``(E, A, B, a, b)`` (also as a comma-separated string).
    alpha_source : ``"paper"``, ``"refit"``, ``"published"`` or a measurements CSV path.
    integer_gamma : integer draft length instead of its continuous relaxation.
    n_range : ``(low, high)`` draft sizes searched, in parameters; default ``(1e7, M/2)``.
    candidates : drafts to compare with the optimum, ``{label: parameters}`` or a list of sizes.
    n_boot : bootstrap draws of ``N*`` (0: no bootstrap).
    seed : seed of the bootstrap's generator (required when ``n_boot > 0``).
    temperature : sampling temperature T >= 0, required by ``alpha_source="published"`` and refused
        by the other sources.

    Raises
    ------
    ValueError with a one-line message for the first problem found, naming the argument as the user
    typed it (:func:`sdsl.validation.argument_names`: the command line's flags): a value of the wrong
    type or outside its domain (:data:`sdsl.validation.TARGET_PARAMS`, ``TOKENS``, ``MODEL_PARAMS``,
    bootstrap draws 0 or in [100, 100000]), a loss that overflows, the acceptance plane leaving
    (0, 1) in ``n_range`` or at a candidate, and an optimum on an end of ``n_range`` (``N*`` outside
    it: widen the range).
    """
    target = resolve_target(preset, target_params, target_tokens)
    d_draft = resolve_draft_tokens(draft_tokens, target)
    c = _resolve_constants(constants)
    integer = V.boolean(integer_gamma, "integer_gamma", "integer draft lengths instead of continuous")
    lo, hi = resolve_n_range(n_range, target.params)
    cands = resolve_candidates(candidates, target.params)
    n_boot = V.draws(n_boot, "n_boot", what="parametric bootstrap draws of N*")
    if seed is not None:
        seed = V.seed(seed, "seed")
    if n_boot > 0 and seed is None:
        raise ValueError(
            f"{shown('seed')} is required for the bootstrap ({shown('n_boot')} > 0): give an integer "
            f"in [0, {V.MAX_SEED}]"
        )
    alpha = resolve_alpha_source(alpha_source, temperature)
    for d in d_draft:
        _check_range(target.params, d, target.tokens, c, alpha, integer, lo, hi, cands)
    return PlanInputs(
        target=target,
        draft_tokens=d_draft,
        constants=c,
        alpha=alpha,
        integer=integer,
        n_range=(lo, hi),
        candidates=cands,
        n_boot=n_boot,
        seed=seed,
    )


def _check_plan_inputs(inputs: Any) -> PlanInputs:
    """``inputs`` if it is a :class:`PlanInputs` (what :func:`check_inputs` returns)."""
    if not isinstance(inputs, PlanInputs):
        raise ValueError(
            f"{shown('inputs')} must be validated plan inputs (sdsl.plan.check_inputs(...)), got {V.show(inputs)}"
        )
    return inputs


def plan(inputs: PlanInputs, d_draft: float | None = None) -> DraftOptimum:
    """The throughput-optimal draft for one ``D`` (default: the first of ``inputs.draft_tokens``):
    :func:`sdsl.model.optimum.optimal_draft_size` over ``inputs.n_range``."""
    _check_plan_inputs(inputs)
    d = (
        inputs.draft_tokens[0]
        if d_draft is None
        else V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    )
    return _optimum(
        inputs.target.params,
        float(d),
        inputs.target.tokens,
        inputs.constants,
        inputs.alpha.coefficients,
        inputs.integer,
        tuple(inputs.n_range),
    )


@functools.lru_cache(maxsize=64)
def _optimum(m, d, d_target, constants, coefficients, integer, n_range) -> DraftOptimum:
    """:func:`sdsl.model.throughput.optimal_draft_size`, computed once per configuration: :func:`check_inputs`
    runs it to validate and :func:`plan` returns the same result (a pure function of hashable,
    frozen inputs)."""
    return optimal_draft_size(m, d, d_target, constants, coefficients, integer, n_range)


def candidate_shares(inputs: PlanInputs, d_draft: float, optimum: DraftOptimum) -> pd.DataFrame:
    """Each candidate draft's ``alpha``, ``gamma*``, ``T`` and share of the optimum ``T(N)/T(N*)``."""
    import pandas as pd

    _check_plan_inputs(inputs)
    d_draft = V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    if not isinstance(optimum, DraftOptimum):
        raise ValueError(
            f"{shown('optimum')} must be the plan's optimum (sdsl.plan.plan(inputs)), got {V.show(optimum)}"
        )
    cols = ["candidate", "params", "d_draft", "alpha", "gamma", "tokens_per_flop", "speedup", "share_of_optimum"]
    if not inputs.candidates:
        return pd.DataFrame(columns=cols)
    n = np.array(list(inputs.candidates.values()), dtype=float)
    cur = throughput_curve(
        n,
        inputs.target.params,
        d_draft,
        inputs.target.tokens,
        inputs.constants,
        inputs.alpha.coefficients,
        inputs.integer,
    )
    t = np.asarray(cur["tokens_per_flop"], dtype=float)
    return pd.DataFrame(
        {
            "candidate": list(inputs.candidates),
            "params": n,
            "d_draft": d_draft,
            "alpha": cur["alpha"],
            "gamma": cur["gamma"],
            "tokens_per_flop": t,
            "speedup": t * 2.0 * inputs.target.params,
            "share_of_optimum": t / optimum.tokens_per_flop,
        },
        columns=cols,
    )


def _normal_draws(rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray, size: int) -> np.ndarray:
    """``size`` draws of a normal with ``mean`` and ``cov``, through the Cholesky factor of the
    components with positive variance (the others are constant). Cholesky, not eigh: the factor is
    unique, so the draws do not depend on the signs LAPACK's kernels give eigenvectors (with eigh,
    another BLAS gave draws 1-4 % apart at the same seed)."""
    z = rng.standard_normal((size, mean.size))
    out = np.tile(mean, (size, 1))
    free = np.flatnonzero(np.diag(cov) > 0)
    if free.size:
        try:
            chol = np.linalg.cholesky(cov[np.ix_(free, free)])
        except np.linalg.LinAlgError:
            raise ValueError(
                "the covariance of the acceptance coefficients is not positive definite "
                "on its non-constant coefficients: no bootstrap"
            ) from None
        out[:, free] += z[:, free] @ chol.T
    return out


def bootstrap_n_star(
    inputs: PlanInputs,
    d_draft: float | None = None,
    n_boot: int | None = None,
    rng: np.random.Generator | None = None,
    grid_points: int = 161,
) -> np.ndarray:
    """Parametric bootstrap of ``N*``: ``n_boot`` draws of ``(A, B, C)`` from a normal with the
    alpha model's mean and covariance, each maximised over ``inputs.n_range``.

    All draws are solved at once by the kernel :func:`sdsl.model.optimum.solve` (a
    ``grid_points`` scan of ``log N`` over ``inputs.n_range``, then the root of the derivative). A
    draw for which the plane leaves (0, 1) anywhere in the range, or whose maximum lies at an end of
    it, is returned as NaN (counted by :func:`n_star_interval`).

    ``rng`` defaults to ``np.random.default_rng(inputs.seed)``.
    """
    _check_plan_inputs(inputs)
    d = (
        inputs.draft_tokens[0]
        if d_draft is None
        else V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    )
    b = (
        inputs.n_boot
        if n_boot is None
        else V.integer(n_boot, "n_boot", low=1, high=V.MAX_DRAWS, what="bootstrap draws")
    )
    if b < 1:
        raise ValueError(f"{shown('n_boot')} must be an integer in [1, {V.MAX_DRAWS}] for a bootstrap, got {b!r}")
    if rng is None:
        if inputs.seed is None:
            raise ValueError(f"{shown('seed')} is required for the bootstrap ({shown('n_boot')} > 0): give an integer")
        rng = np.random.default_rng(inputs.seed)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {V.show(rng)}")
    cf = inputs.alpha.coefficients
    coef = _normal_draws(rng, np.array([cf.A, cf.B, cf.C]), np.asarray(inputs.alpha.cov, dtype=float), b)
    m = np.full(b, inputs.target.params)
    grid = log_grid(np.full(b, inputs.n_range[0]), np.full(b, inputs.n_range[1]), grid_points)
    alpha = plane_alpha(m, np.full(b, d), np.full(b, inputs.target.tokens), inputs.constants, coef)
    o = solve(alpha, m, grid, inputs.integer)
    whole = (o.valid_low == grid[:, 0]) & (o.valid_high == grid[:, -1])
    return np.where(o.interior & whole, o.n_star, np.nan)


def n_star_interval(draws: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Percentile interval of bootstrap draws of ``N*`` (NaN draws, where the plane left (0, 1),
    are dropped and counted)."""
    level = V.level(level, what="level of the percentile interval", strings=False)
    try:
        d = np.asarray(draws, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"draws must be bootstrap draws of N* (numbers, NaN for a dropped draw), got {V.show(draws)}"
        ) from None
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"draws must be a non-empty 1-D array of bootstrap draws of N*, got shape {d.shape}")
    ok = d[np.isfinite(d)]
    if ok.size == 0:
        raise ValueError("no bootstrap draw kept the acceptance rate inside (0, 1): no interval")
    q = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return {
        "low": float(q[0]),
        "high": float(q[1]),
        "level": float(level),
        "draws": int(d.size),
        "dropped": int(d.size - ok.size),
        "median": float(np.median(ok)),
    }


def plan_table(inputs: PlanInputs, rng: np.random.Generator | None = None) -> pd.DataFrame:
    """One row per draft-family token count ``D``: ``N*``, ``gamma*``, ``alpha(N*)``, ``T(N*)``,
    speedup and, if ``inputs.n_boot > 0``, the bootstrap's 95 % interval of ``N*``.

    One generator (``rng``, default seeded by ``inputs.seed``) serves every ``D`` in turn."""
    import pandas as pd

    _check_plan_inputs(inputs)
    if inputs.n_boot > 0 and rng is None:
        rng = np.random.default_rng(inputs.seed)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {V.show(rng)}")
    rows = []
    for d in inputs.draft_tokens:
        o = plan(inputs, d)
        row = {
            "target": inputs.target.name,
            "m": inputs.target.params,
            "d_target": inputs.target.tokens,
            "d_draft": d,
            "n_star": o.n_star,
            "gamma_star": o.gamma_star,
            "alpha": o.alpha,
            "tokens_per_flop": o.tokens_per_flop,
            "speedup": o.speedup,
        }
        if inputs.n_boot > 0:
            ci = n_star_interval(bootstrap_n_star(inputs, d, rng=rng))
            row.update(
                n_star_ci_low=ci["low"],
                n_star_ci_high=ci["high"],
                bootstrap_draws=ci["draws"],
                bootstrap_dropped=ci["dropped"],
            )
        rows.append(row)
    return pd.DataFrame(rows)


def covariance_sensitivity(inputs: PlanInputs, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How much the missing covariance of Table 3 matters: the 95 % interval of ``N*`` (first ``D``
    of ``inputs``) under a fit whose full covariance is known -- ``inputs.alpha`` if it has one (a
    refit or a measurements file), else our refit on Tables 1 and 2 -- once with its full
    covariance and once with only its diagonal (what the paper's printed standard errors allow),
    both with the same seed."""
    import pandas as pd

    _check_plan_inputs(inputs)
    n_boot = V.draws(n_boot, "n_boot", allow_zero=False)
    seed = V.seed(seed, "seed")
    cov0 = inputs.alpha.cov
    has_full = bool(np.count_nonzero(cov0 - np.diag(np.diag(cov0))))
    refit = inputs.alpha if has_full else resolve_alpha_source("refit")
    rows = []
    for label, cov in (("full covariance", refit.cov), ("diagonal only", np.diag(np.diag(refit.cov)))):
        alpha = AlphaModel(refit.coefficients, cov, f"{refit.label}, {label}", refit.n_obs, refit.r2)
        inp = PlanInputs(
            inputs.target,
            inputs.draft_tokens,
            inputs.constants,
            alpha,
            inputs.integer,
            inputs.n_range,
            {},
            n_boot,
            seed,
        )
        o = plan(inp)
        ci = n_star_interval(bootstrap_n_star(inp, rng=np.random.default_rng(seed)))
        rows.append(
            {
                "covariance": label,
                "n_star": o.n_star,
                "n_star_ci_low": ci["low"],
                "n_star_ci_high": ci["high"],
                "relative_width": (ci["high"] - ci["low"]) / o.n_star,
            }
        )
    return pd.DataFrame(rows)
