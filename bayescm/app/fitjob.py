"""A NUTS fit in a child process: progress, cancel, and a bound on the server's load.

The web app's NUTS fits (the No-labels page, the Upload page's pooled groups) run in a
:class:`FitJob`: a child process, so that *cancel* really stops the compiled sampler
(a thread cannot be made to), started from a ``forkserver`` (forking never copies the
web server's threads).  The child builds the model, samples with
``bcm.fit(..., progress=)`` (:class:`bayescm.inference.FitProgress`: the draws counted
as they are made), saves the fit as NetCDF and summarises it, reporting each stage on
a queue; the page polls :meth:`FitJob.poll` and gets the summary, already made, from
:meth:`FitJob.result`.  Nothing heavy runs in the web server's event loop, which every
reader's session shares: not the sampling, not the summary, not the cancel.

At most :data:`MAX_FITS` fits sample at once on a server; the others wait their turn
(their progress says so).  Each fit is bounded before it starts, by
:func:`check_sampler` (which the pages run on every edit and on a link's values, with
the messages next to the fields): ``draws * chains`` by :data:`MAX_DRAWS`, the steps
``chains * (tune + draws)`` by :data:`MAX_STEPS` (time), ``chains`` by
:data:`MAX_CHAINS`, and with the model, the library's memory estimate of the fit by
:data:`MAX_FIT_BYTES` (:mod:`bayescm.inference.budget`).  A link such as
``/nolabels?fitted=1&tune=100000000`` therefore shows the field's message and starts
nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import multiprocessing
import os
import queue
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bayescm as bcm
from bayescm.app.pages_common import InputError, field, message_of
from bayescm.inference.fit import FitProgress, check_sizes

__all__ = ["MAX_CHAINS", "MAX_DRAWS", "MAX_FITS", "MAX_FIT_BYTES", "MAX_STEPS", "STAGES",
           "FitJob", "Progress", "TaskJob", "check_memory", "check_sampler", "check_seed", "warm"]

STAGES = ("building the model", "sampling (NUTS)", "saving the fit", "summarising the fit",
          "done")
# what the page says for fit's stages after sampling (bayescm.inference.FIT_STAGES)
FIT_WORDS = {"predictive": "posterior predictive draws", "prior": "prior draws",
             "log_likelihood": "log-likelihood per case", "convergence": "convergence check"}
# fits sampling at once: each runs its chains in parallel; more than the cores would
# only slow every reader's fit down
MAX_FITS = max(1, (os.cpu_count() or 2) // 2)
MAX_DRAWS = 1_000_000  # draws x chains of one fit (memory: tens of MB per parameter set)
# NUTS steps of one fit, tuning included: at the pages' 10-50 us a step (hui_walter,
# groups), a few minutes at most of the server's few sampler slots
MAX_STEPS = 4_000_000
MAX_CHAINS = 16  # chains beyond the cores run in turn; four are the convention
MAX_FIT_BYTES = 2 * 2**30  # what one fit's child may hold (the library's estimate)
WAITING = "waiting for another reader's fit to finish"
_SLOTS = threading.BoundedSemaphore(MAX_FITS)


def check_sampler(state: Any) -> None:
    """The sampler options of a page state (``draws``, ``tune``, ``chains``, ``seed``)
    as :func:`bayescm.fit` checks them, plus the server's bound, each under its field.

    >>> check_sampler(dataclasses.make_dataclass("S", [("draws", int, 0), ("tune", int, 9),
    ...                                                ("chains", int, 2), ("seed", int, 1)])())
    Traceback (most recent call last):
    ...
    bayescm.app.pages_common.InputError: draws must be an integer >= 4, got 0.
    """
    with field("draws"):
        check_sizes(state.draws, 1, 1)
    with field("tune"):
        check_sizes(4, state.tune, 1)
    with field("chains"):
        check_sizes(4, 1, state.chains)
    with field("seed"):
        check_seed(state.seed)
    if state.chains > MAX_CHAINS:
        raise InputError("chains", f"{state.chains:,} chains is more than the {MAX_CHAINS} "
                         "this server runs for one fit; four are the convention (use more "
                         "draws per chain instead), or bcm.fit in Python for more.")
    if state.draws * state.chains > MAX_DRAWS:
        raise InputError("draws", f"{state.draws:,} draws x {state.chains} chains is more than "
                         f"the {MAX_DRAWS:,} draws this server samples for one fit; use "
                         "fewer draws (a few thousand per chain give the summaries to "
                         "three digits), or bcm.fit in Python for more.")
    steps = state.chains * (state.tune + state.draws)
    if steps > MAX_STEPS:
        raise InputError("tune", f"{state.chains} chains x ({state.tune:,} tuning steps + "
                         f"{state.draws:,} draws) is {steps:,} steps, more than the "
                         f"{MAX_STEPS:,} this server runs for one fit; use fewer tuning "
                         "steps (1,000 suit the pages' models), or bcm.fit in Python.")


def check_memory(model: Any, state: Any) -> None:
    """The library's estimate of what fitting ``model`` with the page's sampler options
    would hold (:func:`bayescm.inference.budget.check_fit`), within
    :data:`MAX_FIT_BYTES`: under the ``draws`` field, before any fit starts."""
    from bayescm.family import family_of, spec_of
    from bayescm.inference import budget
    from bayescm.inference import draws as draws_mod

    limit = min(MAX_FIT_BYTES, budget.memory_limit())
    keys = draws_mod.metric_keys(None, model.named_vars_to_dims.get("theta") or ())
    with field("draws"):
        budget.check_fit(model, family_of(model), spec_of(model), None, keys,
                         draws_mod.observed(model), draws=state.draws, tune=state.tune,
                         chains=state.chains, sampler="nuts", limit=limit,
                         bound=f"the {budget.format_bytes(limit)} one fit may hold on "
                               "this server")


def check_seed(seed: Any) -> None:
    """A page's seed: an integer in [0, 2^32) (a link's ``seed=-1`` otherwise reaches
    NumPy, which refuses negative seeds in its own words).

    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2^32), got -1.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2^32), got {seed}.")


