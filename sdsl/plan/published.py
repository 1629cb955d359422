"""The published deployments: what others measured when they deployed draft-model speculative
decoding, turned into the plan's inputs, the acceptance law fitted to them, and how far the plan
was off on them.

``data/published_deployments.csv`` holds one row per published measurement (its ``.yml`` names
every source). This module, which needs only numpy and :func:`sdsl.data.records`, does three things
with it:

* **The plan's inputs of each row** (:func:`deployments`, :class:`Deployment`): the target's size
  ``M`` and tokens ``D'``, the draft's ``N`` and ``D`` -- where a model's pre-training tokens are not
  published, :data:`TOKENS_PER_PARAMETER` tokens per parameter (Hoffmann et al. 2022's
  compute-optimal ratio) is assumed and the row says so -- the architectures of the presets the row
  names (``target_preset``, ``draft_preset``), the step-time model of the row's hardware where the
  companion has one (:data:`HARDWARE_PRESETS`; every other device gets the paper's FLOP model,
  ``c = N/M``), the batch (1 where it is not published, flagged), the devices in tensor parallel,
  and the published draft length where it is a fixed integer. :func:`plan_domain` says whether
  ``sdsl plan`` answers for those inputs, and why not.
* **Predictions** (:func:`predictions`): alpha by the paper's Eq. 5 plane through the loss law
  (:func:`law_alpha`), and the wall-clock speedup (:func:`wall_clock`: Theorem 3.8 of Leviathan et
  al. 2023 with ``c = N/M``, or with the source's own ``c``, or the step-time model of
  :mod:`sdsl.model.hardware`) at the published draft length and at the plan's best, each with the
  law's alpha and, where the row measured one, the measured alpha -- which separates the acceptance
  law's error from the cost model's. The functions are those ``sdsl plan`` calls
  (:func:`sdsl.plan.deployment.draft_wall_clock`); a test compares them with its output.
* **The acceptance law extended** (:data:`FORMS`, :func:`skill_table`, :func:`published_law`):
  forms that add what a practitioner knows before deploying (the sampling temperature; whether the
  draft was distilled or fine-tuned for the target) to Eq. 5, each an Eq. 5 plane at a fixed
  temperature, fitted by least squares (:func:`fit_form`, numpy; the chapter refits with
  statsmodels and a test compares) on the settings with a measured alpha (:func:`alpha_settings`),
  judged out of sample by leave-one-target-out and leave-one-source-out against a constant equal to
  the training folds' median alpha. The criterion, fixed before the result: a form is kept only if
  its held-out mean absolute error is below the constant's under *both* schemes; among the kept forms
  whose inputs the plan asks for (:data:`PLAN_INPUTS`) the one with the lowest leave-one-target-out
  error is what ``sdsl plan --alpha-source published --temperature T`` uses; when none is kept it is
  the constant (the data's median alpha).

The error figures ``sdsl plan`` prints beside its alpha and speedup (:func:`typical_error`) are
read from ``data/published_accuracy.csv``, which :func:`accuracy_rows` computes
(``tools/published_accuracy.py`` writes it; a test recomputes it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdsl import validation as V
from sdsl.model import hardware as H
from sdsl.model import speedup as S
from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, AcceptanceCoefficients, LossConstants, perplexity
from sdsl.model.optimum import optimal_draft_size

__all__ = [
    "DATASET",
    "ACCURACY_DATASET",
    "TOKENS_PER_PARAMETER",
    "HARDWARE_PRESETS",
    "ALPHA_TOLERANCE",
    "SPEEDUP_TOLERANCE",
    "PLAN_INPUTS",
    "COST_MODELS",
    "ALPHA_FROM",
    "Deployment",
    "deployment_of_row",
    "deployments",
    "plan_domain",
    "law_alpha",
    "refit_coefficients",
    "wall_clock",
    "AlphaSettings",
    "alpha_settings",
    "ExtensionForm",
    "FORMS",
    "design",
    "fit_form",
    "held_out_predictions",
    "skill_table",
    "select_form",
    "PublishedLaw",
    "published_law",
    "extension_plane",
    "predictions",
    "headline",
    "accuracy_rows",
    "ACCURACY_COLUMNS",
    "typical_error",
]

#: The data set of published measurements (``data/published_deployments.csv``).
DATASET = "published_deployments"
#: The error figures ``sdsl plan`` prints (``data/published_accuracy.csv``, from :func:`accuracy_rows`).
ACCURACY_DATASET = "published_accuracy"
#: Pre-training tokens per parameter assumed for a model whose tokens are not published: the
#: compute-optimal ratio of Hoffmann et al. 2022 (Chinchilla). A row that needs it is flagged.
TOKENS_PER_PARAMETER = 20.0
#: The step-time model (``data/accelerators.csv``) of a published device, by the name the row gives
#: it: every other device (TPUs, AMD GPUs, consumer GPUs, Apple, CPUs) gets the FLOP model.
HARDWARE_PRESETS: tuple[tuple[str, str], ...] = (("H200", "h200"), ("H100", "h100-sxm"), ("A100", "a100-80gb"))
#: An alpha is "within" when it is at most this far from the measured one (absolute).
ALPHA_TOLERANCE = 0.05
#: A speedup is "within" when predicted / measured lies in [1 - this, 1 + this].
SPEEDUP_TOLERANCE = 0.20
#: What ``sdsl plan`` asks a practitioner for beyond the paper's inputs: the forms it can serve use no more.
PLAN_INPUTS = ("temperature",)
#: Where a predicted speedup's cost of drafting comes from: the FLOP model ``c = N/M``, the step-time
#: model of the row's device, or the ``c`` the source published (Leviathan et al.'s Table 4).
COST_MODELS = ("flop", "step_time", "source_c")
#: Where a predicted speedup's alpha comes from: the paper's Eq. 5 (Table 3), the companion's refit
#: of Eq. 5 (Tables 1 and 2), the extension (held out by target), the row's measured alpha.
ALPHA_FROM = ("paper", "refit", "published", "measured")
_GAMMA_MAX = 32  # as sdsl plan's default search


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


# ---------------------------------------------------------------------------------------------
# one row as the plan's inputs


@dataclass(frozen=True)
class Deployment:
    """One published measurement as the plan's inputs (:func:`deployment_of_row`)."""

    row_id: str
    source_id: str
    target: str
    draft: str
    target_key: str
    """The target model without the source's qualifier in parentheses (the two fine-tuned T5-XXL
    of Leviathan et al. are one target): the unit left out by leave-one-target-out."""
    m: float
    d_target: float
    n: float
    d_draft: float
    target_tokens_assumed: bool
    draft_tokens_assumed: bool
    target_shape: Mapping[str, float] | None
    draft_shape: Mapping[str, float] | None
    hardware: str | None
    """The row's device as published."""
    hardware_class: str | None
    preset: str | None
    """The accelerator preset of its step-time model, or None (the FLOP model)."""
    gpus: int
    batch: int
    batch_assumed: bool
    gamma: int | None
    """The published draft length where it is a fixed integer."""
    gamma_published: str | None
    temperature: float | None
    same_family: int
    draft_tuned: int
    engine: str
    task: str
    alpha: float | None
    """The measured alpha (reported, or inverted from a mean accepted length at a fixed gamma)."""
    speedup: float | None
    cost_ratio: float | None
    """The source's own ``c`` (draft step over target step), where published."""
    source_predicted_speedup: float | None
    flags: tuple[str, ...] = field(default_factory=tuple)
    """What was assumed for this row, in words."""


