"""What the Compare, No-labels and Upload pages share, free of Panel.

* :class:`InputError`: bad input for one field of a page, carrying the library's own
  message (shown next to that field, never as a traceback); :func:`field` turns the
  library's exceptions raised while reading one field into it.
* :class:`PageState`: a page's inputs as a frozen dataclass.  It mirrors itself as a
  ``param.Parameterized`` (:meth:`PageState.params`) for the page's widgets and
  :func:`bayescm.app.state.sync_url`, and round-trips through a URL query
  (``to_query`` / ``from_query``: thin calls of :func:`bayescm.app.state.changed` and
  :func:`~bayescm.app.state.restore` on that mirror, so a link made here is read by the
  code the page reads its own links with, and a bad value is reported, not dropped).
* :func:`read_table`, :func:`read_csv_text`: typed or pasted tables.
* :func:`prior_lines`, :func:`put_prior`: priors typed one per line
  (``parameter [unit]: prior``), as the No-labels page's two modes read them, and
  :class:`Built`, the model those pages build before sampling.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class S(PageState):
...     text: str = "a, b\\n1, 2"
...     margin: float = 0.0
>>> s = S(text="tp, fn\\n1, 2", margin=0.05)
>>> s.to_query()
{'text': 'tp, fn\\n1, 2', 'margin': '0.05'}
>>> S.from_query(s.to_query()) == s
True
>>> try:                                # a bad value is reported, as the page does
...     S.from_query({"margin": "oops"})
... except InputError as err:
...     err.field, err.message
('url', "The link's value margin=oops was not used: could not convert string to float: 'oops'")
>>> p = s.params()
>>> p.margin, S.from_params(p) == s
(0.05, True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import pandas as pd

from bayescm.app.errors import is_user_error, log
from bayescm.app.errors import message as message_of
from bayescm.app.state import changed, restore

__all__ = ["Built", "InputError", "PageState", "csv_problem", "field", "frame_html",
           "message_of", "positive_label", "prior_lines", "put_prior", "read_csv_text",
           "read_table"]

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
    except Exception as err:
        if not is_user_error(err):
            log.exception("bayescm app: unexpected error reading %s", name)
        raise InputError(name, message_of(err)) from None


@dataclasses.dataclass(frozen=True)
class PageState:
    """Base of a page's state: fields of type str, int, float or bool, all with defaults."""

    def to_query(self) -> dict[str, str]:
        """The fields that differ from their defaults, as URL query values
        (:func:`bayescm.app.state.changed` of :meth:`params`)."""
        return changed(self.params())

    @classmethod
    def from_query(cls: type[S], query: Mapping[str, Any]) -> S:
        """The state a URL query describes (:func:`bayescm.app.state.restore`: values
        as text, or lists of text or bytes; unknown keys are ignored).

        Raises
        ------
        InputError
            For field ``url``, naming every value that cannot be read.
        """
        params = cls().params()
        problems = restore(params, query)
        if problems:
            raise InputError("url", " ".join(problems))
        return cls.from_params(params)

    def params(self) -> Any:
        """A ``param.Parameterized`` with one parameter per field (the dataclass's
        defaults as defaults), set to this state's values."""
        import param

        kinds = {bool: param.Boolean, int: param.Integer, float: param.Number,
                 str: param.String}
        cls = type(self)
        made = _PARAM_CLASSES.get(cls)
        if made is None:
            made = param.parameterized_class(
                f"{cls.__name__}Params",
                {f.name: kinds[type(f.default)](default=f.default)
                 for f in dataclasses.fields(cls)})
            _PARAM_CLASSES[cls] = made
        return made(**dataclasses.asdict(self))

    @classmethod
    def from_params(cls: type[S], obj: Any) -> S:
        """The state a :meth:`params` object holds now."""
        return cls(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(cls)})

    def replace(self: S, **changes: Any) -> S:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


