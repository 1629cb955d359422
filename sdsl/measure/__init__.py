"""Measuring alpha: estimators on top of :mod:`sdsl.measure.estimators`, readers of serving engines'
exports (:mod:`sdsl.measure.engines`), the ``sdsl alpha`` report (:mod:`sdsl.measure.report`),
top-k / top-p warping (:mod:`sdsl.measure.sampling`), cache checks (:mod:`sdsl.measure.sampling`)
and cross-tokenizer pairs through transformers' universal assisted generation
(:mod:`sdsl.measure.universal`).

Submodules are imported on use: ``import sdsl.measure`` loads nothing heavy.
"""
