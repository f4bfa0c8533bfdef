"""Fixtures for the app's tests: an in-process server and one headless Chromium per module.

The fixtures are registered in ``tests/conftest.py``; a test module imports only the
helpers::

    from tests.app_support import screenshot, text_of

    pytestmark = pytest.mark.engine("chromium")    # browser tests only

    def test_it(open_page, tmp_path):
        page = open_page("one?tp=30")              # path and query under the app's root
        page.get_by_test_id("tnr-hdi-lower").wait_for()
        screenshot(page, tmp_path, "one")

``app_url`` serves every page of the app from a thread of the test process on a free
port (module scope: started once per test module, stopped after it).  ``browser`` is
a Playwright browser context of Debian's Chromium (``tools/browser.py``) with a fresh
profile under the module's temporary directory.  ``open_page`` opens a new tab at a
path, waits for the page's first results (any element with a ``data-testid``) and
closes the tab after the test.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator

import pytest

PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 60_000  # the first page of a module imports PyMC in the server: seconds


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    from bayescm.app.server import free_port, serve

    port = free_port()
    server = serve(port=port, threaded=True)  # returns once it listens
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from tests.conftest import load_script  # here: conftest imports this module

    browser_tools = load_script("tools/browser.py", "bayescm_test_browser")
    profile = tmp_path_factory.mktemp("chromium-profile")
    from playwright.sync_api import expect

    # expect() has its own default (5 s): a loaded machine needs the same as the rest
    expect.set_options(timeout=TIMEOUT_MS)
    with browser_tools.chromium(profile) as context:
        context.set_default_timeout(TIMEOUT_MS)
        yield context


@pytest.fixture
def open_page(app_url: str, browser: object) -> Iterator[Callable[..., object]]:
    opened = []

    def open_(path: str = "", *, phone: bool = False, wait_for: str | None = None) -> object:
        page = browser.new_page()
        opened.append(page)
        if phone:
            page.set_viewport_size(PHONE)
        page.goto(app_url + path.lstrip("/"))
        if wait_for is not None:
            page.get_by_test_id(wait_for).wait_for()
        return page

    yield open_
    for page in opened:
        page.close()


def fits_the_phone(page: object) -> bool:
    """Nothing on the page is wider than a phone's screen (no sideways scrolling)."""
    return page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 2


def screenshot(page: object, tmp_path: pathlib.Path, name: str) -> pathlib.Path:
    """A full-page PNG of ``page`` under the test's ``tmp_path``; returns its path."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
    return path


def text_of(page: object, test_id: str) -> str:
    """The text of the element with ``data-testid=test_id`` (waits for it)."""
    loc = page.get_by_test_id(test_id)
    loc.wait_for()
    return loc.inner_text().strip()


def enter(page: object, field: str, text: str) -> None:
    """Type ``text`` into the input of the widget with ``css_classes=[f"bcm-{field}"]``
    and commit it as a reader would: Enter in a one-line input, leaving a text area."""
    box = page.locator(f".bcm-{field} input, .bcm-{field} textarea").first
    box.fill(text)
    if box.evaluate("e => e.tagName") == "TEXTAREA":
        box.evaluate("e => e.blur()")
    else:
        box.press("Enter")
