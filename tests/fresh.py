"""Python code run in a fresh interpreter: what a first import, a console script or a
once-per-process log line does is only seen there.

    from tests.fresh import run_fresh

    out = run_fresh("import bayescm, sys; print('pymc' in sys.modules)")
    assert out.stdout.strip() == "False"
"""

from __future__ import annotations

import subprocess
import sys


def run_fresh(script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``script`` with this interpreter in a new process; fail the test (with its
    stderr) unless it exits 0.  Returns the completed process (``stdout``, ``stderr``)."""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out
