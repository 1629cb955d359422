"""The values a notebook glued with myst-nb (scrapbook display data), read from the executed file."""

from __future__ import annotations

import json
from pathlib import Path


def glued(nb_path: Path | str) -> dict[str, object]:
    """Glued values of an executed notebook, by name, as their ``text/plain`` representation."""
    nb = json.loads(Path(nb_path).read_text(encoding="utf-8"))
    out: dict[str, object] = {}
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook", {})
            if meta.get("name"):
                prefix = meta.get("mime_prefix", "")
                out[meta["name"]] = o.get("data", {}).get(prefix + "text/plain", o.get("data", {}).get("text/plain"))
    return out
