r"""The No-labels page's logic: Se, Sp and prevalence from an agreement table.

The page takes an agreement table of T >= 2 classifiers in one or more populations
(header ``population, ++, +-, -+, --`` and optional cells with missing results such
as ``+?`` or verified cases such as ``+-|D+``: :mod:`bayescm.agreement_cells`), priors
one per line (``sensitivity A: beta(20, 4)``) and dependent pairs (``A~B``), and fits
the Hui–Walter latent-class model (:func:`bayescm.models.hui_walter`) with NUTS.

Before sampling, :func:`build` reads the inputs and builds the model in this process,
so bad input gets the library's own message next to its field at once, and the
identifiability verdict (the library's :class:`~bayescm.models.IdentifiabilityWarning`
text, or the counting argument when the data identify the model) is shown before any
draw.  Sampling then runs in a :class:`FitJob`: a child process (so that *cancel*
really stops the compiled sampler, which a thread cannot be made to do) started from
a ``forkserver`` (so that forking never copies the web server's threads), which reports
its stage as it goes and leaves the fit as NetCDF (:func:`bayescm.save`).  The result
(:class:`NoLabelsResult`) holds the posterior summary, the convergence verdict
(:func:`bayescm.check_convergence`) and the posterior predictive check
(:func:`bayescm.posterior_predictive_check`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import multiprocessing
import queue
import re
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.agreement_cells import parse_cell
from bayescm.app.downloads import new_figure
from bayescm.app.one_classifier_logic import parse_prior
from bayescm.app.pages_common import InputError, PageState, field, message_of, read_table
from bayescm.inference import FitProgress

if TYPE_CHECKING:
    import pymc as pm
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_TABLE", "FitJob", "NoLabelsResult", "NoLabelsState", "Progress", "build",
           "parse_pairs", "parse_priors", "parse_table", "summarise", "warm"]

DEFAULT_TABLE = """population, ++, +-, -+, --
site1, 89, 43, 55, 413
site2, 260, 76, 52, 212"""
"""Two tests in two populations of different prevalence (the Hui–Walter design)."""

STAGES = ("building the model", "sampling (NUTS)", "saving the fit", "done")
PARAMETERS = ("sensitivity", "specificity", "prevalence")
_PRIOR_LINE = re.compile(r"^\s*(\w+)\s*([^:=]*?)\s*[:=]\s*(.+?)\s*$")
_BETA_CALL = re.compile(r"^beta\s*\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class NoLabelsState(PageState):
    """Inputs of the No-labels page (every field travels in the page's URL)."""

    table: str = DEFAULT_TABLE
    priors: str = ""
    dependence: str = ""
    draws: int = 1000
    tune: int = 1000
    chains: int = 4
    seed: int = 1
    hdi_prob: float = 0.95
    fitted: bool = False  # a shared link of a fitted page fits again when opened


def parse_table(text: str) -> bcm.AgreementTable:
    """An agreement table: header of cell names (optionally after ``population``),
    one row of counts per population.

    Examples
    --------
    >>> tab = parse_table("++, +-, -+, --, +?\\n40, 3, 7, 100, 5")
    >>> tab.populations, tab.patterns[:5], tab.complete
    (('all',), ('++', '+-', '-+', '--', '+?'), False)
    """
    def is_cell(name: str) -> bool:
        try:
            parse_cell(name)
        except ValueError:
            return False
        return True

    names, cells, rows = read_table(text, "table", header_hint="population, ++, +-, -+, --",
                                    is_value=is_cell)
    with field("table"):
        if len(set(names)) != len(names):
            raise ValueError(f"Population names must be unique: {names}.")
        if names:
            counts = {n: dict(zip(cells, row, strict=True)) for n, row in zip(names, rows,
                                                                               strict=True)}
            return bcm.AgreementTable.from_counts(counts)
        if len(rows) > 1:
            raise ValueError("Several rows need a first column naming their populations "
                             "(header 'population, ++, +-, ...').")
        return bcm.AgreementTable.from_counts(dict(zip(cells, rows[0], strict=True)))


def _prior(text: str, name: str) -> Any:
    """``beta(a, b)``, or any form of the One-classifier page: ``beta:a,b``,
    ``elicit:mode,lower,prob``, ``elicit_upper:mode,upper,prob``, ``pert:min,mode,max``
    (:func:`bayescm.app.one_classifier_logic.parse_prior`: the elicitation helpers)."""
    call = _BETA_CALL.match(text)
    return parse_prior(f"beta:{call[1]},{call[2]}" if call else text, name)


def parse_priors(text: str) -> dict[str, Any]:
    """Priors one per line: ``parameter [unit]: prior``.

    ``parameter`` is sensitivity, specificity (unit: a classifier) or prevalence (unit:
    a population); without a unit the prior applies to all.  A prior is written
    ``beta(a, b)``, ``beta:a,b``, ``elicit:mode,lower,prob`` (a Beta with that mode and
    P(X > lower) = prob), ``elicit_upper:mode,upper,prob`` or ``pert:min,mode,max``.

    Examples
    --------
    >>> parse_priors("sensitivity A: beta(20, 4)\\nspecificity: beta:2,1")
    {'sensitivity': {'A': Beta(20, 4)}, 'specificity': Beta(2, 1)}
    >>> parse_priors("specificity B: pert:0,0.9,1")
    {'specificity': {'B': Beta(4.6, 1.4)}}
    """
    out: dict[str, Any] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        match = _PRIOR_LINE.match(line)
        if match is None:
            raise InputError("priors", f"Line {i}: write 'parameter [classifier or "
                                       f"population]: beta(a, b)', got {line.strip()!r}.")
        name, unit, spec = match[1].lower(), match[2], match[3]
        with field("priors"):
            prior = _prior(spec, f"{name} {unit}".strip())
        if unit:
            per = out.setdefault(name, {})
            if not isinstance(per, dict):
                raise InputError("priors", f"Line {i}: {name} already has a prior for all.")
            per[unit] = prior
        else:
            out[name] = prior
    return out


def parse_pairs(text: str) -> bool | list[tuple[str, str]]:
    """Dependent pairs ``A~B, A~C`` (or ``all``); empty for conditional independence.

    >>> parse_pairs("A~B, B~C"), parse_pairs("all"), parse_pairs("")
    ([('A', 'B'), ('B', 'C')], True, False)
    """
    text = text.strip()
    if not text:
        return False
    if text.lower() == "all":
        return True
    pairs = []
    for part in re.split(r"[,;\n]+", text):
        if not part.strip():
            continue
        ends = [p.strip() for p in re.split(r"[~\-]", part)]
        if len(ends) != 2 or not all(ends):
            raise InputError("dependence", f"Write dependent pairs as 'A~B, A~C' (or 'all'), "
                                           f"got {part.strip()!r}.")
        pairs.append((ends[0], ends[1]))
    return pairs


@dataclasses.dataclass(frozen=True)
class Built:
    """The model and what is known before sampling."""

    table: bcm.AgreementTable
    model: pm.Model
    identified: str  # "data", "priors" or "none"
    identifiability: str


def build(state: NoLabelsState) -> Built:
    """Read the inputs, build the Hui–Walter model and judge its identifiability.

    Examples
    --------
    >>> built = build(NoLabelsState())
    >>> built.identified, built.identifiability.split(":")[0]
    ('data', '2 classifiers and 2 population(s) give 6 degrees of freedom for 6 parameters')
    >>> build(NoLabelsState(table="++, +-, -+, --\\n40, 3, 7, 100")).identified
    'none'
    """
    table = parse_table(state.table)
    priors = parse_priors(state.priors)
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    pairs = parse_pairs(state.dependence)
    with field("dependence"):
        bcm.models.hui_walter(table, conditional_dependence=pairs, identifiability="ignore")
    with field("priors"), warnings.catch_warnings():
        # the verdict is shown on the page (below), not raised as a warning
        warnings.simplefilter("ignore", bcm.models.IdentifiabilityWarning)
        model = bcm.models.hui_walter(table, priors=priors, conditional_dependence=pairs)
    # the family records its identifiability verdict with the model (as fit puts it
    # in idata.attrs)
    attrs = bcm.models.family_of(model).attrs(bcm.models.spec_of(model))
    return Built(table, model, attrs["identifiability_status"], attrs["identifiability"])


@dataclasses.dataclass(frozen=True)
class NoLabelsResult:
    """What the page shows after sampling."""

    path: Path  # the fit as NetCDF
    summary: pd.DataFrame
    converged: bool
    convergence: str
    check: pd.DataFrame
    hdi_prob: float

    def figure(self) -> Figure:
        """Posterior means and HDIs of every Se, Sp and prevalence (a forest)."""
        t = self.summary
        fig, ax = new_figure(6, 0.9 + 0.32 * len(t), left=1.6)  # room for the labels
        y = np.arange(len(t))[::-1]
        colors = {"sensitivity": "#4c72b0", "specificity": "#55a868", "prevalence": "#c44e52"}
        for yi, (_, row) in zip(y, t.iterrows(), strict=True):
            c = colors[row["parameter"]]
            ax.plot([row["hdi_lower"], row["hdi_upper"]], [yi, yi], color=c, lw=2)
            ax.plot(row["mean"], yi, "o", color=c)
        ax.set_yticks(y, [f"{p} [{u}]" for p, u in zip(t["parameter"], t["unit"], strict=True)])
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"posterior mean and {self.hdi_prob:.0%} HDI")
        return fig


