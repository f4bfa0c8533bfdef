"""``bcm.app()`` in a live JupyterLab, driven in real headless Chromium.

A JupyterLab server is started for the test (a free port, a token, a temporary root
holding one notebook whose cell is ``bcm.app("one")``); Chromium opens the notebook,
runs the cell as a reader would (Shift+Enter), reads the One-classifier page's numbers
from the cell's output and edits a count there.  The numbers follow the edit, which
only the kernel can compute: the widgets talk to the kernel through Panel's comms
(pyviz_comms' JupyterLab extension), not a static picture of the first render.

Panel's notebook output loads BokehJS and Panel's JavaScript from their CDNs
(cdn.bokeh.org, cdn.holoviz.org), as every user's notebook does.  The test machine has
no network, so the browser is handed the same files from the installed ``bokeh`` and
``panel`` packages (their versions are the ones the URLs name); any other request that
leaves the machine is refused and reported.

Stray output: the kernel's messages on the page's websocket are read, so a warning
printed while handling an edit (which JupyterLab shows in its log console, not in the
cell) is caught as well as one printed by the cell.

The expected numbers are the library's, computed here for the same input with the
page's seed and rounded as the page rounds them (see ``test_app_one_browser.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

import bayescm as bcm
from bayescm.app import one_classifier_logic as logic
from tests.app_support import screenshot, text_of

# a live JupyterLab runs under -m slow (`make test-all`); the default suite builds the pages
# for Jupyter without one (test_app_core.test_bcm_app_builds_the_pages_for_jupyter)
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.slow]

TOKEN = "bayescm-test-token"
# the notebook's one cell, and whether the browser may fetch from the CDNs
CDN = ('import bayescm as bcm\nbcm.app("one")', True)
OFFLINE = ('import bayescm as bcm\nbcm.app("one", inline=True)', False)
# JupyterLab's toast asking to fetch Jupyter news would cover the output
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
START_TIMEOUT_S = 60.0
# what ipykernel and Bokeh print to the kernel's stderr under Panel in JupyterLab (see
# the end of the test)
THIRD_PARTY = re.compile(r"No such comm: [0-9a-f-]+|"
                         r"BokehUserWarning: reference already known '[0-9a-f-]+'")
# JupyterLab's own state (``--LabApp.expose_app_in_browser``): the notebook's kernel is
# connected and idle
KERNEL_READY = """() => {
    const kernel = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
    return kernel?.connectionStatus === "connected" && kernel.status === "idle";
}"""


def library_numbers(**cells: int) -> dict[str, str]:
    """The numbers the page shows for the example with ``cells`` changed, by the library
    (the page's draws and seed; rounded as the page rounds them), by ``data-testid``."""
    cm = bcm.ConfusionMatrix(**{**logic.EXAMPLE, **cells}, classifier=logic.CLASSIFIER)
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=logic.DRAWS, chains=4,
                    random_seed=1)
    table = bcm.summary(idata, metrics=["tnr", "acc"]).loc[logic.CLASSIFIER]
    return {"tnr-hdi-lower": f"{table.loc['tnr', 'hdi_lower']:.3f}",
            "tnr-hdi-upper": f"{table.loc['tnr', 'hdi_upper']:.3f}",
            "acc-mean": f"{table.loc['acc', 'mean']:.3f}"}


