"""Bad input shows the library's own message next to the field, never a traceback.

bayescm checks its input before any computation and says, in its exceptions, what is
wrong and what to do (``CountsError``, ``PriorError``, ``ValueError``, ``KeyError``,
``TypeError``).  A page runs each computation through :meth:`ErrorNote.run`: the
result on success; on failure ``None``, and the exception's message in a red note
placed under the field the computation reads.  Anything else (a bug) is shown as one
line naming its type and logged with its traceback on the server.  What counts as the
reader's mistake is decided by where the exception was raised (:func:`is_user_error`):
a ValueError, TypeError or KeyError raised by bayescm's own code; the same types raised
inside pandas, NumPy or Panel are bugs (bayescm should have checked first), not the
reader's fault.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ErrorNote", "is_user_error", "message"]

T = TypeVar("T")
log = logging.getLogger("bayescm.app")

# Exceptions whose message is written for the user (bayescm's errors derive from these).
USER_ERRORS = (ValueError, TypeError, KeyError)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def is_user_error(err: BaseException) -> bool:
    """True when ``err`` says what the reader got wrong: one of :data:`USER_ERRORS`
    raised in bayescm's own code (its innermost frame), or made without raising.

    >>> is_user_error(ValueError("counts are >= 0"))
    True
    >>> import pandas as pd
    >>> try:
    ...     pd.Series([1]).iloc["x"]
    ... except TypeError as err:
    ...     is_user_error(err)
    False
    """
    if not isinstance(err, USER_ERRORS):
        return False
    tb = err.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.realpath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE)


def message(err: BaseException) -> str:
    """What the reader sees for ``err``: its message, or one line for a bug.

    Examples
    --------
    >>> import bayescm as bcm
    >>> try:
    ...     bcm.ConfusionMatrix(tp=-1, fn=0, fp=2, tn=6)
    ... except Exception as err:
    ...     print(message(err))
    cell 'tp' of the confusion matrix is negative (-1); counts are >= 0.
    >>> message(KeyError("No metric 'foo'."))
    "No metric 'foo'."
    """
    if not is_user_error(err):
        return (f"Unexpected error ({type(err).__name__}: {err}). This is a bug in bayescm's "
                "app; the server's log has the details.")
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        return err.args[0]  # str(KeyError) would quote it
    return str(err) or type(err).__name__


ERROR_STYLE = ("color:#b42318;border-left:3px solid #b42318;padding:2px 8px;"
               "background:#fef3f2;white-space:pre-wrap")


class ErrorNote:
    """A red note under a field: empty and hidden until :meth:`run` catches an error.

    It is a Panel object (``pn.Column(field, note)``); ``note.text`` is the message
    shown ("" when none).  Its HTML carries ``data-testid="error-<name>"``.

    Parameters
    ----------
    name
        Identifies the note in the page (tests find it by ``data-testid``).
    """

    def __init__(self, name: str = "input") -> None:
        import panel as pn

        self.name = name
        self.text = ""
        self._pane = pn.pane.HTML("", visible=False, sizing_mode="stretch_width",
                                  css_classes=["bcm-error"], margin=(0, 10))

    def __panel__(self) -> Any:
        return self._pane

    def show(self, text: str) -> None:
        """Show ``text`` (HTML-escaped)."""
        import html

        self.text = text
        # styled inline: the pane renders in a shadow root that page CSS does not reach
        self._pane.object = (f'<div class="bcm-error-text" role="alert" '
                             f'style="{ERROR_STYLE}" '
                             f'data-testid="error-{self.name}">{html.escape(text)}</div>')
        self._pane.visible = True

    def clear(self) -> None:
        self.text = ""
        self._pane.object = ""
        self._pane.visible = False

    def run(self, compute: Callable[[], T]) -> T | None:
        """``compute()``, clearing the note; on an exception show its message, return None."""
        try:
            out = compute()
        except Exception as err:
            if not is_user_error(err):
                log.exception("bayescm app: unexpected error")
            self.show(message(err))
            return None
        self.clear()
        return out
