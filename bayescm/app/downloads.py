"""Every result downloadable: CSV of a table, PNG and SVG of a figure, NetCDF of a fit.

Each helper takes a *getter* (called when the button is clicked, so nothing is
serialised until someone asks) and returns Panel download buttons.  A getter returns
None when there is nothing to download (the input is invalid); the button then
serves an empty file named ``nothing.txt`` rather than failing.

Figures are made with ``matplotlib.figure.Figure`` directly, never ``pyplot``: the
server draws for many sessions in threads, and pyplot's global state is not
thread-safe.  :func:`new_figure` makes one; :func:`figure_pane` shows one.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["csv_download", "figure_downloads", "figure_pane", "netcdf_download",
           "new_figure", "to_bytes"]


def new_figure(width: float = 6.0, height: float = 3.2) -> Any:
    """A thread-safe matplotlib Figure (no pyplot) with one Axes: ``fig, ax``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def to_bytes(fig: Any, fmt: str) -> bytes:
    """The figure as ``png`` (150 dpi) or ``svg`` bytes.

    Examples
    --------
    >>> fig, ax = new_figure()
    >>> to_bytes(fig, "png")[:4], to_bytes(fig, "svg")[:5]
    (b'\\x89PNG', b'<?xml')
    """
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=150 if fmt == "png" else None)
    return buf.getvalue()


def figure_pane(fig: Any, **kwargs: Any) -> Any:
    """A responsive Panel pane showing ``fig`` (PNG, stretched to the page's width)."""
    import panel as pn

    kwargs.setdefault("sizing_mode", "stretch_width")
    return pn.pane.Matplotlib(fig, format="png", dpi=110, tight=False, **kwargs)


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


def figure_downloads(get_figure: Callable[[], Any], stem: str, *, name: str = "plot") -> Any:
    """Two buttons: ``get_figure()`` (a matplotlib Figure) as ``stem.png`` and ``stem.svg``."""
    import panel as pn

    def make(fmt: str) -> Callable[[], io.IOBase]:
        def callback() -> io.IOBase:
            fig = get_figure()
            return _empty() if fig is None else io.BytesIO(to_bytes(fig, fmt))
        return callback

    return pn.FlexBox(_button(make("png"), f"{stem}.png", "PNG", f"{name}-png"),
                      _button(make("svg"), f"{stem}.svg", "SVG", f"{name}-svg"))


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
