"""The paper's settings, from ``data/models``: the pre-training tokens of each draft family, the
(target, draft family) configurations of its tables (Table 5's, or the acceptance tables' targets),
and the Eq. 5 coefficients a chapter parameter names (method notes, section 6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sdsl import data as _data
from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients
from sdsl.validation import as_positive

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TABLE5_TARGETS",
    "TABLE5_FAMILIES",
    "ACCEPTANCE_TARGETS",
    "resolve_coefficients",
    "family_tokens",
    "configurations",
]

#: Targets and draft families of the paper's Table 5.
TABLE5_TARGETS: tuple[str, ...] = ("Qwen1.5-14B", "Qwen1.5-32B")
TABLE5_FAMILIES: tuple[str, ...] = ("OPT", "Qwen1.5", "Qwen2.5")
#: The five targets of the acceptance measurements of Tables 1 and 2.
ACCEPTANCE_TARGETS: tuple[str, ...] = ("OPT-13B", "OPT-30B", "OPT-66B", "Qwen1.5-14B", "Qwen1.5-32B")


def resolve_coefficients(values: Sequence[float] | None = None) -> AcceptanceCoefficients:
    """The Eq. 5 coefficients of a chapter parameter: None for the paper's Table 3
    (:data:`sdsl.PAPER_EQ5`), or three numbers ``[A, B, C]``."""
    if values is None:
        return PAPER_EQ5
    v = list(values)
    if len(v) != 3:
        raise ValueError(f"coefficients must be None or three numbers [A, B, C], got {v!r}")
    A, B, C = (float(x) for x in v)
    return AcceptanceCoefficients(A, B, C, source="parameter")


def family_tokens(family: str, models: pd.DataFrame | None = None) -> float:
    """Pre-training tokens ``D`` of a draft family: the tokens of its drafts in ``data/models``
    (all drafts of a family share them: OPT 180e9, Qwen1.5 2.4e12, Qwen2.5 18e12)."""
    models = _data.load("models") if models is None else models
    drafts = models[(models["family"] == family) & (models["role"] == "draft")]
    if drafts.empty:
        known = sorted(models.loc[models["role"] == "draft", "family"].unique())
        raise ValueError(f"family must be one of the draft families {known}, got {family!r}")
    tokens = drafts["tokens"].unique()
    if tokens.size != 1:
        raise ValueError(f"the drafts of family {family!r} disagree on their pre-training tokens: {tokens}")
    return float(tokens[0])


def configurations(
    targets: Sequence[str] = TABLE5_TARGETS,
    families: Sequence[str] = TABLE5_FAMILIES,
    d_target: Mapping[str, float] | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """(target, draft family) settings, by default Table 5's: ``target, m, d_target, draft_family, d_draft``
    (:data:`ACCEPTANCE_TARGETS` for the targets of Tables 1 and 2).

    ``M`` and ``D'`` are the target's parameters and tokens in ``data/models``, ``D`` the family's
    tokens (:func:`family_tokens`). ``d_target`` overrides ``D'`` per target, e.g.
    ``{"Qwen1.5-14B": 4e12}`` (see :func:`sdsl.audit.table5.implied_d_target`).
    """
    models = _data.load("models") if models is None else models
    by_name = models.set_index("model")
    overrides = dict(d_target or {})
    unknown = [t for t in overrides if t not in list(targets)]
    if unknown:
        raise ValueError(f"d_target overrides name targets {unknown} that are not in targets {list(targets)}")
    rows = []
    for t in targets:
        if t not in by_name.index:
            raise ValueError(f"targets must be models of data/models, got {t!r}")
        dp = float(as_positive(overrides.get(t, by_name.loc[t, "tokens"]), f"d_target[{t!r}]"))
        for f in families:
            rows.append(
                {
                    "target": t,
                    "m": float(by_name.loc[t, "params"]),
                    "d_target": dp,
                    "draft_family": f,
                    "d_draft": family_tokens(f, models),
                }
            )
    import pandas as pd

    return pd.DataFrame(rows, columns=["target", "m", "d_target", "draft_family", "d_draft"])