def summarise(idata: Any, path: Path, *, hdi_prob: float = 0.95) -> NoLabelsResult:
    """The page's tables from a fit: Se and Sp per classifier, prevalence per population,
    the convergence verdict and the predictive check."""
    table = bcm.summary(idata, metrics=["tpr", "tnr", "prevalence"], hdi_prob=hdi_prob)
    pops = table.index.get_level_values("population").unique()
    clfs = table.index.get_level_values("classifier").unique()
    rows = []
    # Se and Sp do not depend on the population, prevalence not on the classifier
    for key, name in (("tpr", "sensitivity"), ("tnr", "specificity")):
        for c in clfs:
            rows.append((name, c, table.loc[(pops[0], c, key)]))
    for p in pops:
        rows.append(("prevalence", p, table.loc[(p, clfs[0], "prevalence")]))
    frame = pd.DataFrame([{"parameter": n, "unit": u, **{k: r[k] for k in (
        "mean", "sd", "median", "hdi_lower", "hdi_upper")}} for n, u, r in rows])
    frame.attrs["hdi_prob"] = hdi_prob
    report = bcm.check_convergence(idata)
    check = bcm.posterior_predictive_check(idata).to_frame()
    return NoLabelsResult(Path(path), frame, report.ok, report.message(), check, hdi_prob)


