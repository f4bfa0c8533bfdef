"""Shared fixtures. Fitted results are module-level caches: sampling is done once.

System engines: a test marked ``@pytest.mark.engine("jags")`` needs that program on
PATH (the table is ``tools/engines.py``; ``make test`` installs what it can).  Without
it the test is skipped and the run closes with a line naming what was skipped and how
to install it; under CI (``CI=true``) the test fails instead.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import pathlib
import sys

import matplotlib
import pytest

matplotlib.use("Agg")

import bayescm as bcm

# Matrices used across the statistical tests: the cocaine example (a zero cell),
# a balanced mid-size matrix, an unbalanced one, and a tiny one with two zero cells.
MATRICES = {
    "cocaine": dict(tp=26, fn=0, fp=2, tn=6),
    "mid": dict(tp=31, fn=9, fp=13, tn=20),
    "rare": dict(tp=3, fn=12, fp=0, tn=150),
    "tiny": dict(tp=5, fn=0, fp=0, tn=3),
}


@pytest.fixture(scope="session")
def cocaine() -> bcm.ConfusionMatrix:
    return bcm.ConfusionMatrix(**MATRICES["cocaine"])


@pytest.fixture(scope="session")
def batch() -> bcm.ConfusionMatrix:
    keys = list(MATRICES)
    return bcm.ConfusionMatrix(
        **{c: [MATRICES[k][c] for k in keys] for c in bcm.CELLS}, classifier=keys
    )


@functools.cache
def fitted(family: str, sampler: str, draws: int = 1000, seed: int = 11):
    """One fit per (family, sampler) for the whole session."""
    keys = list(MATRICES)
    cms = bcm.ConfusionMatrix(
        **{c: [MATRICES[k][c] for k in keys] for c in bcm.CELLS}, classifier=keys
    )
    builder = getattr(bcm.models, family)
    return bcm.fit(builder(cms), sampler=sampler, draws=draws, random_seed=seed)


def load_script(relative: str, name: str):
    """A script of the repository (``tools/``, ``benchmarks/``: not packages) as a module."""
    path = pathlib.Path(__file__).resolve().parents[1] / relative
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


engines = load_script("tools/engines.py", "bayescm_test_engines")

# the web app's fixtures (an in-process server, one headless Chromium per module)
from tests.app_support import app_url, browser, open_page  # noqa: E402, F401

_MISSING = pytest.StashKey[dict]()  # engine name -> node ids skipped or failed

_LINKER: list[str] = []  # PyTensor's linker before the suite changed it


def pytest_configure(config):
    config.stash[_MISSING] = {}
    import pytensor  # the Python linker from here on (see _pytensor_without_c)

    _LINKER.append(pytensor.config.linker)
    pytensor.config.linker = "py"


# The modules whose import compiles numba kernels (``@numba.cfunc`` compiles where it is
# defined), longest first (seconds of one core on an empty cache): on a fresh clone their
# compilation is about 75 s, and two pytest-xdist workers that meet the same kernel
# both compile it.  ``_compile_kernels`` hands them out like a queue instead.  The groups'
# kernel imports the Hui-Walter one, so it comes last.
KERNELS = (
    "bayescm.models.dawid_skene.kernel",  # 20 s: K = 2..5 unrolled
    "bayescm.models.hui_walter.kernel",  # 14 s
    "bayescm.models.items.kernel_marginal",  # 9 s
    "bayescm.models.items.kernel",  # 7 s
    "bayescm.models.dawid_skene.kernel_partial",  # 7 s
    "bayescm.models.folds.kernel_multiclass",  # 5 s
    "bayescm.models.folds.kernel",  # 3 s
    "bayescm.analysis.compare_datasets_kernel",  # 3 s
    "bayescm.models._kernel_conjugate",  # 2 s
    "bayescm.models.groups.kernel",  # 3 s (with the Hui-Walter kernel compiled)
)


def _compile_kernels() -> None:
    """Import :data:`KERNELS` in a pytest-xdist worker, each module under a file lock.

    A worker takes the next module no other worker holds and leaves a held one for
    later, when numba's cache has it: each kernel compiles once, the workers share the
    work, and with a warm cache this is only the imports."""
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker compiles what its tests meet
        return
    import tempfile

    locks = pathlib.Path(tempfile.gettempdir()) / "bayescm-numba-compile"
    try:
        locks.mkdir(exist_ok=True)
        (locks / KERNELS[0]).touch()
    except OSError:  # another user's directory: each worker compiles what its tests meet
        return
    later = []
    for name in KERNELS:
        with open(locks / name, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on close
            except BlockingIOError:
                later.append(name)
                continue
            importlib.import_module(name)
    for name in later:
        with open(locks / name, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker's compilation, then the cache
            importlib.import_module(name)


def pytest_sessionstart(session):
    # a pytest-xdist worker (not a pytest that a test starts in a subprocess, which
    # inherits the worker's environment); a single process compiles what its tests meet
    if hasattr(session.config, "workerinput"):
        _compile_kernels()


# tools/test_durations.py writes it from a durations log (how to, and why, there)
DURATIONS = pathlib.Path(__file__).with_name("durations.json")


def pytest_collection_modifyitems(config, items):
    """Modules in decreasing order of their longest test (``tests/durations.json``),
    each module's tests together and in their order; a module not in the file last.

    pytest-xdist hands tests out in this order: a minute-long test collected last would
    leave the other worker idle at the end of ``make test``."""
    longest = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    # a stable sort on a per-module key: each module's tests stay together and in order
    items.sort(key=lambda item: -longest.get(item.nodeid.split("::")[0], 0.0))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture: skip (or, under CI, fail) a test whose engine is missing."""
    for mark in item.iter_markers("engine"):
        for name in mark.args:
            engine = engines.ENGINES[name]
            absent = engine.missing()
            if not absent:
                continue
            item.config.stash[_MISSING].setdefault(name, []).append(item.nodeid)
            what = f"{engine.label} (`{'`, `'.join(absent)}` not on PATH)"
            if engines.in_ci():
                pytest.fail(f"CI=true and {what}: install it with `{engine.install}` "
                            "(`make test` does this when run as root)", pytrace=False)
            pytest.skip(f"needs {what}; install it with `{engine.install}`")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """After the short summary: one closing line per missing engine."""
    result = yield
    ci = engines.in_ci()
    for name, ids in terminalreporter.config.stash.get(_MISSING, {}).items():
        engine = engines.ENGINES[name]
        n = len(ids)
        tests = f"{n} test{'s' if n != 1 else ''} that need{'s' if n == 1 else ''}"
        verb = "FAILED" if ci else "SKIPPED"
        note = " (CI=true: a missing engine fails the run)" if ci else ""
        terminalreporter.write_line(
            f"{verb} {tests} {engine.label}: install it with `{engine.install}`{note}",
            red=ci, yellow=not ci, bold=True)
    return result


@pytest.fixture(autouse=True)
def _pytensor_without_c(request):
    """PyTensor's Python linker in the default suite.

    The tests evaluate PyMC graphs at a few points (kernel against model, finite
    density, a few dozen ``pm.sample`` draws).  PyTensor's default C linker compiles
    every op of a graph it has not met before: on a machine with an empty
    ``~/.pytensor`` (a fresh CI runner) that is about 20 s per model and several
    minutes over the suite, for evaluations that take milliseconds in Python.  The
    graph rewrites (stabilisation included) are the same; only the linker differs.
    Slow tests that sample thousands of draws with ``pm.sample`` keep the C linker.
    Set before any fixture of a wider scope (``pytest_configure``), switched back
    here for a slow test.
    """
    if request.node.get_closest_marker("slow") is None:
        yield
        return
    import pytensor

    pytensor.config.linker = _LINKER[0]
    try:
        yield
    finally:
        pytensor.config.linker = "py"
