"""The web app's start time, update latency and memory, measured in headless Chromium.

Prints, from one run:

* start: seconds from launching ``bayescm app`` (a fresh process) to the first page
  rendered in the browser, i.e. the cocaine example's TNR 95% HDI on screen; split
  into the server's start (to the printed address) and the first page (Python
  imports, the first exact posterior, the browser's rendering);
* update latency after an edit (the exact path): from committing a new ``tn`` (Enter)
  to the library's new TNR HDI shown, on a settled page (1.5 s after the previous
  edit: its figures, drawn after its numbers, are done); median and max over
  ``--edits`` edits; the same for a pasted 3-class matrix (one count changed, the
  text area left) to the library's new accuracy;
* the server's memory (RSS, from /proc) with 1 and with 10 open sessions (tabs) of the
  One-classifier page; then with 10 sessions spread over the four pages, the server
  alone and with its child processes (the No-labels page starts the forkserver that
  fits are forked from).

The machine is shared (2 cores): the figures are upper bounds.  ``--screenshot PATH``
also saves the first page at 1280 px (the README's ``docs/app.png``).

    .venv/bin/python benchmarks/bench_app.py [--edits 7] [--screenshot docs/app.png]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescm.app.server import free_port  # noqa: E402
from tools.browser import chromium  # noqa: E402

# true once the element with data-testid=id (inside any shadow root) shows ``text``
SHOWN = """([id, text]) => {
  const find = (root) => {
    const hit = root.querySelector(`[data-testid="${id}"]`);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { const h = find(el.shadowRoot); if (h) return h; }
    }
    return null;
  };
  const el = find(document);
  return el !== null && el.textContent.trim() === text;
}"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def children(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (from /proc)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            out += [int(child), *children(int(child))]
    return out


def expected_lower(tn_values: list[int]) -> dict[int, str]:
    """The library's TNR HDI lower end for each tn, as the page prints it."""
    import bayescm as bcm
    from bayescm.app import one_classifier_logic as logic

    out = {}
    for tn in tn_values:
        cm = bcm.ConfusionMatrix(**{**logic.EXAMPLE, "tn": tn}, classifier=logic.CLASSIFIER)
        table = logic.analyse(cm, metrics=["tnr"]).table
        out[tn] = f"{table.loc[(logic.CLASSIFIER, 'tnr'), 'hdi_lower']:.3f}"
    return out


def k_matrix(first: int) -> str:
    """A 3-class matrix as pasted from a spreadsheet, its first count ``first``."""
    return f"a\tb\tc\n{first}\t1\t0\n2\t7\t1\n0\t3\t8"


