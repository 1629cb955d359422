"""An honest interval for ``N*``: the spread over acceptance laws, loss-law constants and the
coefficients' uncertainty, each source on its own and combined.

Three sources move ``N*`` (method notes, section 6), and they are of two kinds:

``law``
    The choice of acceptance law. Every law of :data:`sdsl.model.alpha_laws.LAWS` that can predict
    a target it was not fitted on (the ``cross_target`` laws: the target enters through its
    perplexity ``y``) is solved for ``N*``: the plan's own plane (Table 3, a refit or the user's
    measurements) and the refitted laws of ``data/acceptance_laws.csv`` (Eq. 5 refitted,
    ``a + b ln N + c y``, ``a + b ln N + c ln D + e y``; Tables 1 and 2). A model choice, not a
    random quantity: its interval is the range, smallest to largest ``N*``.
``constants``
    The loss-law constants turning sizes into perplexities (method notes, section 4): the plan's
    set, Besiroglu et al. 2024 and Hoffmann et al. 2022. Also a choice: the range.
``coefficients``
    The statistical uncertainty of the plan's plane's coefficients: the percentile interval of the
    seeded parametric bootstrap :func:`sdsl.plan.bootstrap_n_star` (Table 3's standard errors,
    drawn independently: the paper prints no covariance; a refit's full covariance otherwise).

Each source alone holds the others at the plan's choice. Combined, every (law, constants) pair is
solved, and each ``N*`` is widened by the bootstrap's interval *relative* to the plane's ``N*``
under the same constants (the bootstrap needs the plane's covariance, which the other laws'
committed fits do not carry, so their coefficient uncertainty is taken to be the plane's, in
relative terms)::

    low  = min over (law, c) of N*(law, c) * q_low(c) / N*(plane, c)
    high = max over (law, c) of N*(law, c) * q_high(c) / N*(plane, c)

with ``q`` the bootstrap's quantiles (1 when the coefficients are not a source). That is an envelope
of model choices around a 95 % statistical interval, not a 95 % probability interval: the headline
says which sources it holds. Every ``N*`` comes from the one kernel, through
:func:`sdsl.model.optimum.law_optimal_draft_sizes` (all variants in one call); a variant whose
maximum lies at an end of the search range, or where alpha leaves (0, 1), has no ``N*`` and is
listed, not used.

The refitted laws' coefficients are committed (``data/acceptance_laws.csv``, written by
``tools/fit_acceptance_laws.py`` from :func:`fit_law_rows`; a test refits them with statsmodels and
compares), not fitted here: ``sdsl plan`` runs from the base install, which has neither pandas nor
statsmodels. The laws are evaluated with numpy alone (:class:`CommittedLaw`), where they were fitted
is :func:`fitted_ranges`, and the plan's own plane is one of them (:func:`plane_law`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sdsl.model.laws import LOSS_CONSTANTS, LossConstants, perplexity
from sdsl.model.optimum import law_optimal_draft_sizes
from sdsl.plan import PlanInputs, bootstrap_n_star, n_star_interval

__all__ = [
    "SOURCES",
    "LAWS_FILE_COLUMNS",
    "CommittedLaw",
    "committed_laws",
    "plane_law",
    "fit_law_rows",
    "fitted_ranges",
    "law_constant_variants",
    "coefficient_ratios",
    "envelope",
    "n_star_intervals",
]

#: The sources of uncertainty, in the order they are shown.
SOURCES = ("law", "constants", "coefficients")
_COVARIATE = {"x": "draft perplexity x", "y": "target perplexity y", "ln_n": "draft size N", "ln_d": "draft tokens D"}

#: Columns of ``data/acceptance_laws.csv``.
LAWS_FILE_COLUMNS = ("law", "label", "formula", "parameter", "estimate", "std_error", "nobs", "r2")
_FEATURES = ("x", "y", "ln_n", "ln_d")


@dataclass(frozen=True)
class CommittedLaw:
    """A linear acceptance law ``alpha = Intercept + sum(coef * feature)`` over the features ``x``,
    ``y``, ``ln_n``, ``ln_d`` of :mod:`sdsl.model.optimum`, evaluated with numpy alone.

    It has the ``alpha(features, target)`` of :class:`sdsl.model.alpha_laws.FittedLaw` (the target is
    ignored: these laws carry it through ``y``), so the kernel's front end
    :func:`sdsl.model.optimum.law_optimal_draft_sizes` solves it as any fitted law."""

    name: str
    label: str
    """The law's form, e.g. ``a + b ln N + c y``."""
    coefficients: tuple[tuple[str, float], ...]
    """``(parameter, estimate)`` pairs: ``Intercept`` and features."""
    ranges: tuple[tuple[str, float, float], ...] = ()
    """``(feature, low, high)``: where the law was fitted (``x``, ``y`` perplexities; ``ln_n``,
    ``ln_d`` as ``N`` and ``D``, not their logs)."""
    fitted_on: str = ""
    """Where the coefficients come from."""

    def __post_init__(self) -> None:
        unknown = [p for p, _ in self.coefficients if p != "Intercept" and p not in _FEATURES]
        if unknown:
            raise ValueError(
                f"law {self.name!r}: unknown parameter(s) {unknown}; allowed: Intercept, {', '.join(_FEATURES)}"
            )

    def alpha(self, features: Mapping[str, np.ndarray], target: str = "") -> np.ndarray:
        """``alpha`` at the features (arrays that broadcast together)."""
        shape = np.broadcast(*[np.asarray(v) for v in features.values()]).shape
        total: Any = 0.0
        for p, v in self.coefficients:
            total = total + (v if p == "Intercept" else v * np.asarray(features[p], dtype=float))
        return np.broadcast_to(np.asarray(total, dtype=float), shape).copy()

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.coefficients if p != "Intercept")


