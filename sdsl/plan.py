"""Plan a draft for your own target: N*, gamma*, the gain, and how sure we are (chapter ``plan_draft``).

Given a target (a preset of ``data/presets.csv``, or its size ``M`` and pre-training tokens ``D'``),
the pre-training tokens ``D`` of the draft family, the loss-law constants and a source for the
acceptance plane (the paper's Eq. 5), this module answers "how big should my draft be, and what
will I gain?":

* :func:`plan` -- ``N*``, ``gamma*``, ``alpha(N*)``, ``T(N*)`` and the speedup over plain decoding
  (method notes, section 6; :func:`sdsl.model.optimum.optimal_draft_size`), one row per ``D``;
* :func:`candidate_shares` -- the throughput of given drafts as a share of the optimum;
* :func:`bootstrap_n_star` -- a seeded parametric bootstrap of ``N*`` from the covariance of the
  acceptance coefficients (Table 3's standard errors, or a refit's covariance), and
  :func:`n_star_interval` -- its percentile interval;
* :func:`figure_throughput` -- the throughput curve with the optimum, its interval and the
  candidates marked.

Every input is checked up front by :func:`check_inputs`, which raises one ``ValueError`` per
problem with a one-line message; the command line (:mod:`sdsl.cli`) prints the same message.

Alpha sources (:func:`resolve_alpha_source`):

* ``"paper"``: Table 3's coefficients. The paper prints standard errors only, not the covariance
  of ``(A, B, C)``; the bootstrap therefore draws them independently (a diagonal covariance).
  :func:`covariance_sensitivity` measures what that omission does on our refit, where the full
  covariance is known.
* ``"refit"``: OLS of ``alpha`` on the draft and target perplexities of ``data/acceptance.csv``
  (Tables 1 and 2), with its full covariance.
* a path to a CSV of the user's own measurements (columns ``draft_ppl``, ``target_ppl``, ``alpha``;
  other columns are ignored), refitted the same way.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients, LossConstants, resolve_constants
from sdsl.model.optimum import DraftOptimum, log_grid, optimal_draft_size, plane_alpha, solve, throughput_curve

__all__ = [
    "CHAPTER",
    "ALPHA_SOURCES",
    "DEFAULT_N_LOW",
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
    "figure_throughput",
    "throughput_curves",
]

#: Name of the notebook chapter (and of its artifacts folder).
CHAPTER = "plan_draft"
#: Named sources of the acceptance plane; any other string is read as a measurements file.
ALPHA_SOURCES = ("paper", "refit")
#: Smallest draft size searched by default (parameters).
DEFAULT_N_LOW = 1e7
#: Columns a measurements file must have (the acceptance plane's variables).
MEASUREMENT_COLUMNS = ("draft_ppl", "target_ppl", "alpha")


# ---------------------------------------------------------------------------------------------
# targets and presets


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


def presets() -> pd.DataFrame:
    """The validated table of presets (``data/presets.csv``)."""
    from sdsl import data

    return data.load("presets")


def preset_records() -> tuple[dict[str, Any], ...]:
    """The presets as validated rows (:func:`sdsl._schema.records`, no pandas)."""
    from sdsl._schema import records

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
        act = f", {active / 1e9:.3g}B active per token" if _known(active) else ""
        raise ValueError(
            f"preset {row['preset']!r} ({row['model']}) is a mixture-of-experts model "
            f"({row['params'] / 1e9:.4g}B parameters in all{act}): the scaling law (Eq. 5 on the loss "
            f"law L(N, D)) was fitted on dense targets and says nothing about a sparse one; choose a "
            f"dense target ('sdsl presets' marks them)"
        )
    shape = {c: float(row[c]) for c in _SHAPE_COLUMNS if _known(row.get(c))}
    draft_tokens = row["draft_tokens"]
    return Target(
        name=str(row["model"]), params=float(row["params"]), tokens=float(row["tokens"]),
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
        raise ValueError(f"preset must be a preset name such as 'llama-3-70b', got {name!r}")
    rows = preset_records()
    key = name.strip().lower()
    hit = [r for r in rows if key in (r["preset"].lower(), r["model"].lower())]
    if not hit:
        names = [r["preset"] for r in rows]
        close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(f"unknown preset {name!r}; {hint}known presets: {', '.join(names)}")
    return _target_of_row(hit[0])


def positive_number(value: Any, name: str, unit: str) -> float:
    """``value`` as a finite float > 0; otherwise a ``ValueError`` naming ``name`` and its unit.

    Accepts numbers and numeric strings (``"70.6e9"``), as given on the command line."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise ValueError(f"{name} must be a positive number ({unit}), got {value!r}")
    try:
        x = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number ({unit}), got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive number ({unit}), got {value!r}")
    return x


