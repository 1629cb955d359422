"""The audit of the paper against the companion: its printed numbers read from its text
(:mod:`sdsl.audit.paper`), the checkable claims of its figure captions (:mod:`sdsl.audit.claims`),
and how each printed number is accounted for, as printed and as reinterpreted
(:mod:`sdsl.audit.reproduction`). The scorecard chapter (:mod:`sdsl.chapters.scorecard`) shows it."""