@dataclasses.dataclass(frozen=True)
class Progress:
    """Where a :class:`FitJob` stands: stage index into :data:`STAGES`, its words,
    seconds since start, and ``state``: running, done, failed or cancelled.

    While sampling, ``done`` and ``total`` count the draws of all chains, tuning
    included (:class:`bayescm.inference.FitProgress`), and ``step`` names fit's later
    stage once sampling is over (``"predictive"``, ... :data:`FIT_WORDS`).
    ``waiting`` is true while the fit waits for a free sampler (:data:`MAX_FITS`)."""

    stage: int
    text: str
    elapsed: float
    state: str
    error: str = ""
    done: int = 0
    total: int = 0
    step: str = ""
    waiting: bool = False

    @property
    def fraction(self) -> float:
        """Share of the work done (1 when done): building a tenth, the draws seven
        tenths, fit's later stages a tenth, saving and summarising the rest."""
        if self.state == "done":
            return 1.0
        if self.stage == 1:
            if self.step:
                return 0.8 + 0.1 * (tuple(FIT_WORDS).index(self.step) + 1) / len(FIT_WORDS)
            return 0.1 + 0.7 * (self.done / self.total if self.total else 0.0)
        return (0.0, 0.8, 0.92, 0.96, 1.0)[self.stage]


def _text(stage: int, done: int, total: int, step: str, waiting: bool) -> str:
    if waiting:
        return WAITING
    if stage != 1:
        return STAGES[stage]
    if step:
        return f"{STAGES[1]} done; {FIT_WORDS[step]}"
    if not total:
        return STAGES[1]
    return f"{STAGES[1]}: {done:,} of {total:,} draws (tuning included)"


def _report(messages: Any, p: FitProgress) -> None:
    """Pass fit's progress to the parent (draws while sampling, then fit's stages)."""
    if p.stage == "sampling":
        messages.put(("draws", (p.done, p.total)))
    else:
        messages.put(("step", p.stage))


