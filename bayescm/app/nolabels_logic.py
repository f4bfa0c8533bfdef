r"""The No-labels page's logic: Se, Sp and prevalence from an agreement table.

The page takes an agreement table of T >= 2 classifiers in one or more populations
(header ``population, ++, +-, -+, --`` and optional cells with missing results such
as ``+?`` or verified cases such as ``+-|D+``: :mod:`bayescm.data.agreement_cells`), priors
one per line (``sensitivity A: beta(20, 4)``) and dependent pairs (``A~B``), and fits
the Hui–Walter latent-class model (:func:`bayescm.models.hui_walter`) with NUTS.

Before sampling, :func:`build` reads the inputs and builds the model in this process,
so bad input gets the library's own message next to its field at once, and the
identifiability verdict (the library's :class:`~bayescm.models.IdentifiabilityWarning`
text, or the counting argument when the data identify the model) is shown before any
draw.  Sampling then runs in a :class:`FitJob` (:mod:`bayescm.app.fitjob`: a child process
that reports its stage and draws as it goes, can be cancelled, and leaves the fit as
NetCDF, :func:`bayescm.save`).  The result
(:class:`NoLabelsResult`) holds the posterior summary, the convergence verdict
(:func:`bayescm.check_convergence`) and the posterior predictive check
(:func:`bayescm.posterior_predictive_check`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.app import fitjob
from bayescm.app.downloads import new_figure
from bayescm.app.fitjob import STAGES, Progress, check_sampler, warm
from bayescm.app.one_classifier_logic import parse_prior
from bayescm.app.pages_common import (
    Built,
    InputError,
    PageState,
    field,
    prior_lines,
    put_prior,
    read_table,
)
from bayescm.app.raters_logic import DEFAULT_RATINGS
from bayescm.data.agreement_cells import parse_cell
from bayescm.models.hui_walter import PriorTruncationWarning

if TYPE_CHECKING:
    import pymc as pm
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_TABLE", "STAGES", "FitJob", "NoLabelsResult", "NoLabelsState", "Progress",
           "build", "parse_pairs", "parse_priors", "parse_table", "summarise", "warm"]

DEFAULT_TABLE = """population, ++, +-, -+, --
site1, 89, 43, 55, 413
site2, 260, 76, 52, 212"""
"""Two tests in two populations of different prevalence (the Hui–Walter design)."""

PARAMETERS = ("sensitivity", "specificity", "prevalence")
# the page builds the model in the server's event loop, on every edit: 8 classifiers
# (256 patterns) take 0.3 s, 9 take 0.8 s, 10 take 3 s (the library takes up to 11)
MAX_CLASSIFIERS = 8
MAX_CELLS = 65_536  # populations x cells of the table
_BETA_CALL = re.compile(r"^beta\s*\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class NoLabelsState(PageState):
    """Inputs of the No-labels page (every field travels in the page's URL)."""

    mode: str = "agreement"  # or "ratings": many raters' K-class labels (raters_logic)
    table: str = DEFAULT_TABLE
    ratings: str = DEFAULT_RATINGS
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
    usage = "write 'parameter [classifier or population]: beta(a, b)'"
    for i, name, unit, spec in prior_lines(text, usage):
        with field("priors"):
            prior = _prior(spec, f"{name} {unit}".strip())
        put_prior(out, i, name, unit, prior)
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
    size = len(table.populations) * len(table.patterns)
    if len(table.classifiers) > MAX_CLASSIFIERS or size > MAX_CELLS:
        raise InputError("table", f"The table has {len(table.classifiers)} classifiers and "
                         f"{size:,} cells in all; this page fits at most {MAX_CLASSIFIERS} "
                         f"classifiers and {MAX_CELLS:,} cells, so that every reader's edits "
                         "stay quick. Use bcm.models.hui_walter in Python for more.")
    priors = parse_priors(state.priors)
    check_sampler(state)
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    pairs = parse_pairs(state.dependence)
    with field("dependence"):
        bcm.models.hui_walter(table, conditional_dependence=pairs, identifiability="ignore")
    with field("priors"), warnings.catch_warnings(record=True) as caught:
        # the verdict and the priors' truncation are shown on the page, not raised
        warnings.simplefilter("ignore", bcm.models.IdentifiabilityWarning)
        warnings.simplefilter("always", PriorTruncationWarning)
        model = bcm.models.hui_walter(table, priors=priors, conditional_dependence=pairs)
    cut = tuple(dict.fromkeys(str(w.message) for w in caught
                              if issubclass(w.category, PriorTruncationWarning)))
    for w in caught:  # anything else goes on as it came
        if not issubclass(w.category, PriorTruncationWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    fitjob.check_memory(model, state)  # the fit's memory estimate, before any fit starts
    # the family records its identifiability verdict with the model (as fit puts it
    # in idata.attrs)
    attrs = bcm.models.family_of(model).attrs(bcm.models.spec_of(model))
    return Built(table, model, attrs["identifiability_status"], attrs["identifiability"],
                 cut)


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
    the convergence verdict and the predictive check.

    ``path`` is where the fit was saved (the NetCDF download reads it); nothing is
    written here.

    Examples
    --------
    A fit far too short to trust, which the verdict says in words:

    >>> import warnings
    >>> built = build(NoLabelsState())
    >>> with warnings.catch_warnings():   # bcm.fit warns that it has not converged
    ...     warnings.simplefilter("ignore")
    ...     idata = bcm.fit(built.model, draws=100, tune=100, chains=2, random_seed=1)
    >>> result = summarise(idata, "fit.nc")
    >>> result.summary[["parameter", "unit"]].to_numpy().tolist()
    ... # doctest: +NORMALIZE_WHITESPACE
    [['sensitivity', 'A'], ['sensitivity', 'B'], ['specificity', 'A'],
     ['specificity', 'B'], ['prevalence', 'site1'], ['prevalence', 'site2']]
    >>> se_a = bcm.summary(idata, metrics=["tpr"]).loc[("site1", "A", "tpr"), "mean"]
    >>> bool(result.summary.loc[0, "mean"] == se_a)    # the library's summary
    True
    >>> result.converged, result.convergence.split(":")[0]
    (False, 'NOT converged')
    >>> list(result.check.index), list(result.check.columns)
    (['site1', 'site2', 'all'], ['observed', 'replicated', 'p_value'])
    """
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


def _model_of(state: NoLabelsState) -> pm.Model:
    """The No-labels page's model (built again in the child: a PyMC model does not
    travel between processes, the state and this function do)."""
    return build(state).model


class FitJob(fitjob.FitJob):
    """The No-labels page's fit of ``state`` (:class:`bayescm.app.fitjob.FitJob`):
    the Hui–Walter model of :func:`build`, summarised by :func:`summarise`; another
    page passes its own ``model`` and ``summary``.

    Typical use (the tests run it)::

        job = FitJob(NoLabelsState(draws=200, tune=200, chains=2)).start()
        while job.poll().state == "running":
            time.sleep(0.2)          # the page shows job.poll().text meanwhile
        result = job.result()        # a NoLabelsResult; or job.cancel() to stop it
    """

    def __init__(self, state: Any, *, model: Callable[[], pm.Model] | None = None,
                 summary: Callable[[Any, Path], Any] | None = None,
                 directory: str | Path | None = None) -> None:
        super().__init__(
            state, model=model or functools.partial(_model_of, state),
            summary=summary or functools.partial(summarise, hdi_prob=state.hdi_prob),
            directory=directory)
