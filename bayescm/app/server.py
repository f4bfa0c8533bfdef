"""Serving the app: :func:`serve` over HTTP (``bayescm app``), :func:`app` in Jupyter.

One Bokeh/Tornado server process serves every page at ``/<slug>`` and the first page
also at ``/``.  Each browser session builds only the page it opens (the page's
``build`` runs once per session), so ten readers cost ten small sets of objects, not
ten processes or kernels.

The app never shows a traceback: a page that cannot be built or rendered from a link
(a bug, or a value no check caught) shows one plain line and a link to the page's
plain address instead of Panel's error page with the server's paths; the traceback
goes to the server's log.  A port that is taken is refused before the server starts
(:class:`PortInUse`), with a plain message.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

from bayescm.app.layout import shell
from bayescm.app.registry import Page, pages
from bayescm.app.registry import page as page_by_slug

__all__ = ["PortInUse", "app", "free_port", "routes", "serve", "wait_listening"]

TITLE = "bayescm: how good is this classifier, really?"
log = logging.getLogger("bayescm.app")


class PortInUse(OSError):
    """The address the app was asked to serve on is taken (or not this machine's)."""


def _extension(*, inline: bool = False) -> None:
    import panel as pn

    # "notifications" off: errors are shown next to their field instead.  ``inline`` is
    # passed only when asked for, so a reader's own ``pn.config.inline`` stands otherwise.
    pn.extension(notifications=False, design="native", sizing_mode="stretch_width",
                 **({"inline": True} if inline else {}))


def routes() -> dict[str, Any]:
    """URL path -> a function building that page for one session.

    Examples
    --------
    >>> list(routes())[:2]
    ['/', 'one']
    """
    found = pages()
    out: dict[str, Any] = {}
    for i, p in enumerate(found):
        def build(p=p) -> Any:
            _extension()
            return _served(p)
        if i == 0:
            out["/"] = build
        out[p.slug] = build
    return out


def _served(page: Page) -> None:
    """Build and render ``page`` into this session's document; on any exception a plain
    note in its place, never Panel's page with a traceback (logged here instead).

    Rendering happens here, not in Panel after the build returns (returning None leaves
    Panel nothing to do), because a widget can fail only then: a value from a link
    that its buttons cannot show, say."""
    import panel as pn

    doc = pn.state.curdoc
    try:
        shell(page).server_doc(doc, title=TITLE)
    except Exception as err:
        log.exception("bayescm app: the page %r could not be built", page.slug)
        for root in list(doc.roots):
            doc.remove_root(root)
        failed(page, err).server_doc(doc, title=TITLE)


def failed(page: Page, err: BaseException) -> Any:
    """What a reader sees instead of a page that could not be built: one line (the
    library's message, or the error's type for a bug) and the page's plain address.

    >>> from bayescm.app.registry import page
    >>> 'href="./one"' in failed(page("one"), ValueError("x")).objects[0].object
    True
    """
    import html

    import panel as pn

    from bayescm.app.errors import is_user_error, message

    # a bug's own words may hold the server's paths: its type alone (the log has the rest)
    said = message(err) if is_user_error(err) else (
        f"Unexpected error ({type(err).__name__}): a bug in bayescm's app; the server's log "
        "has the details.")
    return pn.Column(pn.pane.HTML(
        f'<div role="alert" data-testid="page-error" style="color:#b42318">'
        f"<p><b>The page {html.escape(page.title)} could not be opened from this link."
        f"</b> {html.escape(said)}</p><p>Open it without the link's values: "
        f'<a href="./{page.slug}">{html.escape(page.title)}</a>.</p></div>',
        sizing_mode="stretch_width"), sizing_mode="stretch_width")


def serve(*, port: int = 5006, host: str = "127.0.0.1", show: bool = False,
          threaded: bool = False, allow_origins: list[str] | None = None) -> Any:
    """Serve the app at ``http://host:port/``.

    Parameters
    ----------
    port
        TCP port; 0 picks a free one (read it from the returned server's ``port``).
    host
        Address to listen on: 127.0.0.1 (this machine only, the default) or, to let
        others reach it, the machine's address or ``0.0.0.0``.
    show
        Open the address in the default web browser.
    threaded
        Serve from a background thread and return at once (tests, notebooks); the
        returned thread has ``.stop()``.  Otherwise block until interrupted.
    allow_origins
        Extra ``host:port`` origins allowed to open the app's websocket (when it is
        reached under another name, e.g. behind a proxy).

    Returns
    -------
    The Bokeh server, or with ``threaded=True`` the thread serving it, once it accepts
    connections.

    Notes
    -----
    Without ``threaded=True`` the call does not return until the server is stopped
    (Ctrl+C): that is ``bayescm app``.  The example below serves from a thread on a
    free port, reads the first page and stops; most of its time is the imports that
    :func:`serve` makes at once (ArviZ, Matplotlib), so that a session never finds
    them half-imported by another.

    Examples
    --------
    >>> import urllib.request
    >>> port = free_port()
    >>> server = serve(port=port, threaded=True)       # returns once it listens
    >>> with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as page:
    ...     page.status, TITLE in page.read().decode()
    (200, True)
    >>> server.stop(); server.join(timeout=10); server.is_alive()
    False
    """
    import panel as pn

    if threaded and port == 0:
        port = free_port()  # known before the thread starts, to wait for it
    if port:
        check_port(port, host)  # else a thread's bind fails silently, or Tornado's raw error
    origins = [f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}",
               *(allow_origins or [])]
    if port == 0 or host in {"0.0.0.0", "::"}:
        origins = ["*"]  # the port is not known yet, or any address may be used
    # the first page's imports, now: a session must not find ArviZ half-imported by another
    _warm()
    # a closed tab's session (and its running fit) is dropped within seconds, not
    # Bokeh's default half-minute: a fit holds one of the server's few sampler slots
    server = pn.serve(routes(), port=port, address=host, show=show, threaded=threaded,
                      websocket_origin=origins, title=TITLE, start=True, verbose=False,
                      check_unused_sessions_milliseconds=SESSION_CHECK_MS,
                      unused_session_lifetime_milliseconds=SESSION_CHECK_MS)
    if threaded:
        wait_listening(port, host=host)
    return server