def _preset_rows() -> dict[str, dict[str, Any]]:
    from sdsl.data import records

    return {r["preset"]: r for r in records("presets")}


_SHAPE_COLUMNS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings")


def _shape(preset: str | None, presets: Mapping[str, Mapping[str, Any]]) -> Mapping[str, float] | None:
    if not preset:
        return None
    row = presets[preset]
    shape = {c: float(row[c]) for c in _SHAPE_COLUMNS if _known(row.get(c))}
    return shape if len(shape) == len(_SHAPE_COLUMNS) else None


def _hardware_preset(hardware: str | None) -> str | None:
    if not hardware:
        return None
    return next((preset for name, preset in HARDWARE_PRESETS if name in hardware), None)


def deployment_of_row(row: Mapping[str, Any], presets: Mapping[str, Mapping[str, Any]] | None = None) -> Deployment:
    """The plan's closest inputs for one row of ``data/published_deployments.csv``.

    ``M``, ``N`` from the row; ``D'``, ``D`` from the row where published, else
    :data:`TOKENS_PER_PARAMETER` times the parameters (flagged); the architectures of the presets the
    row names; the accelerator preset of the row's device (:data:`HARDWARE_PRESETS`) with its
    ``device_count`` in tensor parallel; the batch where published, else 1 (flagged); the published
    draft length where it is an integer."""
    presets = _preset_rows() if presets is None else presets
    flags = []
    m, n = float(row["target_params"]), float(row["draft_params"])
    d_target, d_draft = row["target_tokens"], row["draft_tokens"]
    t_assumed, d_assumed = not _known(d_target), not _known(d_draft)
    if t_assumed:
        d_target = TOKENS_PER_PARAMETER * m
        flags.append(f"target tokens not published: {TOKENS_PER_PARAMETER:g} per parameter assumed")
    if d_assumed:
        d_draft = TOKENS_PER_PARAMETER * n
        flags.append(f"draft tokens not published: {TOKENS_PER_PARAMETER:g} per parameter assumed")
    batch = row["batch"]
    b_assumed = not _known(batch)
    if b_assumed and _known(row["speedup"]):
        flags.append("batch not published: 1 assumed")
    g_text = row["gamma"] or None
    gamma = int(g_text) if g_text is not None and g_text.isdigit() else None
    preset = _hardware_preset(row["hardware"])
    devices = row["device_count"]
    return Deployment(
        row_id=str(row["row_id"]),
        source_id=str(row["source_id"]),
        target=str(row["target"]),
        draft=str(row["draft"]),
        target_key=str(row["target"]).split(" (")[0],
        m=m,
        d_target=float(d_target),
        n=n,
        d_draft=float(d_draft),
        target_tokens_assumed=t_assumed,
        draft_tokens_assumed=d_assumed,
        target_shape=_shape(row["target_preset"], presets),
        draft_shape=_shape(row["draft_preset"], presets),
        hardware=row["hardware"],
        hardware_class=row["hardware_class"],
        preset=preset,
        gpus=int(devices) if _known(devices) else 1,
        batch=1 if b_assumed else int(batch),
        batch_assumed=b_assumed,
        gamma=gamma,
        gamma_published=g_text,
        temperature=float(row["temperature"]) if _known(row["temperature"]) else None,
        same_family=int(row["same_family"]),
        draft_tuned=int(row["draft_tuned"]),
        engine=str(row["engine"]),
        task=str(row["task"]),
        alpha=float(row["alpha"]) if _known(row["alpha"]) else None,
        speedup=float(row["speedup"]) if _known(row["speedup"]) else None,
        cost_ratio=float(row["cost_ratio"]) if _known(row["cost_ratio"]) else None,
        source_predicted_speedup=(
            float(row["source_predicted_speedup"]) if _known(row["source_predicted_speedup"]) else None
        ),
        flags=tuple(flags),
    )


@functools.lru_cache(maxsize=1)
def deployments() -> tuple[Deployment, ...]:
    """Every row of ``data/published_deployments.csv`` as the plan's inputs, in the file's order."""
    from sdsl.data import records

    presets = _preset_rows()
    return tuple(deployment_of_row(r, presets) for r in records(DATASET))