def resolve_target(
    preset: str | None = None, target_params: Any = None, target_tokens: Any = None
) -> Target:
    """The target from a preset and/or explicit ``target_params`` (M) and ``target_tokens`` (D').

    Explicit values override the preset's. Without a preset both are required."""
    base = get_preset(preset) if preset not in (None, "") else None
    if base is None and (target_params is None or target_tokens is None):
        missing = [n for n, v in (("target_params", target_params), ("target_tokens", target_tokens)) if v is None]
        raise ValueError(
            f"no target: give a preset or both target_params (M, parameters) and target_tokens "
            f"(D', tokens); missing {', '.join(missing)}"
        )
    m = positive_number(target_params, "target_params", "parameters M of the target") if target_params is not None else base.params
    d_t = positive_number(target_tokens, "target_tokens", "pre-training tokens D' of the target") if target_tokens is not None else base.tokens
    if not math.isfinite(d_t):
        raise ValueError(
            f"the pre-training tokens D' of {base.name} are not stated by its model card (data/presets.yml): "
            f"give target_tokens (--target-tokens) yourself"
        )
    if base is None:
        return Target(name=f"M = {m:.4g}", params=m, tokens=d_t)
    same = target_params is None and target_tokens is None
    return Target(
        name=base.name if same else f"{base.name} (modified)", params=m, tokens=d_t,
        draft_tokens=base.draft_tokens, draft_family=base.draft_family, hf_id=base.hf_id,
        shape=base.shape if target_params is None else None, tokenizer=base.tokenizer,
    )


def resolve_draft_tokens(draft_tokens: Any, target: Target) -> tuple[float, ...]:
    """The draft family's pre-training tokens ``D``: one number or several; ``None`` takes the
    preset's default (the family's own tokens)."""
    if draft_tokens is None:
        if target.draft_tokens is None:
            why = ("the draft family's tokens are not stated by its model cards (data/presets.yml)"
                   if target.draft_family else "the target is not a preset")
            raise ValueError(
                f"draft_tokens (pre-training tokens D of the draft family) is required: {why}"
            )
        return (target.draft_tokens,)
    values = list(draft_tokens) if isinstance(draft_tokens, (list, tuple, np.ndarray)) else [draft_tokens]
    if not values:
        raise ValueError("draft_tokens (pre-training tokens D of the draft family) is empty: give at least one value")
    return tuple(positive_number(v, "draft_tokens", "pre-training tokens D of the draft family") for v in values)


def resolve_n_range(n_range: Any, m: float) -> tuple[float, float]:
    """The searched range of draft sizes ``(low, high)`` in parameters.

    ``None``: ``(1e7, M/2)``. Only the form is checked here (two positive numbers); the order and
    the upper bound against ``M`` are checked by :func:`sdsl.model.optimum.optimal_draft_size` (its
    messages name ``n_bounds``)."""
    if n_range is None:
        return (min(DEFAULT_N_LOW, m / 4), m / 2)
    if isinstance(n_range, str):
        n_range = n_range.replace(",", " ").split()
    try:
        values = list(n_range)
    except TypeError:
        raise ValueError(f"n_range must be two numbers (low, high) in parameters, got {n_range!r}") from None
    if len(values) != 2:
        raise ValueError(f"n_range must be two numbers (low, high) in parameters, got {n_range!r}")
    lo = positive_number(values[0], "n_range low", "draft parameters")
    hi = positive_number(values[1], "n_range high", "draft parameters")
    return (lo, hi)


def resolve_candidates(candidates: Any) -> dict[str, float]:
    """Candidate drafts as ``{label: parameters}``: a mapping, a list of sizes (labelled by size)
    or ``None``."""
    if candidates is None:
        return {}
    if isinstance(candidates, Mapping):
        items = list(candidates.items())
    else:
        values = [candidates] if isinstance(candidates, (int, float, str)) else list(candidates)
        items = []
        for v in values:
            x = positive_number(v, "candidates", "draft parameters")
            items.append((f"{x / 1e9:.3g}B" if x >= 1e9 else f"{x / 1e6:.3g}M", x))
    return {str(k): positive_number(v, f"candidate {k!r}", "draft parameters") for k, v in items}


