"""Debian's Chromium driven by Playwright, for the browser tests and the app benchmarks.

The browser is the system engine ``chromium`` of ``tools/engines.py`` (``make test``
installs it with apt-get); Playwright's own browser downloads (``playwright install``)
are never used: every launch names ``/usr/bin/chromium``.  Each launch gets a fresh
user-data directory and the flags below, which keep Chromium from reaching the network
on its own (component updates, sync, QUIC probes) and let it run as root in a sandbox.

    from tools.browser import chromium            # or load it by path
    with chromium(tmp_dir) as context:
        page = context.new_page()

Ports: :func:`bayescm.app.server.free_port` and :func:`bayescm.app.server.wait_listening`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EXECUTABLE = os.environ.get("BAYESCM_CHROMIUM", "/usr/bin/chromium")
ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync")


@contextlib.contextmanager
def chromium(user_data_dir: str | Path | None = None, *, width: int = 1280,
             height: int = 900) -> Iterator[Any]:
    """A Playwright browser context of headless Chromium with a fresh profile.

    ``user_data_dir`` must be a new (or empty) directory; None makes a temporary one.
    """
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        if user_data_dir is None:
            user_data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="chr-"))
        pw = stack.enter_context(sync_playwright())
        context = pw.chromium.launch_persistent_context(
            str(user_data_dir), executable_path=EXECUTABLE, headless=True, args=list(ARGS),
            viewport={"width": width, "height": height})
        stack.callback(context.close)
        yield context
