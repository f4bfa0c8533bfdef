r"""The Benchmark-items page's logic: models scored item by item on the same benchmark.

The reader pastes (or uploads) a CSV with one row per model and item (and run):
columns ``item``, ``model``, ``correct`` (0/1), optionally ``cluster`` (items that
share a passage, topic or task) and ``run`` (items answered several times); column
names are read in any case.  :func:`build` reads it with
:meth:`bayescm.ItemResults.from_frame` (every model must have every item: comparisons
on the same items are paired) and builds :func:`bayescm.models.items`; the fit runs in
the page's background job (:func:`fit_job`, a :class:`~bayescm.app.fitjob.TaskJob`)
with :func:`fit_options`: the exact Beta posterior when one model answered
independent items once, NUTS otherwise, without the prior and predictive groups.

The result (:class:`ItemsResult`) has, per model, the posterior mean and equal-tailed
interval of the accuracy (the expected score on a new item from the same population of
clusters) next to the CLT and clustered-SE intervals (:func:`bayescm.analysis.benchmark_intervals`;
Miller, "Adding error bars to evals", 2024), the tiers of statistically tied models
(:func:`bayescm.analysis.tied_sets`) and the rank probabilities
(:func:`bayescm.analysis.leaderboard`).  Large inputs are refused before anything is
built (:data:`MAX_ROWS`, :data:`MAX_MODELS`, :data:`MAX_ITEMS`), like the app's other
bounds.  Nothing here imports a web framework.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.app import fitjob
from bayescm.app.downloads import new_figure
from bayescm.app.pages_common import InputError, PageState, field, read_rows_csv

if TYPE_CHECKING:
    import pymc as pm
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_ITEMS", "MAX_ITEMS", "MAX_MODELS", "MAX_ROWS", "Built", "ItemsResult",
           "ItemsState", "build", "fit_job", "fit_options", "parse_results", "summarise"]

_SCORES = {"A": "111011100111111100001001100011",
           "B": "111011111111111100000001111010",
           "C": "111011111111111011011101110111"}
DEFAULT_ITEMS = "item, model, correct, cluster\n" + "\n".join(
    f"q{i + 1}, {m}, {s}, p{i // 5 + 1}" for m, scores in _SCORES.items()
    for i, s in enumerate(scores))
"""Three models on 30 questions, five per passage (simulated with an intra-passage
correlation of 0.2)."""

# Bounds of what one page reads and fits: the benchmark (30 models x 5,000
# items) at most, and rows that pandas reads in well under a second.
MAX_ROWS = 200_000
MAX_MODELS = 30
MAX_ITEMS = 5_000
COLUMNS = ("item", "model", "correct", "cluster", "run")
HEADER = "item, model, correct[, cluster, run]"


@dataclasses.dataclass(frozen=True)
class ItemsState(PageState):
    """Inputs of the Benchmark-items page (every field travels in the page's URL)."""

    results: str = DEFAULT_ITEMS
    hdi_prob: float = 0.95
    level: float = 0.95  # P(leader better) at which a model leaves the leader's tier
    draws: int = 1000
    tune: int = 1000
    chains: int = 4
    seed: int = 1
    fitted: bool = False  # a shared link of a fitted page fits again when opened


def parse_results(text: str) -> bcm.ItemResults:
    """The page's CSV as :class:`bayescm.ItemResults` (the library's checks and messages).

    Examples
    --------
    >>> res = parse_results("Item, Model, Correct\\nq1, a, 1\\nq2, a, 0\\nq1, b, 1\\nq2, b, 1")
    >>> res.models, res.n_items, res.clusters
    (('a', 'b'), 2, None)
    """
    frame = read_rows_csv(text, "results", header=HEADER, row="model and item",
                          nothing="results", max_rows=MAX_ROWS,
                          instead="bcm.ItemResults and bcm.models.items")
    named = {c.lower(): c for c in frame.columns}
    missing = [c for c in COLUMNS[:3] if c not in named]
    extra = [c for c in frame.columns if c.lower() not in COLUMNS]
    if missing or extra:
        raise InputError("results", f"The columns must be {HEADER}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(extra)}" if extra else "") + ".")
    models = frame[named["model"]].nunique()
    items = frame[named["item"]].nunique()
    if models > MAX_MODELS or items > MAX_ITEMS:
        raise InputError("results", f"{models:,} models and {items:,} items: this page fits at "
                                    f"most {MAX_MODELS} models and {MAX_ITEMS:,} items. Use "
                                    "bcm.models.items in Python for more.")
    with field("results"):
        return bcm.ItemResults.from_frame(
            frame, item=named["item"], model=named["model"], correct=named["correct"],
            cluster=named.get("cluster"), run=named.get("run"))


def exact(results: bcm.ItemResults) -> bool:
    """One model, independent items answered once: the posterior is an exact Beta."""
    return results.n_models == 1 and results.clusters is None and results.one_run


def fit_options(results: bcm.ItemResults, state: Any) -> dict[str, Any]:
    """The options of :func:`bayescm.fit` for the page's fit: exact or NUTS, the state's
    draws, tuning steps, chains and seed, no prior or predictive groups.

    >>> res = parse_results("item, model, correct\\n1, a, 1\\n2, a, 0")
    >>> fit_options(res, ItemsState())["sampler"]
    'exact'
    """
    return {"sampler": "exact" if exact(results) else "nuts", "draws": state.draws,
            "tune": state.tune, "chains": state.chains, "random_seed": state.seed,
            "prior": False, "predictive": False}