def law_alpha(
    dep: Deployment, coefficients: AcceptanceCoefficients = PAPER_EQ5, constants: LossConstants = BESIROGLU_2024
) -> float:
    """alpha of the row's pair by Eq. 5 through the loss law: ``A x + B y + C`` with
    ``x = exp(L(N, D))``, ``y = exp(L(M, D'))`` (method notes, sections 4 and 5)."""
    x = float(perplexity(dep.n, dep.d_draft, constants))
    y = float(perplexity(dep.m, dep.d_target, constants))
    return coefficients.A * x + coefficients.B * y + coefficients.C


def plan_domain(
    dep: Deployment, coefficients: AcceptanceCoefficients = PAPER_EQ5, constants: LossConstants = BESIROGLU_2024
) -> str | None:
    """Why ``sdsl plan`` would give no answer for the row's inputs under ``coefficients`` (one
    line), or None when it answers: ``M``, ``D'``, ``D`` and ``N`` inside the plan's ranges
    (:data:`sdsl.validation.TARGET_PARAMS`, ``TOKENS``, ``MODEL_PARAMS``, ``N < M``), alpha inside
    (0, 1) at ``N``, and an optimum ``N*`` strictly inside the default search range ``(1e7, M/2)``
    (the plan refuses an optimum on an edge)."""
    lo, hi = V.TARGET_PARAMS
    if not lo <= dep.m <= hi:
        return f"target size M = {dep.m:.3g} outside the plan's [{lo:g}, {hi:g}]"
    lo, hi = V.TOKENS
    for what, v in (("target tokens D'", dep.d_target), ("draft tokens D", dep.d_draft)):
        if not lo <= v <= hi:
            return f"{what} = {v:.3g} outside the plan's [{lo:g}, {hi:g}]"
    if not V.MODEL_PARAMS[0] <= dep.n < dep.m:
        return f"draft size N = {dep.n:.3g} not in [{V.MODEL_PARAMS[0]:g}, M)"
    a = law_alpha(dep, coefficients, constants)
    if not 0 < a < 1:
        return f"Eq. 5 gives alpha = {a:.3g} at this draft, outside (0, 1)"
    status = _optimum_status(dep.m, dep.d_draft, dep.d_target, constants, coefficients)
    if status is not None:
        return f"no optimum N* inside the plan's search range ({status})"
    return None


@functools.lru_cache(maxsize=512)
def _optimum_status(
    m: float, d: float, d_target: float, constants: LossConstants, coefficients: AcceptanceCoefficients
) -> str | None:
    """None when ``N*`` lies strictly inside the plan's default search range ``(min(1e7, M/4), M/2)``,
    else where the throughput is largest."""
    o = optimal_draft_size(m, d, d_target, constants, coefficients, False, (min(1e7, m / 4), m / 2))
    return None if o.interior else o.status


def refit_coefficients() -> AcceptanceCoefficients:
    """The companion's refit of Eq. 5 on the paper's Tables 1 and 2 (``data/acceptance_laws.csv``,
    law ``plane``): what ``sdsl plan --alpha-source refit`` uses, read without statsmodels."""
    from sdsl.data import records

    p = {r["parameter"]: float(r["estimate"]) for r in records("acceptance_laws") if r["law"] == "plane"}
    return AcceptanceCoefficients(A=p["x"], B=p["y"], C=p["Intercept"], source="refit (Tables 1 and 2)")


def wall_clock(dep: Deployment, alpha: float, cost_model: str, gamma: int | None = None) -> dict[str, Any]:
    """The wall-clock speedup the plan predicts for the row's draft at acceptance rate ``alpha``: its
    best integer draft length from 1 up (or ``gamma``) and the speedup there, as
    :func:`sdsl.plan.deployment.draft_wall_clock` computes it.

    ``cost_model``: ``"flop"`` (Theorem 3.8 with ``c = N/M``, the plan without ``--hardware``),
    ``"source_c"`` (Theorem 3.8 with the source's ``c``, the plan's ``--cost-ratio``) or
    ``"step_time"`` (the step-time model of the row's accelerator preset at its device count and
    batch, context 0, drafting before verification, the draft's own architecture where its preset is
    known: the plan's ``--hardware``). Returns ``gamma``, ``speedup`` and ``cost_coefficient``."""
    V.choice(cost_model, "cost_model", COST_MODELS)
    if cost_model in ("flop", "source_c"):
        if cost_model == "source_c" and dep.cost_ratio is None:
            raise ValueError(f"row {dep.row_id}: the source gives no cost coefficient c")
        c = dep.n / dep.m if cost_model == "flop" else float(dep.cost_ratio)  # type: ignore[arg-type]
        rep = S.speedup_report(alpha, c, gamma)
        g = int(gamma) if gamma is not None else max(rep.gamma_integer, 1)
        return {"gamma": g, "speedup": float(S.expected_speedup(alpha, g, c, 1.0)), "cost_coefficient": c}
    if dep.preset is None:
        raise ValueError(f"row {dep.row_id}: {dep.hardware!r} has no step-time model")
    acc = H.get_accelerator(dep.preset).times(dep.gpus)
    target = H.target_shape(dep.m, dep.target_shape)[0]
    draft = H.target_shape(dep.n, dep.draft_shape)[0] if dep.draft_shape else None
    g, s = H.speedup_at(dep.n, alpha, target, acc, dep.batch, 0.0, False, _GAMMA_MAX, gamma, draft)
    d = draft if draft is not None else H.draft_shape(dep.n, target)
    c = float(H.step_time(d, acc, dep.batch, 0.0, 1.0) / H.step_time(target, acc, dep.batch, 0.0, 1.0))
    return {"gamma": g, "speedup": s, "cost_coefficient": c}


# ---------------------------------------------------------------------------------------------
# the settings with a measured alpha, and the acceptance law's extension fitted to them


