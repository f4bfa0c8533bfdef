"""A page's state in its URL: a shared link restores the page.

A page keeps everything a reader may change in one ``param.Parameterized`` object and
calls :func:`sync_url` on it once, when the page is built.  The query string then
follows the state (only values that differ from their defaults are written, so the
cocaine example's link is just the page's address) and a link's query string sets
the state when the page opens.  This module is the app's one reader and writer of
links: :class:`~bayescm.app.pages_common.PageState` (``to_query`` / ``from_query``)
and the Upload page's links to other pages go through :func:`changed`,
:func:`restore` and :func:`link_query` too, so a link is read by the code that wrote it.

Values are written as plain text: numbers as Python writes them, booleans as ``1``
and ``0``, lists comma-joined (``?metrics=tpr,tnr,bm``), strings as they are (a
K-class matrix ``cat,dog;5,1;2,7`` included; ``urlencode`` escapes what it must).  A
value cleared to ``""`` is written as ``name=`` and read back as ``""`` (not as its
default).  A query value that does not fit its parameter is not applied and is
reported, by name, to the page (it shows the message in an
:class:`~bayescm.app.errors.ErrorNote`).  A state whose query would exceed
:data:`MAX_QUERY` characters is not written: the address bar shows the page's bare
address and the page says why (:data:`TOO_LONG`).

Examples
--------
>>> import param
>>> class S(param.Parameterized):
...     group = param.String("group")
...     margin = param.Number(0.0)
>>> s = S(group="", margin=0.05)
>>> link_query(changed(s))
'group=&margin=0.05'
>>> t = S()
>>> restore(t, parse("?group=&margin=0.05")), t.group, t.margin
([], '', 0.05)
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import param

__all__ = ["MAX_QUERY", "TOO_LONG", "changed", "choices_of", "decode", "encode", "link_query",
           "parse", "restore", "sync_url"]

MAX_QUERY = 8000
"""Longest query string (percent-encoded characters) a link may carry.

RFC 9110 (Fielding, Nottingham & Reschke, "HTTP Semantics", 2022, section 4.1) asks
every sender and recipient to support URIs of at least 8000 octets, and no more: nginx
(``large_client_header_buffers 4 8k``) and Apache (``LimitRequestLine 8190``) refuse
longer request lines by default, so a longer link may break behind a proxy.  Browsers
accept far longer URLs (Chromium up to 2 MB).  Our own server, Tornado under Bokeh,
refuses a request whose start line and headers exceed ``max_header_size`` (64 KB by
default: HTTP 431) and the query travels twice when a page opens: in the page's GET
and again in the websocket's ``Sec-WebSocket-Protocol`` header, inside Bokeh's session
token (the request's arguments and headers, zlib-compressed and base64-encoded,
about 1.75 times the query's length for random letters, a quarter of it for pasted
cases).  8000 characters keep both well below 64 KB even with a ``Referer`` as long
(``tests/app/test_app_url.py`` builds the token).  About 1000 pasted cases of three
columns fit.
"""

TOO_LONG = ("The data are too large for a link ({n:,} characters; a link holds at most "
            "{limit:,}): the address shows this page without them. Download the CSV of "
            "the results to share them.")
"""The page's note when its state does not fit in a link."""


def encode(parameter: param.Parameter, value: Any) -> str:
    """The text of ``value`` in a query string.

    Examples
    --------
    >>> import param
    >>> encode(param.ListSelector(objects=["tpr", "tnr"]), ["tpr", "tnr"])
    'tpr,tnr'
    >>> encode(param.Boolean(), True), encode(param.Number(), 0.5)
    ('1', '0.5')
    """
    if isinstance(parameter, param.Boolean):
        return "1" if value else "0"
    if isinstance(parameter, param.List | param.ListSelector):
        return ",".join(str(v) for v in value)
    return str(value)


