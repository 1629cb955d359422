"""The target to plan for: a preset of ``data/presets.csv`` (its model card's size and tokens) or
given numbers, the draft family's tokens, the search range and candidate drafts; every value checked
with one line that names it."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sdsl import validation as V
from sdsl.validation import shown

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd


__all__ = [
    "DEFAULT_N_LOW",
    "Target",
    "presets",
    "preset_records",
    "preset_names",
    "get_preset",
    "positive_number",
    "resolve_target",
    "resolve_draft_tokens",
    "resolve_n_range",
    "resolve_candidates",
]

#: Smallest draft size searched by default (parameters).
DEFAULT_N_LOW = 1e7


@dataclass(frozen=True)
class Target:
    """The target to plan for: its size ``M``, its tokens ``D'`` and (from a preset) the default
    ``D`` of a draft of its family."""

    name: str
    params: float
    tokens: float
    draft_tokens: float | None = None
    draft_family: str | None = None
    hf_id: str | None = None
    """Repository id of the model on the Hugging Face hub (for engine settings), if known."""
    shape: Mapping[str, float] | None = None
    """Architecture for the hardware model: ``layers``, ``hidden``, ``heads``, ``kv_heads``,
    ``head_dim``, ``vocab``, ``tied_embeddings`` (from the preset's configuration), or None."""
    tokenizer: str | None = None
    """Tokenizer group of the preset (drafts of the same group can be paired with it)."""
    dropped_hf_id: str | None = None
    """The preset's repository id, left out of the engine settings because a given size is not the
    preset model's."""


def presets() -> pd.DataFrame:
    """The validated table of presets (``data/presets.csv``)."""
    from sdsl import data

    return data.load("presets")


def preset_records() -> tuple[dict[str, Any], ...]:
    """The presets as validated rows (:func:`sdsl.data.records`, no pandas)."""
    from sdsl.data import records

    return records("presets")


def preset_names() -> list[str]:
    """Preset names, as accepted by ``--preset`` and the notebook's ``preset`` parameter."""
    return [r["preset"] for r in preset_records()]


_SHAPE_COLUMNS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings")


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _target_of_row(row: Mapping[str, Any]) -> Target:
    """A preset row as a :class:`Target`; a mixture-of-experts row raises ``ValueError``."""
    if row.get("architecture") == "moe":
        active = row.get("active_params")
        act = f", {active / 1e9:.3g}B active per token" if active is not None and _known(active) else ""
        raise ValueError(
            f"{shown('preset')} {row['preset']!r} ({row['model']}) is a mixture-of-experts model "
            f"({row['params'] / 1e9:.4g}B parameters in all{act}): the scaling law (Eq. 5 on the loss "
            f"law L(N, D)) was fitted on dense targets and says nothing about a sparse one; choose a "
            f"dense target ('sdsl presets' marks them)"
        )
    shape = {c: float(row[c]) for c in _SHAPE_COLUMNS if _known(row.get(c))}
    draft_tokens = row["draft_tokens"]
    return Target(
        name=str(row["model"]),
        params=float(row["params"]),
        tokens=float(row["tokens"]),
        draft_tokens=float(draft_tokens) if _known(draft_tokens) else None,
        draft_family=str(row["draft_family"]),
        hf_id=row.get("hf_id") or None,
        shape=shape if len(shape) == len(_SHAPE_COLUMNS) else None,
        tokenizer=row.get("tokenizer") or None,
    )


def get_preset(name: str) -> Target:
    """The :class:`Target` of a preset, by preset name or model name (case-insensitive).

    An unknown name raises ``ValueError`` suggesting the closest names (difflib)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{shown('preset')} must be a preset name such as 'llama-3-70b', got {V.show(name)}")
    rows = preset_records()
    seen: dict[str, str] = {}
    for r in rows:  # names are matched without case: two that differ only in case would be one
        other = seen.setdefault(r["preset"].lower(), r["preset"])
        if other != r["preset"]:
            raise ValueError(
                f"data/presets.csv names presets {other!r} and {r['preset']!r}, which differ only in case: "
                f"{shown('preset')} is matched without case, so give each preset a name of its own"
            )
    key = name.strip().lower()
    hit = [r for r in rows if key in (r["preset"].lower(), r["model"].lower())]
    if not hit:
        names = [r["preset"] for r in rows]
        close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(f"unknown {shown('preset')} {name!r}; {hint}known presets: {', '.join(names)}")
    if len({r["preset"] for r in hit}) > 1:
        raise ValueError(
            f"{shown('preset')} {name!r} matches presets {', '.join(repr(r['preset']) for r in hit)} (a preset "
            f"name and a model name are matched without case): give the preset's own name"
        )
    row = hit[0]
    if row.get("role") == "draft":
        raise ValueError(
            f"{shown('preset')} {row['preset']!r} ({row['model']}) is a draft-only preset (role 'draft' in "
            f"data/presets.csv: a candidate draft, not a target to plan for); choose a target preset ('sdsl "
            f"presets' marks the drafts), or give {shown('target_params')} and {shown('target_tokens')}"
        )
    return _target_of_row(row)


def positive_number(value: Any, name: str, unit: str, bounds: tuple[float, float] | None = None) -> float:
    """``value`` as a finite float > 0 (and inside ``bounds``, if given); otherwise a ``ValueError``
    naming ``name`` (as the user typed it: :func:`sdsl.validation.shown`) and its unit.

    Accepts numbers and numeric strings (``"70.6e9"``), as given on the command line."""
    if bounds is None:
        return V.number(value, name, low=0, low_open=True, what=unit)
    x = V.number(value, name, low=0, low_open=True, what=unit)
    if not bounds[0] <= x <= bounds[1]:
        raise ValueError(
            f"{shown(name)} must lie in [{bounds[0]:g}, {bounds[1]:g}] ({unit}; outside it the loss law is "
            f"extrapolated beyond any trained model and N* means nothing), got {V.show(value)}"
        )
    return x


def resolve_target(preset: str | None = None, target_params: Any = None, target_tokens: Any = None) -> Target:
    """The target from a preset and/or explicit ``target_params`` (M) and ``target_tokens`` (D').

    Explicit values override the preset's. Without a preset both are required. ``M`` must lie in
    :data:`sdsl.validation.TARGET_PARAMS` and ``D'`` in :data:`sdsl.validation.TOKENS`."""
    base = get_preset(preset) if preset is not None else None
    if base is None and (target_params is None or target_tokens is None):
        missing = [
            shown(n) for n, v in (("target_params", target_params), ("target_tokens", target_tokens)) if v is None
        ]
        raise ValueError(
            f"no target: give a preset ({shown('preset')}) or both {shown('target_params')} (M, parameters) and "
            f"{shown('target_tokens')} (D', tokens); missing {', '.join(missing)}"
        )
    m = (
        positive_number(target_params, "target_params", "parameters M of the target", V.TARGET_PARAMS)
        if target_params is not None or base is None  # no preset: both were given (checked above)
        else base.params
    )
    d_t = (
        positive_number(target_tokens, "target_tokens", "pre-training tokens D' of the target", V.TOKENS)
        if target_tokens is not None or base is None
        else base.tokens
    )
    if base is not None and not math.isfinite(d_t):  # given tokens are finite: only a preset's can be NaN
        raise ValueError(
            f"the pre-training tokens D' of {base.name} are not stated by its model card (data/presets.yml): "
            f"give {shown('target_tokens')} yourself"
        )
    if base is None:
        return Target(name=f"M = {m:.4g}", params=m, tokens=d_t)
    same = target_params is None and target_tokens is None
    resized = m != base.params  # another size is another model: the preset's is not what is planned
    return Target(
        name=base.name if same else f"{base.name} (modified)",
        params=m,
        tokens=d_t,
        draft_tokens=base.draft_tokens,
        draft_family=base.draft_family,
        hf_id=None if resized else base.hf_id,
        dropped_hf_id=base.hf_id if resized else None,
        shape=None if resized else base.shape,
        tokenizer=base.tokenizer,
    )


def resolve_draft_tokens(draft_tokens: Any, target: Target) -> tuple[float, ...]:
    """The draft family's pre-training tokens ``D``: one number or several; ``None`` takes the
    preset's default (the family's own tokens)."""
    if draft_tokens is None:
        if target.draft_tokens is None:
            why = (
                "the draft family's tokens are not stated by its model cards (data/presets.yml)"
                if target.draft_family
                else "the target is not a preset"
            )
            raise ValueError(f"{shown('draft_tokens')} (pre-training tokens D of the draft family) is required: {why}")
        return (target.draft_tokens,)
    values = list(draft_tokens) if isinstance(draft_tokens, (list, tuple, np.ndarray)) else [draft_tokens]
    if not values:
        raise ValueError(
            f"{shown('draft_tokens')} (pre-training tokens D of the draft family) is empty: give at least one value"
        )
    out = tuple(
        positive_number(v, "draft_tokens", "pre-training tokens D of the draft family", V.TOKENS) for v in values
    )
    again = next((d for i, d in enumerate(out) if d in out[:i]), None)
    if again is not None:  # the same plan twice, not two plans
        raise ValueError(f"{shown('draft_tokens')} gives D = {again:g} twice: each value once")
    return out


def resolve_n_range(n_range: Any, m: float) -> tuple[float, float]:
    """The searched range of draft sizes ``(low, high)`` in parameters: ``low < high <= M``, both
    in :data:`sdsl.validation.MODEL_PARAMS`.

    ``None``: ``(1e7, M/2)`` (``(M/4, M/2)`` for a target under 4e7)."""
    if n_range is None:
        return (min(DEFAULT_N_LOW, m / 4), m / 2)
    lo, hi = V.interval(
        n_range, "n_range", low=V.MODEL_PARAMS[0], high=V.MODEL_PARAMS[1], what="draft sizes searched, in parameters"
    )
    if hi > m:
        raise ValueError(
            f"{shown('n_range')} high = {hi:.6g} exceeds the target size M = {m:.6g}: a draft must be "
            f"smaller than its target"
        )
    return (lo, hi)


def resolve_candidates(candidates: Any, m: float | None = None) -> dict[str, float]:
    """Candidate drafts as ``{label: parameters}``: a mapping, a list of sizes (labelled by size)
    or ``None``; each size in :data:`sdsl.validation.MODEL_PARAMS` and below ``m`` if given."""
    if candidates is None:
        return {}
    if isinstance(candidates, Mapping):
        items = list(candidates.items())
    else:
        values = [candidates] if isinstance(candidates, (int, float, str)) else list(candidates)
        items = []
        for v in values:
            x = positive_number(v, "candidates", "draft parameters", V.MODEL_PARAMS)
            if m is not None and x >= m:
                raise ValueError(f"{shown('candidates')} {x:.6g} is not smaller than the target size M = {m:.6g}")
            items.append((f"{x / 1e9:.3g}B" if x >= 1e9 else f"{x / 1e6:.3g}M", x))
    out: dict[str, float] = {}
    for k, v in items:
        x = positive_number(v, f"candidates {k!r}", "draft parameters", V.MODEL_PARAMS)
        if m is not None and x >= m:
            raise ValueError(f"{shown('candidates')} {k!r} = {x:.6g} is not smaller than the target size M = {m:.6g}")
        if str(k) in out:
            raise ValueError(f"{shown('candidates')} gives {str(k)!r} twice: each candidate once")
        out[str(k)] = x
    return out