# ---------------------------------------------------------------------------------------------
# the acceptance plane


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


def read_measurements(path: str | os.PathLike) -> pd.DataFrame:
    """A user's acceptance measurements: a CSV with columns ``draft_ppl``, ``target_ppl`` and
    ``alpha`` (other columns, e.g. those of ``data/acceptance.csv``, are ignored), validated with
    the constraints of the ``acceptance`` schema (perplexities >= 1, alpha in (0, 1)).

    Every problem raises a ``ValueError`` with one line naming the file (and line and column)."""
    import pandas as pd

    from sdsl import data

    p = Path(path).expanduser()
    if not p.is_file():
        raise ValueError(f"measurements file {str(path)!r} does not exist (alpha_source must be 'paper', 'refit' or a CSV path)")
    try:
        raw = pd.read_csv(p, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"measurements file {p}: the file is empty (it needs a header line)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"measurements file {p}: not a well-formed CSV ({first})") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [c for c in MEASUREMENT_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(
            f"measurements file {p}: missing column(s) {missing}; it needs {list(MEASUREMENT_COLUMNS)}"
        )
    acc = data.schema("acceptance")
    sub = {"name": "measurements", "columns": [], "key": []}
    for c in MEASUREMENT_COLUMNS:
        col = acc.column(c)
        entry = {"name": c, "type": col.type, "unit": col.unit, "description": col.description}
        for k in ("min", "max", "min_exclusive", "max_exclusive"):
            if getattr(col, k) is not None:
                entry[k] = getattr(col, k)
        sub["columns"].append(entry)
    df = data.validate(raw[list(MEASUREMENT_COLUMNS)], sub, source=f"measurements file {p}", line_offset=2)
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
    return df


def fit_acceptance_plane(df: pd.DataFrame, label: str = "refit") -> AlphaModel:
    """OLS fit of the paper's Eq. 5, ``alpha = A x + B y + C`` (``x = draft_ppl``,
    ``y = target_ppl``), with the coefficients' covariance: :func:`sdsl.chapters.acceptance.fit_plane`
    (statsmodels, non-robust, as the paper's Table 3 standard errors), wrapped as an
    :class:`AlphaModel` for the bootstrap."""
    from sdsl.chapters.acceptance import fit_plane

    fit = fit_plane(df)
    cov = fit.covariance.loc[["A", "B", "C"], ["A", "B", "C"]].to_numpy(dtype=float)
    c = fit.coefficients
    return AlphaModel(
        coefficients=AcceptanceCoefficients(A=c.A, B=c.B, C=c.C, source=label),
        cov=cov, label=label, n_obs=int(fit.n), r2=float(fit.r2),
        note=f"OLS on {int(fit.n)} measurements, full covariance of (A, B, C)",
        ppl_range=(float(df["draft_ppl"].min()), float(df["draft_ppl"].max()),
                   float(df["target_ppl"].min()), float(df["target_ppl"].max())),
    )


def _paper_alpha_model() -> AlphaModel:
    from sdsl._schema import records

    t3 = {r["parameter"]: r for r in records("paper_table3")}
    se = np.array([t3[k]["std_error"] for k in ("A", "B", "C")], dtype=float)
    acc = records("acceptance")  # the pairs of the paper's fit that its Tables 1 and 2 print
    x = [r["draft_ppl"] for r in acc]
    y = [r["target_ppl"] for r in acc]
    return AlphaModel(
        coefficients=PAPER_EQ5, cov=np.diag(se**2), label="paper (Table 3)",
        note=(
            "Table 3 prints standard errors but not the covariance of (A, B, C); the bootstrap "
            "draws them independently (diagonal covariance)"
        ),
        ppl_range=(min(x), max(x), min(y), max(y)),
    )


