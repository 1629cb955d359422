"""The method, without tables or plots: the scaling laws (:mod:`~sdsl.model.laws`), the throughput
of speculative decoding (:mod:`~sdsl.model.throughput`), the one search for the optimal draft
(:mod:`~sdsl.model.optimum`), least squares (:mod:`~sdsl.model.fitting`), wall-clock speedup
(:mod:`~sdsl.model.speedup`), the roofline cost of a decoding step (:mod:`~sdsl.model.hardware`) and
engine settings (:mod:`~sdsl.model.deploy`). The printed-value rule is :mod:`sdsl.tolerance`'s."""
