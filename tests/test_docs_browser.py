"""The documentation site opened in headless Chromium: the index, an API page and a
notebook page render, the notebook page with its figures.

The site is the one tests/test_docs.py checks (built once per session: warnings as
errors, the quickstart notebook executed) and served by ``http.server`` from a thread on a
free port; the browser is Debian's Chromium (``tools/browser.py``, the ``browser``
fixture of tests/app_support.py).
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator

import pytest

from tests.app_support import screenshot
from tests.test_docs import QUICK, quick_site

# on the worker that builds the site (tests/test_docs.py): no idle wait on its lock
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.xdist_group("docs-quick-site")]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # no request log on stderr
        pass


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    html = quick_site(tmp_path_factory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    tab = browser.new_page()
    failed: list[str] = []
    tab.on("requestfailed", lambda request: failed.append(request.url))
    tab.failed_requests = failed
    yield tab
    tab.close()


def visible_images(page: object, selector: str) -> list[int]:
    """naturalWidth of every image matching ``selector``, once each has loaded."""
    page.wait_for_function(
        f"[...document.querySelectorAll({selector!r})].every(i => i.complete)")
    return page.eval_on_selector_all(selector, "els => els.map(e => e.naturalWidth)")


def test_index_renders(page, site_url, tmp_path):
    page.goto(site_url + "index.html")
    assert "bayescm" in page.title()
    assert page.locator("h1").first.inner_text().strip().startswith("bayescm")
    # the README's opening is on the front page, and the four cards link onwards
    assert page.get_by_text("How good is this classifier, really").first.is_visible()
    assert page.locator(".sd-card").count() == 4
    assert page.failed_requests == []
    screenshot(page, tmp_path, "docs-index")


def test_api_page_renders(page, site_url, tmp_path):
    page.goto(site_url + "api/generated/bayescm.fit.html")
    assert page.title().startswith("bayescm.fit")
    signature = page.locator("dl.py.function dt").first
    assert signature.is_visible() and "fit(" in signature.inner_text()
    # the numpydoc sections came through napoleon as a field list
    assert page.locator("dl.field-list").first.is_visible()
    assert page.failed_requests == []
    screenshot(page, tmp_path, "docs-api-fit")


def test_notebook_page_renders_its_figures(page, site_url, tmp_path):
    page.goto(site_url + f"notebooks/{QUICK}.html")
    assert "Quickstart" in page.title()
    widths = visible_images(page, ".cell_output img")
    # trace, posterior and predictive figures, each decoded by the browser
    assert len(widths) >= 3 and all(w > 100 for w in widths), widths
    assert page.locator(".cell_output table").count() >= 1  # the summary table
    assert page.failed_requests == []
    screenshot(page, tmp_path, "docs-notebook")