_PARAM_CLASSES: dict[type, Any] = {}


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
        raise InputError(name, csv_problem(err)) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def read_rows_csv(text: str, name: str, *, header: str, row: str, nothing: str,
                  max_rows: int, instead: str) -> pd.DataFrame:
    """:func:`read_csv_text` of a page's CSV box, with the checks every such box needs: a
    header and at least one row, at most ``max_rows`` rows (counted before pandas reads
    anything); ``row`` names what a row is, ``nothing`` what an empty table lacks and
    ``instead`` what to use in Python for more rows.

    >>> read_rows_csv("", "folds", header="fold, tp", row="fold", nothing="folds",
    ...               max_rows=10, instead="compare_folds")
    Traceback (most recent call last):
    ...
    bayescm.app.pages_common.InputError: Give a header line (fold, tp) and one row per fold.
    """
    if not text.strip():
        raise InputError(name, f"Give a header line ({header}) and one row per {row}.")
    rows = text.strip().count("\n")
    if rows > max_rows:
        raise InputError(name, f"The CSV has {rows:,} rows; this page reads at most "
                               f"{max_rows:,}. Use {instead} in Python for more.")
    frame = read_csv_text(text, name)
    if frame.empty:
        raise InputError(name, f"No {nothing}: give one row per {row} below the header "
                               f"({header}).")
    return frame


def csv_problem(err: Exception) -> str:
    """What to check when pandas cannot read a CSV text, with pandas' detail made short
    (its parser's prefix dropped: the reader needs the line, not the parser's name).

    >>> csv_problem(ValueError("Error tokenizing data. C error: Expected 2 fields in "
    ...                        "line 3, saw 4\\n"))  # doctest: +ELLIPSIS
    'Cannot read the text as CSV (expected 2 fields in line 3, saw 4). Check that...'
    """
    detail = re.sub(r"^.*C error:\s*", "", str(err).strip().splitlines()[0]
                    if str(err).strip() else type(err).__name__)
    detail = detail[:1].lower() + detail[1:120].rstrip(". ")
    return (f"Cannot read the text as CSV ({detail}). Check that every line uses the "
            "header line's separator (comma, semicolon or tab) and has as many entries "
            "as the header, that the first line names the columns, and that every "
            'quote (") is closed.')


def positive_label(text: str, values: Any, *, where: str = "the true labels",
                   name: str = "positive") -> Any:
    """The positive label as the data spell it (a text box holds a string; the data may
    hold numbers), or None for an empty ``text`` (the library then takes 1 or True).

    Raises
    ------
    InputError
        For field ``name``, when no value of ``values`` reads as ``text``: the message lists
        the labels found (``where`` says where they were found).

    Examples
    --------
    >>> label = positive_label("1", pd.Series([0, 1, 1]))   # the number 1, not "1"
    >>> print(label + 1, positive_label("", [0, 1]))
    2 None
    >>> try:
    ...     positive_label("yes", ["Y", "N", None], where="the labels in column y_true")
    ... except InputError as err:
    ...     print(err.field, err.message)  # doctest: +NORMALIZE_WHITESPACE
    positive The positive label 'yes' is not among the labels in column y_true: N, Y.
    Type one of them, or leave the field empty when the labels are 0/1 or False/True.
    """
    if not text:
        return None
    found = pd.unique(pd.Series(values).dropna())
    for value in found:
        if str(value) == text:
            return value
    names = sorted(map(str, found))
    shown = ", ".join(names[:20]) + (f", ... ({len(names)} labels)" if len(names) > 20 else "")
    raise InputError(name, f"The positive label {text!r} is not among {where}: {shown}. "
                           "Type one of them, or leave the field empty when the "
                           "labels are 0/1 or False/True.")


_TABLE_STYLE = (
    "<style>.bcm-frame{border-collapse:collapse;font-family:system-ui,sans-serif;"
    "font-size:0.9em}.bcm-frame td,.bcm-frame th{padding:3px 8px;border-bottom:1px solid "
    "#eee;text-align:right;white-space:nowrap}.bcm-frame td:first-child,.bcm-frame "
    "th:first-child{text-align:left}.bcm-scroll{overflow-x:auto;max-width:100%}</style>")