def resolve_alpha_source(source: Any) -> AlphaModel:
    """``"paper"`` (Table 3), ``"refit"`` (OLS on ``data/acceptance.csv``) or the path of a
    measurements CSV (see :func:`read_measurements`), refitted on the fly."""
    if isinstance(source, AlphaModel):
        return source
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"alpha_source must be 'paper', 'refit' or the path of a measurements CSV, got {source!r}")
    key = source.strip()
    if key.lower() == "paper":
        return _paper_alpha_model()
    if key.lower() == "refit":
        from sdsl import data

        model = fit_acceptance_plane(data.load("acceptance"), label="refit (Tables 1 and 2)")
        return model
    if not (key.lower().endswith(".csv") or "/" in key or os.sep in key or Path(key).exists()):
        raise ValueError(f"alpha_source must be 'paper', 'refit' or the path of a measurements CSV, got {source!r}")
    df = read_measurements(key)
    return fit_acceptance_plane(df, label=f"measurements {Path(key).name}")


# ---------------------------------------------------------------------------------------------
# all inputs at once


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
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}") from None
    if not math.isfinite(x) or not x.is_integer() or x < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(x)


def _resolve_constants(constants: Any) -> LossConstants:
    if isinstance(constants, str) and "," in constants:
        constants = [v.strip() for v in constants.split(",")]
    c = resolve_constants(constants)
    return c


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
) -> PlanInputs:
    """Validate every input of a plan at once, before anything is computed or drawn.

    Parameters
    ----------
    preset : preset name (``data/presets.csv``), or None with ``target_params`` and ``target_tokens``.
    target_params, target_tokens : target size ``M`` (parameters) and pre-training tokens ``D'``.
    draft_tokens : pre-training tokens ``D`` of the draft family; one number or several.
    constants : loss-law constants: ``"besiroglu2024"``, ``"hoffmann2022"`` or five numbers
        ``(E, A, B, a, b)`` (also as a comma-separated string).
    alpha_source : ``"paper"``, ``"refit"`` or a measurements CSV path.
    integer_gamma : integer draft length instead of its continuous relaxation.
    n_range : ``(low, high)`` draft sizes searched, in parameters; default ``(1e7, M/2)``.
    candidates : drafts to compare with the optimum, ``{label: parameters}`` or a list of sizes.
    n_boot : bootstrap draws of ``N*`` (0: no bootstrap).
    seed : seed of the bootstrap's generator (required when ``n_boot > 0``).

    Raises
    ------
    ValueError with a one-line message for the first problem found; the acceptance plane leaving
    (0, 1) anywhere in ``n_range`` or at a candidate is found here too (by a dry run of
    :func:`sdsl.model.throughput.throughput_curve`).
    """
    target = resolve_target(preset, target_params, target_tokens)
    d_draft = resolve_draft_tokens(draft_tokens, target)
    c = _resolve_constants(constants)
    if not isinstance(integer_gamma, (bool, np.bool_)):
        raise ValueError(f"integer_gamma must be True or False, got {integer_gamma!r}")
    lo, hi = resolve_n_range(n_range, target.params)
    cands = resolve_candidates(candidates)
    n_boot = _check_int(n_boot, "n_boot (bootstrap draws)", 0)
    if n_boot > 0:
        if seed is None:
            raise ValueError("seed is required for the bootstrap (n_boot > 0): give an integer")
        seed = _check_int(seed, "seed", 0)
    alpha = resolve_alpha_source(alpha_source)
    m = target.params
    # the core's checks of n_bounds and of alpha over the whole range (its 97-point scan includes
    # both ends; alpha is monotone in N), before any figure: the messages are the core's
    for d in d_draft:
        _optimum(m, d, target.tokens, c, alpha.coefficients, bool(integer_gamma), (lo, hi))
        if cands:
            throughput_curve(np.array(list(cands.values())), m, d, target.tokens, c, alpha.coefficients,
                             bool(integer_gamma))
    return PlanInputs(
        target=target, draft_tokens=d_draft, constants=c, alpha=alpha, integer=bool(integer_gamma),
        n_range=(lo, hi), candidates=cands, n_boot=n_boot, seed=seed,
    )


# ---------------------------------------------------------------------------------------------
# computations


def plan(inputs: PlanInputs, d_draft: float | None = None) -> DraftOptimum:
    """The throughput-optimal draft for one ``D`` (default: the first of ``inputs.draft_tokens``):
    :func:`sdsl.model.optimum.optimal_draft_size` over ``inputs.n_range``."""
    d = inputs.draft_tokens[0] if d_draft is None else d_draft
    return _optimum(inputs.target.params, float(d), inputs.target.tokens, inputs.constants,
                    inputs.alpha.coefficients, inputs.integer, tuple(inputs.n_range))


