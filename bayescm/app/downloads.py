"""Every result downloadable: CSV of a table, PNG and SVG of a figure, NetCDF of a fit.

Each helper takes a *getter* (called when the button is clicked, so nothing is
serialised until someone asks) and returns Panel download buttons.  A getter returns
None when there is nothing to download (the input is invalid, or nothing was asked
for yet).  A page whose buttons stay visible then calls :func:`refresh_downloads`
after each change: a button with nothing to download is disabled (greyed out, with a
tooltip saying why) rather than serving an empty file under the result's name.  A
click that races an edit still finds nothing; it downloads
``nothing-to-download.txt``, a sentence saying so, never an empty ``summary.csv``.

Figures are made with ``matplotlib.figure.Figure`` directly, never ``pyplot``:
pyplot keeps one global current figure for the whole process, which every session of
the server would share (sessions run one at a time on the server's event loop, but
their callbacks interleave, and a notebook may run the app next to the user's own
plots).  :func:`new_figure` makes one; :func:`figure_pane` shows one.  Lay the buttons
out with ``pn.FlexBox(*buttons)``: they wrap on a phone.
"""

from __future__ import annotations

import base64
import io
import os
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["NOTHING", "SCREEN_DPI", "csv_download", "figure_downloads", "figure_pane",
           "netcdf_download", "new_figure", "refresh_downloads", "show_figure", "to_bytes"]

SCREEN_DPI = 110
"""Dots per inch of a figure shown on the page (a download's PNG has 150)."""

NOTHING = ("Nothing to download: the page has no result for its current input. Correct "
           "the input (the note under the field says how) and click the button again.\n")
"""What a click that finds no result downloads, as ``nothing-to-download.txt``."""


