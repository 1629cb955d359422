"""The scales of the laptop-scale experiment: which models, how much data, how they are trained and
measured, and every seed.

A :class:`Scale` is plain data (frozen dataclasses); :data:`SCALES` holds ``full`` (the CPU run,
the third design: about 40 minutes on two cores), ``gpu`` (the same design with a byte-level
table, targets of 0.48 M to 5.0 M parameters on 20 tokens per parameter or more, for a machine
with a GPU; not run yet) and ``smoke`` (tiny models on a committed slice of the KJV,
the CI run, about a minute). A run is one model shape trained on one token budget (and, for a
test draft, a replicate). The split between calibration runs, which the fits see, and test
drafts, which no fit sees, is part of the scale (:class:`Scale`); the test drafts' sizes follow
from the prediction by the rule of :class:`DraftGrid`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

#: The phases of a run, in order (:meth:`sdsl.experiment.runner.Experiment.phases`).
PHASES = (
    "corpus",
    "calibration training",
    "calibration alpha",
    "prediction",
    "test training",
    "test alpha",
    "grid extension",
    "extension training",
    "extension alpha",
    "seed replicates",
    "replicate training",
    "replicate alpha",
    "wall clock",
)


__all__ = [
    "PRECISIONS",
    "SCALES",
    "Measurement",
    "ModelShape",
    "Recipe",
    "RunSpec",
    "Scale",
    "DraftGrid",
    "get_scale",
]

#: Training precisions of :class:`Recipe`.
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class ModelShape:
    """A GPT-2 shape: ``width`` (embedding size), ``layers`` and attention ``heads``."""

    width: int
    layers: int
    heads: int

    def __post_init__(self) -> None:
        for name in ("width", "layers", "heads"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.width % self.heads:
            raise ValueError(f"width ({self.width}) must be a multiple of heads ({self.heads})")

    @property
    def name(self) -> str:
        return f"w{self.width}l{self.layers}"

    def non_embedding_params(self) -> int:
        """Parameters outside the token and position tables: per layer ``12 w^2 + 13 w`` (attention
        and MLP weights and biases, two layer norms), plus the final layer norm ``2 w``."""
        w = self.width
        return self.layers * (12 * w * w + 13 * w) + 2 * w

    def params(self, vocab_size: int) -> int:
        """``N`` of the throughput model: non-embedding parameters plus the token table, which is
        tied to the output head (its matmul costs ``2 V w`` FLOPs per token); the position table is
        a lookup and is left out."""
        return self.non_embedding_params() + int(vocab_size) * self.width


def _label(tokens: int) -> str:
    return f"{tokens // 1000}k" if tokens % 1000 == 0 else str(tokens)


@dataclass(frozen=True)
class RunSpec:
    """One training run: a shape, its token budget ``tokens`` (tokens predicted in training) and
    its ``replicate`` (0 for a calibration run; test drafts are replicates 1 and 2, other seeds of
    the same recipe, so that a test draft is never a run some fit has seen)."""

    shape: ModelShape
    tokens: int
    replicate: int = 0

    @property
    def run_id(self) -> str:
        base = f"{self.shape.name}-d{_label(self.tokens)}"
        return f"{base}-r{self.replicate}" if self.replicate else base


@dataclass(frozen=True)
class DraftGrid:
    """Where the test drafts go, chosen from the prediction ``N*`` before any of them is trained.

    Sizes ``N* step^k`` for ``k = -K .. K`` with ``step^K >= span`` (so the grid runs from at most
    ``N* / span`` to at least ``span N*``), each snapped to the ``layers``-layer shape whose ``N``
    is nearest (widths ``min_width .. max_width``; heads: one per ``head_width`` of width, a
    divisor of the width); for every target, the ``seeds_near`` sizes nearest its ``N*`` get a
    second replicate (:meth:`nearest`), and so, once the test drafts are measured, do those nearest
    its measured optimum (the runner's seed-replicates phase).
    """

    step: float = 1.25
    span: float = 3.0
    max_ratio: float = 1.35
    layers: int = 1
    min_width: int = 1
    max_width: int = 256
    head_width: int = 16
    seeds_near: int = 3

    def __post_init__(self) -> None:
        if not 1.0 < self.step <= self.max_ratio:
            raise ValueError(f"step must be in (1, max_ratio = {self.max_ratio}], got {self.step!r}")
        if not self.span >= 1.0:
            raise ValueError(f"span must be >= 1, got {self.span!r}")
        if not 1 <= self.min_width <= self.max_width:
            raise ValueError(f"widths must satisfy 1 <= min_width <= max_width, got {self.min_width}, {self.max_width}")

    def shape_of(self, width: int) -> ModelShape:
        heads = max(1, int(width) // self.head_width)
        while width % heads:
            heads -= 1
        return ModelShape(int(width), self.layers, heads)

    def sizes(self, n_stars: Sequence[float], vocab_size: int) -> list[ModelShape]:
        """The test shapes around the predictions ``n_stars`` (one per target), smallest first,
        distinct: the ends are the largest shape with ``N <= min(n_stars) / span`` and the
        smallest with ``N >= span max(n_stars)``, sizes ``step`` apart between them are snapped
        to the nearest shape, and where two neighbours are still more than ``max_ratio`` apart
        the shape nearest their geometric mean is added. Where the widths cannot reach the span
        the grid ends at the smallest (largest) shape (the span reached is reported with the
        results)."""
        ns_star = np.asarray(n_stars, dtype=float)
        if ns_star.size == 0 or not (np.isfinite(ns_star).all() and (ns_star > 0).all()):
            raise ValueError(f"n_stars must be positive numbers, got {list(n_stars)!r}")
        shapes = [self.shape_of(w) for w in range(self.min_width, self.max_width + 1)]
        ln = np.log([s.params(vocab_size) for s in shapes])
        lo = max(np.log(ns_star.min() / self.span), ln[0])
        hi = min(np.log(ns_star.max() * self.span), ln[-1])
        first = int(np.flatnonzero(ln <= lo + 1e-12)[-1])
        last = int(np.flatnonzero(ln >= hi - 1e-12)[0])
        picked = {first, last}
        for v in np.arange(ln[first], ln[last], np.log(self.step)):
            picked.add(int(np.argmin(np.abs(ln - v))))
        idx = sorted(picked)
        i = 0
        while i < len(idx) - 1:
            a, b = idx[i], idx[i + 1]
            if ln[b] - ln[a] > np.log(self.max_ratio) and b - a > 1:
                idx.insert(i + 1, a + 1 + int(np.argmin(np.abs(ln[a + 1 : b] - 0.5 * (ln[a] + ln[b])))))
                continue
            i += 1
        return [shapes[i] for i in idx]

    def beyond(self, shapes: Sequence[ModelShape], upper: bool, count: int, vocab_size: int) -> list[ModelShape]:
        """``count`` shapes beyond the largest (``upper``) or smallest of ``shapes``, sizes
        ``step`` apart snapped to the nearest width as in :meth:`sizes`, new ones only, within the
        widths (fewer where the widths end)."""
        cand = [self.shape_of(w) for w in range(self.min_width, self.max_width + 1)]
        ln = np.log([c.params(vocab_size) for c in cand])
        have = {s.params(vocab_size) for s in shapes}
        edge = np.log(max(have) if upper else min(have))
        sign = 1.0 if upper else -1.0
        out: list[ModelShape] = []
        for j in range(1, int(count) + 1):
            k = int(np.argmin(np.abs(ln - (edge + sign * j * np.log(self.step)))))
            c = cand[k]
            if c not in out and c.params(vocab_size) not in have and sign * (ln[k] - edge) > 0:
                out.append(c)
        return out

    def nearest(self, shapes: list[ModelShape], n_stars: Sequence[float], vocab_size: int) -> list[ModelShape]:
        """For every size of ``n_stars`` (one per target), the ``seeds_near`` shapes of ``shapes``
        nearest it in ``log N``: their union, in the order of ``n_stars``, each shape once."""
        out: list[ModelShape] = []
        ln = np.log([s.params(vocab_size) for s in shapes])
        for n_star in np.asarray(n_stars, dtype=float):
            if not (np.isfinite(n_star) and n_star > 0):
                raise ValueError(f"n_stars must be positive numbers, got {list(n_stars)!r}")
            for i in np.argsort(np.abs(ln - np.log(n_star)), kind="stable")[: self.seeds_near]:
                if shapes[i] not in out:
                    out.append(shapes[i])
        return out


@dataclass(frozen=True)
class Recipe:
    """The one training recipe: AdamW, linear warm-up then cosine decay to ``min_lr_ratio`` of the
    peak, peak learning rate ``min(lr_max, lr_width_product / width)``, gradient clipping,
    weight decay on matrices only, no dropout."""

    batch_size: int = 16
    seq_len: int = 128
    lr_width_product: float = 0.512  # 8e-3 at width 64, 3.2e-3 at width 160
    lr_max: float = 1e-2
    warmup_fraction: float = 0.05
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    curve_points: int = 40  # training-loss points per run (means over the steps between them)
    curve_evals: int = 6  # validation-loss evaluations along the run
    curve_eval_windows: int = 32
    eval_windows: int = 512  # final validation loss: the same windows for every run
    precision: str = "fp32"  # "bf16": forward and loss under torch.autocast (bfloat16), weights fp32

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {self.precision!r}")

    def peak_lr(self, width: int) -> float:
        return min(self.lr_max, self.lr_width_product / int(width))


@dataclass(frozen=True)
class Measurement:
    """How alpha and wall-clock speed are measured for each pair: by speculative sampling through
    the harness, prompt by prompt (:func:`sdsl.experiment.pairs.measure_alpha`; a ``half_width``
    of 0 measures every pair on ``max_prompts`` prompts), and by ``timing_rounds`` alternating
    rounds of plain and speculative decoding (:func:`sdsl.experiment.wallclock.time_pair`). The
    greedy settings serve :func:`sdsl.experiment.greedy.measure_alpha_greedy` (the runner
    measures at temperatures above 0)."""

    gamma: int = 4
    temperatures: tuple[float, ...] = (1.0,)
    prompt_tokens: int = 32
    new_tokens: int = 64
    half_width: float = 0.02  # stop when the 95 % interval's half width is at most this
    min_prompts: int = 16
    max_prompts: int = 160
    # greedy: every window of the prompt split (no early stop). Greedy decoding is deterministic
    # per prompt, and prompts either fall into a loop the draft predicts (alpha near 1) or not, so
    # a stop on a short run of looping prompts reports a far too high alpha with a narrow interval.
    min_prompts_greedy: int = 1600
    max_prompts_greedy: int = 1600
    prompt_batch: int = 8
    greedy_check_prompts: int = 16  # greedy: the first prompts also decoded by the harness
    greedy_batch: int = 64  # greedy: prompts replayed in one batch (sdsl.experiment.greedy)
    n_resamples: int = 400  # cluster bootstrap inside the stopping rule
    overlap_windows: int = 48  # held-out windows for E[sum min(p, q)] by teacher forcing
    timing_prompts: int = 2
    timing_new_tokens: int = 32
    timing_rounds: int = 5  # alternating rounds of plain and speculative decoding on the same prompts
    max_gamma: int = 12
    cost_prompts: int = 4  # prompts for each model's decoding cost (time per token)


@dataclass(frozen=True)
class Scale:
    """Everything one run of the experiment needs, except the machine.

    The split is fixed here, before anything is trained: the calibration runs are the
    ``drafts`` (each at the common budget and its ``extra_budgets``), the fit ``targets`` and the
    ``held_out_targets``, all at the common budget. The loss law is fitted on the drafts and the
    fit targets, the acceptance laws on the pairs (calibration draft, fit target); a held-out
    target enters no fit (its ``y`` comes from the loss law). The test drafts are placed by
    ``test_grid`` around the predicted ``N*`` once the prediction is written, and paired with
    every target.
    """

    name: str
    corpus: str  # "debian": the installed Debian packages; "committed": data/kjv_genesis.txt
    vocab_size: int
    drafts: tuple[ModelShape, ...]
    targets: tuple[ModelShape, ...]
    held_out_targets: tuple[ModelShape, ...]
    common_tokens: int
    extra_budgets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    test_grid: DraftGrid = DraftGrid()
    recipe: Recipe = Recipe()
    measurement: Measurement = Measurement()
    prediction_laws: tuple[str, ...] = ("plane", "loglin_n_y", "log_x", "loglin_n")
    prediction_resamples: int = 300
    val_fraction: float = 0.03
    prompt_fraction: float = 0.01
    max_chunk_chars: int = 4000
    seed: int = 20260317
    min_corpus_tokens: int = 0
    max_epochs: float | None = None  # refuse a corpus whose training split the largest budget repeats more often
    needs_accelerator: bool = False  # the command line refuses to train it on the CPU
    # the design's demands (None: none): the largest target at least ``min_target_span`` times the
    # smallest, and every predicted N* (with embeddings) at least ``min_extrapolation`` times the
    # largest calibration draft, checked when the prediction is made, before it is written
    min_target_span: float | None = None
    min_extrapolation: float | None = None

    def __post_init__(self) -> None:
        shapes = self.shapes
        names = [s.name for s in shapes]
        if len(set(names)) != len(names):
            raise ValueError(f"drafts, targets and held-out targets must be distinct shapes, got {names}")
        unknown = sorted(set(self.extra_budgets) - {s.name for s in self.drafts})
        if unknown:
            raise ValueError(
                f"extra_budgets names unknown draft shapes {unknown}; drafts: {[s.name for s in self.drafts]}"
            )
        if not self.targets or not self.held_out_targets:
            raise ValueError("a scale needs at least one fit target and one held-out target")
        if not self.measurement.temperatures or min(self.measurement.temperatures) <= 0:
            raise ValueError(
                "the runner measures alpha by speculative sampling at temperatures > 0, got "
                f"{self.measurement.temperatures} (greedy alpha: sdsl.experiment.greedy)"
            )
        if max(map(self.params, self.drafts)) >= min(map(self.params, self.targets + self.held_out_targets)):
            raise ValueError("every calibration draft must be smaller than every target")
        if self.min_target_span is not None and self.target_span() < self.min_target_span:
            raise ValueError(
                f"the targets span {self.target_span():.2f}x in M; the scale asks for at least {self.min_target_span}x"
            )

    def target_span(self) -> float:
        """The largest target's ``N`` over the smallest's (fit and held-out targets)."""
        m = [self.params(t) for t in self.targets + self.held_out_targets]
        return max(m) / min(m)

    def check_extrapolation(self, n_stars: Sequence[float]) -> float:
        """The smallest of ``n_stars`` (predicted, with embeddings) over the largest calibration
        draft; ValueError if it is below :attr:`min_extrapolation` (the prediction would not reach
        beyond the calibration drafts as far as the design asks)."""
        ratio = float(min(n_stars)) / max(map(self.params, self.drafts))
        if self.min_extrapolation is not None and not ratio >= self.min_extrapolation:
            raise ValueError(
                f"the smallest predicted N* ({float(min(n_stars)):,.0f}) is {ratio:.2f} times the largest calibration "
                f"draft ({max(map(self.params, self.drafts)):,}); the design asks for at least {self.min_extrapolation}: "
                "the scale's calibration drafts must stop lower"
            )
        return ratio

    @property
    def shapes(self) -> tuple[ModelShape, ...]:
        """Every calibration shape: drafts, fit targets, held-out targets."""
        return self.drafts + self.targets + self.held_out_targets

    def params(self, shape: ModelShape) -> int:
        return shape.params(self.vocab_size)

    def target_runs(self) -> list[RunSpec]:
        """The fit targets at the common budget, largest first."""
        return [RunSpec(s, self.common_tokens) for s in sorted(self.targets, key=self.params, reverse=True)]

    def held_out_runs(self) -> list[RunSpec]:
        """The held-out targets at the common budget, largest first."""
        return [RunSpec(s, self.common_tokens) for s in sorted(self.held_out_targets, key=self.params, reverse=True)]

    def draft_runs(self) -> list[RunSpec]:
        """The calibration drafts, smallest shape first, budgets in increasing order."""
        out: list[RunSpec] = []
        for s in sorted(self.drafts, key=self.params):
            budgets = sorted({self.common_tokens, *self.extra_budgets.get(s.name, ())})
            out.extend(RunSpec(s, int(b)) for b in budgets)
        return out

    def runs(self) -> list[RunSpec]:
        """Every calibration run (what is trained before the prediction): drafts, targets,
        held-out targets."""
        return self.draft_runs() + self.target_runs() + self.held_out_runs()

    def role(self, run: RunSpec) -> str:
        """``target``, ``held_out_target``, ``calibration`` or ``test`` (a replicate)."""
        if run.replicate:
            return "test"
        if run in self.target_runs():
            return "target"
        if run in self.held_out_runs():
            return "held_out_target"
        return "calibration"

    def calibration_pairs(self) -> list[tuple[RunSpec, RunSpec]]:
        """``(draft, target)`` for every calibration draft run and every fit target."""
        return [(d, t) for t in self.target_runs() for d in self.draft_runs()]

    def test_runs(self, n_stars: Sequence[float]) -> list[RunSpec]:
        """The test drafts for the predictions ``n_stars`` (:class:`DraftGrid`): replicate 1 of
        every grid shape, replicate 2 of the ones nearest each target's prediction."""
        shapes = self.test_grid.sizes(n_stars, self.vocab_size)
        out = [RunSpec(s, self.common_tokens, 1) for s in shapes]
        out += [RunSpec(s, self.common_tokens, 2) for s in self.test_grid.nearest(shapes, n_stars, self.vocab_size)]
        return out

    def test_pairs(self, test_runs: list[RunSpec]) -> list[tuple[RunSpec, RunSpec]]:
        """``(test draft, target)`` for every test draft and every target, fit or held out."""
        return [(d, t) for t in self.target_runs() + self.held_out_runs() for d in test_runs]

    @classmethod
    def from_dict(cls, d: dict) -> Scale:
        """The scale recorded as :meth:`as_dict` (a run's ``provenance.yml``): the design of a
        committed run, whichever scales the code defines now."""
        d = dict(d)
        shapes = {k: tuple(ModelShape(**x) for x in d[k]) for k in ("drafts", "targets", "held_out_targets")}
        measurement = dict(d["measurement"])
        measurement["temperatures"] = tuple(measurement["temperatures"])
        return cls(
            **(
                d
                | shapes
                | {
                    "extra_budgets": {k: tuple(v) for k, v in d.get("extra_budgets", {}).items()},
                    "test_grid": DraftGrid(**d["test_grid"]),
                    "recipe": Recipe(**d["recipe"]),
                    "measurement": Measurement(**measurement),
                    "prediction_laws": tuple(d["prediction_laws"]),
                }
            )
        )

    def as_dict(self) -> dict:
        d = asdict(self)
        d["extra_budgets"] = {k: list(v) for k, v in self.extra_budgets.items()}
        return d

    def digest(self) -> str:
        """sha256 of the scale's settings (a resumed run must have the same)."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:16]


#: The full CPU scale, the third design of the test. The calibration drafts stop at a third of the
#: smallest predicted N* (1-layer drafts of widths 1 to 3, 0.5 k to 1.7 k parameters with the token
#: table of 512; widths 2 and 3 at three budgets, so that the data term of the loss law is
#: identified), so the prediction reaches beyond every draft the fits saw; the targets span 4.4x in
#: M (0.50 M, 1.08 M held out, 2.19 M), so that one ratio M/k cannot land near every optimum by
#: accident. The drafts first ran to width 4 (2.3 k): that calibration predicted a smallest N* of
#: 5.8 k, 2.5 times the largest draft, and the runner refused it (`min_extrapolation`) before
#: anything was written; the drafts were cut to the largest width under a third of that prediction
#: (width 3), and the runs both calibrations share were reused (same run ids, seeds and recipe:
#: the same models). The run committed in data/laptop_scale made the calibration again from the
#: start and wrote the preregistered prediction byte for byte (sha256 a4b3cedd...). The test drafts are 1-layer shapes from a third of the smallest prediction to
#: three times the largest, at most 1.35x apart. Cost (`python -m sdsl.experiment budget --scale
#: full --probe`: each shape's training step timed on this machine, one thread, with the per-pair
#: times of the second run, 64 prompts a pair; 23 test drafts expected and 10 more the rules may
#: add): 40 minutes on two cores by a probe taken at a load average of 5 (calibration 15, of it 29
#: CPU-minutes), 30 minutes by the second run's training rate on quiet cores (calibration 10, 18
#: CPU-minutes); the budget is 90. The first design (token table 2,048, targets 0.86-2.17 M) and
#: the second (table 512, drafts to 133 k, targets 1.32-1.88 M) are recorded in the provenance of
#: data/laptop_scale_first and data/laptop_scale_second.
_FULL_DRAFTS = (ModelShape(1, 1, 1), ModelShape(2, 1, 1), ModelShape(3, 1, 1))
_FULL_TARGETS = (ModelShape(208, 4, 4), ModelShape(96, 4, 3))
_FULL_HELD_OUT_TARGETS = (ModelShape(144, 4, 4),)

#: The GPU scale, the third design at a scale the paper's regime comes nearer: a byte-level token
#: table (257 entries: the bytes and the separator), so that the embeddings weigh as little as a
#: token table can in small drafts; calibration drafts of widths 1 to 4 (0.3 k to 1.3 k
#: parameters); targets of 0.48 M, 1.83 M (held out) and 5.01 M parameters, spanning 10.3x in M;
#: every model on 101 M tokens, 20 per parameter for the largest target and more for every other
#: model, 2.7 epochs of the 38 M training tokens of the larger corpus (the scale refuses more than
#: 4). Calibration, test grid and criterion as in the CPU design. Training costs 4.8e15 FLOPs for
#: the calibration runs and about 0.4e15 for the test drafts (python -m sdsl.experiment budget
#: --scale gpu); on an H200 at an assumed 50 TFLOP/s sustained in bfloat16 over eight packed tasks
#: that is under 2 minutes, the alpha measurements (about 90 pairs of 64 prompts, eight at a time)
#: about 2 and the wall clock (one at a time) about 2: about 6 minutes with the start. Not run yet.
_GPU_DRAFTS = (ModelShape(1, 1, 1), ModelShape(2, 1, 1), ModelShape(3, 1, 1), ModelShape(4, 1, 1))
_GPU_TARGETS = (ModelShape(320, 4, 10), ModelShape(112, 3, 4))
_GPU_HELD_OUT_TARGETS = (ModelShape(192, 4, 6),)

SCALES: dict[str, Scale] = {
    "full": Scale(
        name="full",
        corpus="debian",
        vocab_size=512,
        drafts=_FULL_DRAFTS,
        targets=_FULL_TARGETS,
        held_out_targets=_FULL_HELD_OUT_TARGETS,
        common_tokens=2_000_000,
        extra_budgets={"w2l1": (500_000, 1_000_000), "w3l1": (500_000, 1_000_000)},
        test_grid=DraftGrid(step=1.25, span=3.0, layers=1, min_width=1, max_width=256, seeds_near=2),
        measurement=Measurement(temperatures=(1.0,), half_width=0.0, min_prompts=64, max_prompts=64),
        min_corpus_tokens=5_000_000,
        min_target_span=4.0,
        min_extrapolation=3.0,
    ),
    # Not run yet: needs a GPU (`--device cuda`); `python -m sdsl.experiment budget --scale gpu`
    # prints its runs, FLOPs and epochs; tools/gpu_scale.sh runs it in one device call.
    "gpu": Scale(
        name="gpu",
        corpus="debian-large",
        vocab_size=257,
        drafts=_GPU_DRAFTS,
        targets=_GPU_TARGETS,
        held_out_targets=_GPU_HELD_OUT_TARGETS,
        common_tokens=101_000_000,
        max_epochs=4.0,
        needs_accelerator=True,
        extra_budgets={"w2l1": (25_000_000, 50_000_000), "w4l1": (25_000_000, 50_000_000)},
        test_grid=DraftGrid(step=1.25, span=3.0, layers=1, min_width=1, max_width=512, head_width=32, seeds_near=2),
        recipe=Recipe(batch_size=64, seq_len=256, curve_eval_windows=64, precision="bf16"),
        measurement=Measurement(
            temperatures=(1.0,),
            half_width=0.0,
            min_prompts=64,
            max_prompts=64,
            timing_prompts=1,
            timing_new_tokens=32,
            timing_rounds=5,
        ),
        min_corpus_tokens=30_000_000,
        min_target_span=10.0,
        min_extrapolation=3.0,
    ),
    "smoke": Scale(
        name="smoke",
        corpus="committed",
        vocab_size=384,
        drafts=(ModelShape(8, 1, 1), ModelShape(16, 1, 2)),
        targets=(ModelShape(32, 2, 2), ModelShape(24, 2, 2)),
        held_out_targets=(ModelShape(28, 2, 2),),
        common_tokens=40_000,
        extra_budgets={"w8l1": (20_000,), "w16l1": (20_000,)},
        test_grid=DraftGrid(step=1.3, span=1.3, layers=1, min_width=1, max_width=64, seeds_near=1),
        recipe=Recipe(batch_size=8, seq_len=64, curve_points=10, curve_evals=2, curve_eval_windows=8, eval_windows=64),
        measurement=Measurement(
            temperatures=(1.0,),
            prompt_tokens=16,
            new_tokens=24,
            half_width=0.0,
            min_prompts=4,
            max_prompts=4,
            prompt_batch=4,
            n_resamples=100,
            overlap_windows=8,
            timing_prompts=1,
            timing_new_tokens=12,
            timing_rounds=5,
            max_gamma=6,
            cost_prompts=1,
        ),
        prediction_resamples=40,
        val_fraction=0.05,
        prompt_fraction=0.03,
        max_chunk_chars=2000,
    ),
}


def get_scale(name: str) -> Scale:
    """The scale called ``name``; ValueError naming the allowed names otherwise."""
    if name not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {name!r}")
    return SCALES[name]
