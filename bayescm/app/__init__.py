"""The web app: bayescm for people who do not program, in a browser or inline in Jupyter.

``bayescm app`` (or ``make app``) serves it on http://127.0.0.1:5006/;
``bcm.app()`` shows the same pages inline in Jupyter.  It is built on Panel
(HoloViz; Bokeh server): Panel serves natively inside Jupyter, keeps a page's state in
its URL (``pn.state.location``) and serves every visitor from one process, each
session a few objects rather than a kernel.  ``benchmarks/bench_app_frameworks.py``
holds the measurements behind that choice.  Importing :mod:`bayescm` or this package
imports no Panel: it is loaded when a page is built.

Layout
------
``registry``  :class:`Page` and :func:`pages` (discovers ``bayescm/app/pages/*.py``)
``server``    :func:`serve` (one route per page, ``/`` the first) and :func:`app`
``layout``    the shell around every page: title bar, links to the pages, phone width
``state``     :func:`sync_url`: a page's inputs in its URL, restored from a shared link
``errors``    :class:`ErrorNote`: the library's own message next to the field
``downloads`` buttons: CSV of a table, PNG/SVG of a figure, NetCDF of a fit
``pages/``    one module per page

How to add a page
-----------------
1. Create ``bayescm/app/pages/<name>.py`` with a function that builds the page and a
   module constant ``PAGE``::

       import panel as pn
       import param

       from bayescm.app.errors import ErrorNote
       from bayescm.app.registry import Page
       from bayescm.app.state import sync_url

       class State(param.Parameterized):        # everything the URL must restore
           tp = param.Integer(26, bounds=(0, None))

       def build() -> pn.viewable.Viewable:     # called once per browser session
           state = State()
           sync_url(state)                      # ?tp=26 <-> state.tp, both ways
           note = ErrorNote()                   # place it next to the field it checks
           box = pn.widgets.IntInput.from_param(state.param.tp, css_classes=["bcm-tp"])

           def result(tp):
               return note.run(lambda: ...)     # the library's message, never a traceback

           return pn.Column(box, note, pn.bind(result, state.param.tp),
                            sizing_mode="stretch_width")

       PAGE = Page(slug="mine", title="My page", order=50, build=build,
                   description="One line for the navigation bar's tooltip.")

   Discovery imports every module of ``bayescm.app.pages`` and collects its ``PAGE``:
   no other file changes.  The page is served at ``/<slug>`` (the lowest ``order`` also
   at ``/``), appears in the navigation bar and in ``bcm.app()``'s tabs.
2. Keep computations out of the view: a plain module (``bayescm/app/<name>_logic.py``,
   no Panel) turns the state into results, so tests need no browser.  Update the page's
   panes inside ``with pn.io.hold():`` (one message to the browser) and hand slow work
   such as drawing figures to :func:`bayescm.app.layout.soon`, so the numbers arrive
   first.  NUTS fits (seconds to minutes) belong behind a button, with progress shown.
3. Results go through :mod:`bayescm.app.downloads`; give every number a test reads a
   ``data-testid`` (``<span data-testid="tnr-hdi-lower">``) and every input a
   ``css_classes=["bcm-<field>"]``: browser tests find them by those.
4. Test it: ``tests/app_support.py`` has the fixtures (an in-process server on a free
   port, one headless Chromium per test module, screenshots under ``tmp_path``).

Examples
--------
>>> from bayescm.app.registry import pages
>>> [p.slug for p in pages()][:1]
['one']
"""

from __future__ import annotations

from typing import Any

from bayescm.app.registry import Page

__all__ = ["Page", "app", "serve"]


def app(page: str | None = None, *, inline: bool = False) -> Any:
    """The web app inline in Jupyter: every page in a tab (or one page by its slug).

    The last expression of a notebook cell, it shows the same pages as ``bayescm app``
    in the cell's output (in JupyterLab, say): the widgets talk to the notebook's
    kernel, so every edit recomputes there.  Nothing else is needed: the call loads
    Panel's notebook support (``pn.extension``) itself.

    Parameters
    ----------
    page
        A page's slug (``"one"``, ...) to show that page alone; default all, in tabs.
    inline
        Embed the JavaScript the output runs (BokehJS and Panel: the saved notebook
        grows by about 7 MB) instead of having the browser fetch it from the CDNs
        cdn.bokeh.org and cdn.holoviz.org, Panel's default.  For a browser with no
        internet access, where the default output stays empty: ``bcm.app(inline=True)``
        (Panel 1.9 still asks the CDN for a few theme stylesheets of parts redrawn after
        an edit: offline, those parts keep the browser's default look).

    Returns
    -------
    panel.viewable.Viewable
        Displays itself as the last expression of a cell.

    Examples
    --------
    In a notebook cell, ``bcm.app("one")`` shows the One-classifier page with the
    cocaine example (TNR 95% HDI about 0.43-0.95); ``bcm.app()`` every page:

    >>> import bayescm as bcm
    >>> type(bcm.app()).__name__          # in a notebook cell, this shows the app
    'Tabs'
    """
    from bayescm.app.server import app as _app

    return _app(page, inline=inline)


def serve(*, port: int = 5006, host: str = "127.0.0.1", show: bool = False,
          threaded: bool = False, allow_origins: list[str] | None = None) -> Any:
    """Serve the app over HTTP; see :func:`bayescm.app.server.serve`.

    Examples
    --------
    >>> server = serve(port=0, threaded=True)   # a free port, in a background thread
    >>> server.stop()
    """
    from bayescm.app.server import serve as _serve

    return _serve(port=port, host=host, show=show, threaded=threaded,
                  allow_origins=allow_origins)