def expected_k_acc(firsts: list[int]) -> dict[int, str]:
    """The library's accuracy mean of each 3-class matrix, as the page prints it."""
    import bayescm as bcm
    from bayescm.app import one_classifier_logic as logic

    out = {}
    for first in firsts:
        mc = bcm.MulticlassConfusionMatrix([[first, 1, 0], [2, 7, 1], [0, 3, 8]],
                                           labels=["a", "b", "c"], classifier=logic.CLASSIFIER)
        idata = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", draws=logic.DRAWS,
                        chains=4, random_seed=1)
        table = bcm.summary(idata, metrics=["acc", "tpr"])  # as the page: a class level
        out[first] = f"{table.loc[(logic.CLASSIFIER, '', 'acc'), 'mean']:.3f}"
    shown = [out[f] for f in firsts]
    # an edit whose number equals the previous one's would time nothing
    assert all(a != b for a, b in itertools.pairwise(shown)), shown
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args()
    tns = [10 + i for i in range(args.edits)]
    want = expected_lower(tns)  # before the server starts: not part of any timing
    firsts = [9 + 4 * i for i in range(args.edits + 1)]
    want_k = expected_k_acc(firsts)

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "bayescm.cli", "app", "--port", str(port)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    try:
        line = server.stdout.readline()
        listening = time.perf_counter() - start
        assert f":{port}/" in line, line
        url = f"http://127.0.0.1:{port}/"
        with chromium(width=1280, height=900) as context:
            context.set_default_timeout(120_000)
            page = context.new_page()
            page.goto(url)
            lower = page.get_by_test_id("tnr-hdi-lower")
            lower.wait_for()
            first = time.perf_counter() - start
            print(f"bayescm app -> first page rendered: {first:.2f} s "
                  f"(server listening after {listening:.2f} s; TNR HDI lower "
                  f"{lower.inner_text()})")
            if args.screenshot is not None:
                page.wait_for_timeout(500)  # let the plots' images decode
                page.screenshot(path=str(args.screenshot), full_page=False)
                print(f"screenshot: {args.screenshot}")

            box = page.locator(".bcm-tn input")
            latencies = []
            for tn in tns:
                # a reader edits a settled page: the previous edit's figures (drawn after
                # its numbers) are done before the next edit
                page.wait_for_timeout(1500)
                box.fill(str(tn))
                t0 = time.perf_counter()
                box.press("Enter")
                # checked on every animation frame: Playwright's locator waits poll at up
                # to 500 ms intervals, which would be measured as latency
                page.wait_for_function(SHOWN, arg=["tnr-hdi-lower", want[tn]], polling="raf")
                latencies.append(time.perf_counter() - t0)
            print(f"update latency after an edit (exact path, {len(tns)} edits): median "
                  f"{statistics.median(latencies):.3f} s, max {max(latencies):.3f} s")

            page.get_by_role("button", name="K classes").click()
            area = page.locator(".bcm-matrix textarea").first
            area.fill(k_matrix(firsts[0]))
            area.evaluate("e => e.blur()")
            page.wait_for_function(SHOWN, arg=["acc-mean", want_k[firsts[0]]], polling="raf")
            k_latencies = []
            for first in firsts[1:]:
                page.wait_for_timeout(1500)
                area.fill(k_matrix(first))
                t0 = time.perf_counter()
                area.evaluate("e => e.blur()")  # a text area commits when left
                page.wait_for_function(SHOWN, arg=["acc-mean", want_k[first]], polling="raf")
                k_latencies.append(time.perf_counter() - t0)
            print(f"update latency after an edit (exact path, 3-class matrix, "
                  f"{len(k_latencies)} edits): median {statistics.median(k_latencies):.3f} s, "
                  f"max {max(k_latencies):.3f} s")

            one = rss_mb(server.pid)
            pages = [page]
            for _ in range(args.sessions - 1):
                p = context.new_page()
                p.goto(url)
                p.get_by_test_id("tnr-hdi-lower").wait_for()
                pages.append(p)
            many = rss_mb(server.pid)
            print(f"server RSS: {one:.0f} MB with 1 session, {many:.0f} MB with "
                  f"{len(pages)} open sessions ({(many - one) / (len(pages) - 1):.1f} MB per "
                  "extra session)")
            for p in pages:
                p.close()
            mixed = ["", "compare", "nolabels", "upload"]
            waits = {"": "tnr-hdi-lower", "compare": "p-better", "nolabels": "identifiability",
                     "upload": None}
            pages = []
            for i in range(args.sessions):
                p = context.new_page()
                path = mixed[i % len(mixed)]
                p.goto(url + path)
                if waits[path]:
                    p.get_by_test_id(waits[path]).wait_for()
                else:
                    p.locator(".bcm-file input[type=file]").wait_for(state="attached")
                pages.append(p)
            time.sleep(3)  # the forkserver, started by the No-labels page, imports PyMC
            alone = rss_mb(server.pid)
            kids = children(server.pid)
            total = alone + sum(rss_mb(k) for k in kids)
            print(f"server RSS with {len(pages)} sessions over the four pages: {alone:.0f} MB; "
                  f"with its {len(kids)} child process(es) (the forkserver): {total:.0f} MB")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("(2 shared cores: the figures are upper bounds.)")


if __name__ == "__main__":
    main()
