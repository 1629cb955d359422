"""Whether a model's KV cache can be rolled back after a rejected draft.

Speculative decoding verifies ``gamma`` drafted tokens in one forward and, after the first
rejection, must drop the cache entries of the rejected tokens (``Cache.crop``). That is possible
for full-attention layers; recurrent state (Mamba, RWKV, the linear-attention layers of hybrid
models such as Qwen3-Next) cannot be put back, and transformers marks such models ``_is_stateful``
and such cache layers ``is_croppable = False`` (the check its own assisted generation makes).
These functions refuse such a pair with one clear line before anything fails deep inside a
forward pass.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_croppable_model", "check_croppable_cache"]


def check_croppable_model(model: Any, role: str) -> None:
    """Raise ``ValueError`` when ``model`` is stateful (its cache cannot be cropped)."""
    if getattr(model, "_is_stateful", False):
        raise ValueError(
            f"{role} model {type(model).__name__} keeps a recurrent state that cannot be rolled back after a rejected "
            "draft: speculative decoding needs a cache that can be cropped (full or sliding-window attention)"
        )


def check_croppable_cache(cache: Any, role: str, model: Any = None) -> None:
    """Raise ``ValueError`` when ``cache`` (after the prefill) reports ``is_croppable = False``."""
    croppable = getattr(cache, "is_croppable", True)
    if croppable is False:
        layers = sorted(
            {
                type(layer).__name__
                for layer in getattr(cache, "layers", [])
                if getattr(layer, "is_croppable", True) is False
            }
        )
        name = f" {type(model).__name__}" if model is not None else ""
        raise ValueError(
            f"{role} model{name}: its cache ({type(cache).__name__}"
            f"{', layers ' + ', '.join(layers) if layers else ''}) cannot be cropped after a rejected draft; "
            "speculative decoding needs a cache that can be cropped"
        )