@dataclass(frozen=True)
class AlphaSettings:
    """The settings with a measured alpha inside the plan's domain, one per (source, target, draft,
    task, temperature): the rows of one setting measured at several draft lengths or concurrencies
    (one alpha, measured again) are averaged, so that no setting weighs more for being run more often."""

    keys: tuple[str, ...]
    source_id: tuple[str, ...]
    target_key: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    x: np.ndarray
    """Draft perplexity by the loss law."""
    y: np.ndarray
    """Target perplexity by the loss law."""
    temperature: np.ndarray
    draft_tuned: np.ndarray
    same_family: np.ndarray
    alpha: np.ndarray
    """Measured alpha (mean over the setting's rows)."""
    excluded: tuple[tuple[str, str], ...] = ()
    """(row_id, why) of the rows with a measured alpha left out."""

    def __len__(self) -> int:
        return len(self.keys)

    def subset(self, mask: np.ndarray) -> AlphaSettings:
        """The settings where ``mask`` is true."""
        idx = np.flatnonzero(mask)
        pick = lambda t: tuple(t[i] for i in idx)  # noqa: E731
        return AlphaSettings(
            pick(self.keys),
            pick(self.source_id),
            pick(self.target_key),
            pick(self.rows),
            self.x[idx],
            self.y[idx],
            self.temperature[idx],
            self.draft_tuned[idx],
            self.same_family[idx],
            self.alpha[idx],
            self.excluded,
        )


def alpha_settings(deps: Sequence[Deployment] | None = None) -> AlphaSettings:
    """The settings with a measured alpha and a published temperature whose inputs the plan accepts
    (:func:`plan_domain` under the paper's coefficients), with the perplexities of the loss law
    (Besiroglu et al.'s constants, the plan's default). Those of :func:`deployments` are computed once."""
    return _settings_of_data() if deps is None else _alpha_settings(tuple(deps))


@functools.lru_cache(maxsize=1)
def _settings_of_data() -> AlphaSettings:
    return _alpha_settings(deployments())


def _alpha_settings(deps: tuple[Deployment, ...]) -> AlphaSettings:
    constants = BESIROGLU_2024
    groups: dict[str, list[Deployment]] = {}
    excluded = []
    for d in deps:
        if d.alpha is None:
            continue
        why = plan_domain(d, PAPER_EQ5, constants)
        if why is None and d.temperature is None:
            why = "temperature not published"
        if why is not None:
            excluded.append((d.row_id, why))
            continue
        key = f"{d.source_id}|{d.target}|{d.draft}|{d.task.split(',')[0]}|T={d.temperature:g}"
        groups.setdefault(key, []).append(d)
    keys = tuple(groups)
    first = [groups[k][0] for k in keys]
    return AlphaSettings(
        keys=keys,
        source_id=tuple(d.source_id for d in first),
        target_key=tuple(d.target_key for d in first),
        rows=tuple(tuple(d.row_id for d in groups[k]) for k in keys),
        x=np.array([float(perplexity(d.n, d.d_draft, constants)) for d in first]),
        y=np.array([float(perplexity(d.m, d.d_target, constants)) for d in first]),
        temperature=np.array([float(d.temperature) for d in first]),  # type: ignore[arg-type]
        draft_tuned=np.array([float(d.draft_tuned) for d in first]),
        same_family=np.array([float(d.same_family) for d in first]),
        alpha=np.array([float(np.mean([d.alpha for d in groups[k]])) for k in keys]),
        excluded=tuple(excluded),
    )


@dataclass(frozen=True)
class ExtensionForm:
    """One form of the extended acceptance law: ``alpha = offset + sum(coef * term)``, where the
    offset is Eq. 5's ``A x + B y`` with the paper's coefficients when ``paper_slopes``."""

    name: str
    label: str
    terms: tuple[str, ...]
    """Regressors: ``one`` (the intercept), ``x``, ``y``, ``temperature``, ``draft_tuned``."""
    paper_slopes: bool = False

    @property
    def inputs(self) -> tuple[str, ...]:
        """What the form needs beyond the paper's inputs."""
        return tuple(t for t in self.terms if t in ("temperature", "draft_tuned"))


#: The candidate forms, each an Eq. 5 plane at a fixed temperature (and draft-tuning flag).
#: Whether draft and target come from one family cannot be a term: every measured alpha here is of
#: a same-family pair (:func:`alpha_settings`'s ``same_family``).
FORMS: tuple[ExtensionForm, ...] = (
    ExtensionForm("temperature", "constant and temperature: c0 + cT T", ("one", "temperature")),
    ExtensionForm(
        "paper_slopes_temperature",
        "Eq. 5's A and B, intercept refitted, and temperature: A x + B y + c0 + cT T",
        ("one", "temperature"),
        paper_slopes=True,
    ),
    ExtensionForm(
        "refit_temperature", "Eq. 5 refitted, and temperature: a x + b y + c0 + cT T", ("x", "y", "one", "temperature")
    ),
    ExtensionForm(
        "temperature_tuned",
        "constant, temperature and a tuned draft: c0 + cT T + cD tuned",
        ("one", "temperature", "draft_tuned"),
    ),
    ExtensionForm(
        "paper_slopes_temperature_tuned",
        "Eq. 5's A and B, intercept refitted, temperature and a tuned draft: A x + B y + c0 + cT T + cD tuned",
        ("one", "temperature", "draft_tuned"),
        paper_slopes=True,
    ),
)
_FORMS = {f.name: f for f in FORMS}


def _form(form: ExtensionForm | str) -> ExtensionForm:
    return form if isinstance(form, ExtensionForm) else _FORMS[V.choice(form, "form", list(_FORMS))]