@functools.lru_cache(maxsize=64)
def _optimum(m, d, d_target, constants, coefficients, integer, n_range) -> DraftOptimum:
    """:func:`sdsl.model.throughput.optimal_draft_size`, computed once per configuration: :func:`check_inputs`
    runs it to validate and :func:`plan` returns the same result (a pure function of hashable,
    frozen inputs)."""
    return optimal_draft_size(m, d, d_target, constants, coefficients, integer, n_range)


def candidate_shares(inputs: PlanInputs, d_draft: float, optimum: DraftOptimum) -> pd.DataFrame:
    """Each candidate draft's ``alpha``, ``gamma*``, ``T`` and share of the optimum ``T(N)/T(N*)``."""
    import pandas as pd

    cols = ["candidate", "params", "d_draft", "alpha", "gamma", "tokens_per_flop", "speedup", "share_of_optimum"]
    if not inputs.candidates:
        return pd.DataFrame(columns=cols)
    n = np.array(list(inputs.candidates.values()), dtype=float)
    cur = throughput_curve(n, inputs.target.params, d_draft, inputs.target.tokens, inputs.constants,
                           inputs.alpha.coefficients, inputs.integer)
    t = np.asarray(cur["tokens_per_flop"], dtype=float)
    return pd.DataFrame({
        "candidate": list(inputs.candidates), "params": n, "d_draft": d_draft,
        "alpha": cur["alpha"], "gamma": cur["gamma"], "tokens_per_flop": t,
        "speedup": t * 2.0 * inputs.target.params, "share_of_optimum": t / optimum.tokens_per_flop,
    }, columns=cols)


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
            raise ValueError("the covariance of the acceptance coefficients is not positive definite "
                             "on its non-constant coefficients: no bootstrap") from None
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
    d = inputs.draft_tokens[0] if d_draft is None else float(d_draft)
    b = inputs.n_boot if n_boot is None else _check_int(n_boot, "n_boot (bootstrap draws)", 1)
    if b < 1:
        raise ValueError(f"n_boot (bootstrap draws) must be an integer >= 1 for a bootstrap, got {b!r}")
    if rng is None:
        if inputs.seed is None:
            raise ValueError("seed is required for the bootstrap (n_boot > 0): give an integer")
        rng = np.random.default_rng(inputs.seed)
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
    if not 0 < level < 1:
        raise ValueError(f"level must lie in the open interval (0, 1), got {level!r}")
    d = np.asarray(draws, dtype=float)
    ok = d[np.isfinite(d)]
    if ok.size == 0:
        raise ValueError("no bootstrap draw kept the acceptance rate inside (0, 1): no interval")
    q = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return {"low": float(q[0]), "high": float(q[1]), "level": float(level),
            "draws": int(d.size), "dropped": int(d.size - ok.size), "median": float(np.median(ok))}


def plan_table(inputs: PlanInputs, rng: np.random.Generator | None = None) -> pd.DataFrame:
    """One row per draft-family token count ``D``: ``N*``, ``gamma*``, ``alpha(N*)``, ``T(N*)``,
    speedup and, if ``inputs.n_boot > 0``, the bootstrap's 95 % interval of ``N*``.

    One generator (``rng``, default seeded by ``inputs.seed``) serves every ``D`` in turn."""
    import pandas as pd

    if inputs.n_boot > 0 and rng is None:
        rng = np.random.default_rng(inputs.seed)
    rows = []
    for d in inputs.draft_tokens:
        o = plan(inputs, d)
        row = {
            "target": inputs.target.name, "m": inputs.target.params, "d_target": inputs.target.tokens,
            "d_draft": d, "n_star": o.n_star, "gamma_star": o.gamma_star, "alpha": o.alpha,
            "tokens_per_flop": o.tokens_per_flop, "speedup": o.speedup,
        }
        if inputs.n_boot > 0:
            ci = n_star_interval(bootstrap_n_star(inputs, d, rng=rng))
            row.update(n_star_ci_low=ci["low"], n_star_ci_high=ci["high"], bootstrap_draws=ci["draws"],
                       bootstrap_dropped=ci["dropped"])
        rows.append(row)
    return pd.DataFrame(rows)


