"""sdsl: the reproducible companion to "Speculative Decoding Scaling Laws (SDSL): Throughput
Optimization Made Simple" (Bozorgkhoo and Molybog 2026, arXiv 2603.11053).

The top level holds a handful of the theory's pure functions, imported from their homes: the
optimal draft (:mod:`sdsl.model.optimum`), the throughput of speculative decoding
(:mod:`sdsl.model.throughput`) and the loss and acceptance laws (:mod:`sdsl.model.laws`). Everything
else is imported from the module that defines it: the plan from :mod:`sdsl.plan`, the estimators of
alpha from :mod:`sdsl.measure.estimators`, data loading from :mod:`sdsl.data`, argument checks from
:mod:`sdsl.validation`, tolerances from :mod:`sdsl.tolerance`.
"""

from sdsl.model.laws import (
    BESIROGLU_2024,
    HOFFMANN_2022,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    loss,
    perplexity,
)
from sdsl.model.optimum import DraftOptimum, optimal_draft_size, optimal_draft_sizes, throughput_curve
from sdsl.model.throughput import expected_tokens, optimal_gamma, tokens_per_flop

__version__ = "0.1.0"

__all__ = [
    "AcceptanceCoefficients",
    "BESIROGLU_2024",
    "DraftOptimum",
    "HOFFMANN_2022",
    "LossConstants",
    "PAPER_EQ5",
    "acceptance_rate",
    "expected_tokens",
    "loss",
    "optimal_draft_size",
    "optimal_draft_sizes",
    "optimal_gamma",
    "perplexity",
    "throughput_curve",
    "tokens_per_flop",
]
