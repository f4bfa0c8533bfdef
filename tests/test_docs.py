"""The documentation site builds offline with warnings as errors, gives every public name
a page, and every internal link of it resolves.

The site's dependencies (the ``docs`` extra, part of ``test``) are imported inside the
functions only.  Two builds:

* default suite: the whole site with warnings as errors, executing one notebook
  (``BAYESCM_DOCS_EXECUTE=01_quickstart``; the others are shown without outputs:
  ``tests/test_notebooks.py`` executes every notebook, under ``-m slow``); about a minute;
* ``-m slow``: the site as ``make docs`` builds it, every notebook executed (about
  seven minutes on two cores), and every notebook page must show its outputs.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import bayescm

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
QUICK = "01_quickstart"


def build_site(out: Path, *, execute: str) -> Path:
    """Build the site into ``out`` with ``-W --keep-going``; fail with Sphinx's log."""
    import sphinx  # noqa: F401  (the docs extra: a clear ImportError without it)

    env = {**os.environ, "BAYESCM_DOCS_EXECUTE": execute}
    env.pop("BAYESCM_NOTEBOOK_FAST", None)  # conf.py's default: the reduced sizes
    html = out / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(out / "doctrees"), str(DOCS), str(html)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        pytest.fail(f"sphinx-build failed ({proc.returncode}):\n{proc.stderr[-20000:]}")
    return html


def quick_site(factory: pytest.TempPathFactory) -> Path:
    """The default suite's site, built once per test session and shared by its workers.

    pytest-xdist's workers share the parent of their base temporary directories; the
    first worker to take the lock builds the site there, the others wait and read it
    (the site is not changed by the tests that read it).
    """
    import fcntl

    root = factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    out = shared / "bayescm-docs-quick"
    out.mkdir(exist_ok=True)
    with open(shared / "bayescm-docs-quick.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / "built").exists():
                build_site(out, execute=QUICK)
                (out / "built").touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out / "html"


def public_pages() -> dict[str, str]:
    """Public name -> the page that must document it, from bayescm's own ``__all__``s."""
    pages = {}
    for name in bayescm.__all__:
        if name.startswith("_"):
            continue
        value = getattr(bayescm, name)
        if inspect.ismodule(value):
            pages[f"bayescm.{name}"] = f"api/{name}.html"
            for member in getattr(value, "__all__", []):
                full = f"{value.__name__}.{member}"
                pages[f"bayescm.{name}.{member}"] = f"api/generated/{full}.html"
        else:
            pages[f"bayescm.{name}"] = f"api/generated/bayescm.{name}.html"
    return pages


class _Page(HTMLParser):
    """The ids a page defines and the links (href, src) it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []
        self.assets: list[str] = []  # scripts and style sheets the page loads
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag in ("a", "link") and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("img", "script") and attrs.get("src"):
            self.links.append(attrs["src"])
        if tag == "script" and attrs.get("src"):
            self.assets.append(attrs["src"])
        if tag == "link" and attrs.get("rel") == "stylesheet" and attrs.get("href"):
            self.assets.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(html: Path) -> list[str]:
    """Every internal link (no scheme) must name an existing file, and its #anchor an id;
    no page may load a script or style sheet from the network (the site works offline)."""
    # the site's pages; _static/ holds the theme's assets (a Jinja macro file among them)
    pages = {p: parse(p) for p in html.rglob("*.html")
             if p.relative_to(html).parts[0] != "_static"}
    broken = []
    for path, page in sorted(pages.items()):
        broken += [f"{path.relative_to(html)}: loads {src} from the network"
                   for src in page.assets if urlsplit(src).scheme or src.startswith("//")]
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue  # external: not followed (the build needs no network)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{path.relative_to(html)}: {link} (no file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(html)}: {link} (no such anchor)")
    return broken


def check_site(html: Path) -> None:
    missing = {name: page for name, page in public_pages().items()
               if not (html / page).is_file()}
    assert not missing, f"public names without a page: {missing}"
    broken = broken_links(html)
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:50])
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    for stem in notebooks:
        assert (html / "notebooks" / f"{stem}.html").is_file(), f"no page for notebook {stem}"
    cards = sorted(p.parent.name for p in (ROOT / "models").glob("*/README.md"))
    for card in cards:
        assert (html / "models" / f"{card}.html").is_file(), f"no page for model card {card}"


def notebook_images(html: Path, stem: str) -> list[str]:
    """The figures a notebook page shows (images written by its executed cells)."""
    page = parse(html / "notebooks" / f"{stem}.html")
    return [src for src in page.images if src.startswith("../_images/")]


def test_public_pages_cover_the_lazy_names():
    # the list the site is checked against is bayescm's: a lazily exported name and a
    # subpackage member are in it (a guard against checking an empty list)
    pages = public_pages()
    assert pages["bayescm.fit"] == "api/generated/bayescm.fit.html"
    assert pages["bayescm.models.three_beta"] == (
        "api/generated/bayescm.models.three_beta.html")
    assert pages["bayescm.datasets.cocaine"] == (
        "api/generated/bayescm.data.datasets.cocaine.html")
    assert len(pages) > 100


def test_link_checker_finds_a_missing_file_and_anchor(tmp_path):
    (tmp_path / "a.html").write_text('<p id="x"></p><a href="b.html#y">b</a>'
                                     '<a href="#x">self</a><a href="https://e.org/">e</a>')
    (tmp_path / "b.html").write_text('<a href="d.html">d</a><a name="z"></a>'
                                     '<a href="a.html#x">a</a><a href="a.html#nope">a</a>')
    (tmp_path / "c.html").write_text('<script src="https://cdn.example/x.js"></script>')
    assert sorted(broken_links(tmp_path)) == [
        "a.html: b.html#y (no such anchor)",
        "b.html: a.html#nope (no such anchor)",
        "b.html: d.html (no file)",
        "c.html: loads https://cdn.example/x.js from the network"]


@pytest.mark.xdist_group("docs-quick-site")
def test_the_suites_groups_reach_the_scheduler(request):
    """Under ``--dist loadgroup`` (``make test``) a test marked ``xdist_group`` carries
    its group in its node id, which is what pytest-xdist's scheduler groups by.

    pytest 9.2 stopped reading ``item._nodeid``, where pytest-xdist 3.8 writes the
    group: every group was then split across workers, silently (the docs site waited
    on its lock, the wheel was built twice).  pyproject pins ``pytest<9.2``; this
    fails if a version that drops the groups comes back."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a pytest-xdist worker under --dist loadgroup: no groups to check")
    assert request.node.nodeid.endswith("@docs-quick-site"), request.node.nodeid


