"""The shell around every page: a title bar with links to the pages, and a width that
works from a phone (~390 px) to a desktop.

Bokeh renders every component in its own shadow DOM, so page-wide CSS does not reach
inside components; layouts therefore stretch to the width (``sizing_mode``) and wrap
(:func:`columns`: a flex box whose children sit side by side on a wide screen and one
under the other on a phone), and styles that matter live in the HTML they style.
"""

from __future__ import annotations

import html
from typing import Any

from bayescm.app.registry import Page, pages

__all__ = ["columns", "header", "section", "shell", "soon"]

NAV_CSS = """
<style>
.bcm-nav {display:flex; flex-wrap:wrap; align-items:baseline; gap:4px 14px;
          font-family:system-ui,sans-serif; padding:4px 0 6px;
          border-bottom:1px solid #ddd}
.bcm-nav .brand {font-weight:700; font-size:1.15em; margin-right:8px}
.bcm-nav a {color:#1f5fa8; text-decoration:none; padding:2px 0}
.bcm-nav a.current {font-weight:700; color:#111; border-bottom:2px solid #1f5fa8}
</style>
"""


def header(current: Page | None, *, links: bool = True) -> Any:
    """The title bar: bayescm and, when served, a link to each page (``current``'s
    marked, for the reader's bearings).

    Examples
    --------
    >>> from bayescm.app.registry import page
    >>> nav = header(page("compare")).object
    >>> 'href="./compare" class="current"' in nav, 'href="./one" title=' in nav
    (True, True)
    >>> header(None, links=False).object.count("<a ")   # in Jupyter: no links
    0
    """
    import panel as pn

    items = ['<span class="brand">bayescm</span>']
    if links:
        for p in pages():
            cls = ' class="current"' if current is not None and p.slug == current.slug else ""
            items.append(f'<a href="./{p.slug}"{cls} title="{html.escape(p.description)}" '
                         f'data-testid="nav-{p.slug}">{html.escape(p.title)}</a>')
    return pn.pane.HTML(NAV_CSS + f'<nav class="bcm-nav">{"".join(items)}</nav>',
                        sizing_mode="stretch_width", margin=(0, 10))


def section(title: str, *objects: Any, **kwargs: Any) -> Any:
    """A titled block of a page (a heading, then ``objects``), stretched to the width.

    Examples
    --------
    >>> import panel as pn
    >>> block = section("Leaderboard", pn.pane.HTML("<p>A first</p>"), margin=0)
    >>> block.objects[0].object, len(block.objects), block.sizing_mode, block.margin
    ('### Leaderboard', 2, 'stretch_width', 0)
    """
    import panel as pn

    kwargs.setdefault("sizing_mode", "stretch_width")
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 10)), *objects, **kwargs)


def columns(*objects: Any, min_width: int = 340) -> Any:
    """Side by side when the screen is wide, one under the other on a phone: each
    object grows from ``min_width`` pixels, and wraps below when the row has no room.

    Examples
    --------
    >>> box = columns("inputs", "results", min_width=200)
    >>> type(box).__name__, box.flex_wrap, [c.styles["flex"] for c in box.objects]
    ('FlexBox', 'wrap', ['1 1 200px', '1 1 200px'])
    """
    import panel as pn

    styles = {"flex": f"1 1 {min_width}px", "min-width": "0"}
    return pn.FlexBox(*[pn.Column(o, styles=styles, sizing_mode="stretch_width")
                        for o in objects],
                      flex_wrap="wrap", sizing_mode="stretch_width")


def shell(page: Page, *, links: bool = True) -> Any:
    """``page`` built, under the title bar.

    Examples
    --------
    >>> import panel as pn
    >>> demo = Page(slug="demo", title="Demo", order=99, description="a demo",
    ...             build=lambda: pn.pane.Markdown("hello"))
    >>> top, body = shell(demo).objects
    >>> 'data-testid="nav-one"' in top.object, body.object
    (True, 'hello')
    """
    import panel as pn

    return pn.Column(header(page, links=links), page.build(), sizing_mode="stretch_width",
                     styles={"max-width": "1200px"})


def soon(callback: Any) -> None:
    """Run ``callback`` after the current changes have reached the browser.

    In a served session it is scheduled on the server's next tick, so what the current
    callback changed (the numbers) is sent first and slow work (drawing figures)
    follows; elsewhere (Jupyter, tests) it runs now.

    Examples
    --------
    >>> done = []
    >>> soon(lambda: done.append("drawn")); done   # no server session here: at once
    ['drawn']
    """
    import panel as pn

    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        doc.add_next_tick_callback(callback)
    else:
        callback()
