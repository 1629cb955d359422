"""Test-session settings shared by every test module."""

from __future__ import annotations

import os

# No model or data hub is reachable in CI: make any accidental download fail at once.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

from hypothesis import settings  # noqa: E402

# Property tests explore the same examples on every run (reproducible CI), with no deadline
# (two shared cores make per-example timing meaningless).
settings.register_profile("sdsl", derandomize=True, deadline=None, max_examples=300, print_blob=True)
settings.load_profile("sdsl")
