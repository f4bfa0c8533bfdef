"""A page's state in its URL: a shared link restores the page.

A page keeps everything a reader may change in one ``param.Parameterized`` object and
calls :func:`sync_url` on it once, when the page is built.  The query string then
follows the state (only values that differ from their defaults are written, so the
cocaine example's link is just the page's address) and a link's query string sets
the state when the page opens.

Values are written as plain text: numbers as Python writes them, booleans as ``1``
and ``0``, lists comma-joined (``?metrics=tpr,tnr,bm``), strings as they are (a
K-class matrix ``cat,dog;5,1;2,7`` included; ``urlencode`` escapes what it must).
A query value that does not fit its parameter is not applied and is reported, by
name, to the page (it shows the message in an :class:`~bayescm.app.errors.ErrorNote`).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

import param

__all__ = ["decode", "encode", "sync_url"]


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

    Examples
    --------
    >>> import param
    >>> decode(param.Integer(), "26"), decode(param.ListSelector(), "tpr,tnr")
    (26, ['tpr', 'tnr'])
    """
    if isinstance(parameter, param.Boolean):
        if text not in {"0", "1", "true", "false"}:
            raise ValueError(f"expected 1 or 0, got {text!r}")
        return text in {"1", "true"}
    if isinstance(parameter, param.Integer):
        return int(text)
    if isinstance(parameter, param.Number):
        return float(text)
    if isinstance(parameter, param.List | param.ListSelector):
        return [v for v in text.split(",") if v]
    return text


def _changed(state: param.Parameterized, names: Iterable[str]) -> dict[str, str]:
    out = {}
    for name in names:
        parameter, value = state.param[name], getattr(state, name)
        if value != parameter.default:
            out[name] = encode(parameter, value)
    return out


def restore(state: param.Parameterized, query: dict[str, str], names: Iterable[str]
            ) -> list[str]:
    """Set ``state`` from a parsed query string; return a message per value refused.

    Examples
    --------
    >>> import param
    >>> class S(param.Parameterized):
    ...     tp = param.Integer(26, bounds=(0, None))
    >>> s = S()
    >>> restore(s, {"tp": "-3"}, ["tp"])
    ["The link's value tp=-3 was not used: Integer parameter 'S.tp' must be at least 0, not -3."]
    >>> restore(s, {"tp": "30"}, ["tp"]), s.tp
    ([], 30)
    """
    problems = []
    for name in names:
        if name not in query:
            continue
        try:
            state.param.update({name: decode(state.param[name], query[name])})
        except Exception as err:  # a hand-edited link: say which value was dropped
            problems.append(f"The link's value {name}={query[name]} was not used: {err}")
    return problems


def sync_url(state: param.Parameterized, names: Iterable[str] | None = None, *,
             on_error: Callable[[list[str]], None] | None = None) -> bool:
    """Keep ``state``'s parameters ``names`` (default all but ``name``) in the page's URL.

    Restores them from the current query string first, then rewrites the query string
    on every change.  Outside a served session (Jupyter, tests without a server) it
    does nothing and returns False.

    Parameters
    ----------
    state
        The page's state.
    names
        The parameters to keep in the URL.
    on_error
        Called with the messages of query values that could not be applied.
    """
    import panel as pn

    location = pn.state.location
    if location is None or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
        return False
    names = [n for n in (names or state.param) if n != "name"]
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(location.search.lstrip("?")).items()}
    problems = restore(state, query, names)
    if problems and on_error is not None:
        on_error(problems)

    def write(*_events: Any) -> None:
        text = urllib.parse.urlencode(_changed(state, names), safe=",;")
        location.search = f"?{text}" if text else ""

    state.param.watch(write, names)
    return True