def data_testid(*parts: Any) -> str:
    """A ``data-testid`` from parts such as a metric, a label and a column: lower case,
    ``[label]`` as ``-label``, spaces and underscores as ``-``, and HTML-escaped: labels
    come from the reader's input and from links, and nothing in them may leave the
    attribute.

    >>> data_testid("tpr[Cat]", "hdi_lower"), data_testid("agreement", "p1", "+-")
    ('tpr-cat-hdi-lower', 'agreement-p1-+-')
    >>> data_testid('x"><img src=x>', "mean")
    'x&quot;&gt;&lt;img-src=x&gt;-mean'
    """
    import html

    text = "-".join(str(p) for p in parts).replace("[", "-").replace("]", "")
    return html.escape(re.sub(r"[\s_]+", "-", text).lower(), quote=True)


def frame_html(frame: pd.DataFrame, prefix: str, *, digits: int = 4) -> str:
    """A table as HTML whose every number carries ``data-testid="<prefix>-<row>-<col>"``
    (row: the index joined by ``-``), for readers and for browser tests; it scrolls
    sideways on a narrow screen.

    >>> frame = pd.DataFrame({"mean": [0.5]}, index=pd.Index(["A"], name="classifier"))
    >>> 'data-testid="board-a-mean">0.5000<' in frame_html(frame, "board")
    True
    """
    import html

    names = [str(n) if n is not None else "" for n in frame.index.names]
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    head += "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for key, row in frame.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        cells = "".join(f"<td>{html.escape(str(k))}</td>" for k in keys)
        for col, value in row.items():
            text = (f"{value:.{digits}f}" if isinstance(value, float)
                    else html.escape(str(value)))
            cells += f'<td><span data-testid="{data_testid(prefix, *keys, col)}">{text}</span></td>'
        rows.append(f"<tr>{cells}</tr>")
    return (f'{_TABLE_STYLE}<div class="bcm-scroll"><table class="bcm-frame"><tr>{head}</tr>'
            f'{"".join(rows)}</table></div>')


PRIOR_LINE = re.compile(r"^\s*(\w+)\s*([^:=]*?)\s*[:=]\s*(.+?)\s*$")


def prior_lines(text: str, usage: str) -> Iterator[tuple[int, str, str, str]]:
    """Each prior line of ``text`` as ``(line number, parameter (lower case), unit,
    prior)``: ``parameter [unit]: prior`` (or ``=``); empty lines and ``#`` lines are
    skipped.  A line of another form is an :class:`InputError` for field ``priors``
    saying ``Line i: <usage>, got '<line>'``.

    >>> list(prior_lines("Sensitivity A: beta(20, 4)\\n# note\\nprevalence = beta:1,3", "x"))
    [(1, 'sensitivity', 'A', 'beta(20, 4)'), (3, 'prevalence', '', 'beta:1,3')]
    """
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        match = PRIOR_LINE.match(line)
        if match is None:
            raise InputError("priors", f"Line {i}: {usage}, got {line.strip()!r}.")
        yield i, match[1].lower(), match[2], match[3]


def put_prior(out: dict[str, Any], line: int, name: str, unit: str, prior: Any) -> None:
    """Record ``prior`` for ``name`` (all units) or for ``name``'s ``unit`` in ``out``.

    >>> out = {}
    >>> put_prior(out, 1, "sensitivity", "A", "beta:2,1"); out
    {'sensitivity': {'A': 'beta:2,1'}}
    """
    if unit:
        per = out.setdefault(name, {})
        if not isinstance(per, dict):
            raise InputError("priors", f"Line {line}: {name} already has a prior for all.")
        per[unit] = prior
    else:
        out[name] = prior


@dataclasses.dataclass(frozen=True)
class Built:
    """A model built from a page's inputs and what is known before sampling: its data
    (``table``), the model, the identifiability verdict (``identified``: "data",
    "priors" or "none", and its words) and the priors' truncation notes."""

    table: Any
    model: Any
    identified: str
    identifiability: str
    truncation: tuple[str, ...] = ()