def design(form: ExtensionForm | str, s: AlphaSettings) -> tuple[np.ndarray, np.ndarray]:
    """The regressors of ``form`` on the settings ``s`` (one column per term, in ``form.terms``
    order) and the fixed offset (Eq. 5's ``A x + B y`` with the paper's coefficients, or 0)."""
    f = _form(form)
    cols = {
        "one": np.ones(len(s)),
        "x": s.x,
        "y": s.y,
        "temperature": s.temperature,
        "draft_tuned": s.draft_tuned,
    }
    X = np.column_stack([cols[t] for t in f.terms])
    offset = PAPER_EQ5.A * s.x + PAPER_EQ5.B * s.y if f.paper_slopes else np.zeros(len(s))
    return X, offset


def _estimable(X: np.ndarray, terms: Sequence[str]) -> np.ndarray:
    """Which columns are estimated: the intercept, and every regressor that varies in the rows. A
    regressor constant in the training rows (the temperature where every training setting is
    greedy, the target's perplexity where one target is left) cannot be told from the intercept: its
    coefficient is not estimated (0)."""
    return np.array([t == "one" or float(np.ptp(X[:, j])) > 0 for j, t in enumerate(terms)])


def fit_form(form: ExtensionForm | str, s: AlphaSettings) -> dict[str, float]:
    """Least-squares coefficients of ``form`` on the settings ``s`` (numpy ``lstsq``), by term;
    a term not estimable on these rows (:func:`_estimable`) gets 0. The chapter's statsmodels OLS on
    the same design gives the same estimates (tested)."""
    f = _form(form)
    X, offset = design(f, s)
    keep = _estimable(X, f.terms)
    beta = np.zeros(len(f.terms))
    beta[keep] = np.linalg.lstsq(X[:, keep], s.alpha - offset, rcond=None)[0]
    return {t: float(b) for t, b in zip(f.terms, beta)}


def _predict(form: ExtensionForm, coef: Mapping[str, float], s: AlphaSettings) -> np.ndarray:
    X, offset = design(form, s)
    return offset + X @ np.array([coef[t] for t in form.terms])


#: Held-out schemes: the unit left out, by the settings' attribute.
SCHEMES = {"leave one target out": "target_key", "leave one source out": "source_id"}


def held_out_predictions(s: AlphaSettings, scheme: str) -> dict[str, np.ndarray]:
    """Every form's held-out prediction of each setting, and the constant's (``"constant"``: the
    median alpha of the training folds), under ``scheme`` (a key of :data:`SCHEMES`)."""
    attr = SCHEMES[V.choice(scheme, "scheme", list(SCHEMES))]
    units = np.array(getattr(s, attr))
    out = {name: np.full(len(s), np.nan) for name in ["constant", *_FORMS]}
    for u in dict.fromkeys(units):
        test = units == u
        train, held = s.subset(~test), s.subset(test)
        out["constant"][test] = float(np.median(train.alpha))
        for f in FORMS:
            out[f.name][test] = _predict(f, fit_form(f, train), held)
    return out


def _errors(pred: np.ndarray, alpha: np.ndarray) -> dict[str, Any]:
    e = np.abs(pred - alpha)
    return {
        "n": int(e.size),
        "mae": float(e.mean()),
        "within": int((e <= ALPHA_TOLERANCE + 1e-12).sum()),
        "bias": float((pred - alpha).mean()),
    }


def skill_table(s: AlphaSettings | None = None) -> list[dict[str, Any]]:
    """Each form's and the constant's held-out error under each scheme (:data:`SCHEMES`): ``n``,
    ``mae`` (mean absolute error), ``within`` (settings within :data:`ALPHA_TOLERANCE`), ``bias``
    (mean of predicted minus measured), and for a form whether it ``beats_constant`` there."""
    s = alpha_settings() if s is None else s
    rows = []
    for scheme in SCHEMES:
        pred = held_out_predictions(s, scheme)
        base = _errors(pred["constant"], s.alpha)
        rows.append({"form": "constant", "scheme": scheme, **base, "beats_constant": None})
        for f in FORMS:
            err = _errors(pred[f.name], s.alpha)
            rows.append({"form": f.name, "scheme": scheme, **err, "beats_constant": err["mae"] < base["mae"]})
    return rows


#: The scheme the choice among the kept forms uses: a target never measured is the plan's case.
SELECTION_SCHEME = "leave one target out"


def select_form(skill: Sequence[Mapping[str, Any]]) -> str:
    """The form ``sdsl plan --alpha-source published`` uses: among the forms that beat the constant
    under every scheme and whose inputs the plan asks for (:data:`PLAN_INPUTS`), the one with the
    lowest error under :data:`SELECTION_SCHEME`; ``"constant"`` when there is none."""
    kept = []
    for f in FORMS:
        mine = [r for r in skill if r["form"] == f.name]
        if mine and all(r["beats_constant"] for r in mine) and set(f.inputs) <= set(PLAN_INPUTS):
            sel = next(r for r in mine if r["scheme"] == SELECTION_SCHEME)
            kept.append((sel["mae"], f.name))
    return min(kept)[1] if kept else "constant"


