"""The app's pages: each module of :mod:`bayescm.app.pages` declares one ``PAGE``.

Discovery (:func:`pages`) imports every module of that package and collects its
``PAGE``, so adding a page is adding one file (see :mod:`bayescm.app`).  This module
imports no Panel; the page modules do, when :func:`pages` is first called.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Page", "page", "pages"]

_SLUG = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass(frozen=True)
class Page:
    """One page of the app.

    Parameters
    ----------
    slug
        Its URL path (``/<slug>``): lower-case letters, digits and ``-``.
    title
        Its name in the navigation bar and in Jupyter's tabs.
    build
        Called once per browser session (or ``bcm.app()`` call) with no arguments;
        returns the page's Panel object.
    order
        Position in the navigation bar; the lowest is also served at ``/``.
    description
        One line: the navigation link's tooltip.
    """

    slug: str
    title: str
    build: Callable[[], Any]
    order: int = 100
    description: str = ""

    def __post_init__(self) -> None:
        if not _SLUG.match(self.slug):
            raise ValueError(f"A page slug must match {_SLUG.pattern} (it is a URL path), "
                             f"got {self.slug!r}.")


@functools.cache
def _discover() -> tuple[Page, ...]:
    package = importlib.import_module("bayescm.app.pages")

    found: dict[str, Page] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        declared = getattr(module, "PAGE", None)
        if declared is None:
            continue
        if declared.slug in found:
            raise ValueError(f"Two pages have the slug {declared.slug!r}: "
                             f"{found[declared.slug].title!r} and {declared.title!r}.")
        found[declared.slug] = declared
    return tuple(sorted(found.values(), key=lambda p: (p.order, p.slug)))


def pages() -> list[Page]:
    """Every page of the app, in navigation order.

    Examples
    --------
    >>> from bayescm.app.registry import pages
    >>> first = pages()[0]
    >>> first.slug, first.title
    ('one', 'One classifier')
    """
    return list(_discover())


def page(slug: str) -> Page:
    """The page with this slug; a ``KeyError`` naming the slugs there are otherwise."""
    for p in _discover():
        if p.slug == slug:
            return p
    raise KeyError(f"No page {slug!r}; the pages are {[p.slug for p in _discover()]}.")
