"""sdsl: the reproducible companion to "Speculative Decoding Scaling Laws (SDSL): Throughput
Optimization Made Simple" (Bozorgkhoo and Molybog 2026, arXiv 2603.11053).

The public API re-exports the pure functions of the theory (:mod:`sdsl.model.throughput`,
:mod:`sdsl.model.laws`); data loading lives in :mod:`sdsl.data`, paths in :mod:`sdsl.paths`.
"""

from sdsl.model.laws import (
    BESIROGLU_2024,
    HOFFMANN_2022,
    LOSS_CONSTANTS,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    loss,
    perplexity,
    resolve_constants,
)
from sdsl.model.optimum import (
    DraftOptimum,
    optimal_draft_size,
    optimal_draft_sizes,
    throughput_curve,
)
from sdsl.model.throughput import (
    expected_tokens,
    flops_per_iteration,
    optimal_gamma,
    optimal_tokens_per_flop,
    tokens_per_flop,
)

__version__ = "0.1.0"


#: Public names that live in heavier modules (statsmodels, scipy.stats): imported on first use so
#: that `import sdsl` and the `sdsl` command stay fast.
_LAZY = {
    "AlphaEstimate": "sdsl.measure.estimators",
    "ConstantAlphaTest": "sdsl.measure.estimators",
    "alpha_from_accepted": "sdsl.measure.estimators",
    "alpha_bootstrap": "sdsl.measure.estimators",
    "alpha_from_position_counts": "sdsl.measure.estimators",
    "alpha_from_mean_tokens": "sdsl.measure.mean_tokens",
    "constant_alpha_test": "sdsl.measure.estimators",
    "read_engine_files": "sdsl.measure.engines",
    "alpha_from_trial_bounds": "sdsl.measure.bounds",
}


_ALIASES = {"read_engine_files": "read_files"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), _ALIASES.get(name, name))
    raise AttributeError(f"module 'sdsl' has no attribute {name!r}")


__all__ = [
    "AcceptanceCoefficients",
    "AlphaEstimate",
    "BESIROGLU_2024",
    "ConstantAlphaTest",
    "DraftOptimum",
    "HOFFMANN_2022",
    "LOSS_CONSTANTS",
    "LossConstants",
    "PAPER_EQ5",
    "acceptance_rate",
    "alpha_bootstrap",
    "alpha_from_accepted",
    "alpha_from_trial_bounds",
    "alpha_from_mean_tokens",
    "alpha_from_position_counts",
    "constant_alpha_test",
    "expected_tokens",
    "flops_per_iteration",
    "loss",
    "optimal_draft_size",
    "optimal_draft_sizes",
    "optimal_gamma",
    "optimal_tokens_per_flop",
    "perplexity",
    "read_engine_files",
    "resolve_constants",
    "throughput_curve",
    "tokens_per_flop",
]
