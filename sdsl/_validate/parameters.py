"""Checks of a notebook's parameter set (:mod:`sdsl._validate`): unknown names refused with the closest
suggested, each value checked by its rule (:func:`rule`, :func:`optional`, :func:`check_parameters`),
and the parameters read from a kernel's namespace (:func:`namespace_parameters`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sdsl._validate.messages import _fail_text, numeric_text, suggestion
from sdsl._validate.values import draws, integer, interval, level, number, seed

__all__ = ["Rule", "unknown_names", "rule", "optional", "namespace_parameters", "check_parameters", "no_numeric_text"]


def unknown_names(given: Iterable[str], allowed: Iterable[str], what: str = "parameter", where: str = "") -> None:
    """Raise for the first name of ``given`` not in ``allowed``, with the closest suggested and every
    allowed name listed: ``unknown parameter 'presett' of notebook 'plan_draft'; did you mean
    'preset'? allowed: ...`` (``where``: ``"of notebook 'plan_draft'"``)."""
    allowed = list(allowed)
    for name in given:
        if name not in allowed:
            raise ValueError(
                f"unknown {what} {name!r}{' ' + where if where else ''}; {suggestion(name, allowed)}"
                f"allowed: {', '.join(allowed)}"
            )


Rule = Callable[[Any, str], Any]


def rule(check: Callable[..., Any], **options: Any) -> Rule:
    """A rule ``(value, name) -> value`` of a check with its options bound, for :func:`check_parameters`
    (the notebooks' values are Python objects: numeric text is refused)."""
    if check in (number, integer, interval, seed, draws, level):
        options.setdefault("strings", False)
    if check in (integer, seed, draws):
        options.setdefault("floats", False)
    return lambda value, name: check(value, name, **options)


def optional(inner: Rule) -> Rule:
    """A rule that accepts ``None`` and checks anything else with ``inner``."""
    return lambda value, name: None if value is None else inner(value, name)


#: Names IPython itself puts into a kernel's namespace (beside ``_``-names, modules and functions).
_KERNEL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def namespace_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of a notebook's namespace right after its parameters cell (and papermill's
    injected-parameters cell): every name but IPython's own, ``_``-names, modules, functions and
    classes. A notebook's check cell passes them all to its chapter's ``check_parameters``, so that a
    name papermill injected that the notebook does not have (``-p presett x``) is refused, not
    silently left unused."""
    import types

    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return {
        k: v
        for k, v in namespace.items()
        if not k.startswith("_") and k not in _KERNEL_NAMES and not isinstance(v, skip)
    }


def check_parameters(chapter: str, given: Mapping[str, Any], rules: Mapping[str, Rule]) -> dict[str, Any]:
    """The parameters of notebook ``chapter`` checked by their rules (given in the notebook's order),
    in that order: an unknown name is refused (the closest suggested) before any value is looked at."""
    unknown_names(given, rules, "parameter", f"of notebook {chapter!r}")
    return {name: check(given[name], name) for name, check in rules.items() if name in given}


def _no_numeric_text(value: Any, name: str) -> None:
    if isinstance(value, str):
        if numeric_text(value) is not None:
            _fail_text(name, "a number", value)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _no_numeric_text(v, f"{name}[{i}]")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _no_numeric_text(v, f"{name}[{k!r}]")


def no_numeric_text(given: Mapping[str, Any], names: Iterable[str]) -> None:
    """Refuse a number written as text (``n_boot="200"``, ``n_range="1e8,1e9"``) in the values of
    ``names`` among ``given``, in a list, tuple or mapping too: a notebook's parameters are Python
    values (papermill's ``-p`` converts numbers itself), so numeric text is a mistake there, even
    where a check shared with the command line would read it. The message names the parameter, the
    type and the value; other text (a preset's name) is left to the parameter's own check."""
    for name in names:
        if name in given:
            _no_numeric_text(given[name], name)
