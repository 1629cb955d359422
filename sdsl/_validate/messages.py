"""Names and messages of the argument checks (:mod:`sdsl._validate`): the name a message gives an
argument (:func:`argument_names`, :func:`shown`), a value shown on one line (:func:`show`) and the
closest options suggested (:func:`suggestion`)."""

from __future__ import annotations

import contextvars
import difflib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

import numpy as np

__all__ = ["argument_names", "shown", "one_line", "show", "suggestion", "numeric_text"]

_NAMES: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("sdsl_argument_names", default={})  # noqa: B039 (read, never mutated)


@contextmanager
def argument_names(names: Mapping[str, str]) -> Iterator[None]:
    """Within the block, messages name the arguments of ``names`` (parameter name -> as typed,
    e.g. ``{"n_range": "--n-range"}``) as the user typed them."""
    token = _NAMES.set({**_NAMES.get(), **names})
    try:
        yield
    finally:
        _NAMES.reset(token)


def shown(name: str) -> str:
    """``name`` as the user typed it (:func:`argument_names`); the parameter name otherwise.

    A name with a suffix (``"n_range low"``) maps its first word."""
    names = _NAMES.get()
    if name in names:
        return names[name]
    head, sep, rest = name.partition(" ")
    return f"{names[head]}{sep}{rest}" if sep and head in names else name


def one_line(message: Any) -> str:
    """``message`` on one line (runs of whitespace, newlines included, become one space)."""
    return " ".join(str(message).split())


def show(value: Any, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters (an array of 97 values is not a message)."""
    if isinstance(value, np.ndarray) and value.size > 4:
        flat = value.ravel()
        return f"an array of {value.size} values ({show(flat[0].item())}, {show(flat[1].item())}, ...)"
    text = one_line(repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def suggestion(word: Any, options: Iterable[Any]) -> str:
    """``"did you mean 'x'? "`` for the options closest to ``word`` (difflib), or ``""``."""
    opts = [str(o) for o in options]
    close = difflib.get_close_matches(str(word), opts, n=3, cutoff=0.5)
    if not close:
        lower = {o.lower(): o for o in opts}
        close = [lower[c] for c in difflib.get_close_matches(str(word).lower(), list(lower), n=3, cutoff=0.5)]
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


def _fail(name: str, allowed: str, value: Any) -> NoReturn:
    raise ValueError(f"{shown(name)} must be {allowed}, got {show(value)}")


def numeric_text(value: str) -> list[str] | None:
    """The numbers written in ``value`` (``"200"``, ``"1e8, 1e9"``: separated by commas or spaces), or
    ``None`` when it is not only numbers."""
    parts = value.replace(",", " ").split()
    try:
        [float(t) for t in parts]
    except ValueError:
        return None
    return parts or None


def _fail_text(name: str, allowed: str, value: str) -> NoReturn:
    """A string where a number is wanted: name its type and, for numeric text, what to write instead."""
    parts = numeric_text(value)
    hint = (
        ""
        if parts is None
        else f": give {parts[0]} without quotes"
        if len(parts) == 1
        else f": give [{', '.join(parts)}]"
    )
    raise ValueError(f"{shown(name)} must be {allowed}, got the string {show(value)} (a str, not a number{hint})")


def _what(what: str) -> str:
    return f" ({what})" if what else ""