def _worker(make_model: Callable[[], Any], summary: Callable[[Any, Path], Any], state: Any,
            path: str, messages: Any) -> None:
    """Build, sample, save and summarise in the child process, reporting each stage and,
    while sampling, the draws made so far."""
    try:
        messages.put(("stage", 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make_model()
            messages.put(("stage", 1))
            idata = bcm.fit(model, draws=state.draws, tune=state.tune, chains=state.chains,
                            random_seed=state.seed,
                            progress=functools.partial(_report, messages))
            messages.put(("stage", 2))
            bcm.save(idata, path)
            messages.put(("stage", 3))
            # from the file: what the page shows is what its download holds
            result = summary(bcm.load(path), Path(path))
        messages.put(("done", result))
    except Exception as err:  # the parent shows the message; the child just ends
        messages.put(("error", message_of(err)))


_CONTEXT: Any = None


def _context() -> Any:
    """The forkserver context, its server preloaded with bayescm's sampling stack."""
    global _CONTEXT
    if _CONTEXT is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["bayescm.inference", "bayescm.models", "pymc"])
        _CONTEXT = ctx
    return _CONTEXT


def warm() -> None:
    """Start the forkserver in a background thread, so that the first fit does not wait
    for it to import PyMC (a page calls this when it opens)."""
    import multiprocessing.forkserver

    _context()
    threading.Thread(target=multiprocessing.forkserver.ensure_running, daemon=True).start()


class FitJob:
    """One NUTS fit in a child process, with progress and cancel.

    Parameters
    ----------
    state
        The sampler's options (``draws``, ``tune``, ``chains``, ``seed``).
    model
        A picklable function of no arguments that builds the model in the child (a PyMC
        model does not travel between processes), e.g.
        ``functools.partial(bcm.models.groups, cm)``.
    summary
        A picklable function of ``(idata, path)`` run in the child after saving; its
        value (picklable) is :meth:`result`.
    directory
        Where the fit's NetCDF goes (default: a new temporary directory, removed by
        :meth:`discard`).

    Examples
    --------
    The tests run this (the first job of a process starts the forkserver, seconds)::

        job = FitJob(state, model=make, summary=summarise).start()
        while job.poll().state == "running":
            time.sleep(0.2)          # the page shows job.poll().text meanwhile
        result = job.result()        # or job.cancel() to stop it
    """

    def __init__(self, state: Any, *, model: Callable[[], Any],
                 summary: Callable[[Any, Path], Any],
                 directory: str | Path | None = None) -> None:
        self.state = state
        self._model, self._summary = model, summary
        self._owns_dir = directory is None  # a directory made here is removed by discard()
        self._dir = Path(directory or tempfile.mkdtemp(prefix="bayescm-app-"))
        self._path = self._dir / "fit.nc"
        if self._owns_dir:  # a notebook's jobs have no session end: the exit removes it
            weakref.finalize(self, shutil.rmtree, str(self._dir), True)
        self._process: Any = None
        self._supervisor: Any = None
        self._messages: Any = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._launched = False
        self._queued = False
        self._start = 0.0
        self._stage = 0
        self._draws = (0, 0)
        self._step = ""
        self._status = "new"
        self._error = ""
        self._result: Any = None

    # -- running -----------------------------------------------------------------------
    def start(self) -> FitJob:
        """Start the fit and return at once: a thread waits for a free sampler
        (:data:`MAX_FITS`) and for the forkserver, never the caller."""
        ctx = _context()
        self._messages = ctx.Queue()
        target, args = self._work()
        self._process = ctx.Process(target=target, daemon=True, args=(*args, self._messages))
        self._start = time.perf_counter()
        self._status = "running"
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self._supervisor.start()
        return self

    def _supervise(self) -> None:
        """Hold a sampler slot for as long as the child lives."""
        if not _SLOTS.acquire(blocking=False):
            self._queued = True  # the page says so until a slot frees
            while not _SLOTS.acquire(timeout=0.2):
                if self._cancelled:  # cancelled while waiting: nothing to start
                    self._queued = False
                    return
            self._queued = False
        try:
            with self._lock:
                if self._cancelled:
                    return
                self._process.start()
                self._launched = True
            self._process.join()
        finally:
            _SLOTS.release()

    def _work(self) -> tuple[Callable[..., None], tuple]:
        """The child's function and its arguments (the message queue is appended)."""
        return _worker, (self._model, self._summary, self.state, str(self._path))

    @property
    def stopped(self) -> bool:
        """True once the child has ended (or never started) and its slot is free."""
        return self._supervisor is None or not self._supervisor.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the child has ended (after :meth:`cancel`, say); True if it has."""
        if self._supervisor is not None:
            self._supervisor.join(timeout)
        return self.stopped

    def poll(self) -> Progress:
        """Read the child's reports (never blocks)."""
        while self._status == "running":
            try:
                kind, value = self._messages.get_nowait()
            except queue.Empty:
                if self.stopped:
                    # the queue's feeder may lag the exit: one last look before failing
                    with contextlib.suppress(queue.Empty):
                        kind, value = self._messages.get(timeout=0.5)
                        self._take(kind, value)
                        continue
                    self._status = "failed"
                    self._error = ("The sampler's process ended without a result (out of "
                                   "memory?). Try fewer draws or chains; the server's log "
                                   "may say more.")
                break
            self._take(kind, value)
        done, total = self._draws
        waiting = self._status == "running" and self._queued
        step = self._step if self._stage == 1 else ""
        return Progress(self._stage, _text(self._stage, done, total, step, waiting),
                        time.perf_counter() - self._start, self._status, self._error,
                        done, total, step, waiting)

    def _take(self, kind: str, value: Any) -> None:
        if kind == "stage":
            self._stage = int(value)
        elif kind == "draws":
            self._draws = (int(value[0]), int(value[1]))
        elif kind == "step":
            self._step = str(value)
        elif kind == "done":
            self._stage, self._status, self._result = len(STAGES) - 1, "done", value
        else:
            self._status, self._error = "failed", str(value)

    # -- stopping ----------------------------------------------------------------------
    def cancel(self) -> Progress:
        """Stop the fit; returns at once (the child gets SIGTERM now, SIGKILL if it has
        not ended 5 s later, from a thread: :meth:`join` waits for it)."""
        if self._status in ("running", "new"):
            with self._lock:
                self._cancelled = True
                launched = self._launched
            if launched:
                self._process.terminate()
                threading.Thread(target=self._reap, daemon=True).start()
            self._status = "cancelled"
        return self.poll()

    def _reap(self) -> None:
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()

    def discard(self) -> None:
        """Stop the child if it runs and delete the fit's file (a server would otherwise
        keep one NetCDF per fit until it stops); once the child has ended, if need be
        in a thread."""
        self.cancel()
        if self.stopped:
            self._remove()
        else:
            threading.Thread(target=lambda: (self.join(), self._remove()), daemon=True).start()

    def _remove(self) -> None:
        if self._owns_dir:
            shutil.rmtree(self._dir, ignore_errors=True)
        else:
            self._path.unlink(missing_ok=True)

    def result(self) -> Any:
        """The summarised fit (after ``poll().state == "done"``)."""
        if self._status != "done":
            raise RuntimeError(f"The fit is {self._status}, not done.")
        return self._result


def _task_worker(task: Callable[[Path, Callable[[FitProgress], None]], Any], path: str,
                 messages: Any) -> None:
    """Run a :class:`TaskJob`'s task in the child process, reporting as :func:`_worker`."""
    try:
        messages.put(("stage", 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = task(Path(path), functools.partial(_report, messages))
        messages.put(("done", result))
    except Exception as err:  # the parent shows the message; the child just ends
        messages.put(("error", message_of(err)))


class TaskJob(FitJob):
    """Any sampling work in a child process, with a :class:`FitJob`'s progress, cancel,
    sampler slots and file handling: for work that is not one ``bcm.fit`` of one
    model (``bcm.fit`` with other options, or an analysis that samples by itself,
    such as :func:`bayescm.analysis.compare_datasets`).

    ``task(path, progress)`` runs in the child and returns the (picklable) result:
    ``path`` is where it may save a fit (removed by :meth:`discard`), ``progress``
    takes :class:`bayescm.inference.FitProgress` reports (``bcm.fit(progress=...)``).
    ``state`` holds the sampler's options, checked by :func:`check_sampler` before.
    """

    def __init__(self, state: Any,
                 task: Callable[[Path, Callable[[FitProgress], None]], Any], *,
                 directory: str | Path | None = None) -> None:
        super().__init__(state, model=task, summary=task, directory=directory)
        self._task = task

    def _work(self) -> tuple[Callable[..., None], tuple]:
        return _task_worker, (self._task, str(self._path))