def fitted_ranges() -> dict[str, tuple[float, float]]:
    """Where the laws of ``data/acceptance_laws.csv`` were fitted: the 50 pairs of Tables 1 and 2
    (``data/acceptance.csv``, sizes and tokens from ``data/models.csv``), as ``{feature: (low,
    high)}`` for ``x``, ``y`` (perplexities), ``ln_n`` and ``ln_d`` (given as ``N`` and ``D``)."""
    from sdsl.data import records

    acc = records("acceptance")
    size = {r["model"]: r for r in records("models")}
    missing = sorted({r["draft"] for r in acc} - set(size))
    if missing:
        raise ValueError(f"models table has no entry for the drafts {missing}")
    cols = {
        "x": [r["draft_ppl"] for r in acc],
        "y": [r["target_ppl"] for r in acc],
        "ln_n": [float(size[r["draft"]]["params"]) for r in acc],
        "ln_d": [float(size[r["draft"]]["tokens"]) for r in acc],
    }
    return {k: (float(min(v)), float(max(v))) for k, v in cols.items()}


def committed_laws() -> tuple[CommittedLaw, ...]:
    """The refitted cross-target laws of ``data/acceptance_laws.csv`` (read without pandas), in file
    order, each with the ranges of :func:`fitted_ranges`."""
    from sdsl.data import records

    rng = fitted_ranges()
    laws: dict[str, dict[str, Any]] = {}
    for r in records("acceptance_laws"):
        law = laws.setdefault(r["law"], {"label": r["label"], "coef": []})
        law["coef"].append((r["parameter"], float(r["estimate"])))
    out = []
    for name, v in laws.items():
        feats = [p for p, _ in v["coef"] if p != "Intercept"]
        out.append(
            CommittedLaw(
                name, v["label"], tuple(v["coef"]), tuple((f, *rng[f]) for f in feats), "refitted on Tables 1 and 2"
            )
        )
    return tuple(out)