def test_the_suites_order_names_existing_modules(request):
    """``tests/durations.json`` (``tools/test_durations.py``) orders the modules, longest
    test first; a renamed module would silently lose its place and run last."""
    from tests.conftest import DURATIONS

    longest = json.loads(DURATIONS.read_text())
    assert len(longest) >= 50
    missing = [m for m in longest if not (ROOT / m).is_file()]
    assert not missing, f"rerun tools/test_durations.py: {missing}"
    assert list(longest.values()) == sorted(longest.values(), reverse=True)
    # and pytest received them in that order (first the longest)
    first = request.session.items[0].nodeid.split("::")[0]
    assert first == next(m for m in longest if any(
        it.nodeid.startswith(m + "::") for it in request.session.items)), first


def test_the_workers_compile_every_kernel_module():
    """``tests/conftest.py``'s ``KERNELS`` (compiled once per fresh clone, shared by the
    pytest-xdist workers) names every module that defines a ``numba.cfunc``: a kernel
    module left out would again be compiled by both workers."""
    from tests.conftest import KERNELS

    defining = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in (ROOT / "bayescm").rglob("*.py") if "@numba.cfunc(" in path.read_text()}
    assert defining and defining == set(KERNELS), defining ^ set(KERNELS)
    groups = KERNELS.index("bayescm.models.groups.kernel")  # it imports the Hui-Walter one
    assert groups > KERNELS.index("bayescm.models.hui_walter.kernel")


# the build and the browser's tests of its pages on one worker: otherwise the second
# worker waits, idle, on the build's lock for most of the build's minute
@pytest.mark.xdist_group("docs-quick-site")
def test_site_builds_with_every_name_and_link(tmp_path_factory):
    html = quick_site(tmp_path_factory)
    check_site(html)
    # the executed notebook shows its figures (trace, posterior, predictive), and its
    # fits converged at the reduced sizes (what tests/test_notebooks.py checks under
    # -m slow; an error or stderr output in a cell has already failed the build)
    assert len(notebook_images(html, QUICK)) >= 3
    page = (html / "notebooks" / f"{QUICK}.html").read_text(encoding="utf-8")
    assert "cell_output" in page and "NOT converged" not in page
    # a model card's math is typeset by the site's own copy of MathJax
    card = parse(html / "models" / "three_beta.html")
    assert "../_static/mathjax/tex-chtml.js" in card.assets


@pytest.mark.slow
def test_full_site_every_notebook_executed(tmp_path):
    html = build_site(tmp_path, execute="all")
    check_site(html)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = (html / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert "cell_output" in page, f"{path.stem}: no outputs on its page"
        assert notebook_images(html, path.stem), f"{path.stem}: no figure on its page"
