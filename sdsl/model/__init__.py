"""The method without tables or plots: wall-clock speedup (:mod:`sdsl.model.speedup`), the roofline
cost of a decoding step (:mod:`sdsl.model.hardware`), engine settings (:mod:`sdsl.model.deploy`)."""