def covariance_sensitivity(inputs: PlanInputs, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How much the missing covariance of Table 3 matters: the 95 % interval of ``N*`` (first ``D``
    of ``inputs``) under a fit whose full covariance is known -- ``inputs.alpha`` if it has one (a
    refit or a measurements file), else our refit on Tables 1 and 2 -- once with its full
    covariance and once with only its diagonal (what the paper's printed standard errors allow),
    both with the same seed."""
    import pandas as pd

    cov0 = inputs.alpha.cov
    has_full = bool(np.count_nonzero(cov0 - np.diag(np.diag(cov0))))
    refit = inputs.alpha if has_full else resolve_alpha_source("refit")
    rows = []
    for label, cov in (("full covariance", refit.cov), ("diagonal only", np.diag(np.diag(refit.cov)))):
        alpha = AlphaModel(refit.coefficients, cov, f"{refit.label}, {label}", refit.n_obs, refit.r2)
        inp = PlanInputs(inputs.target, inputs.draft_tokens, inputs.constants, alpha, inputs.integer,
                         inputs.n_range, {}, n_boot, seed)
        o = plan(inp)
        ci = n_star_interval(bootstrap_n_star(inp, rng=np.random.default_rng(seed)))
        rows.append({"covariance": label, "n_star": o.n_star, "n_star_ci_low": ci["low"],
                     "n_star_ci_high": ci["high"], "relative_width": (ci["high"] - ci["low"]) / o.n_star})
    return pd.DataFrame(rows)


def throughput_curves(inputs: PlanInputs, table: pd.DataFrame, points: int = 400) -> pd.DataFrame:
    """The curves of :func:`figure_throughput`: ``T(N)`` (Eq. 9 at ``gamma*``) on ``points``
    log-spaced draft sizes of ``inputs.n_range``, one curve per draft-token count ``D`` of
    ``table``."""
    import pandas as pd

    lo, hi = inputs.n_range
    n = np.exp(np.linspace(np.log(lo), np.log(hi), points))
    frames = []
    for d in table["d_draft"].astype(float):
        cur = throughput_curve(n, inputs.target.params, d, inputs.target.tokens, inputs.constants,
                               inputs.alpha.coefficients, inputs.integer)
        frames.append(pd.DataFrame({"d_draft": d, "n": cur["n"], "alpha": cur["alpha"],
                                    "gamma": cur["gamma"], "tokens_per_flop": cur["tokens_per_flop"]}))
    return pd.concat(frames, ignore_index=True)


def figure_throughput(inputs: PlanInputs, table: pd.DataFrame, candidates: pd.DataFrame | None = None,
                      points: int = 400):
    """Throughput ``T(N)`` (Eq. 9 with ``gamma*``) against draft size for each ``D``, the optimum
    ``N*`` (star) with its bootstrap interval (shaded), and the candidate drafts (dots) annotated
    with their share of the optimum."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    fig, ax = plt.subplots()
    curves = throughput_curves(inputs, table, points)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, row in table.reset_index(drop=True).iterrows():
        d = float(row["d_draft"])
        colour = (family_color(inputs.target.draft_family)
                  if inputs.target.draft_family and len(table) == 1 else palette[i % len(palette)])
        cur = curves[curves["d_draft"] == d]
        ax.plot(cur["n"], cur["tokens_per_flop"], color=colour, label=f"D = {d:.3g} tokens")
        ax.plot([row["n_star"]], [row["tokens_per_flop"]], marker="*", markersize=14, color=colour,
                markeredgecolor="black", linestyle="none")
        if "n_star_ci_low" in row and np.isfinite(row.get("n_star_ci_low", np.nan)):
            ax.axvspan(row["n_star_ci_low"], row["n_star_ci_high"], color=colour, alpha=0.15, linewidth=0)
        if candidates is not None and len(candidates):
            sub = candidates[candidates["d_draft"] == d]
            ax.plot(sub["params"], sub["tokens_per_flop"], marker="o", color="black", linestyle="none")
            for _, c in sub.iterrows():
                ax.annotate(f"{c['candidate']}: {100 * c['share_of_optimum']:.0f} %",
                            (c["params"], c["tokens_per_flop"]), textcoords="offset points",
                            xytext=(6, 6), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("draft parameters N")
    ax.set_ylabel(r"tokens per FLOP $\mathcal{T}(N)$")
    ax.legend(loc="lower left")
    return fig