def plane_law(alpha_model) -> CommittedLaw:
    """The plan's acceptance plane (:class:`sdsl.plan.AlphaModel`, Eq. 5:
    ``alpha = A x + B y + C``) as a :class:`CommittedLaw` named ``plan``."""
    c = alpha_model.coefficients
    rng = alpha_model.ppl_range
    ranges = () if rng is None else (("x", rng[0], rng[1]), ("y", rng[2], rng[3]))
    return CommittedLaw(
        "plan",
        "Eq. 5 plane A x + B y + C",
        (("Intercept", c.C), ("x", c.A), ("y", c.B)),
        ranges,
        f"the plan's, {alpha_model.label}",
    )


def fit_law_rows(acceptance=None, models=None) -> list[dict[str, Any]]:
    """The rows of ``data/acceptance_laws.csv``: every refitted law of
    :data:`sdsl.model.alpha_laws.LAWS` that predicts new targets (``cross_target`` and
    ``refitted``), fitted by :func:`sdsl.model.alpha_laws.fit_laws` (statsmodels OLS) on the pairs of
    :func:`sdsl.model.alpha_laws.law_data`. Imports pandas and statsmodels: for the tool that writes
    the file and the test that compares it, never for ``sdsl plan``.

    Returns
    -------
    list of dict
        One per (law, parameter), with the keys :data:`LAWS_FILE_COLUMNS`.
    """
    from sdsl.model.alpha_laws import LAWS, fit_laws, law_data

    laws = [law for law in LAWS if law.cross_target and law.refitted]
    frame = law_data(acceptance, models)
    rows = []
    for name, fl in fit_laws(frame, laws).items():
        piece = fl.pieces["pooled"]
        res = piece.result
        for p, est, se in zip(piece.names, piece.coefs, res.bse.to_numpy(dtype=float)):
            rows.append(
                {
                    "law": name,
                    "label": fl.law.label,
                    "formula": fl.law.formula,
                    "parameter": p,
                    "estimate": float(est),
                    "std_error": float(se),
                    "nobs": int(res.nobs),
                    "r2": float(res.rsquared),
                }
            )
    return rows


