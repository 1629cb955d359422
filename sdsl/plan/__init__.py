"""Plan a draft for your own target: N*, gamma*, the gain, and how sure we are.

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
* :func:`sdsl.chapters.plan_draft.figure_throughput` -- the throughput curve with the optimum, its interval and the
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

from sdsl.plan.alpha_source import (
    ALPHA_SOURCES,
    MEASUREMENT_COLUMNS,
    AlphaModel,
    fit_acceptance_plane,
    read_measurements,
    resolve_alpha_source,
)
from sdsl.plan.core import (
    PlanInputs,
    bootstrap_n_star,
    candidate_shares,
    check_inputs,
    covariance_sensitivity,
    n_star_interval,
    plan,
    plan_table,
)
from sdsl.plan.targets import (
    DEFAULT_N_LOW,
    Target,
    get_preset,
    positive_number,
    preset_names,
    preset_records,
    presets,
    resolve_candidates,
    resolve_draft_tokens,
    resolve_n_range,
    resolve_target,
)

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
