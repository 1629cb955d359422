"""Every argument check of the package, in one place.

The command line (:mod:`sdsl.cli`), the public API (:mod:`sdsl.plan`, :mod:`sdsl.model`) and the
notebooks (each chapter's ``check_parameters``, called in the cell after its parameters cell) check
their arguments with these functions, so that one message serves all three. A bad value raises a
``ValueError`` whose message is one line naming the argument as the user typed it, what is allowed
and what was given; nothing is computed before the check.

The name in a message is the parameter's name (``n_range``) unless the caller runs inside
:func:`argument_names`, which maps parameter names to what the user typed there (the command line
maps ``n_range`` to ``--n-range``): :func:`shown` gives that name.

Numbers: ``bool`` is never a number; numeric strings (``"70.6e9"``) are accepted where
``strings=True`` (the command line), never by the notebooks' checks (papermill already converts
``-p`` values): there a string is refused naming its type (``got the string '200' (a str, not a
number: give 200 without quotes)``), also where a check shared with the command line would read it
(:func:`no_numeric_text`). Integers are read exactly: ``"9007199254740993"`` stays that integer, and a float
is accepted as an integer only if it is integral and below 2**53 (where floats are exact).

The checks live in five small modules, re-exported here (import them from ``sdsl._validate``):
:mod:`~sdsl._validate.messages` (names and messages), :mod:`~sdsl._validate.values` (single values,
lists, mappings, paths and the accepted ranges), :mod:`~sdsl._validate.laws` (the method's inputs),
:mod:`~sdsl._validate.parameters` (the notebooks' parameter sets) and :mod:`~sdsl._validate.arrays`
(array arguments of the model layer).
"""

from sdsl._validate.arrays import as_float_array, as_in_range, as_open_unit, as_positive
from sdsl._validate.laws import coefficients, loss_constants, optimum_inside, plane_inside
from sdsl._validate.messages import argument_names, one_line, show, shown, suggestion
from sdsl._validate.parameters import (
    Rule,
    check_parameters,
    namespace_parameters,
    no_numeric_text,
    optional,
    rule,
    unknown_names,
)
from sdsl._validate.values import (
    MAX_DRAWS,
    MAX_SEED,
    MIN_DRAWS,
    MODEL_PARAMS,
    TARGET_PARAMS,
    TOKENS,
    boolean,
    choice,
    draws,
    existing_file,
    folder,
    integer,
    interval,
    level,
    mapping,
    number,
    seed,
    sequence,
    text,
)

__all__ = [
    "MIN_DRAWS",
    "MAX_DRAWS",
    "MAX_SEED",
    "MODEL_PARAMS",
    "TARGET_PARAMS",
    "TOKENS",
    "argument_names",
    "shown",
    "one_line",
    "show",
    "suggestion",
    "as_float_array",
    "as_positive",
    "as_open_unit",
    "as_in_range",
    "number",
    "integer",
    "boolean",
    "choice",
    "text",
    "sequence",
    "interval",
    "level",
    "draws",
    "seed",
    "existing_file",
    "folder",
    "unknown_names",
    "check_parameters",
    "rule",
    "optional",
    "loss_constants",
    "coefficients",
    "mapping",
    "optimum_inside",
    "plane_inside",
    "namespace_parameters",
    "no_numeric_text",
    "Rule",
]