def new_figure(width: float = 6.0, height: float = 3.2, *, left: float = 0.7,
               bottom: float = 0.55, top: float = 0.35, right: float = 0.2) -> Any:
    """A thread-safe matplotlib Figure (no pyplot) with one Axes: ``fig, ax``.

    Margins are given in inches: a layout engine (constrained or tight) would measure
    every text on each draw, the larger part of a figure's drawing time here.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - top / height)
    return fig, fig.subplots()


def to_bytes(fig: Any, fmt: str, *, dpi: int = 150) -> bytes:
    """The figure as ``png`` (``dpi`` dots per inch) or ``svg`` bytes.

    Examples
    --------
    >>> fig, ax = new_figure()
    >>> to_bytes(fig, "png")[:4], to_bytes(fig, "svg")[:5]
    (b'\\x89PNG', b'<?xml')
    """
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi if fmt == "png" else None)
    return buf.getvalue()


def figure_pane(fig: Any = None, *, name: str = "figure") -> Any:
    """A Panel pane showing ``fig`` as a PNG that scales with the page's width.

    Set a new figure with :func:`show_figure`.  (Panel's Matplotlib pane keeps the
    height of its first figure when stretched, leaving gaps; an ``<img>`` at 100%
    width with automatic height does not.)

    Examples
    --------
    >>> pane = figure_pane(name="roc")
    >>> pane.object, pane.css_classes
    ('', ['bcm-roc'])
    >>> fig, ax = new_figure()
    >>> figure_pane(fig, name="roc").object.startswith('<img data-testid="roc"')
    True
    """
    import panel as pn

    pane = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=[f"bcm-{name}"])
    show_figure(pane, fig, name=name)
    return pane


def show_figure(pane: Any, fig: Any, *, name: str = "figure") -> None:
    """Put ``fig`` in a pane made by :func:`figure_pane`: a Figure (drawn at
    :data:`SCREEN_DPI`), PNG bytes already drawn (a cached figure's), or None (nothing).

    Examples
    --------
    >>> import base64
    >>> fig, ax = new_figure(2, 1, left=0.1, bottom=0.1, top=0.1, right=0.1)
    >>> pane = figure_pane(name="plot")
    >>> show_figure(pane, fig, name="plot")
    >>> png = base64.b64decode(pane.object.split("base64,")[1].split('"')[0])
    >>> png == to_bytes(fig, "png", dpi=SCREEN_DPI)   # the figure, at screen resolution
    True
    >>> show_figure(pane, png, name="plot")           # the same image, from bytes
    >>> base64.b64decode(pane.object.split("base64,")[1].split('"')[0]) == png
    True
    >>> show_figure(pane, None); pane.object
    ''
    """
    if fig is None:
        pane.object = ""
        return
    png = fig if isinstance(fig, bytes) else to_bytes(fig, "png", dpi=SCREEN_DPI)
    data = base64.b64encode(png).decode()
    pane.object = (f'<img data-testid="{name}" alt="{name}" src="data:image/png;base64,'
                   f'{data}" style="width:100%;max-width:760px;height:auto">')


def _button(make: Callable[[], io.IOBase | None], filename: str, label: str, name: str,
            available: Callable[[], bool]) -> Any:
    """A download button serving ``make()``, or :data:`NOTHING` as a text file when it
    gives None (a click racing an edit: :func:`refresh_downloads` disables the button
    otherwise)."""
    import panel as pn

    button = pn.widgets.FileDownload(filename=filename, label=label, color="light",
                                     css_classes=[f"bcm-download-{name}"], width=110,
                                     margin=(2, 4))

    def callback() -> io.IOBase:
        data = make()
        # Panel reads the name after this call: the name says what the file holds
        button.filename = filename if data is not None else "nothing-to-download.txt"
        return io.StringIO(NOTHING) if data is None else data

    button.callback = callback
    button._bcm_available = available  # read by refresh_downloads
    return button


def refresh_downloads(buttons: Any) -> None:
    """Enable each button (made here) that has something to download now, disable the
    others, with a tooltip saying why: call it after a change to what they serve.

    Examples
    --------
    >>> result = None
    >>> button = csv_download(lambda: result, "summary.csv")
    >>> refresh_downloads([button]); button.disabled
    True
    >>> import pandas as pd
    >>> result = pd.DataFrame({"mean": [0.9]})
    >>> refresh_downloads([button]); button.disabled
    False
    """
    for button in buttons:
        ready = bool(button._bcm_available())
        button.disabled = not ready
        button.description = None if ready else "Nothing to download yet: no result."


def csv_download(get_frame: Callable[[], Any], filename: str, *, name: str = "csv",
                 available: Callable[[], bool] | None = None) -> Any:
    """A button downloading ``get_frame()`` (a DataFrame) as CSV.

    ``available`` tells :func:`refresh_downloads` whether there is something to
    download (by default, whether ``get_frame()`` is not None).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"mean": [0.9]}, index=pd.Index(["tpr"], name="metric"))
    >>> button = csv_download(lambda: frame, "summary.csv")
    >>> button.callback().getvalue()
    'metric,mean\\ntpr,0.9\\n'
    >>> empty = csv_download(lambda: None, "summary.csv")
    >>> empty.callback().getvalue() == NOTHING, empty.filename
    (True, 'nothing-to-download.txt')
    """

    def make() -> io.IOBase | None:
        frame = get_frame()
        return None if frame is None else io.StringIO(frame.to_csv())

    return _button(make, filename, "CSV", name, available or _not_none(get_frame))


def _not_none(get: Callable[[], Any]) -> Callable[[], bool]:
    return lambda: get() is not None


def figure_downloads(get_figure: Callable[[], Any], stem: str, *, name: str = "plot",
                     available: Callable[[], bool] | None = None) -> list[Any]:
    """Two buttons: ``get_figure()`` (a matplotlib Figure) as ``stem.png`` and ``stem.svg``.

    Examples
    --------
    >>> fig, ax = new_figure()
    >>> png, svg = figure_downloads(lambda: fig, "posterior")
    >>> png.filename, png.callback().read()[:4], svg.callback().read()[:5]
    ('posterior.png', b'\\x89PNG', b'<?xml')
    """

    def make(fmt: str) -> Callable[[], io.IOBase | None]:
        def bytes_of() -> io.IOBase | None:
            fig = get_figure()
            return None if fig is None else io.BytesIO(to_bytes(fig, fmt))
        return bytes_of

    available = available or _not_none(get_figure)
    return [_button(make("png"), f"{stem}.png", "PNG", f"{name}-png", available),
            _button(make("svg"), f"{stem}.svg", "SVG", f"{name}-svg", available)]


def netcdf_download(get_idata: Callable[[], Any], filename: str, *, name: str = "netcdf",
                    available: Callable[[], bool] | None = None) -> Any:
    """A button downloading ``get_idata()`` (an InferenceData) as NetCDF
    (:func:`bayescm.save`: ``bcm.load`` reads it back, priors and all).

    Pass ``available`` when ``get_idata`` is costly (it fits or reads a file): by
    default :func:`refresh_downloads` calls ``get_idata()`` to see if it is None.

    Examples
    --------
    Saving a fit takes most of a second (netCDF writes every variable), too slow for a
    docstring; ``tests/app/test_app_core.py`` downloads one and reads it back.  Here, the
    button and what it serves while there is no fit:

    >>> fit = None
    >>> button = netcdf_download(lambda: fit, "fit.nc", available=lambda: fit is not None)
    >>> refresh_downloads([button])
    >>> button.label, button.filename, button.disabled
    ('NetCDF', 'fit.nc', True)
    >>> button.callback().getvalue() == NOTHING
    True
    """

    def make() -> io.IOBase | None:
        idata = get_idata()
        if idata is None:
            return None
        from bayescm.inference.persist import save

        fd, path = tempfile.mkstemp(suffix=".nc")
        os.close(fd)
        try:
            save(idata, path)
            with open(path, "rb") as fh:
                return io.BytesIO(fh.read())
        finally:
            os.unlink(path)

    return _button(make, filename, "NetCDF", name, available or _not_none(get_idata))
