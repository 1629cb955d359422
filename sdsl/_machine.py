"""The CPU a run is made on, as recorded beside its results (the build manifest, the local pair's
provenance, the laptop-scale runs) and as the kernel matrix reads it: one reader of
``/proc/cpuinfo`` for the whole package."""

from __future__ import annotations

import platform

__all__ = ["cpu_model", "cpu_flags"]


def _cpuinfo_field(name: str) -> str | None:
    """The value of the first ``name`` line of ``/proc/cpuinfo``; ``None`` where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(name):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else :func:`platform.processor` or the machine type)."""
    return _cpuinfo_field("model name") or platform.processor() or platform.machine() or "unknown"


def cpu_flags() -> set[str]:
    """The CPU's feature flags (``/proc/cpuinfo``; empty where it cannot be read)."""
    return set((_cpuinfo_field("flags") or "").split())
