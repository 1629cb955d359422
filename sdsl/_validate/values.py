"""Checks of single values and of lists, mappings and paths (:mod:`sdsl._validate`): numbers,
integers, seeds, bootstrap draws, choices, text, intervals, sequences, mappings, files and folders,
and the ranges the package accepts (:data:`MODEL_PARAMS`, :data:`TARGET_PARAMS`, :data:`TOKENS`)."""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sdsl._validate.messages import _fail, _fail_text, _what, show, shown, suggestion

__all__ = [
    "MIN_DRAWS",
    "MAX_DRAWS",
    "MAX_SEED",
    "MODEL_PARAMS",
    "TARGET_PARAMS",
    "TOKENS",
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
    "mapping",
]

#: Bootstrap draws (resamples): 0 for none, else at least MIN_DRAWS (below it the 2.5 % tails of a
#: 95 % percentile interval hold at most two draws each) and at most MAX_DRAWS (the draws are held
#: in memory at once: 1e4 draws of the N* search take 4 s and 0.3 GB, 1e5 take 45 s and 2.7 GB).
MIN_DRAWS = 100
MAX_DRAWS = 10_000
#: Seeds are integers in [0, MAX_SEED] (numpy takes any; torch.manual_seed takes at most 2**63 - 1).
MAX_SEED = 2**63 - 1
#: Model sizes the loss law is evaluated at, in parameters (drafts and targets). Beyond 1e14 (a
#: hundred trillion parameters, 50 times the largest dense model trained) the law is pure
#: extrapolation and N* means nothing (the issue: 1e300 gave N* = 6e55).
MODEL_PARAMS = (1e5, 1e14)
#: Target sizes, in parameters: speculative decoding of a target under 1e8 has no draft to speak of.
TARGET_PARAMS = (1e8, 1e14)
#: Pre-training tokens D and D': from 1e9 (below it the law's data term B/D^b exceeds 1 nat and
#: its perplexities overflow for small models) to 1e16 (250 times the largest corpus reported).
TOKENS = (1e9, 1e16)

_EXACT_FLOAT_INT = 2**53


