"""Which web framework for the app: cold start and update latency, measured in Chromium.

The same one-input app is written for each framework found in this interpreter: a
number input (tn of the cocaine matrix, tp=26, fn=0, fp=2) and the text
``TNR 95% HDI: lo-hi`` from ``bcm.summary_exact`` (the exact path the app runs on
every edit).  For each framework the script prints

* cold start: from spawning the server process to the number shown in headless
  Chromium (``tools/browser.py``: Debian's chromium through Playwright),
* update latency: from committing a new value in the input (Enter) to the new number
  shown, median of 5 edits,
* memory: the server's RSS (with its child processes: Voila's kernels) per extra open
  session, from 1 to 5 sessions,

and how the framework shows the same app inside Jupyter (a fact of its design, not a
measurement).  Frameworks not installed are listed with the command that installs
them.  The machine is shared: figures are upper bounds.

    .venv/bin/python benchmarks/bench_app_frameworks.py
    # the others, best in a separate venv (they are not bayescm dependencies):
    #   pip install streamlit voila ipywidgets
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescm.app.server import free_port, wait_listening  # noqa: E402
from tools.browser import chromium  # noqa: E402

COMPUTE = '''
import bayescm as bcm

def hdi_text(tn):
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=int(tn))
    row = bcm.summary_exact(cm, metrics=["tnr"], random_seed=1).iloc[0]
    return f"TNR 95% HDI: {row.hdi_lower:.4f}-{row.hdi_upper:.4f}"
'''

APPS = {
    "panel": ("app.py", COMPUTE + '''
import panel as pn
tn = pn.widgets.IntInput(name="tn", value=6, start=0)
pn.Column(tn, pn.bind(lambda v: pn.pane.Markdown(hdi_text(v)), tn)).servable()
'''),
    "streamlit": ("app.py", COMPUTE + '''
import streamlit as st
tn = st.number_input("tn", value=6, min_value=0, step=1)
st.write(hdi_text(tn))
'''),
    "voila": ("app.ipynb", COMPUTE + '''
import ipywidgets as w
from IPython.display import display
tn = w.IntText(value=6, description="tn")
out = w.HTML(hdi_text(6))
tn.observe(lambda change: setattr(out, "value", hdi_text(change["new"])), "value")
display(w.VBox([tn, out]))
'''),
}

SESSIONS = 5
INSTALL = {"panel": "pip install panel", "streamlit": "pip install streamlit",
           "voila": "pip install voila ipywidgets"}

JUPYTER = {
    "panel": "native: `pn.extension()` then the same layout object displays inline "
             "(Bokeh models over the kernel's comms); pn.state.location syncs the URL",
    "streamlit": "none: a separate server, at best embedded in an <iframe>; no kernel "
                 "integration",
    "voila": "native (it is ipywidgets); the served app is a whole notebook, one kernel "
             "per visitor",
}


def command(name: str, path: Path, port: int) -> list[str]:
    py = sys.executable
    if name == "panel":
        return [py, "-m", "panel", "serve", str(path), "--port", str(port),
                "--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}"]
    if name == "streamlit":
        return [py, "-m", "streamlit", "run", str(path), "--server.port", str(port),
                "--server.address", "127.0.0.1", "--server.headless", "true",
                "--browser.gatherUsageStats", "false"]
    return [py, "-m", "voila", str(path), "--port", str(port), "--no-browser",
            "--Voila.ip=127.0.0.1"]


def url(name: str, port: int) -> str:
    return f"http://127.0.0.1:{port}/" + ("app" if name == "panel" else "")


def write_app(name: str, where: Path) -> Path:
    filename, source = APPS[name]
    path = where / filename
    if filename.endswith(".ipynb"):
        nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                         "outputs": [], "source": source}],
              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                          "language": "python"}},
              "nbformat": 4, "nbformat_minor": 5}
        path.write_text(json.dumps(nb))
    else:
        path.write_text(source)
    return path


def expected(tn: int) -> str:
    import bayescm as bcm

    row = bcm.summary_exact(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=tn), metrics=["tnr"],
                            random_seed=1).iloc[0]
    return f"TNR 95% HDI: {row.hdi_lower:.4f}-{row.hdi_upper:.4f}"


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants (Voila's kernels are children)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo += [c for c, pp in parents.items() if pp == p and c not in tree]
    total = 0
    for p in tree:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def measure(name: str, context, work: Path) -> tuple[float, float, float]:
    path = write_app(name, work)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    server = subprocess.Popen(command(name, path, port), cwd=work, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, timeout=120)
        page = context.new_page()
        page.goto(url(name, port))
        page.get_by_text(expected(6)).wait_for(timeout=120_000)
        cold = time.perf_counter() - start
        box = page.locator("input").first
        latencies = []
        for tn in (9, 3, 12, 0, 6):
            want = expected(tn)
            box.fill(str(tn))
            t0 = time.perf_counter()
            box.press("Enter")
            page.get_by_text(want).wait_for(timeout=60_000)
            latencies.append(time.perf_counter() - t0)
        one = tree_rss_mb(server.pid)
        pages = [page]
        for _ in range(SESSIONS - 1):
            pages.append(context.new_page())
            pages[-1].goto(url(name, port))
            pages[-1].get_by_text(expected(6)).wait_for(timeout=120_000)
        per_session = (tree_rss_mb(server.pid) - one) / (SESSIONS - 1)
        for p in pages:
            p.close()
        return cold, statistics.median(latencies), per_session
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    found = [n for n in APPS if importlib.util.find_spec(n) is not None]
    missing = [n for n in APPS if n not in found]
    print("framework   cold start to first render (s)   update latency, median of 5 (s)"
          f"   MB per extra session ({SESSIONS} sessions)")
    with tempfile.TemporaryDirectory() as tmp, chromium(Path(tmp) / "profile") as context:
        for name in found:
            work = Path(tmp) / name
            work.mkdir()
            try:
                cold, update, per_session = measure(name, context, work)
            except Exception as err:  # one broken framework must not hide the others
                print(f"{name:<11} failed: {type(err).__name__}: {str(err)[:200]}")
                continue
            print(f"{name:<11} {cold:>10.2f} {update:>32.3f} {per_session:>24.1f}", flush=True)
    for name in missing:
        print(f"{name:<11} not installed ({INSTALL[name]})")
    print("\ninside Jupyter:")
    for name in APPS:
        print(f"  {name}: {JUPYTER[name]}")
    print("\n(2 shared cores: the figures are upper bounds.)")


if __name__ == "__main__":
    main()
