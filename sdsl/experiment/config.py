"""The scales of the laptop-scale experiment: which models, how much data, how they are trained and
measured, and every seed.

A :class:`Scale` is plain data (frozen dataclasses); :data:`SCALES` holds ``full`` (the committed
CPU run, about 30 minutes on two cores), ``gpu`` (models to 25 M non-embedding parameters, for a
machine with a GPU; not run yet) and ``smoke`` (three tiny models on a committed slice of the KJV,
the CI run, about a minute). A run is one model shape trained on one token budget; every
shape is trained on the common budget, some also on other budgets so that the data term of the
loss law is identified. The targets are the largest shapes at the common budget; every smaller run
is a draft of each target.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

__all__ = ["PRECISIONS", "SCALES", "Measurement", "ModelShape", "Recipe", "RunSpec", "Scale", "get_scale"]

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
    """One training run: a shape and its token budget ``tokens`` (tokens predicted in training)."""

    shape: ModelShape
    tokens: int

    @property
    def run_id(self) -> str:
        return f"{self.shape.name}-d{_label(self.tokens)}"


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
    """How alpha and wall-clock speed are measured for each pair: at temperature 1 by the harness
    prompt by prompt (:func:`sdsl.experiment.pairs.measure_alpha`), greedy by the exact batched
    replay checked against the harness on its first prompts
    (:func:`sdsl.experiment.greedy.measure_alpha_greedy`)."""

    gamma: int = 4
    temperatures: tuple[float, ...] = (1.0, 0.0)
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
    timing_prompts: int = 4
    timing_new_tokens: int = 64
    timing_repeats: int = 2
    max_gamma: int = 12
    cost_prompts: int = 4  # prompts for each model's decoding cost (time per token)


@dataclass(frozen=True)
class Scale:
    """Everything one run of the experiment needs, except the machine."""

    name: str
    corpus: str  # "debian": the installed Debian packages; "committed": data/kjv_genesis.txt
    vocab_size: int
    shapes: tuple[ModelShape, ...]
    common_tokens: int
    extra_budgets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    n_targets: int = 2
    recipe: Recipe = Recipe()
    measurement: Measurement = Measurement()
    val_fraction: float = 0.03
    prompt_fraction: float = 0.01
    max_chunk_chars: int = 4000
    seed: int = 20260317
    min_corpus_tokens: int = 0
    max_epochs: float | None = None  # refuse a corpus whose training split the largest budget repeats more often
    needs_accelerator: bool = False  # the command line refuses to train it on the CPU

    def __post_init__(self) -> None:
        names = [s.name for s in self.shapes]
        if len(set(names)) != len(names):
            raise ValueError(f"shapes must be distinct, got {names}")
        unknown = sorted(set(self.extra_budgets) - set(names))
        if unknown:
            raise ValueError(f"extra_budgets names unknown shapes {unknown}; shapes: {names}")
        if not 1 <= self.n_targets < len(self.shapes):
            raise ValueError(f"n_targets must be in [1, {len(self.shapes) - 1}], got {self.n_targets}")

    def params(self, shape: ModelShape) -> int:
        return shape.params(self.vocab_size)

    def sorted_shapes(self) -> list[ModelShape]:
        return sorted(self.shapes, key=self.params)

    def runs(self) -> list[RunSpec]:
        """Every training run, smallest shape first, budgets in increasing order."""
        out: list[RunSpec] = []
        for s in self.sorted_shapes():
            budgets = sorted({self.common_tokens, *self.extra_budgets.get(s.name, ())})
            out.extend(RunSpec(s, int(b)) for b in budgets)
        return out

    def targets(self) -> list[RunSpec]:
        """The ``n_targets`` largest shapes at the common budget, largest first."""
        shapes = self.sorted_shapes()[::-1][: self.n_targets]
        return [RunSpec(s, self.common_tokens) for s in shapes]

    def pairs(self) -> list[tuple[RunSpec, RunSpec]]:
        """``(draft, target)`` for every target and every run of a smaller shape."""
        out = []
        for t in self.targets():
            for r in self.runs():
                if self.params(r.shape) < self.params(t.shape):
                    out.append((r, t))
        return out

    def as_dict(self) -> dict:
        d = asdict(self)
        d["extra_budgets"] = {k: list(v) for k, v in self.extra_budgets.items()}
        return d

    def digest(self) -> str:
        """sha256 of the scale's settings (a resumed run must have the same)."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:16]


