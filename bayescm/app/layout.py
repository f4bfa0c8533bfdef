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
    """The title bar: bayescm and, when served, a link to each page."""
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
    """A titled block of a page (a heading, then ``objects``), stretched to the width."""
    import panel as pn

    kwargs.setdefault("sizing_mode", "stretch_width")
    return pn.Column(pn.pane.Markdown(f"### {title}", margin=(0, 10)), *objects, **kwargs)


def columns(*objects: Any, min_width: int = 340) -> Any:
    """Side by side when the screen is wide, one under the other on a phone."""
    import panel as pn

    styles = {"flex": f"1 1 {min_width}px", "min-width": "0"}
    return pn.FlexBox(*[pn.Column(o, styles=styles, sizing_mode="stretch_width")
                        for o in objects],
                      flex_wrap="wrap", sizing_mode="stretch_width")


def shell(page: Page, *, links: bool = True) -> Any:
    """``page`` built, under the title bar."""
    import panel as pn

    return pn.Column(header(page, links=links), page.build(), sizing_mode="stretch_width",
                     styles={"max-width": "1200px"})


def soon(callback: Any) -> None:
    """Run ``callback`` after the current changes have reached the browser.

    In a served session it is scheduled on the server's next tick, so what the current
    callback changed (the numbers) is sent first and slow work (drawing figures)
    follows; elsewhere (Jupyter, tests) it runs now.
    """
    import panel as pn

    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        doc.add_next_tick_callback(callback)
    else:
        callback()
