"""Every result downloadable: CSV of a table, PNG and SVG of a figure, NetCDF of a fit.

Each helper takes a *getter* (called when the button is clicked, so nothing is
serialised until someone asks) and returns Panel download buttons.  A getter returns
None when there is nothing to download (the input is invalid); the button then
serves an empty file named ``nothing.txt`` rather than failing.

Figures are made with ``matplotlib.figure.Figure`` directly, never ``pyplot``: the
server draws for many sessions in threads, and pyplot's global state is not
thread-safe.  :func:`new_figure` makes one; :func:`figure_pane` shows one.  Lay the
buttons out with ``pn.FlexBox(*buttons)``: they wrap on a phone.
"""

from __future__ import annotations

import base64
import io
import os
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["csv_download", "figure_downloads", "figure_pane", "netcdf_download",
           "new_figure", "show_figure", "to_bytes"]


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
    """
    import panel as pn

    pane = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=[f"bcm-{name}"])
    show_figure(pane, fig, name=name)
    return pane


def show_figure(pane: Any, fig: Any, *, name: str = "figure") -> None:
    """Put ``fig`` (or nothing, for None) in a pane made by :func:`figure_pane`."""
    if fig is None:
        pane.object = ""
        return
    data = base64.b64encode(to_bytes(fig, "png", dpi=110)).decode()
    pane.object = (f'<img data-testid="{name}" alt="{name}" src="data:image/png;base64,'
                   f'{data}" style="width:100%;max-width:760px;height:auto">')


def _button(callback: Callable[[], io.IOBase], filename: str, label: str, name: str) -> Any:
    import panel as pn

    return pn.widgets.FileDownload(callback=callback, filename=filename, label=label,
                                   color="light", css_classes=[f"bcm-download-{name}"],
                                   width=110, margin=(2, 4))


def _empty() -> io.BytesIO:
    return io.BytesIO(b"")


def csv_download(get_frame: Callable[[], Any], filename: str, *, name: str = "csv") -> Any:
    """A button downloading ``get_frame()`` (a DataFrame) as CSV."""

    def callback() -> io.IOBase:
        frame = get_frame()
        return _empty() if frame is None else io.StringIO(frame.to_csv())

    return _button(callback, filename, "CSV", name)


def figure_downloads(get_figure: Callable[[], Any], stem: str, *, name: str = "plot"
                     ) -> list[Any]:
    """Two buttons: ``get_figure()`` (a matplotlib Figure) as ``stem.png`` and ``stem.svg``."""

    def make(fmt: str) -> Callable[[], io.IOBase]:
        def callback() -> io.IOBase:
            fig = get_figure()
            return _empty() if fig is None else io.BytesIO(to_bytes(fig, fmt))
        return callback

    return [_button(make("png"), f"{stem}.png", "PNG", f"{name}-png"),
            _button(make("svg"), f"{stem}.svg", "SVG", f"{name}-svg")]


def netcdf_download(get_idata: Callable[[], Any], filename: str, *, name: str = "netcdf"
                    ) -> Any:
    """A button downloading ``get_idata()`` (an InferenceData) as NetCDF
    (:func:`bayescm.save`: ``bcm.load`` reads it back, priors and all)."""

    def callback() -> io.IOBase:
        idata = get_idata()
        if idata is None:
            return _empty()
        from bayescm.persist import save

        fd, path = tempfile.mkstemp(suffix=".nc")
        os.close(fd)
        try:
            save(idata, path)
            with open(path, "rb") as fh:
                return io.BytesIO(fh.read())
        finally:
            os.unlink(path)

    return _button(callback, filename, "NetCDF", name)