#: Depth grows with width (width / layers between 8 and 40), head width 8 to 32.
_FULL_SHAPES = (
    ModelShape(8, 1, 1),
    ModelShape(16, 1, 1),
    ModelShape(24, 1, 2),
    ModelShape(32, 1, 2),
    ModelShape(48, 2, 3),
    ModelShape(64, 2, 4),
    ModelShape(96, 3, 4),
    ModelShape(128, 3, 4),
    ModelShape(160, 4, 5),
)

#: The GPU scale: 9 shapes from 0.1 M to 25 M non-embedding parameters (0.4 M to 27 M with the
#: token table of 4,096), widths 64 to 512 with head width 32 to 64, depth one layer per 64 of width.
_GPU_SHAPES = (
    ModelShape(64, 1, 2),
    ModelShape(96, 2, 2),
    ModelShape(128, 2, 2),
    ModelShape(192, 3, 3),
    ModelShape(256, 4, 4),
    ModelShape(320, 5, 5),
    ModelShape(384, 6, 6),
    ModelShape(448, 7, 7),
    ModelShape(512, 8, 8),
)

SCALES: dict[str, Scale] = {
    "full": Scale(
        name="full",
        corpus="debian",
        vocab_size=2048,
        shapes=_FULL_SHAPES,
        common_tokens=2_000_000,
        extra_budgets={"w16l1": (500_000, 1_000_000), "w32l1": (500_000, 1_000_000), "w96l3": (500_000, 1_000_000)},
        min_corpus_tokens=5_000_000,
    ),
    # Not run yet: needs a GPU (`--device cuda`); `python -m sdsl.experiment budget --scale gpu`
    # prints its runs, FLOPs and epochs. 20 M tokens is about 3.4 epochs of the training split
    # (Muennighoff et al. 2023: up to about 4 epochs of repeated data cost little loss).
    "gpu": Scale(
        name="gpu",
        corpus="debian",
        vocab_size=4096,
        shapes=_GPU_SHAPES,
        common_tokens=20_000_000,
        max_epochs=4.0,
        needs_accelerator=True,
        extra_budgets={
            "w128l2": (5_000_000, 10_000_000),
            "w256l4": (5_000_000, 10_000_000),
            "w384l6": (5_000_000, 10_000_000),
        },
        recipe=Recipe(batch_size=64, seq_len=256, curve_eval_windows=64, precision="bf16"),
        measurement=Measurement(timing_prompts=2, timing_repeats=1),
        min_corpus_tokens=5_000_000,
    ),
    "smoke": Scale(
        name="smoke",
        corpus="committed",
        vocab_size=384,
        shapes=(ModelShape(16, 1, 2), ModelShape(24, 1, 2), ModelShape(32, 2, 2)),
        common_tokens=40_000,
        extra_budgets={"w16l1": (20_000,)},
        recipe=Recipe(batch_size=8, seq_len=64, curve_points=10, curve_evals=2, curve_eval_windows=8, eval_windows=64),
        measurement=Measurement(
            prompt_tokens=16,
            new_tokens=24,
            half_width=0.08,
            min_prompts=4,
            max_prompts=12,
            min_prompts_greedy=12,
            max_prompts_greedy=12,
            prompt_batch=4,
            greedy_check_prompts=4,
            greedy_batch=8,
            n_resamples=100,
            overlap_windows=8,
            timing_prompts=2,
            timing_new_tokens=16,
            timing_repeats=1,
            max_gamma=6,
            cost_prompts=2,
        ),
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