SESSION_CHECK_MS = 2000


def _warm() -> None:
    import importlib

    for name in ("arviz", "matplotlib.figure", "matplotlib.backends.backend_agg",
                 "bayescm.inference", "bayescm.analysis"):
        importlib.import_module(name)


def check_port(port: int, host: str = "127.0.0.1") -> None:
    """Raise :class:`PortInUse` when ``host:port`` cannot be served on (taken by another
    program, or not an address of this machine), as the server would bind it.

    >>> with socket.socket() as taken:
    ...     taken.bind(("127.0.0.1", 0)); taken.listen()
    ...     check_port(taken.getsockname()[1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayescm.app.server.PortInUse: Cannot serve the app on 127.0.0.1:...: the port is taken...
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Tornado binds
        try:
            s.bind((host, port))
        except OSError as err:
            raise PortInUse(f"Cannot serve the app on {host}:{port}: " + (
                "the port is taken (another program, or another bayescm app, listens "
                "there). Choose another port (--port), or --port 0 for a free one."
                if err.errno == errno.EADDRINUSE else
                f"{(err.strerror or str(err)).lower()}. Choose another port (--port) or "
                "address (--host).")) from None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_listening(port: int, *, host: str = "127.0.0.1", timeout: float = 60.0) -> float:
    """Block until something accepts connections on ``host:port``; return the seconds
    waited (``TimeoutError`` after ``timeout``)."""
    if host in {"0.0.0.0", "::", ""}:
        host = "127.0.0.1"
    start = time.perf_counter()
    while True:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"nothing listened on {host}:{port} within {timeout} s")
        time.sleep(0.02)


def app(page: str | None = None, *, inline: bool = False) -> Any:
    """Every page in a tab (or the page ``page`` alone), for display in Jupyter; see
    :func:`bayescm.app.app`."""
    import panel as pn

    _extension(inline=inline)
    if page is not None:
        return shell(page_by_slug(page), links=False)
    # each page is built when its tab is first shown, not all at once (No labels starts
    # a forkserver importing PyMC; a reader may never open it)
    return pn.Tabs(*[(p.title, pn.param.ParamFunction(_later(p), lazy=True)) for p in pages()],
                   dynamic=True, sizing_mode="stretch_width")


def _later(page: Page) -> Callable[[], Any]:
    def build() -> Any:
        return shell(page, links=False)
    return build