@dataclass(frozen=True)
class PublishedLaw:
    """The acceptance law of ``--alpha-source published``: the selected form fitted on every setting,
    with its held-out skill."""

    form: str
    label: str
    coefficients: Mapping[str, float]
    """By term (``one``, ``temperature``, ...), plus ``A`` and ``B`` of Eq. 5 (0 for a form without)."""
    cov: np.ndarray
    """OLS covariance of the estimated terms, in the order of ``terms``."""
    terms: tuple[str, ...]
    n_settings: int
    n_sources: int
    n_targets: int
    temperature_range: tuple[float, float]
    ppl_range: tuple[float, float, float, float]
    r2: float
    skill: tuple[Mapping[str, Any], ...]
    """:func:`skill_table` of the data (every form and the constant)."""

    def plane(self, temperature: float) -> tuple[float, float, float]:
        """Eq. 5's ``(A, B, C)`` at ``temperature``: ``C = c0 + cT T``."""
        c = self.coefficients
        return c["A"], c["B"], c.get("one", 0.0) + c.get("temperature", 0.0) * temperature

    def var_c(self, temperature: float) -> float:
        """Variance of the plane's ``C`` at ``temperature`` (the OLS covariance of ``c0`` and ``cT``)."""
        g = np.array([1.0 if t == "one" else temperature if t == "temperature" else 0.0 for t in self.terms])
        return float(g @ self.cov @ g)

    def held_out(self, scheme: str = SELECTION_SCHEME) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The law's and the constant's held-out errors under ``scheme``."""
        own = next(r for r in self.skill if r["form"] == self.form and r["scheme"] == scheme)
        base = next(r for r in self.skill if r["form"] == "constant" and r["scheme"] == scheme)
        return own, base


def _ols_cov(X: np.ndarray, resid: np.ndarray) -> np.ndarray:
    n, p = X.shape
    s2 = float(resid @ resid) / max(n - p, 1)
    return s2 * np.linalg.inv(X.T @ X)


@functools.lru_cache(maxsize=1)
def published_law() -> PublishedLaw:
    """The selected form (:func:`select_form`) fitted on every setting of :func:`alpha_settings`."""
    s = alpha_settings()
    skill = skill_table(s)
    name = select_form(skill)
    if name == "constant":
        med = float(np.median(s.alpha))
        coef = {"one": med, "A": 0.0, "B": 0.0}
        terms: tuple[str, ...] = ("one",)
        cov = np.array([[float(np.var(s.alpha, ddof=1)) / len(s)]])
        label, r2 = "a constant: the median measured alpha", 0.0
    else:
        f = _FORMS[name]
        X, offset = design(f, s)
        coef = fit_form(f, s)
        resid = s.alpha - _predict(f, coef, s)
        terms = f.terms
        cov = _ols_cov(X, resid)
        coef["A"], coef["B"] = (
            (PAPER_EQ5.A, PAPER_EQ5.B) if f.paper_slopes else (coef.get("x", 0.0), coef.get("y", 0.0))
        )
        label = f.label
        r2 = 1.0 - float(resid @ resid) / float(((s.alpha - s.alpha.mean()) ** 2).sum())
    return PublishedLaw(
        form=name,
        label=label,
        coefficients=coef,
        cov=cov,
        terms=terms,
        n_settings=len(s),
        n_sources=len(set(s.source_id)),
        n_targets=len(set(s.target_key)),
        temperature_range=(float(s.temperature.min()), float(s.temperature.max())),
        ppl_range=(float(s.x.min()), float(s.x.max()), float(s.y.min()), float(s.y.max())),
        r2=r2,
        skill=tuple(skill),
    )


def _plane_of(
    form: ExtensionForm, coef: Mapping[str, float], temperature: float, tuned: float
) -> AcceptanceCoefficients:
    """Eq. 5's coefficients of ``form`` fitted as ``coef`` at a temperature and draft-tuning flag."""
    a, b = (PAPER_EQ5.A, PAPER_EQ5.B) if form.paper_slopes else (coef.get("x", 0.0), coef.get("y", 0.0))
    c = coef.get("one", 0.0) + coef.get("temperature", 0.0) * temperature + coef.get("draft_tuned", 0.0) * tuned
    return AcceptanceCoefficients(A=a, B=b, C=c, source=f"published deployments ({form.name})")


def extension_plane(dep: Deployment, s: AlphaSettings | None = None) -> AcceptanceCoefficients | None:
    """Eq. 5's coefficients of the published law for the row with its target held out: the selected
    form fitted on the settings of the other targets (all settings, for a target without a measured
    alpha), at the row's temperature; None where the temperature is not published."""
    if dep.temperature is None:
        return None
    s = alpha_settings() if s is None else s
    law = published_law()
    train = s.subset(np.array([k != dep.target_key for k in s.target_key]))
    if law.form == "constant":
        return AcceptanceCoefficients(A=0.0, B=0.0, C=float(np.median(train.alpha)), source="published (constant)")
    f = _FORMS[law.form]
    return _plane_of(f, fit_form(f, train), dep.temperature, float(dep.draft_tuned))


# ---------------------------------------------------------------------------------------------
# the plan's predictions for every row, and their errors


def predictions(deps: Sequence[Deployment] | None = None) -> list[dict[str, Any]]:
    """The plan's predictions for every row with a measured speedup, tidy: one entry per (row,
    ``alpha_from`` of :data:`ALPHA_FROM`, ``cost_model`` of :data:`COST_MODELS` the row allows,
    ``gamma_rule``): ``"published"`` at the row's fixed draft length (where it has one),
    ``"best"`` at the plan's best. Each with ``alpha``, ``gamma``, ``speedup`` (predicted),
    ``measured`` (the speedup), ``ratio`` (predicted / measured) and ``domain`` (None, or why
    ``sdsl plan`` gives no answer for the row under that alpha's law; such entries still carry
    the prediction of the same formulas, for the chapter to show but not to score)."""
    deps = deployments() if deps is None else deps
    s = alpha_settings()
    refit = refit_coefficients()
    out = []
    for d in deps:
        if d.speedup is None:
            continue
        alphas: dict[str, tuple[float | None, str | None]] = {
            "paper": (law_alpha(d, PAPER_EQ5), plan_domain(d, PAPER_EQ5)),
            "refit": (law_alpha(d, refit), plan_domain(d, refit)),
        }
        held = extension_plane(d, s)
        alphas["published"] = (
            (law_alpha(d, held), plan_domain(d, held)) if held is not None else (None, "temperature not published")
        )
        alphas["measured"] = (
            (d.alpha, plan_domain(d, PAPER_EQ5)) if d.alpha is not None else (None, "no measured alpha")
        )
        models = ["flop"] + (["step_time"] if d.preset else []) + (["source_c"] if d.cost_ratio is not None else [])
        for source, (alpha, domain) in alphas.items():
            for model in models:
                for rule, g in (("published", d.gamma), ("best", None)):
                    if rule == "published" and g is None:
                        continue
                    entry: dict[str, Any] = {
                        "row_id": d.row_id,
                        "alpha_from": source,
                        "cost_model": model,
                        "gamma_rule": rule,
                        "measured": d.speedup,
                        "domain": domain,
                    }
                    if alpha is None or not 0 < alpha < 1:
                        entry.update(alpha=alpha, gamma=None, speedup=None, ratio=None)
                        entry["domain"] = domain or f"alpha {alpha} outside (0, 1)"
                    else:
                        w = wall_clock(d, alpha, model, g)
                        entry.update(
                            alpha=alpha, gamma=w["gamma"], speedup=w["speedup"], ratio=w["speedup"] / d.speedup
                        )
                    out.append(entry)
    return out