class Lab:
    """A JupyterLab server in its own process group, started at once, waited for later
    (the browser starts meanwhile).

    Config, data and runtime directories are temporary (nothing of the user's Jupyter
    setup is read or written); the kernel imports the ``bayescm`` under test.  The
    server takes a free port itself (``port=0``) and writes it to its runtime file, so
    parallel test workers never race for a port.
    """

    def __init__(self, tmp_path: pathlib.Path, notebook: str, cell: str) -> None:
        import nbformat  # here, not at collection: jsonschema's import takes seconds

        root, home = tmp_path / "notebooks", tmp_path / "jupyter"
        root.mkdir()
        (home / "config" / "labconfig").mkdir(parents=True)
        (home / "config" / "labconfig" / "page_config.json").write_text(
            json.dumps(PAGE_CONFIG))
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, root / notebook)
        repo = pathlib.Path(bcm.__file__).resolve().parents[1]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                   [str(repo), *filter(None, [os.environ.get("PYTHONPATH")])]),
               "JUPYTER_CONFIG_DIR": str(home / "config"),
               "JUPYTER_DATA_DIR": str(home / "data"),
               "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
            "--ServerApp.terminals_enabled=False",
            # at the end, a kernel still exiting after a second is killed (default 5 s)
            "--KernelManager.shutdown_wait_time=1",
            # nothing the test needs, each a second or so of start-up
            "--ServerApp.jpserver_extensions=jupyter_lsp=False",
            "--ServerApp.jpserver_extensions=panel.io.jupyter_server_extension=False",
            "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        self.notebook = notebook
        self.log = tmp_path / "jupyter.log"
        self.runtime = home / "runtime"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(command, env=env, cwd=root, stdout=log,
                                            stderr=subprocess.STDOUT,
                                            start_new_session=True)  # killed as one group
        self.base: str | None = None

    def url(self) -> str:
        """The notebook's address, once the server's REST API answers."""
        deadline = time.monotonic() + START_TIMEOUT_S
        runtime = self.runtime / f"jpserver-{self.process.pid}.json"
        while self.base is None:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited ({self.process.returncode}):\n"
                                   f"{self.log.read_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"JupyterLab did not answer in {START_TIMEOUT_S} s:\n"
                                   f"{self.log.read_text()}")
            with contextlib.suppress(OSError, ValueError):  # not there, or half written
                base = json.loads(runtime.read_text())["url"]
                with urllib.request.urlopen(f"{base}api/status?token={TOKEN}", timeout=2):
                    self.base = base
            time.sleep(0.1)
        return f"{self.base}lab/tree/{self.notebook}?token={TOKEN}"

    def stop(self) -> None:
        """Shut the server down with its kernels; kill its process group if it lingers
        (a kernel whose server is gone exits by itself: ipykernel polls its parent)."""
        if self.base is not None:
            with contextlib.suppress(OSError):  # /api/shutdown shuts every kernel down
                request = urllib.request.Request(f"{self.base}api/shutdown?token={TOKEN}",
                                                 method="POST")
                urllib.request.urlopen(request, timeout=5).close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):  # and anything left in its group
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def jupyter(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Lab]:
    """A JupyterLab serving a notebook whose cell is ``request.param``."""
    lab = Lab(tmp_path, "app.ipynb", request.param)
    try:
        yield lab
    finally:
        lab.stop()


def _local_copy(url: str) -> pathlib.Path | None:
    """The installed file a CDN URL of Panel's notebook output names, if any."""
    import bokeh
    import panel

    if m := re.fullmatch(r"https://cdn\.bokeh\.org/bokeh/release/(.+?)-\d[^/]*?(\.min\.js)", url):
        # bokeh-widgets-3.9.2.min.js is bokeh-widgets.min.js of the installed version
        return pathlib.Path(bokeh.__file__).parent / "server" / "static" / "js" / f"{m[1]}{m[2]}"
    if m := re.fullmatch(rf"https://cdn\.holoviz\.org/panel/{panel.__version__}/dist/(.+)", url):
        return pathlib.Path(panel.__file__).parent / "dist" / m[1]
    return None


def _serve_cdn_locally(context: object, *, cdn: bool = True) -> list[str]:
    """Answer the CDN requests of Panel's notebook output from the installed packages
    (unless ``cdn`` is False: no network at all); refuse every other request leaving the
    machine.  Returns the refused URLs."""
    refused: list[str] = []

    def handle(route: object) -> None:
        url = urllib.parse.unquote(route.request.url.split("?")[0])
        path = _local_copy(url) if cdn else None
        if path is not None and path.is_file():
            route.fulfill(path=str(path))
        else:
            refused.append(url)
            route.abort()

    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), handle)
    return refused


def _kernel_output(page: object) -> list[dict]:
    """Records what the kernel prints to the page: every stream (stdout, stderr: warnings
    included) and error message on the notebook's kernel websocket, whichever request it
    answers (the cell, or a widget's comm message after an edit), as (type, content)."""
    from jupyter_server.services.kernels.connection.base import deserialize_msg_from_ws_v1

    printed: list[dict] = []

    def frame(payload: str | bytes) -> None:
        if isinstance(payload, str):  # the legacy protocol: one JSON message
            message = json.loads(payload)
            header, content = message["header"], message["content"]
        else:  # v1.kernel.websocket.jupyter.org: header, parent, metadata, content, ...
            parts = deserialize_msg_from_ws_v1(payload)[1]
            header, content = json.loads(parts[0]), json.loads(parts[3])
        if header["msg_type"] in {"stream", "error"}:
            printed.append({"type": header["msg_type"], **content})

    def socket(ws: object) -> None:
        if "/api/kernels/" in ws.url:
            ws.on("framereceived", frame)

    page.on("websocket", socket)
    return printed


