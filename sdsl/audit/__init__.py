"""The audit of the paper against the companion: its printed numbers read from its text
(:mod:`sdsl.audit.paper`), how each printed number is accounted for, as printed and as reinterpreted
(:mod:`sdsl.audit.reproduction`), the scorecard's tolerances, readings and reasons
(:mod:`sdsl.audit.rules`; its tolerances are :mod:`sdsl.tolerance`'s) and its rows and
the checkable claims of the figure captions, read from the chapters' artifacts (:mod:`sdsl.audit.rows`).
The scorecard chapter (:mod:`sdsl.chapters.scorecard`) shows it."""
