"""Every argument check of the package, in one place: the arguments of the command line, the
public API and the notebooks' parameters.

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

Sections: names and messages; the command lines' parser (:class:`CommandParser`: argparse with
one-line usage errors, shared by ``sdsl``, the pipeline, the regeneration check and the experiment);
array arguments of the model layer (:func:`as_positive`, ...);
single values, lists, mappings, paths and the accepted ranges (:func:`number`, :data:`TOKENS`,
...); a notebook's parameters, each declared once with its default and its check
(:class:`Parameter`, :class:`Parameters`: the chapter's declaration, which the notebook's
``parameters`` cell and its check cell both read). The checks of the method's own inputs (loss-law
constants, plane coefficients, an optimum inside the range) are the model's
(:func:`sdsl.model.laws.check_loss_constants`, :func:`sdsl.model.optimum.optimum_inside`).
"""

from __future__ import annotations

import argparse
import contextvars
import difflib
import math
import numbers
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike


# ---------------------------------------------------------------------------------------------
# names and messages


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
    if isinstance(value, np.ndarray):  # numpy's repr is not the user's words
        return f"an array {show(value.tolist(), limit)}"
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


def _fail(name: str, allowed: str, value: Any, why: str = "") -> NoReturn:
    raise ValueError(f"{shown(name)} must be {allowed}, got {show(value)}{why}")


#: The smallest positive normal float: below it (a subnormal) ``1 / x`` overflows and precision is lost.
TINY = float(np.finfo(float).tiny)


def float_problem(text: str) -> str:
    """Why the numeric text ``text`` is no usable float though it reads as one (``"1e400"`` overflows,
    ``"1e-320"`` is subnormal), in words for a message; ``""`` when there is nothing to say."""
    try:
        x = float(text.strip())
    except ValueError:
        return ""
    return _float_why(text, x)


def _float_why(value: Any, x: float, zero: bool = True) -> str:
    """Why a number that reads as a float is refused where the text alone does not say: it overflows
    the largest float (``1e400``), or it is a subnormal one (``1e-320``)."""
    if math.isinf(x) and not (isinstance(value, str) and value.strip().lower().lstrip("+-") in ("inf", "infinity")):
        if isinstance(value, str):
            return f" (beyond the largest float, {np.finfo(float).max:.3g}: it reads as infinity)"
    if x != 0 and math.isfinite(x) and abs(x) < TINY:
        larger = f"give 0 or at least {TINY:.3g}" if zero else f"give at least {TINY:.3g}"
        return f" (a subnormal float, nonzero but below {TINY:.3g}, where 1/x overflows: {larger})"
    return ""


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


# ---------------------------------------------------------------------------------------------
# the command lines

#: The exit status of every command line for bad input (a usage error, a refused value).
EXIT_USAGE = 2
#: A number, negative ones included (argparse alone reads "-70e9" and "-inf" as options).
_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


def _given_text(values: Any) -> str:
    return " ".join(map(str, values)) if isinstance(values, list) else str(values)


class _Once(argparse.Action):
    """Store an option's value, refusing a second one (argparse keeps the last silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", {})
        if self.dest in given:
            raise argparse.ArgumentError(
                self, f"given twice ({given[self.dest]} and {_given_text(values)}): give it once"
            )
        given[self.dest] = _given_text(values)
        setattr(namespace, self.dest, values)


class CommandParser(argparse.ArgumentParser):
    """argparse as every command of the project uses it (``sdsl``, ``python -m sdsl.build.pipeline``,
    ``python -m sdsl.build.check``, ``python -m sdsl.experiment``): a usage error is one line
    (``PROG: error: MESSAGE (see 'PROG --help')``, with the closest option suggested for an unknown
    one) and exit status :data:`EXIT_USAGE`, never argparse's usage block; negative numbers are
    values; an option may be given once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NUMBER
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def error(self, message: str) -> NoReturn:
        # "argument --jobs: --jobs must be ...": the option named once
        message = re.sub(r"^argument (\S+): (?=\1 )", "", message)
        hint = ""
        m = re.match(r"unrecognized arguments: (\S+)", message)
        if m:
            options = [o for a in self._actions for o in a.option_strings]
            for a in self._actions:
                if isinstance(a, argparse._SubParsersAction):
                    options += [o for p in a.choices.values() for b in p._actions for o in b.option_strings]
            hint = suggestion(m.group(1).split("=")[0], sorted(set(options)))
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {one_line(message)}{'; ' + hint.strip() if hint else ''} "
            f"(see '{self.prog} --help')\n",
        )