@pytest.mark.parametrize(("jupyter", "cdn"), [
    pytest.param(*CDN, id="cdn"),
    # the same with the JavaScript in the notebook and no network: ~20 s more
    pytest.param(*OFFLINE, id="offline-inline", marks=pytest.mark.slow),
], indirect=["jupyter"])
def test_bcm_app_renders_in_jupyterlab_and_follows_edits(jupyter, cdn, browser, tmp_path):
    refused = _serve_cdn_locally(browser, cdn=cdn)
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": 1280, "height": 2000})  # the whole page, unscrolled
        printed = _kernel_output(page)
        page.goto(jupyter.url())
        cell = page.locator(".jp-Notebook .jp-CodeCell").first
        cell.wait_for()
        # a cell run before the notebook's kernel is connected is dropped, silently
        page.wait_for_function(KERNEL_READY)
        cell.locator(".jp-InputArea-prompt").click()  # select the cell (command mode)
        page.keyboard.press("Shift+Enter")
        expect(cell.locator(".jp-InputArea-prompt")).to_have_text(re.compile(r"\[(\*|1)\]:"))
        # while the kernel imports and computes (it has the other core)
        first, edited = library_numbers(), library_numbers(tn=20)
        output = cell.locator(".jp-OutputArea")
        shown = {test_id: text_of(output, test_id) for test_id in first}
        assert shown == first
        lo, hi = float(shown["tnr-hdi-lower"]), float(shown["tnr-hdi-upper"])
        # the "about 0.43-0.95": the exact Beta(7, 3) HDI is 0.432-0.946; see
        # test_app_one_browser.py for the Monte Carlo error of the page's draws (+-0.03
        # is over 7 sd)
        assert abs(lo - 0.432) < 0.03 and abs(hi - 0.946) < 0.03
        screenshot(page, tmp_path, "jupyter-first")

        # an edit in the output goes to the kernel and comes back as new numbers
        box = output.locator(".bcm-tn input").first
        box.select_text()
        box.press_sequentially("20")  # keys, as typed: none may reach JupyterLab's shortcuts
        box.press("Tab")  # leaving the field commits it (Enter is JupyterLab's, there)
        expect(output.get_by_test_id("tnr-hdi-lower")).to_have_text(edited["tnr-hdi-lower"])
        assert {test_id: text_of(output, test_id) for test_id in edited} == edited
        assert all(edited[k] != first[k] for k in first)  # each number read changed
        page.wait_for_function(KERNEL_READY)  # the edit's work is done, figures included
        screenshot(page, tmp_path, "jupyter-edited")

        # no warning, message or traceback from us in the notebook: the cell's output
        # holds no stream and no error, and all the kernel printed anywhere (for the
        # cell, or for the edit: that goes to JupyterLab's log console) is one of two
        # lines of Panel's machinery: Bokeh's on each edit of a pn.bind pane (a bare
        # Panel widget prints it too) and ipykernel's for a message of the page's
        # first render to a comm it does not know (not traced to one component)
        unexplained = [m for m in printed if m["type"] != "stream"
                       or not all(THIRD_PARTY.fullmatch(line)
                                  for line in m["text"].splitlines())]
        assert unexplained == []
        assert output.locator('[data-mime-type^="application/vnd.jupyter.std"]').count() == 0
        assert output.locator('[data-mime-type="application/vnd.jupyter.error"]').count() == 0
        # the output needed nothing but Bokeh's and Panel's files from the CDN (offline:
        # nothing but a few theme stylesheets Panel 1.9 fetches for parts redrawn after an
        # edit; those parts keep the browser's default look)
        assert [url for url in refused if not url.endswith(".css")] == []
        assert refused == [] or not cdn
    finally:
        page.close()
        browser.unroute_all()