def decode(parameter: param.Parameter, text: str) -> Any:
    """The value that ``text`` (from a query string) stands for; ``ValueError`` if none.

    Booleans are ``1``/``0`` (also ``true``/``false``, ``yes``/``no``, any case);
    a number must be a number, not NaN.

    Examples
    --------
    >>> import param
    >>> decode(param.Integer(), "26"), decode(param.ListSelector(), "tpr,tnr")
    (26, ['tpr', 'tnr'])
    >>> decode(param.Boolean(), "maybe")
    Traceback (most recent call last):
    ...
    ValueError: expected 1 or 0, got 'maybe'
    """
    if isinstance(parameter, param.Boolean):
        flag = {"1": True, "true": True, "yes": True, "0": False, "false": False,
                "no": False}.get(text.strip().lower())
        if flag is None:
            raise ValueError(f"expected 1 or 0, got {text!r}")
        return flag
    if isinstance(parameter, param.Integer):
        return int(text)
    if isinstance(parameter, param.Number):
        value = float(text)
        if math.isnan(value):  # float() reads "nan": no one's intended input
            raise ValueError(f"expected a number, got {text!r}")
        return value
    if isinstance(parameter, param.List | param.ListSelector):
        return [v for v in text.split(",") if v]
    return text


def _names(state: param.Parameterized, names: Iterable[str] | None) -> list[str]:
    return [n for n in (state.param if names is None else names) if n != "name"]


def changed(state: param.Parameterized, names: Iterable[str] | None = None
            ) -> dict[str, str]:
    """The encoded values of ``names`` (default: all parameters but ``name``) that
    differ from their defaults: the query of a link to ``state``.

    >>> import param
    >>> class S(param.Parameterized):
    ...     tp = param.Integer(26)
    ...     paired = param.Boolean(False)
    >>> changed(S(paired=True)), changed(S())
    ({'paired': '1'}, {})
    """
    out = {}
    for name in _names(state, names):
        parameter, value = state.param[name], getattr(state, name)
        if value != parameter.default:
            out[name] = encode(parameter, value)
    return out


def _text(raw: Any) -> str | None:
    """One query value as text: the last of a list (as :func:`parse` takes it), bytes
    decoded (a web framework's arguments are lists of bytes)."""
    if isinstance(raw, list | tuple):
        raw = raw[-1] if raw else None
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    return None if raw is None else str(raw)


def choices_of(state: param.Parameterized, name: str,
               choices: Mapping[str, Sequence[Any]] | None = None) -> list[Any] | None:
    """The values parameter ``name`` may take from a link: ``choices[name]``, or the
    objects of a ``param.Selector`` (None: any value its type allows)."""
    if choices and name in choices:
        return list(choices[name])
    parameter = state.param[name]
    if isinstance(parameter, param.Selector) and not isinstance(parameter, param.ListSelector):
        return list(parameter.get_range().values()) or None  # values, also of named objects
    return None


def restore(state: param.Parameterized, query: Mapping[str, Any],
            names: Iterable[str] | None = None, *,
            choices: Mapping[str, Sequence[Any]] | None = None) -> list[str]:
    """Set ``state`` from a parsed query; return a message per value refused.

    ``query`` maps names to text (as :func:`parse` gives), or to lists of text or bytes
    (as a web framework gives; the last one counts).  Keys that are not among
    ``names`` (default: all parameters but ``name``) are ignored.  A value outside
    ``choices[name]`` (or a ``param.Selector``'s objects) is refused with the values
    allowed: a page's buttons cannot show any other, so it would never be applied.
    Nothing raises: every problem is a message.

    Examples
    --------
    >>> import param
    >>> class S(param.Parameterized):
    ...     tp = param.Integer(26, bounds=(0, None))
    >>> s = S()
    >>> restore(s, {"tp": "-3"}, ["tp"])
    ["The link's value tp=-3 was not used: Integer parameter 'S.tp' must be at least 0, not -3."]
    >>> restore(s, {"tp": [b"30"], "other": "x"}), s.tp
    ([], 30)
    """
    problems = []
    for name in _names(state, names):
        text = _text(query.get(name))
        if text is None:
            continue
        try:
            value = decode(state.param[name], text)
            allowed = choices_of(state, name, choices)
            if allowed is not None and value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; "
                                 f"got {_shown(text)}.")
            state.param.update({name: value})
        except Exception as err:  # a hand-edited link: say which value was dropped
            problems.append(f"The link's value {name}={_shown(text)} was not used: "
                            f"{_shown(str(err), 300)}")
    return problems


