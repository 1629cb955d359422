"""The lookup table of ``sdsl presets --plan`` and of the book's plan chapter.

For every target preset of ``data/presets.csv`` (dense models from about 1B to 405B parameters,
each size and token count from its model card, named in the presets' provenance) one row:

* ``N*`` (method notes, section 6; :func:`sdsl.plan.plan` with the preset's own draft-family
  tokens ``D``, the Besiroglu et al. 2024 constants and the paper's Table 3 plane), the continuous
  and the best integer ``gamma*`` at ``N*``, ``alpha(N*)`` and the tokens-per-FLOP ratio
  ``T(N*) * 2M`` (tokens per FLOP over plain decoding: not a wall-clock speedup);
* where the preset's architecture is known, the wall-clock speedup of a draft of ``N*``
  parameters on one accelerator preset (default ``h100-sxm``, bf16) at batch 1 and an empty KV
  cache, with its best integer draft length (the step-time model of :mod:`sdsl.model.hardware`),
  on the fewest such devices in tensor parallel that hold both models (the rates scale with their
  number, the per-layer overhead does not: the speedup depends on it);
* mixture-of-experts presets listed as refused (the law is for dense targets), presets whose model
  card states no token count listed with their tokens unknown (never guessed).

:func:`lookup_rows` makes the rows without pandas (``sdsl presets --plan``); :func:`lookup_table`
is the same rows as a DataFrame (the book). Both show the same numbers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LOOKUP_COLUMNS", "lookup_rows", "lookup_table"]

#: The columns of the table, in order.
LOOKUP_COLUMNS = (
    "preset",
    "model",
    "params",
    "tokens",
    "draft_tokens",
    "status",
    "n_star",
    "gamma_star_continuous",
    "gamma_star_integer",
    "alpha",
    "tokens_per_flop_ratio",
    "hardware",
    "gpus",
    "wall_clock_gamma",
    "wall_clock_speedup",
    "note",
)


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _wall_clock(
    row: dict[str, Any], target, n_star: float, alpha: float, acc, batch: float, context: float
) -> dict[str, Any]:
    from sdsl.model import hardware as H

    if target.shape is None:
        return {"note": "architecture unknown: no wall-clock speedup"}
    shape, _ = H.target_shape(target.params, target.shape)
    gpus = H.devices_to_hold(shape, H.draft_shape(n_star, shape), acc, batch, context)
    if gpus is None:
        return {"note": f"does not fit on {H.DEVICE_COUNTS[-1]} devices"}
    gamma, speed = H.speedup_at(n_star, alpha, shape, acc.times(gpus), batch, context)
    return {"gpus": gpus, "wall_clock_gamma": int(gamma), "wall_clock_speedup": float(speed)}


def lookup_rows(hardware: str = "h100-sxm", batch: float = 1, context: float = 0) -> list[dict[str, Any]]:
    """One row per target preset of ``data/presets.csv`` (see the module notes), no pandas.

    Parameters
    ----------
    hardware : str
        Accelerator preset of ``data/accelerators.csv`` for the wall-clock speedup.
    batch : float
        Sequences decoded together (>= 1).
    context : float
        Tokens in each sequence's KV cache (>= 0).

    Returns
    -------
    list of dict
        Keys :data:`LOOKUP_COLUMNS`; ``None`` where a value does not apply or is unknown. ``status``
        is ``"planned"``, ``"refused: mixture of experts"`` or ``"tokens unknown"``; refused rows
        also carry ``refused``, the planner's one-line message.
    """
    from sdsl import plan as P
    from sdsl import validation as V
    from sdsl.model import hardware as H
    from sdsl.model.deploy import integer_draft_length

    # the checks of sdsl plan --batch/--context/--hardware (sdsl.plan.deployment.check_wall_clock)
    batch = V.integer(batch, "batch", low=1, what="sequences decoded together", strings=False)
    context = V.integer(context, "context", low=0, what="tokens in each KV cache", strings=False)
    acc = H.get_accelerator(V.text(hardware, "hardware", "an accelerator preset"))
    out = []
    for r in P.preset_records():
        if r["role"] != "target":
            continue
        row: dict[str, Any] = dict.fromkeys(LOOKUP_COLUMNS)
        row.update(
            preset=r["preset"],
            model=r["model"],
            params=float(r["params"]),
            tokens=float(r["tokens"]) if _known(r["tokens"]) else None,
            draft_tokens=float(r["draft_tokens"]) if _known(r["draft_tokens"]) else None,
        )
        try:
            inp = P.check_inputs(preset=r["preset"])
        except ValueError as exc:
            msg = " ".join(str(exc).split())
            row["refused"] = msg
            row["status"] = (
                "refused: mixture of experts"
                if "mixture-of-experts" in msg
                else "tokens unknown"
                if "not stated" in msg
                else "refused"
            )
            row["note"] = (
                "the law is for dense targets"
                if r["architecture"] == "moe"
                else "the model card states no token count: give --target-tokens and --draft-tokens"
                if row["status"] == "tokens unknown"
                else msg
            )
            out.append(row)
            continue
        o = P.plan(inp)
        il = integer_draft_length(o.alpha, o.n_star, o.m)
        row.update(
            status="planned",
            tokens=inp.target.tokens,
            draft_tokens=inp.draft_tokens[0],
            n_star=o.n_star,
            gamma_star_continuous=il.gamma_continuous,
            gamma_star_integer=int(il.gamma_integer),
            alpha=o.alpha,
            tokens_per_flop_ratio=o.tokens_per_flop * 2.0 * o.m,
            hardware=acc.name,
        )
        row.update(_wall_clock(r, inp.target, o.n_star, o.alpha, acc, float(batch), float(context)))
        out.append(row)
    return out


def lookup_table(hardware: str = "h100-sxm", batch: float = 1, context: float = 0) -> pd.DataFrame:
    """:func:`lookup_rows` as a DataFrame, columns :data:`LOOKUP_COLUMNS` (unknown values NaN, or
    None in text columns)."""
    import pandas as pd

    return pd.DataFrame(
        [{k: r[k] for k in LOOKUP_COLUMNS} for r in lookup_rows(hardware, batch, context)], columns=list(LOOKUP_COLUMNS)
    )