# -- the sampling job ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Progress:
    """Where a :class:`FitJob` stands: stage index into :data:`STAGES`, its words,
    seconds since start, and ``state``: running, done, failed or cancelled.

    While sampling, ``done`` and ``total`` count the draws of all chains, tuning
    included (:class:`bayescm.inference.FitProgress`), and ``step`` names fit's later
    stage once sampling is over (``"predictive"``, ... :data:`FIT_WORDS`)."""

    stage: int
    text: str
    elapsed: float
    state: str
    error: str = ""
    done: int = 0
    total: int = 0
    step: str = ""

    @property
    def fraction(self) -> float:
        """Share of the work done (1 when done): building a tenth, the draws seven
        tenths, fit's later stages and saving a tenth each."""
        if self.state == "done":
            return 1.0
        if self.stage == 1:
            if self.step:
                return 0.8 + 0.1 * (_FIT_STEPS.index(self.step) + 1) / (len(_FIT_STEPS) + 1)
            return 0.1 + 0.7 * (self.done / self.total if self.total else 0.0)
        return (0.0, 0.8, 0.9, 1.0)[self.stage]


# what the page says for fit's stages after sampling (bayescm.inference.FIT_STAGES)
FIT_WORDS = {"predictive": "posterior predictive draws", "prior": "prior draws",
             "log_likelihood": "log-likelihood per case", "convergence": "convergence check"}
_FIT_STEPS = tuple(FIT_WORDS)


def _progress_text(stage: int, done: int, total: int, step: str) -> str:
    if stage != 1:
        return STAGES[stage]
    if step:
        return f"{STAGES[1]} done; {FIT_WORDS[step]}"
    if not total:
        return STAGES[1]
    return f"{STAGES[1]}: {done:,} of {total:,} draws (tuning included)"


def _model_of(state: NoLabelsState) -> pm.Model:
    """The No-labels page's model (built again in the child: a PyMC model does not
    travel between processes, the state and this function do)."""
    return build(state).model


def _report(messages: Any, p: FitProgress) -> None:
    """Pass fit's progress to the parent (draws while sampling, then fit's stages)."""
    if p.stage == "sampling":
        messages.put(("draws", (p.done, p.total)))
    else:
        messages.put(("step", p.stage))