class Interrupt(KeyboardInterrupt):
    """SIGTERM (or SIGINT) stopped a command (:func:`sigterm_as_interrupt`); ``signum`` names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupt(signum)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises :class:`Interrupt` (a ``KeyboardInterrupt``, as SIGINT raises
    one), so that a command stopped while it starts or runs unwinds its ``finally`` clauses and says
    so in one line (:func:`interrupted`) instead of vanishing; the previous handler is restored
    after. Outside the main thread, signals are left alone."""
    import signal

    try:
        previous = signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted(prog: str, exc: BaseException, what: str) -> int:
    """Print the one line of a command stopped by a signal (``exc``: an :class:`Interrupt` or the
    ``KeyboardInterrupt`` of SIGINT) and return its exit status, 128 + the signal's number."""
    import signal

    signum = exc.signum if isinstance(exc, Interrupt) else int(signal.SIGINT)
    print(f"{prog}: interrupted by {signal.Signals(signum).name}: {what}", file=sys.stderr)
    return 128 + signum


def argument_type(check: Callable[..., Any], name: str, **options: Any) -> Callable[[str], Any]:
    """An argparse ``type=`` that reads an option's text with one of the checks here (``check(text,
    name, **options)``): its refusal becomes argparse's usage error, one line naming ``name``."""

    def convert(text: str) -> Any:
        try:
            return check(text, name, **options)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(one_line(exc)) from None

    convert.__name__ = name.lstrip("-")  # argparse names the type in some messages
    return convert


# ---------------------------------------------------------------------------------------------
# array arguments of the model layer


_NONE = object()


def _not_numbers(value: Any) -> Any:
    """The first item of ``value`` (a list, tuple or array, nested) that numpy would turn into a
    number though it is none: text (``"1e8"``), bytes, a bool or ``None``; ``_NONE`` when there is none."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "USVb":
            return value.ravel()[0].item() if value.size else _NONE
        if value.dtype.kind != "O":
            return _NONE
        value = value.ravel().tolist()
    if isinstance(value, (list, tuple)):
        for v in value:
            if isinstance(v, (str, bytes, bool, np.bool_)) or v is None:
                return v.item() if isinstance(v, np.generic) else v
            if isinstance(v, (list, tuple, np.ndarray)):
                bad = _not_numbers(v)
                if bad is not _NONE:
                    return bad
    return _NONE


def as_float_array(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array; a non-numeric or non-finite entry raises naming ``name``. Text is
    not a number here, in a list or an array of objects either (``np.array(['1e8'], dtype=object)``:
    numpy would read it)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{shown(name)} must be numeric, got {show(value)}")
    bad = _not_numbers(value)
    if bad is not _NONE:
        kind = "text, " if isinstance(bad, (str, bytes)) else "a bool, " if isinstance(bad, bool) else ""
        raise ValueError(f"{shown(name)} must be numeric, got {show(value)} (it holds {show(bad)}: {kind}not a number)")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{shown(name)} must be numeric, got {show(value)}") from None
    if not np.all(np.isfinite(arr)):
        bad = np.ravel(arr)[~np.isfinite(np.ravel(arr))]
        count = f" ({bad.size} of {arr.size} values)" if arr.size > 1 else ""
        raise ValueError(f"{shown(name)} must be finite, got {bad[0].item()!r}{count}")
    return arr


def as_positive(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array of numbers > 0."""
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        bad = arr[arr <= 0] if arr.ndim else arr
        raise ValueError(f"{shown(name)} must be > 0, got {np.ravel(bad)[0].item()!r}")
    return arr


def as_open_unit(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array inside the open interval (0, 1)."""
    arr = as_float_array(value, name)
    if np.any((arr <= 0) | (arr >= 1)):
        bad = np.ravel(arr[(arr <= 0) | (arr >= 1)] if arr.ndim else arr)[0]
        raise ValueError(f"{shown(name)} must lie in the open interval (0, 1), got {bad.item()!r}")
    return arr


def as_in_range(value: ArrayLike, name: str, low: float, high: float) -> np.ndarray:
    """``value`` as a float array inside the closed interval [low, high]."""
    arr = as_float_array(value, name)
    if np.any((arr < low) | (arr > high)):
        bad = np.ravel(arr[(arr < low) | (arr > high)] if arr.ndim else arr)[0]
        raise ValueError(f"{shown(name)} must lie in [{low:g}, {high:g}], got {bad.item()!r}")
    return arr


# ---------------------------------------------------------------------------------------------
# single values, lists, mappings and paths


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
    why = _float_why(value, x, _in_range(0.0, low, high, low_open, high_open))
    if why or not math.isfinite(x) or not _in_range(x, low, high, low_open, high_open):
        _fail(name, allowed, value, why)
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
            if x is None and math.isfinite(f) and f.is_integer():
                why = " (beyond 2^53, where a number written with an exponent is no longer an exact integer)"
                if high is not None and f > high:
                    why = ""  # the range says it
                _fail(name, allowed, value, why)
            if x is None:
                _fail(name, allowed, value, _float_why(value, f))
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


# ---------------------------------------------------------------------------------------------
# a notebook's parameters


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
