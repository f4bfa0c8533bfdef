"""What the Compare, No-labels and Upload pages share: a note under each field for the
library's message, and the page's state kept in its URL."""

from __future__ import annotations

from typing import Any

from bayescm.app.errors import ErrorNote
from bayescm.app.pages_common import InputError, PageState
from bayescm.app.state import TOO_LONG, sync_url

__all__ = ["MAX_TEXT", "clear_errors", "field", "keep_in_url", "notes", "show_error"]

MAX_TEXT = 1_000_000
"""Longest text a page's text area takes (``max_length``): pasted predictions of some
100,000 cases.  Panel's default, 5000 characters, cut longer pastes silently (about 600
cases), so the page analysed part of the data.  Such text is too long for a link
(:data:`bayescm.app.state.MAX_QUERY`): the page says so."""


def notes(names: Any) -> dict[str, ErrorNote]:
    """One :class:`ErrorNote` per field (and ``url`` for a link's refused values)."""
    return {n: ErrorNote(n) for n in ("url", *names)}


def field(widgets: dict[str, Any], found: dict[str, ErrorNote], name: str) -> Any:
    """Widget ``name`` with its note under it, stretched to the width: where the
    library's message for that field shows.  Pages bind their own widgets and notes
    (``functools.partial(field, self.w, self.notes)``).

    Examples
    --------
    >>> import panel as pn
    >>> found = notes(["margin"])
    >>> margin = pn.widgets.FloatInput(label="Margin")
    >>> box = field({"margin": margin}, found, "margin")
    >>> found["margin"].show("margin must be a finite number, got nan.")
    >>> box.objects[0] is margin, "got nan" in box.objects[1].object  # the note, under it
    (True, True)
    """
    import panel as pn

    return pn.Column(widgets[name], found[name], sizing_mode="stretch_width")


def clear_errors(found: dict[str, ErrorNote]) -> None:
    """Hide every field's note (the link's note stays: it is about how the page opened)."""
    for name, note in found.items():
        if name != "url":
            note.clear()


def show_error(found: dict[str, ErrorNote], err: InputError) -> None:
    """Show ``err`` under its field and clear the other fields' notes."""
    clear_errors(found)
    found.get(err.field, found[next(n for n in found if n != "url")]).show(err.message)


def keep_in_url(state: PageState, found: dict[str, ErrorNote], *,
                choices: dict[str, Any] | None = None) -> Any:
    """The page's ``param`` mirror of ``state``, kept in the URL (restored from it now).

    The ``url`` note shows a link's refused values, and says so while the state is too
    large for a link (:data:`bayescm.app.state.TOO_LONG`).  ``choices``: the values a
    field shown as buttons takes (a link's other values are refused, with them)."""
    params = state.params()
    sync_url(params, choices=choices, **url_note(found["url"]))
    return params


def url_note(note: ErrorNote) -> dict[str, Any]:
    """``sync_url``'s callbacks showing a link's refused values in ``note``, and while
    the state is too large for a link, :data:`bayescm.app.state.TOO_LONG` (cleared
    when it fits again)."""
    def on_link(message: str) -> None:
        if message:
            note.show(message)
        elif note.text.startswith(TOO_LONG.partition("{")[0]):  # not a link's refused value
            note.clear()

    return {"on_error": lambda msgs: note.show(" ".join(msgs)), "on_link": on_link}
