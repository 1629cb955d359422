"""Measuring alpha: estimators, engine readers, local models and the speculative-sampling harness."""
