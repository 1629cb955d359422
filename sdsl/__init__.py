"""sdsl: the reproducible companion to "Speculative Decoding Scaling Laws (SDSL): Throughput
Optimization Made Simple" (Bozorgkhoo and Molybog 2026, arXiv 2603.11053).

The public API re-exports the pure functions of the theory (:mod:`sdsl.theory`,
:mod:`sdsl.laws`); data loading lives in :mod:`sdsl.data`, paths in :mod:`sdsl.paths`.
"""

from sdsl.laws import (
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
from sdsl.theory import (
    DraftOptimum,
    expected_tokens,
    flops_per_iteration,
    optimal_draft_size,
    optimal_gamma,
    optimal_tokens_per_flop,
    throughput_curve,
    tokens_per_flop,
)

__version__ = "0.1.0"


def __getattr__(name: str):
    # The vectorised grid solver pulls in statsmodels and matplotlib (sdsl.grid); import it on
    # first use so that `import sdsl` (and the `sdsl` command) stays fast.
    if name == "optimal_draft_sizes":
        from sdsl.grid import optimal_draft_sizes

        return optimal_draft_sizes
    raise AttributeError(f"module 'sdsl' has no attribute {name!r}")

__all__ = [
    "AcceptanceCoefficients",
    "BESIROGLU_2024",
    "DraftOptimum",
    "HOFFMANN_2022",
    "LOSS_CONSTANTS",
    "LossConstants",
    "PAPER_EQ5",
    "acceptance_rate",
    "expected_tokens",
    "flops_per_iteration",
    "loss",
    "optimal_draft_size",
    "optimal_draft_sizes",
    "optimal_gamma",
    "optimal_tokens_per_flop",
    "perplexity",
    "resolve_constants",
    "throughput_curve",
    "tokens_per_flop",
]