def _num(v: float) -> str:
    if v == MAX_SEED:
        return "2^63 - 1"
    return str(v) if isinstance(v, int) and abs(v) < 10**6 else f"{v:g}"


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{_num(low)}, {_num(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_num(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_num(high)}"
    return ""


def _in_range(x: float, low: float | None, high: float | None, low_open: bool, high_open: bool) -> bool:
    return not (
        (low is not None and (x <= low if low_open else x < low))
        or (high is not None and (x >= high if high_open else x > high))
    )


# ---------------------------------------------------------------------------------------------
# scalars


def number(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    what: str = "",
    strings: bool = True,
) -> float:
    """``value`` as a finite float in the given range (``low_open``: ``low`` itself excluded).

    Accepts Python and numpy numbers and, with ``strings``, numeric text; never ``bool`` or ``None``."""
    allowed = " ".join(p for p in ("a number", _range_text(low, high, low_open, high_open)) if p) + _what(what)
    x = math.nan
    if isinstance(value, (bool, np.bool_)) or value is None:
        _fail(name, allowed, value)
    if isinstance(value, str):
        if not strings:
            _fail_text(name, allowed, value)
        try:
            x = float(value.strip())
        except ValueError:
            x = math.nan
    elif isinstance(value, numbers.Real):
        x = float(value)
    if not math.isfinite(x) or not _in_range(x, low, high, low_open, high_open):
        _fail(name, allowed, value)
    return x


def integer(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    what: str = "",
    strings: bool = True,
    floats: bool = True,
) -> int:
    """``value`` as an exact ``int`` in ``[low, high]``: an ``int``, an integral float below 2**53
    (with ``floats``) or, with ``strings``, integer text (``"12"``, or ``"1e3"`` read through a float
    below 2**53)."""
    allowed = " ".join(p for p in ("an integer", _range_text(low, high, False, False)) if p) + _what(what)
    x: int | None = None
    if isinstance(value, (bool, np.bool_)) or value is None:
        _fail(name, allowed, value)
    if isinstance(value, (int, np.integer)):
        x = int(value)
    elif isinstance(value, (float, np.floating)) and floats:
        f = float(value)
        x = int(f) if math.isfinite(f) and f.is_integer() and abs(f) <= _EXACT_FLOAT_INT else None
    elif isinstance(value, str) and not strings:
        _fail_text(name, allowed, value)
    elif isinstance(value, str):
        t = value.strip()
        if re.fullmatch(r"[+-]?\d+", t):
            x = int(t)
        else:
            try:
                f = float(t)
            except ValueError:
                f = math.nan
            x = int(f) if math.isfinite(f) and f.is_integer() and abs(f) <= _EXACT_FLOAT_INT else None
    if x is None or not _in_range(x, low, high, False, False):
        _fail(name, allowed, value)
    return x


def boolean(value: Any, name: str, what: str = "") -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy's too); 0, 1 and ``"yes"`` are not."""
    if not isinstance(value, (bool, np.bool_)):
        _fail(name, "True or False" + _what(what), value)
    return bool(value)


def choice(value: Any, name: str, options: Sequence[Any], what: str = "", fold_case: bool = False) -> Any:
    """``value`` if it is one of ``options`` (with ``fold_case``, compared without case: the option is
    returned); otherwise the closest options are suggested."""
    for o in options:
        if value == o or (
            fold_case and isinstance(value, str) and isinstance(o, str) and value.strip().lower() == o.lower()
        ):
            return o
    listed = ", ".join(repr(o) for o in options)
    hint = suggestion(value, options) if isinstance(value, str) else ""
    raise ValueError(
        f"{shown(name)} must be one of {listed}{_what(what)}, got {show(value)}" + (f"; {hint.strip()}" if hint else "")
    )


def text(value: Any, name: str, what: str = "") -> str:
    """``value`` if it is a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        _fail(name, "a non-empty string" + _what(what), value)
    return value


def seed(value: Any, name: str = "seed", strings: bool = True, floats: bool = True) -> int:
    """A seed: an integer in [0, 2**63 - 1], read exactly."""
    return integer(
        value, name, low=0, high=MAX_SEED, what="seed of the random generator", strings=strings, floats=floats
    )


def level(value: Any, name: str = "level", what: str = "level of the interval", strings: bool = True) -> float:
    """A confidence level: a number in the open interval (0, 1).

    Parameters
    ----------
    value : the level as given (a number, or its text when ``strings``).
    name : the argument's name in the message.
    what : what the level is of, for the message.
    strings : whether text such as ``"0.95"`` (a command-line value) is accepted.

    Returns
    -------
    float
        The level.
    """
    return number(value, name, low=0, high=1, low_open=True, high_open=True, what=what, strings=strings)


def draws(
    value: Any,
    name: str,
    *,
    allow_zero: bool = True,
    strings: bool = True,
    floats: bool = True,
    what: str = "bootstrap draws",
) -> int:
    """Bootstrap draws: 0 (none, if ``allow_zero``) or an integer in [MIN_DRAWS, MAX_DRAWS]."""
    zero = "0 (none) or " if allow_zero else ""
    allowed = f"{zero}an integer in [{MIN_DRAWS}, {MAX_DRAWS}] ({what})"
    if isinstance(value, str) and not strings:
        _fail_text(name, allowed, value)
    try:
        n = integer(value, name, strings=strings, floats=floats)
    except ValueError:
        _fail(name, allowed, value)
    if not ((allow_zero and n == 0) or MIN_DRAWS <= n <= MAX_DRAWS):
        _fail(name, allowed, value)
    return n


# ---------------------------------------------------------------------------------------------
# collections, files


def sequence(
    value: Any,
    name: str,
    item: Callable[[Any, str], Any] | None = None,
    *,
    min_len: int = 1,
    max_len: int | None = None,
    unique: bool = False,
    what: str = "",
    noun: str = "items",
) -> list[Any]:
    """``value`` as a list (a list, tuple or 1-D array; a string is not a sequence of characters),
    each item checked by ``item(value, name)`` (named ``name[i]``), of ``min_len`` to ``max_len``
    items, distinct if ``unique``."""
    size = (
        f"{min_len} to {max_len}"
        if max_len is not None and max_len != min_len
        else (f"{min_len}" if max_len == min_len else f"at least {min_len}")
    )
    allowed = f"a list of {size} {'distinct ' if unique else ''}{noun}{_what(what)}"
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, str):
        raise ValueError(f"{shown(name)} must be {allowed}, got the string {value!r} (a list of one: [{value!r}])")
    if not isinstance(value, (list, tuple)):
        _fail(name, allowed, value)
    if len(value) < min_len or (max_len is not None and len(value) > max_len):
        _fail(name, allowed, value)
    out = [item(v, f"{name}[{i}]") if item is not None else v for i, v in enumerate(value)]
    if unique:
        seen = [v for i, v in enumerate(out) if v in out[:i]]
        if seen:
            raise ValueError(f"{shown(name)} must hold distinct items{_what(what)}, got {show(seen[0])} twice")
    return out


def mapping(
    value: Any, name: str, key: Callable[[Any, str], Any], item: Callable[[Any, str], Any], what: str = ""
) -> dict[Any, Any]:
    """``value`` as a dict, each key checked by ``key(k, name)`` and each value by ``item(v, name[k])``."""
    if not isinstance(value, Mapping):
        _fail(name, "a mapping {key: value}" + _what(what), value)
    return {key(k, name): item(v, f"{name}[{k!r}]") for k, v in value.items()}


def interval(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    what: str = "",
    strings: bool = True,
) -> tuple[float, float]:
    """Two numbers ``[lo, hi]`` with ``lo < hi``, both in the range."""
    if isinstance(value, str) and strings:
        value = value.replace(",", " ").split()
    rng = _range_text(low, high, low_open, False)
    allowed = f"two increasing numbers [low, high]{' ' + rng if rng else ''}{_what(what)}"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        _fail(name, allowed, value)
    lo, hi = (
        number(v, f"{name} {end}", low=low, high=high, low_open=low_open, what=what, strings=strings)
        for v, end in zip(value, ("low", "high"))
    )
    if not lo < hi:
        _fail(name, allowed, value)
    return lo, hi


def existing_file(value: Any, name: str, what: str = "") -> str:
    """``value`` (a string or path) if it names an existing file."""
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        _fail(name, "the path of an existing file" + _what(what), value)
    path = os.path.expanduser(os.fspath(value))
    if not os.path.isfile(path):
        why = "is a folder" if os.path.isdir(path) else "does not exist"
        raise ValueError(f"{shown(name)} must be the path of an existing file{_what(what)}: {str(value)!r} {why}")
    return path


def folder(value: Any, name: str, must_exist: bool = False, what: str = "") -> str:
    """``value`` (a string or path) as a folder: not an existing file; existing if ``must_exist``."""
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        _fail(name, "the path of a folder" + _what(what), value)
    path = os.path.expanduser(os.fspath(value))
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{shown(name)} must be a folder{_what(what)}: {str(value)!r} is a file")
    if must_exist and not os.path.isdir(path):
        raise ValueError(f"{shown(name)} must be an existing folder{_what(what)}: {str(value)!r} does not exist")
    return path
