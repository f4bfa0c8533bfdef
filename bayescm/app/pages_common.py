"""What the Compare, No-labels and Upload pages share, free of any web framework.

* :class:`InputError`: bad input for one field of a page, carrying the library's own
  message (shown next to that field, never as a traceback); :func:`field` turns the
  library's exceptions raised while reading one field into it.
* :class:`PageState`: a page's inputs as a frozen dataclass that round-trips through a
  URL query (``to_query`` / ``from_query``), so that a result can be shared as a link.
  Long texts (pasted tables) travel zlib-compressed in URL-safe base64.
* :func:`csv_bytes`, :func:`figure_bytes`: downloads of a table or a figure.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class S(PageState):
...     text: str = "a, b\\n1, 2"
...     margin: float = 0.0
>>> s = S(text="tp, fn\\n" * 30, margin=0.05)
>>> S.from_query(s.to_query()) == s
True
>>> S.from_query({"margin": "oops"}).margin   # a bad value keeps the default
0.0
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import io
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["InputError", "PageState", "csv_bytes", "field", "figure_bytes", "message_of",
           "read_csv_text", "read_table"]

_ZIP = "z."  # prefix of a compressed text in the URL
_SHORT = 60  # texts up to this length travel as they are (readable links)

S = TypeVar("S", bound="PageState")


class InputError(ValueError):
    """Bad input for one field of a page.

    Attributes
    ----------
    field
        The field's name (a :class:`PageState` attribute).
    message
        What is wrong and what to do: the library's own message where it raised one.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def message_of(err: BaseException) -> str:
    """An exception's message as a user reads it (a KeyError's without its quotes)."""
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    return str(err)


@contextlib.contextmanager
def field(name: str) -> Iterator[None]:
    """Report the library's errors raised while reading field ``name`` as :class:`InputError`.

    >>> import bayescm as bcm
    >>> try:
    ...     with field("counts"):
    ...         bcm.ConfusionMatrix(tp=-1, fn=0, fp=0, tn=1)
    ... except InputError as err:
    ...     err.field, "negative" in err.message
    ('counts', True)
    """
    try:
        yield
    except InputError:
        raise
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(name, message_of(err)) from None


@dataclasses.dataclass(frozen=True)
class PageState:
    """Base of a page's state: fields of type str, int, float or bool, all with defaults."""

    _converters: ClassVar[dict[str, type]] = {"str": str, "int": int, "float": float,
                                              "bool": bool}

    def to_query(self) -> dict[str, str]:
        """The fields that differ from their defaults, as URL query values."""
        out = {}
        defaults = type(self)()
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value == getattr(defaults, f.name):
                continue
            if isinstance(value, bool):
                out[f.name] = "1" if value else "0"
            elif isinstance(value, str) and (len(value) > _SHORT or "\n" in value):
                packed = zlib.compress(value.encode(), 9)
                out[f.name] = _ZIP + base64.urlsafe_b64encode(packed).decode().rstrip("=")
            else:
                out[f.name] = f"{value:g}" if isinstance(value, float) else str(value)
        return out

    @classmethod
    def from_query(cls: type[S], query: Mapping[str, Any]) -> S:
        """The state a URL query describes; unknown keys are ignored and a value that
        cannot be read keeps its field's default (a link never breaks a page)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = query.get(f.name)
            if isinstance(raw, list | tuple):
                raw = raw[0] if raw else None
            if isinstance(raw, bytes):
                raw = raw.decode()
            if raw is None:
                continue
            kind = f.type if isinstance(f.type, str) else f.type.__name__
            try:
                values[f.name] = _read(str(raw), kind)
            except (ValueError, zlib.error):
                continue
        return cls(**values)

    def replace(self: S, **changes: Any) -> S:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def _read(raw: str, kind: str) -> Any:
    if kind == "bool":
        return raw.lower() in ("1", "true", "yes")
    if kind == "str":
        if raw.startswith(_ZIP):
            data = raw[len(_ZIP):]
            data += "=" * (-len(data) % 4)
            return zlib.decompress(base64.urlsafe_b64decode(data)).decode()
        return raw
    value = PageState._converters[kind](raw)
    if isinstance(value, float) and value != value:  # NaN is no one's intended input
        raise ValueError(raw)
    return value


def _tokens(line: str) -> list[str]:
    sep = next((s for s in ",;\t" if s in line), None)
    parts = line.split(sep) if sep else line.split()
    return [p.strip() for p in parts]


def read_table(text: str, name: str, *, header_hint: str,
               is_value: Callable[[str], bool]) -> tuple[list[str], list[str],
                                                         list[list[float]]]:
    r"""A typed or pasted table: a header line of column names, then one row per line.

    Columns are separated by commas, semicolons or tabs (else by spaces); empty lines
    and lines starting with ``#`` are skipped.  The first column holds the row names
    when ``is_value`` says its header does not name a column of numbers (e.g.
    ``name``); every other column holds numbers.  ``header_hint`` shows the expected
    header in messages.

    Returns
    -------
    (row names, column names, rows of numbers)

    Raises
    ------
    InputError
        For field ``name``: no rows, a row of the wrong length, a cell that is not a
        number.

    Examples
    --------
    >>> read_table("name, tp, fn\nA, 3, 4\nB, 5, 6", "counts", header_hint="name, tp, fn",
    ...            is_value=lambda h: h in ("tp", "fn"))
    (['A', 'B'], ['tp', 'fn'], [[3.0, 4.0], [5.0, 6.0]])
    """
    lines = [ln for ln in (raw.strip() for raw in text.splitlines())
             if ln and not ln.startswith("#")]
    if len(lines) < 2:
        raise InputError(name, f"Give a header line ({header_hint}) and at least one row "
                               "of numbers below it.")
    header = _tokens(lines[0])
    try:
        float(header[0])
    except ValueError:
        pass
    else:
        raise InputError(name, f"The first line must name the columns ({header_hint}), "
                               f"but it holds numbers: {lines[0]!r}.")
    named = not is_value(header[0])
    columns = header[1:] if named else header
    names, rows = [], []
    for i, line in enumerate(lines[1:], start=2):
        cells = _tokens(line)
        if len(cells) != len(header):
            raise InputError(name, f"Line {i} has {len(cells)} entries but the header has "
                                   f"{len(header)} ({', '.join(header)}): {line!r}.")
        if named:
            names.append(cells[0])
            cells = cells[1:]
        try:
            rows.append([float(c) for c in cells])
        except ValueError:
            raise InputError(name, f"Line {i}: every entry after the name must be a number, "
                                   f"got {line!r}.") from None
    return names, columns, rows


def read_csv_text(text: str, name: str) -> pd.DataFrame:
    """A CSV text as a DataFrame: comma, semicolon or tab separated (whichever the first
    line uses), ``#`` lines skipped, empty cells missing.

    >>> read_csv_text("y_true;A\\n1;0", "file").to_dict("list")
    {'y_true': [1], 'A': [0]}
    """
    first = text.lstrip().split("\n", 1)[0]
    sep = max(",;\t", key=first.count)
    try:
        frame = pd.read_csv(io.StringIO(text.strip()), sep=sep, skipinitialspace=True,
                            comment="#")
    except (ValueError, pd.errors.ParserError) as err:
        raise InputError(name, f"Cannot read the text as CSV: {err}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as CSV bytes (index included: it names the rows)."""
    return frame.to_csv().encode()


def figure_bytes(fig: Figure, fmt: str = "png") -> bytes:
    """A matplotlib figure as PNG or SVG bytes."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}.")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=110)
    return buffer.getvalue()
