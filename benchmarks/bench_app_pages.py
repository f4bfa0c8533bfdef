"""The Compare, No-labels and Upload pages in headless Chromium: how long a reader waits.

Starts ``bayescm app`` on a free port (a subprocess, as a user would) and, in Debian's
Chromium through Playwright (``tools/browser.py``), prints from one run:

* Compare: from opening the page to the probability shown (cold: the server's first
  session), and the update latency after an edit of the margin, and after an edit of
  a classifier's counts (the exact path: new posteriors, comparison and leaderboard;
  median and maximum of 5 edits each);
* Upload: from choosing a CSV of 2,000 cases of two classifiers to the paired comparison
  shown;
* No labels: from clicking *Fit* to the results shown, at the page's defaults (4 chains
  x 1,000 draws after 1,000 tuning steps), first fit of the server (which starts the
  forkserver) and a second one; and from *Cancel* to the page saying so.

The machine may be shared: the figures are upper bounds.

    .venv/bin/python benchmarks/bench_app_pages.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescm.app.server import free_port, wait_listening  # noqa: E402
from tools.browser import chromium  # noqa: E402

TIMEOUT_MS = 300_000


def text(page, test_id: str) -> str:
    loc = page.get_by_test_id(test_id)
    loc.wait_for(timeout=TIMEOUT_MS)
    return loc.inner_text().strip()


def changed(page, test_id: str, old: str) -> float:
    """Seconds until the element's text differs from ``old``."""
    start = time.perf_counter()
    while text(page, test_id) == old:
        time.sleep(0.01)
    return time.perf_counter() - start


def compare(page, base: str) -> None:
    start = time.perf_counter()
    page.goto(base + "compare")
    old = text(page, "p-better")
    took = time.perf_counter() - start
    print(f"Compare: open to probability shown (cold server)  {took:6.2f} s")
    waits = []
    for margin in (0.01, 0.02, 0.03, 0.04, 0.05):
        box = page.locator(".bcm-margin input")
        box.fill(str(margin))
        box.press("Enter")
        waits.append(changed(page, "p-better", old))
        old = text(page, "p-better")
    print(f"Compare: update after an edit (exact path)       median "
          f"{statistics.median(waits):.2f} s, max {max(waits):.2f} s (5 edits of the margin)")
    from bayescm.app.compare_logic import DEFAULT_COUNTS

    waits = []
    area = page.locator(".bcm-counts textarea")
    for tn in (16, 18, 20, 22, 24):
        page.wait_for_timeout(1500)  # a settled page: the last edit's leaderboard drawn
        area.fill(DEFAULT_COUNTS.replace("A, 40, 7, 8, 15", f"A, 40, 7, 8, {tn}"))
        area.evaluate("e => e.blur()")  # a text area commits when left
        waits.append(changed(page, "p-better", old))
        old = text(page, "p-better")
    print(f"Compare: update after an edit (exact path)       median "
          f"{statistics.median(waits):.2f} s, max {max(waits):.2f} s (5 edits of A's counts)")


def upload(page, base: str, work: Path) -> None:
    rng = np.random.default_rng(1)
    n = 2000
    y = rng.integers(0, 2, n)
    path = work / "predictions.csv"
    pd.DataFrame({"y_true": y, "A": np.where(rng.random(n) < 0.1, 1 - y, y),
                  "B": np.where(rng.random(n) < 0.15, 1 - y, y)}).to_csv(path, index=False)
    page.goto(base + "upload")
    page.locator(".bcm-file input[type=file]").wait_for(state="attached", timeout=TIMEOUT_MS)
    start = time.perf_counter()
    page.locator(".bcm-file input[type=file]").set_input_files(str(path))
    text(page, "p-better")
    took = time.perf_counter() - start
    print(f"Upload: 2,000 cases x 2 classifiers to result      {took:6.2f} s")


def nolabels(page, base: str) -> None:
    for which in ("first fit (starts the forkserver)", "second fit"):
        page.goto(base + "nolabels")
        text(page, "identifiability")
        start = time.perf_counter()
        page.locator(".bcm-fit button").click()
        text(page, "convergence")
        print(f"No labels: Fit to results, 4 x 1000 draws, {which:34s} "
              f"{time.perf_counter() - start:6.2f} s")
    page.goto(base + "nolabels?draws=250000")  # 4 chains: the server's most per fit
    text(page, "identifiability")
    page.locator(".bcm-fit button").click()
    start = time.perf_counter()
    while "sampling" not in text(page, "progress"):
        time.sleep(0.05)
    page.locator(".bcm-cancel button").click()
    clicked = time.perf_counter()
    while text(page, "progress") != "Cancelled.":
        time.sleep(0.01)
    print(f"No labels: Cancel to 'Cancelled.' (after {clicked - start:.1f} s of sampling)"
          f"          {time.perf_counter() - clicked:6.2f} s")


def main() -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    console = Path(sys.executable).with_name("bayescm")  # the console script a user runs
    server = subprocess.Popen([str(console), "app", "--port", str(port)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, timeout=120)
        base = f"http://127.0.0.1:{port}/"
        with tempfile.TemporaryDirectory() as tmp, chromium(Path(tmp) / "profile") as context:
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            compare(page, base)
            upload(page, base, Path(tmp))
            nolabels(page, base)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
