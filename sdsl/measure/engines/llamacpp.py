"""llama.cpp's ``llama-server --metrics`` scrape: vLLM's spec-decode schema with the ``llamacpp:``
prefix, no labels, totals rounded to 6 significant digits.

``tools/server`` (``server_task_result_metrics::to_metrics``) writes

* ``llamacpp:spec_decode_num_draft_tokens_total``, ``llamacpp:spec_decode_num_accepted_tokens_total``
  and ``llamacpp:spec_decode_num_drafts_total`` (verification steps) as ``double`` values through a
  ``std::stringstream`` at its default precision, so ``2370367`` prints as ``2.37037e+06``;
* ``llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="i"}`` from ``uint64`` counts,
  exactly; absent before the first completed speculative request.

The exact sum of the per-position counts is used as the accepted tokens; the totals are checked
against it, and enter the estimate, within the rounding tolerance :data:`REL_TOLERANCE` (half a unit
of the 6th significant digit: ``|exact - printed| <= 5e-6 x printed``), which the interval covers.
llama.cpp's draft length varies (``--draft-max`` with the ``--draft-p-min`` early stop, and the
tokens left to generate), so drafts shorter than ``k`` are the rule: see
:class:`~sdsl.measure.engines.types.ShortDrafts`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdsl.measure.engines.prometheus import Scrape
from sdsl.measure.engines.types import EngineRead
from sdsl.measure.engines.vllm import read_scrapes

__all__ = ["PREFIX", "REL_TOLERANCE", "read_llamacpp"]

PREFIX = "llamacpp:"
#: Relative rounding of a value printed with 6 significant digits (half a unit in the last digit).
REL_TOLERANCE = 5e-6


def read_llamacpp(
    scrapes: Sequence[Scrape], paths: Sequence[str], *, level: float = 0.95, delta: bool = False, detected_by: str = ""
) -> EngineRead:
    """:func:`sdsl.measure.engines.vllm.read_scrapes` with the ``llamacpp:`` prefix and the
    6-significant-digit tolerance."""
    read = read_scrapes(
        scrapes,
        paths,
        source="llamacpp-prometheus",
        prefix=PREFIX,
        level=level,
        rel_tolerance=REL_TOLERANCE,
        delta=delta,
        detected_by=detected_by,
    )
    note = (
        "llama.cpp rounds its totals to 6 significant digits (tolerance 5e-6 relative); the per-position "
        "counts are exact"
    )
    return EngineRead(read.path, read.source, read.detected_by, read.readings, read.skipped, read.notes + (note,))