def _shown(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (a link may carry 8000)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def parse(search: str) -> dict[str, str]:
    """A URL's query string (``?`` optional) as names and texts; ``name=`` is ``""``.

    >>> parse("?group=&seed=2&seed=3")
    {'group': '', 'seed': '3'}
    """
    pairs = urllib.parse.parse_qs(search.lstrip("?"), keep_blank_values=True)
    return {k: v[-1] for k, v in pairs.items()}


def link_query(values: Mapping[str, str]) -> str | None:
    """The query string (without ``?``) of ``values``; None if longer than
    :data:`MAX_QUERY`, i.e. too long for a link that works everywhere.

    >>> link_query({"counts": "name, tp\\nA, 1", "metrics": "tpr,tnr"})
    'counts=name,+tp%0AA,+1&metrics=tpr,tnr'
    >>> link_query({"cases": "1,0\\n" * 3000}) is None
    True
    """
    text = urllib.parse.urlencode(dict(values), safe=",;")
    return text if len(text) <= MAX_QUERY else None


def bind(state: param.Parameterized, location: Any, names: Iterable[str] | None = None, *,
         on_error: Callable[[list[str]], None] | None = None,
         on_link: Callable[[str], None] | None = None,
         choices: Mapping[str, Sequence[Any]] | None = None) -> None:
    """Restore ``state`` from ``location.search`` and keep writing it there.

    ``location`` is anything with a ``search`` attribute (Panel's ``pn.state.location``
    in a session).  When the state is too long for a link, ``search`` becomes ``""``
    and ``on_link`` gets the message (``""`` once the state fits again).
    """
    names = _names(state, names)
    problems = restore(state, parse(location.search or ""), names, choices=choices)
    if problems and on_error is not None:
        on_error(problems)
    too_long = False

    def write(*_events: Any) -> None:
        nonlocal too_long
        values = changed(state, names)
        text = link_query(values)
        if text is None:  # a broken link is worse than none: say so on the page instead
            n = len(urllib.parse.urlencode(values, safe=",;"))
            location.search = ""
            too_long = True
            if on_link is not None:
                on_link(TOO_LONG.format(n=n, limit=MAX_QUERY))
            return
        location.search = f"?{text}" if text else ""
        if too_long and on_link is not None:
            on_link("")
        too_long = False

    state.param.watch(write, names)


def _session_location() -> Any:
    """The served session's ``pn.state.location``; None outside a session."""
    import panel as pn

    if pn.state.curdoc is None or pn.state.curdoc.session_context is None:
        return None
    return pn.state.location


def sync_url(state: param.Parameterized, names: Iterable[str] | None = None, *,
             on_error: Callable[[list[str]], None] | None = None,
             on_link: Callable[[str], None] | None = None,
             choices: Mapping[str, Sequence[Any]] | None = None) -> bool:
    """Keep ``state``'s parameters ``names`` (default all but ``name``) in the page's URL.

    Restores them from the current query string first, then rewrites the query string
    on every change (:func:`bind`).  Outside a served session (Jupyter, tests without a
    server) it does nothing and returns False.

    Parameters
    ----------
    state
        The page's state.
    names
        The parameters to keep in the URL.
    on_error
        Called with the messages of query values that could not be applied.
    on_link
        Called with :data:`TOO_LONG`'s message when the state stops fitting in a link
        (the URL is then the page's bare address) and with ``""`` when it fits again.
        Without it, the message goes to ``on_error``.
    choices
        The values a link may give a parameter that its widget offers as buttons or a
        list (:func:`restore`); any other is refused with the field's values.
    """
    location = _session_location()
    if location is None:
        return False
    if on_link is None and on_error is not None:
        def on_link(message: str) -> None:
            if message:
                on_error([message])
    bind(state, location, names, on_error=on_error, on_link=on_link, choices=choices)
    return True