class _LawSet:
    """Several laws as one fitted law whose "target" names the law: every (law, constants) variant
    is then one configuration of a single :func:`law_optimal_draft_sizes` call."""

    def __init__(self, laws: Sequence[CommittedLaw]) -> None:
        self.laws = {law.name: law for law in laws}

    def alpha(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray:
        if target not in self.laws:
            raise ValueError(f"no law {target!r}; known: {sorted(self.laws)}")
        return self.laws[target].alpha(features, target)


@dataclass(frozen=True)
class Variant:
    """``N*`` of one law under one set of loss-law constants."""

    law: str
    label: str
    fitted_on: str
    constants: str
    n_star: float
    """NaN when the maximum is not interior (``status`` says why)."""
    alpha: float
    gamma_star: float
    status: str
    extrapolated: tuple[str, ...]
    """Covariates at ``N*`` outside the range the law was fitted on, as text."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "law": self.law,
            "label": self.label,
            "fitted_on": self.fitted_on,
            "constants": self.constants,
            "n_star": self.n_star if math.isfinite(self.n_star) else None,
            "alpha": self.alpha if math.isfinite(self.alpha) else None,
            "gamma_star": self.gamma_star if math.isfinite(self.gamma_star) else None,
            "status": self.status,
            "extrapolated": list(self.extrapolated),
        }


def _outside(law: CommittedLaw, n: float, d: float, m: float, d_target: float, c: LossConstants) -> tuple[str, ...]:
    if not math.isfinite(n):
        return ()
    at = {"x": float(perplexity(n, d, c)), "y": float(perplexity(m, d_target, c)), "ln_n": n, "ln_d": d}
    return tuple(
        f"{_COVARIATE[f]} {at[f]:.3g} outside {lo:.3g} to {hi:.3g}" for f, lo, hi in law.ranges if not lo <= at[f] <= hi
    )


def law_constant_variants(
    inputs, laws: Sequence[CommittedLaw], constants: Sequence[LossConstants], d_draft: float | None = None
) -> list[Variant]:
    """``N*`` of every law under every constant set for the target of ``inputs`` (a
    :class:`sdsl.plan.PlanInputs`: ``M``, ``D'``, ``D``, integer or continuous ``gamma`` and
    the search range ``inputs.n_range``), laws outer, constants inner, all solved by one call of
    :func:`sdsl.model.optimum.law_optimal_draft_sizes`."""
    if not laws or not constants:
        raise ValueError("law_constant_variants needs at least one law and one constant set")
    d = float(inputs.draft_tokens[0] if d_draft is None else d_draft)
    m, dt = float(inputs.target.params), float(inputs.target.tokens)
    keys = [(law, c) for law in laws for c in constants]
    k = len(keys)
    opts = law_optimal_draft_sizes(
        _LawSet(laws),
        [law.name for law, _ in keys],
        np.full(k, m),
        d,
        dt,
        [c for _, c in keys],
        inputs.integer,
        n_bounds=(inputs.n_range[0], inputs.n_range[1]),
    )
    return [
        Variant(
            law.name,
            law.label,
            law.fitted_on,
            c.name,
            o.n_star,
            o.alpha,
            o.gamma_star,
            o.status,
            _outside(law, o.n_star, d, m, dt, c),
        )
        for (law, c), o in zip(keys, opts)
    ]


def coefficient_ratios(
    inputs,
    constants: Sequence[LossConstants],
    plane_n_star: Mapping[str, float],
    n_boot: int,
    seed: int,
    level: float = 0.95,
) -> dict[str, dict[str, Any] | None]:
    """The bootstrap's interval of ``N*`` under each constant set, absolute and relative to the
    plane's ``N*`` there (``plane_n_star[c.name]``): :func:`sdsl.plan.bootstrap_n_star` with the
    same seed for every set (the same draws of the coefficients), :func:`sdsl.plan.n_star_interval`.
    A set whose draws all leave (0, 1) gets ``None``."""
    out: dict[str, dict[str, Any] | None] = {}
    for c in constants:
        inp = replace(inputs, constants=c)
        try:
            ci = n_star_interval(bootstrap_n_star(inp, n_boot=n_boot, rng=np.random.default_rng(seed)), level)
        except ValueError:
            out[c.name] = None
            continue
        base = plane_n_star[c.name]
        ci.update(low_ratio=ci["low"] / base, high_ratio=ci["high"] / base, seed=seed)
        out[c.name] = ci
    return out


def envelope(
    variants: Iterable[Variant],
    ratios: Mapping[str, tuple[float, float]] | None = None,
    laws: Iterable[str] | None = None,
    constants: Iterable[str] | None = None,
) -> dict[str, Any] | None:
    """``min`` and ``max`` over the interior variants (of the given laws and constant sets) of
    ``N* * ratio_low(c)`` and ``N* * ratio_high(c)`` (``ratios[c]``; 1 when not given): the
    combination rule of the module notes. None when no variant is interior."""
    ls = None if laws is None else set(laws)
    cs = None if constants is None else set(constants)
    lo = hi = None
    used = 0
    for v in variants:
        if (
            (ls is not None and v.law not in ls)
            or (cs is not None and v.constants not in cs)
            or not math.isfinite(v.n_star)
        ):
            continue
        r = (1.0, 1.0) if ratios is None else ratios[v.constants]
        a, b = v.n_star * r[0], v.n_star * r[1]
        lo, hi, used = (a if lo is None else min(lo, a)), (b if hi is None else max(hi, b)), used + 1
    return None if lo is None else {"low": lo, "high": hi, "variants": used}


def _constant_sets(inputs) -> list[LossConstants]:
    out = [inputs.constants]
    for c in LOSS_CONSTANTS.values():
        if c.as_tuple() != inputs.constants.as_tuple():
            out.append(c)
    return out


def _laws(inputs) -> list[CommittedLaw]:
    own = plane_law(inputs.alpha)
    out = [own]
    for law in committed_laws():
        if law.features == own.features and np.allclose(
            [v for _, v in law.coefficients], [v for _, v in own.coefficients], rtol=1e-9, atol=0
        ):
            continue  # the plan's plane is this refit already (alpha_source 'refit')
        out.append(law)
    return out


def _check_arguments(inputs, n_star, n_boot, seed, level, headline):
    """The arguments of :func:`n_star_intervals`, checked by :mod:`sdsl.validation` (one line naming
    the argument and what is allowed): ``(inputs, n_star, n_boot, seed, level, headline)``."""
    from sdsl import validation as V

    if not isinstance(inputs, PlanInputs):
        raise ValueError(
            f"{V.shown('inputs')} must be validated plan inputs (sdsl.plan.check_inputs(...)), got {V.show(inputs)}"
        )
    level = V.level(level, what="level of the percentile interval", strings=False)
    if n_star is not None:
        n_star = V.number(n_star, "n_star", low=0, low_open=True, what="the plan's optimal draft size", strings=False)
    b = inputs.n_boot if n_boot is None else V.draws(n_boot, "n_boot", strings=False)
    s = inputs.seed if seed is None else V.seed(seed, "seed", strings=False)
    if b > 0 and s is None:
        raise ValueError(
            f"{V.shown('seed')} is required for the bootstrap ({V.shown('n_boot')} = {b}): give an "
            f"integer in [0, 2^63 - 1]"
        )
    if b == 0 and seed is not None:
        raise ValueError(
            f"{V.shown('seed')} is not used without a bootstrap: give {V.shown('n_boot')} too (0 or an "
            f"integer in [{V.MIN_DRAWS}, {V.MAX_DRAWS}]), or leave the seed out"
        )
    if headline is not None:
        headline = V.sequence(headline, "headline", what=f"sources among {', '.join(SOURCES)}", noun="sources")
        bad = [h for h in headline if h not in SOURCES]
        if bad:
            raise ValueError(
                f"{V.shown('headline')} sources must be among {', '.join(SOURCES)}, got "
                f"{', '.join(map(str, bad))}; {V.suggestion(bad[0], SOURCES)}".rstrip("; ")
            )
    return inputs, n_star, b, s, level, headline


def n_star_intervals(
    inputs,
    n_star: float | None = None,
    n_boot: int | None = None,
    seed: int | None = None,
    level: float = 0.95,
    headline: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The interval of ``N*`` by source and combined, for the first ``D`` of ``inputs``.

    Parameters
    ----------
    inputs : sdsl.plan.PlanInputs
        A validated plan (:func:`sdsl.plan.check_inputs`).
    n_star : float, optional
        The plan's ``N*`` (:func:`sdsl.plan.plan`), shown as the point; default: the plane's
        variant under the plan's constants (the same kernel: they agree to ~1e-11).
    n_boot, seed : int, optional
        Bootstrap draws and seed for the ``coefficients`` source (default ``inputs.n_boot`` and
        ``inputs.seed``); ``n_boot = 0`` leaves that source out, and says so.
    level : float
        Level of the bootstrap's percentile interval.
    headline : sequence of str, optional
        The sources of the headline interval, a subset of :data:`SOURCES` (default: every source
        computed).

    Returns
    -------
    dict
        JSON-ready: ``n_star``, ``headline`` (``low``, ``high``, ``sources``, ``left_out``),
        ``by_source`` (``law``, ``constants``, ``coefficients``: ``low``, ``high`` and what they
        are made of, or ``computed: False`` with the reason), ``combined`` (every computed source),
        ``variants`` (every law x constants ``N*``), ``includes`` and ``excludes`` (text).
    """
    inputs, n_star, b, s, level, headline = _check_arguments(inputs, n_star, n_boot, seed, level, headline)
    for named in LOSS_CONSTANTS.values():  # five numbers equal to a published set are that set
        if named.as_tuple() == inputs.constants.as_tuple():
            inputs = replace(inputs, constants=named)
    laws, consts = _laws(inputs), _constant_sets(inputs)
    variants = law_constant_variants(inputs, laws, consts)
    c0 = inputs.constants.name
    plane = {v.constants: v.n_star for v in variants if v.law == "plan"}
    point = float(n_star) if n_star is not None else plane[c0]
    by: dict[str, dict[str, Any]] = {}
    at_c0 = [v for v in variants if v.constants == c0]
    law_env = envelope(at_c0)
    by["law"] = {
        "computed": True,
        "kind": "range over acceptance laws (a model choice)",
        **(law_env or {}),
        "laws": [
            {
                "law": v.law,
                "label": v.label,
                "fitted_on": v.fitted_on,
                "n_star": v.as_dict()["n_star"],
                "status": v.status,
                "extrapolated": list(v.extrapolated),
            }
            for v in at_c0
        ],
    }
    on_plane = [v for v in variants if v.law == "plan"]
    by["constants"] = {
        "computed": True,
        "kind": "range over loss-law constant sets (a model choice)",
        **(envelope(on_plane) or {}),
        "sets": [{"constants": v.constants, "n_star": v.as_dict()["n_star"], "status": v.status} for v in on_plane],
    }
    ratios: dict[str, tuple[float, float]] | None = None
    what = inputs.alpha.label
    if b > 0:
        boot = coefficient_ratios(inputs, consts, plane, b, s, level)
        ok = {k: v for k, v in boot.items() if v is not None}
        if c0 in ok:
            ratios = {k: (v["low_ratio"], v["high_ratio"]) for k, v in ok.items()}
            ci = ok[c0]
            by["coefficients"] = {
                "computed": True,
                "kind": f"{100 * level:g} % percentile interval of a parametric "
                f"bootstrap of the plane's coefficients ({what})",
                "low": ci["low"],
                "high": ci["high"],
                "draws": ci["draws"],
                "dropped": ci["dropped"],
                "seed": s,
                "by_constants": {k: [v["low"], v["high"]] for k, v in ok.items()},
            }
        else:
            by["coefficients"] = {"computed": False, "why": "no bootstrap draw kept alpha inside (0, 1)"}
    else:
        by["coefficients"] = {
            "computed": False,
            "why": "no bootstrap (sdsl plan --bootstrap 1000; n_boot and seed in Python)",
        }
    computed = [k for k in SOURCES if by[k]["computed"]]
    if headline is None:
        chosen = computed
    else:
        chosen = list(dict.fromkeys(headline))
        missing = [h for h in chosen if h not in computed]
        if missing:
            raise ValueError(f"headline source(s) {', '.join(missing)} not computed: {by[missing[0]]['why']}")

    def combine(srcs: Sequence[str]) -> dict[str, Any] | None:
        env = envelope(
            variants,
            ratios if "coefficients" in srcs else None,
            None if "law" in srcs else ["plan"],
            None if "constants" in srcs else [c0],
        )
        return None if env is None else {**env, "sources": list(srcs)}

    head = combine(chosen) or {}
    head["left_out"] = [k for k in SOURCES if k not in chosen]
    texts = {
        "law": "the choice of acceptance law (" + ", ".join(f"{v.label}, {v.fitted_on}" for v in at_c0) + ")",
        "constants": "the loss-law constants (" + ", ".join(c.name for c in consts) + ")",
        "coefficients": f"the standard errors of the plane's coefficients ({what}; parametric bootstrap)",
    }
    excludes = [texts[k] + ("" if by[k]["computed"] else ": " + by[k]["why"]) for k in SOURCES if k not in chosen]
    excludes += [
        "laws fitted per target or with the target as a factor (they cannot predict a new target)",
        "loss-law constants other than the published sets, and the loss law's own uncertainty",
        "the uncertainty of the refitted laws' coefficients beyond the plane's (combined in relative terms)",
    ]
    return {
        "n_star": point,
        "level": level,
        "headline": head,
        "by_source": by,
        "combined": combine(computed),
        "variants": [v.as_dict() for v in variants],
        "includes": [texts[k] for k in chosen],
        "excludes": excludes,
        "extrapolated": [
            f"{v.label}, {v.fitted_on} ({v.constants}): {', '.join(v.extrapolated)}" for v in variants if v.extrapolated
        ],
    }