def headline(preds: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The prediction that stands for each (row, alpha source, cost model): at the published draft
    length where the row has a fixed one (what ``sdsl plan --gamma G`` answers), else at the plan's
    best (the engine chose its draft length)."""
    fixed = {(p["row_id"], p["alpha_from"], p["cost_model"]) for p in preds if p["gamma_rule"] == "published"}
    return [
        p
        for p in preds
        if p["gamma_rule"] == "published" or (p["row_id"], p["alpha_from"], p["cost_model"]) not in fixed
    ]


#: Columns of ``data/published_accuracy.csv`` (:func:`accuracy_rows`).
ACCURACY_COLUMNS = (
    "quantity",
    "alpha_from",
    "cost_model",
    "hardware_class",
    "scheme",
    "n",
    "within",
    "tolerance",
    "mae",
    "median_ratio",
    "presets",
)


def _speedup_summary(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    r = np.array([e["ratio"] for e in entries], dtype=float)
    return {
        "n": int(r.size),
        "within": int((np.abs(r - 1.0) <= SPEEDUP_TOLERANCE + 1e-12).sum()),
        "median_ratio": float(np.median(r)),
    }


def accuracy_rows() -> list[dict[str, Any]]:
    """The error figures of the plan on the published deployments, as ``sdsl plan`` prints them
    (``data/published_accuracy.csv``).

    Alpha (``quantity`` ``alpha``, over the settings of :func:`alpha_settings`): the paper's Eq. 5
    and the companion's refit (``scheme`` ``not fitted here``: neither saw these data), the
    published law and the constant under each held-out scheme and in sample; ``mae`` and ``within``
    :data:`ALPHA_TOLERANCE`. Speedup (``quantity`` ``speedup``, the :func:`headline` predictions inside
    the plan's domain): by alpha source, cost model and hardware class (``all`` too), ``median_ratio``
    of predicted over measured and ``within`` :data:`SPEEDUP_TOLERANCE`; ``presets`` names the step-time
    models the rows used."""
    s = alpha_settings()
    deps = {d.row_id: d for d in deployments()}
    rows: list[dict[str, Any]] = []

    def alpha_row(source: str, scheme: str, pred: np.ndarray) -> None:
        e = _errors(pred, s.alpha)
        rows.append(
            dict(
                quantity="alpha",
                alpha_from=source,
                cost_model="",
                hardware_class="all",
                scheme=scheme,
                n=e["n"],
                within=e["within"],
                tolerance=ALPHA_TOLERANCE,
                mae=e["mae"],
                median_ratio=None,
                presets="",
            )
        )

    for source, coef in (("paper", PAPER_EQ5), ("refit", refit_coefficients())):
        alpha_row(source, "not fitted here", coef.A * s.x + coef.B * s.y + coef.C)
    law = published_law()
    for scheme in SCHEMES:
        pred = held_out_predictions(s, scheme)
        alpha_row("published", scheme, pred[law.form])
        alpha_row("constant", scheme, pred["constant"])
    if law.form == "constant":
        alpha_row("published", "in sample", np.full(len(s), law.coefficients["one"]))
    else:
        alpha_row("published", "in sample", _predict(_FORMS[law.form], law.coefficients, s))
    alpha_row("constant", "in sample", np.full(len(s), float(np.median(s.alpha))))

    scored = [p for p in headline(predictions()) if p["domain"] is None and p["ratio"] is not None]
    classes = sorted({str(deps[p["row_id"]].hardware_class) for p in scored})
    for source in ALPHA_FROM:
        for model in COST_MODELS:
            mine = [p for p in scored if p["alpha_from"] == source and p["cost_model"] == model]
            for cls in ["all", *classes]:
                sub = [p for p in mine if cls == "all" or deps[p["row_id"]].hardware_class == cls]
                if not sub:
                    continue
                presets = sorted({str(deps[p["row_id"]].preset) for p in sub if deps[p["row_id"]].preset})
                rows.append(
                    dict(
                        quantity="speedup",
                        alpha_from=source,
                        cost_model=model,
                        hardware_class=cls,
                        scheme="headline",
                        **_speedup_summary(sub),
                        tolerance=SPEEDUP_TOLERANCE,
                        mae=None,
                        presets=" ".join(presets) if model == "step_time" else "",
                    )
                )
    return rows


# ---------------------------------------------------------------------------------------------
# what sdsl plan prints beside its alpha and speedup

_CLASS_WORDS = {
    "all": "published deployments",
    "tpu": "published TPU deployments",
    "datacenter-gpu": "published datacenter-GPU deployments",
    "consumer-gpu": "published consumer-GPU deployments",
    "apple": "published Apple-silicon deployments",
    "cpu": "published CPU deployments",
}


_CLASS_SHORT = {
    "tpu": "TPU",
    "datacenter-gpu": "datacenter GPU",
    "consumer-gpu": "consumer GPU",
    "apple": "Apple",
    "cpu": "CPU",
}


@functools.lru_cache(maxsize=1)
def _accuracy() -> tuple[dict[str, Any], ...]:
    from sdsl.data import records

    return records(ACCURACY_DATASET)


def _find(**key: str) -> dict[str, Any] | None:
    return next((r for r in _accuracy() if all((r[k] or "") == v for k, v in key.items())), None)


def _preset_of(acc: H.Accelerator | None) -> str | None:
    """The preset of ``data/accelerators.csv`` that ``acc`` is (on any number of devices), or None
    (a file of ``sdsl steps fit``, or no accelerator)."""
    if acc is None:
        return None
    from sdsl.data import records

    name = acc.name.split(" x ", 1)[1] if acc.count > 1 else acc.name
    return next(
        (r["accelerator"] for r in records("accelerators") if r["name"] == name and r["basis"] == acc.basis), None
    )


def typical_error(alpha_source: str, cost_source: str, accelerator: H.Accelerator | None = None) -> dict[str, Any]:
    """The typical error measured on the published deployments for the plan's alpha and its
    wall-clock speedup, as ``{"alpha": {...}, "speedup": {...}}``, each with the figures and a
    ``line`` to print (``data/published_accuracy.csv``).

    ``alpha_source``: ``"paper"``, ``"refit"``, ``"published"`` or anything else (a user's file: not
    tested). ``cost_source``: the plan's source of the cost of drafting (``"flop"``,
    ``"cost_ratio"``, ``"latencies"``, ``"hardware"``); ``accelerator``: the step-time model's device."""
    preset = _preset_of(accelerator)
    out: dict[str, Any] = {}
    if alpha_source in ("paper", "refit"):
        r = _find(quantity="alpha", alpha_from=alpha_source, scheme="not fitted here")
        base = _find(quantity="alpha", alpha_from="constant", scheme=SELECTION_SCHEME)
        assert r is not None and base is not None
        out["alpha"] = {
            **{k: r[k] for k in ("n", "within", "tolerance", "mae")},
            "constant_mae": base["mae"],
            "line": (
                f"on published settings with a measured alpha this law was within {r['tolerance']:g} in "
                f"{r['within']} of {r['n']} (mean absolute error {r['mae']:.3f}; a constant, the median, held out by "
                f"target: {base['mae']:.3f})"
            ),
        }
    elif alpha_source == "published":
        own = _find(quantity="alpha", alpha_from="published", scheme=SELECTION_SCHEME)
        base = _find(quantity="alpha", alpha_from="constant", scheme=SELECTION_SCHEME)
        own2 = _find(quantity="alpha", alpha_from="published", scheme="leave one source out")
        base2 = _find(quantity="alpha", alpha_from="constant", scheme="leave one source out")
        assert own is not None and base is not None and own2 is not None and base2 is not None
        out["alpha"] = {
            **{k: own[k] for k in ("n", "within", "tolerance", "mae")},
            "scheme": SELECTION_SCHEME,
            "constant_mae": base["mae"],
            "leave_one_source_out_mae": own2["mae"],
            "leave_one_source_out_constant_mae": base2["mae"],
            "line": (
                f"out of sample ({SELECTION_SCHEME}) on {own['n']} published settings: within {own['tolerance']:g} in "
                f"{own['within']} of {own['n']}, mean absolute error {own['mae']:.3f} against {base['mae']:.3f} for a constant (the "
                f"median); leaving a source out {own2['mae']:.3f} against {base2['mae']:.3f}"
            ),
        }
    else:
        out["alpha"] = {"line": "not tested on published deployments (your own measurements)"}
    key = {"paper": "paper", "refit": "refit", "published": "published"}.get(alpha_source)
    model = {"flop": "flop", "cost_ratio": "source_c", "hardware": "step_time"}.get(cost_source)
    what = {
        "flop": "the FLOP model (c = N/M)",
        "source_c": "Theorem 3.8 with the deployment's own measured c",
        "step_time": "the step-time model",
    }
    if key is None or model is None:
        out["speedup"] = {"line": "not tested on published deployments"}
        return out
    if model == "step_time":
        row = _find(quantity="speedup", alpha_from=key, cost_model=model, hardware_class="datacenter-gpu")
        tested = (row or {}).get("presets") or ""
        if row is None or preset not in [*tested.split(), "h200"]:
            out["speedup"] = {"line": f"not tested on published deployments (tested presets: {tested or 'none'})"}
            return out
        cls = ["datacenter-gpu"]
    else:
        cls = ["all"] + sorted(
            {r["hardware_class"] for r in _accuracy() if r["quantity"] == "speedup" and r["hardware_class"] != "all"}
        )
    by = {}
    for c in cls:
        r = _find(quantity="speedup", alpha_from=key, cost_model=model, hardware_class=c)
        if r is not None:
            by[c] = {k: r[k] for k in ("n", "within", "tolerance", "median_ratio")}
    head = by[cls[0]]
    note = ""
    if model == "step_time":
        note = f" (presets {tested.replace(' ', ', ')}" + (
            "; none ran on an H200, whose fit the scaled presets share)" if preset == "h200" else ")"
        )
    classes = "; ".join(
        f"{_CLASS_SHORT[c]} {v['within']} of {v['n']} ({v['median_ratio']:.2f})" for c, v in by.items() if c != "all"
    )
    out["speedup"] = {
        **head,
        "cost_model": model,
        "by_hardware_class": by,
        "line": (
            f"on {_CLASS_WORDS[cls[0]]}{note} {what[model]} was within {100 * head['tolerance']:.0f} % in "
            f"{head['within']} of {head['n']} (median predicted/measured {head['median_ratio']:.2f})"
            + (f"; by hardware: {classes}" if model != "step_time" and len(by) > 2 else "")
        ),
    }
    return out