def _worker(make_model: Callable[[], pm.Model], state: Any, path: str, messages: Any) -> None:
    """Build, sample and save in the child process, reporting each stage and, while
    sampling, the draws made so far."""
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
        messages.put(("done", path))
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
    """One NUTS fit of a page state in a child process, with progress and cancel.

    ``state`` gives the sampler's options (``draws``, ``tune``, ``chains``, ``seed``).
    By default the job fits the No-labels page's model of ``state`` and summarises it
    with :func:`summarise`; another page passes ``model``, a picklable function of no
    arguments that builds its model in the child (e.g.
    ``functools.partial(bcm.models.groups, cm)``), and ``summary``, a function of
    ``(idata, path)`` run here that turns the fit into the page's result.

    The first job starts the forkserver, which imports PyMC once (seconds); later jobs
    fork from it.  Typical use (the tests run it)::

        job = FitJob(NoLabelsState(draws=200, tune=200, chains=2)).start()
        while job.poll().state == "running":
            time.sleep(0.2)          # the page shows job.poll().text meanwhile
        result = job.result()        # or job.cancel() to stop it
    """

    def __init__(self, state: Any, *, model: Callable[[], pm.Model] | None = None,
                 summary: Callable[[Any, Path], Any] | None = None,
                 directory: str | Path | None = None) -> None:
        self.state = state
        self._model = model or functools.partial(_model_of, state)
        self._summary = summary or functools.partial(summarise, hdi_prob=state.hdi_prob)
        self._owns_dir = directory is None  # a directory made here is removed by discard()
        self._dir = Path(directory or tempfile.mkdtemp(prefix="bayescm-app-"))
        self._path = self._dir / "fit.nc"
        self._process: Any = None
        self._launcher: Any = None
        self._messages: Any = None
        self._start = 0.0
        self._stage = 0
        self._draws = (0, 0)
        self._step = ""
        self._status = "new"
        self._error = ""
        self._result: Any = None

    def start(self) -> FitJob:
        """Start the child process and return at once (the first job of a server waits
        for the forkserver in a thread, not in the caller)."""
        ctx = _context()
        self._messages = ctx.Queue()
        self._process = ctx.Process(target=_worker, args=(self._model, self.state,
                                                          str(self._path), self._messages),
                                     daemon=True)
        self._start = time.perf_counter()
        self._status = "running"
        self._launcher = threading.Thread(target=self._process.start, daemon=True)
        self._launcher.start()
        return self

    def poll(self) -> Progress:
        """Read the child's reports (never blocks)."""
        while self._status == "running":
            try:
                kind, value = self._messages.get_nowait()
            except queue.Empty:
                if not self._launcher.is_alive() and not self._process.is_alive():
                    # the queue's feeder may lag the exit: one last look before failing
                    with contextlib.suppress(queue.Empty):
                        kind, value = self._messages.get(timeout=0.5)
                        self._take(kind, value)
                        continue
                    self._status, self._error = "failed", "The sampler stopped unexpectedly."
                break
            self._take(kind, value)
        done, total = self._draws
        return Progress(self._stage, _progress_text(self._stage, done, total, self._step),
                        time.perf_counter() - self._start, self._status, self._error,
                        done, total, self._step if self._stage == 1 else "")

    def _take(self, kind: str, value: Any) -> None:
        if kind == "stage":
            self._stage = int(value)
        elif kind == "draws":
            self._draws = (int(value[0]), int(value[1]))
        elif kind == "step":
            self._step = str(value)
        elif kind == "done":
            self._stage, self._status = len(STAGES) - 1, "done"
        else:
            self._status, self._error = "failed", str(value)

    def cancel(self) -> Progress:
        """Stop the child process now."""
        if self._status == "running" and self._process is not None:
            self._launcher.join()
            self._process.terminate()
            self._process.join(5)
            self._status = "cancelled"
        return self.poll()

    def discard(self) -> None:
        """Stop the child if it runs and delete the fit's file (a server would otherwise
        keep one NetCDF per fit until it stops)."""
        self.cancel()
        if self._owns_dir:
            shutil.rmtree(self._dir, ignore_errors=True)
        else:
            self._path.unlink(missing_ok=True)

    def result(self) -> Any:
        """The summarised fit (after ``poll().state == "done"``): a
        :class:`NoLabelsResult` unless another ``summary`` was given."""
        if self._status != "done":
            raise RuntimeError(f"The fit is {self._status}, not done.")
        if self._result is None:
            idata = bcm.load(self._path)
            self._result = self._summary(idata, self._path)
        return self._result