@dataclasses.dataclass(frozen=True)
class Built:
    """The results, their model and how it will be fitted."""

    results: bcm.ItemResults
    model: pm.Model
    exact: bool

    def describe(self) -> str:
        r = self.results
        runs = np.unique(r.runs_per_item)
        parts = [f"{r.n_models} model(s), {r.n_items:,} items"]
        if r.clusters is not None:
            parts.append(f"{r.n_clusters:,} clusters")
        parts.append("one run each" if r.one_run else
                     f"{', '.join(f'{v:g}' for v in runs[:4])} runs per item")
        how = ("the exact Beta posterior (one model, independent items)" if self.exact else
               "NUTS on the item-level model (item difficulty shared across models)")
        return f"{'; '.join(parts)}: fitted with {how}."


def _check_options(state: Any) -> None:
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    with field("level"):
        if not 0.5 < state.level < 1:
            raise ValueError(f"The tie level must lie between 0.5 and 1 (the probability "
                             f"that a tier's leader is better), got {state.level!r}.")
    fitjob.check_sampler(state)


def build(state: Any) -> Built:
    """Read the results and options of a page state and build the model (no sampling).

    Examples
    --------
    >>> built = build(ItemsState())
    >>> built.results.models, built.results.n_clusters, built.exact
    (('A', 'B', 'C'), 6, False)
    """
    results = parse_results(state.results)
    _check_options(state)
    with field("results"):
        model = bcm.models.items(results)
    is_exact = exact(results)
    if not is_exact:
        fitjob.check_memory(model, state)  # the fit's memory estimate, before it starts
    return Built(results, model, is_exact)


@dataclasses.dataclass(frozen=True)
class ItemsResult:
    """What the page shows after the fit."""

    path: Path  # the fit as NetCDF
    table: pd.DataFrame  # per model: intervals, tier, p_best, expected rank
    ranks: pd.DataFrame  # per model: rank probabilities (empty for one model)
    converged: bool
    convergence: str
    hdi_prob: float
    level: float

    def figure(self) -> Figure:
        """Per model: bayescm's equal-tailed interval, the CLT and the clustered-SE intervals."""
        t = self.table
        fig, ax = new_figure(6, 1.2 + 0.55 * len(t), left=1.4, top=0.5)  # legend above
        kinds = (("bayes", "#4c72b0", "bayescm (equal-tailed)"), ("clt", "#c44e52", "CLT"),
                 ("clustered", "#55a868", "clustered SE"))
        y = np.arange(len(t))[::-1].astype(float)
        for k, (kind, color, label) in enumerate(kinds):
            yk = y + 0.2 * (1 - k)
            ax.hlines(yk, t[f"{kind}_lower"], t[f"{kind}_upper"], color=color, lw=2,
                      label=label)
            mid = t["bayes_mean"] if kind == "bayes" else t["mean"]
            ax.plot(mid, yk, "o", color=color, ms=4)
        ax.set_yticks(y, [str(m) for m in t.index])
        ax.set_xlabel(f"accuracy: {self.hdi_prob:.0%} intervals")
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=3, fontsize=8,
                  frameon=False)
        return fig


TABLE_COLUMNS = ("n_items", "mean", "bayes_mean", "bayes_lower", "bayes_upper", "clt_lower",
                 "clt_upper", "clustered_lower", "clustered_upper", "icc", "design_effect")


def summarise(results: bcm.ItemResults, idata: Any, path: Path | str, *,
              hdi_prob: float = 0.95, level: float = 0.95) -> ItemsResult:
    """The page's tables from a fit of :func:`bayescm.models.items` on ``results``.

    Examples
    --------
    >>> res = parse_results("item, model, correct\\n1, a, 1\\n2, a, 0\\n3, a, 1")
    >>> idata = bcm.fit(bcm.models.items(res), **fit_options(res, ItemsState()))
    >>> out = summarise(res, idata, "fit.nc")
    >>> round(float(out.table.loc["a", "bayes_mean"]), 1), out.converged   # Beta(3, 2)
    (0.6, True)
    """
    intervals = bcm.analysis.benchmark_intervals(results, idata, hdi_prob=hdi_prob)
    table = intervals[list(TABLE_COLUMNS)].copy()
    if results.n_models > 1:
        ties = bcm.analysis.tied_sets(idata, "acc", level=level)
        board = bcm.analysis.leaderboard(idata, "acc", hdi_prob=hdi_prob).to_frame()
        table = table.loc[list(ties.index)]  # best first
        table["tier"] = ties["tier"]
        table["p_leader_better"] = ties["p_leader_better"]
        table["p_best"] = board["p_best"]
        table["expected_rank"] = board["expected_rank"]
        ranks = board[[c for c in board.columns if c.startswith("p_rank_")]].loc[table.index]
    else:
        ranks = pd.DataFrame(index=table.index)
    table.index.name = "model"
    report = bcm.check_convergence(idata)
    return ItemsResult(Path(path), table, ranks, report.ok, report.message(), hdi_prob, level)


def _task(state: Any, path: Path, progress: Any) -> ItemsResult:
    """Build, fit, save and summarise in the fit's child process."""
    built = build(state)
    idata = bcm.fit(built.model, **fit_options(built.results, state), progress=progress)
    bcm.save(idata, path)
    # from the file: what the page shows is what its download holds
    return summarise(built.results, bcm.load(path), path, hdi_prob=state.hdi_prob,
                     level=state.level)


def fit_job(state: Any, *, directory: str | Path | None = None) -> fitjob.TaskJob:
    """A background job fitting the results of ``state`` (its NetCDF in ``directory``,
    default a new temporary one)."""
    return fitjob.TaskJob(state, functools.partial(_task, state), directory=directory)
