r"""The Compare page's "across folds / data sets" mode: two algorithms compared on
per-fold confusion matrices of cross-validation, on one data set or on several.

The reader pastes (or uploads) a CSV with one row per fold: columns ``algorithm``,
``fold``, optionally ``run`` (repetitions of k-fold cross-validation) and ``dataset``,
and the cells ``tp, fn, fp, tn``.  K-class folds are given as crosstabs, one row per
actual class of a fold: a column ``actual`` and one column per predicted class (the
layout :meth:`bayescm.MulticlassConfusionMatrix.from_frame` reads).  Column names are
read in any case.  :func:`parse_folds` groups the rows by data set and algorithm and
orders each algorithm's folds runs × folds (run by run, folds in order: numbers by
value, names alphabetically), the order :func:`bayescm.analysis.compare_folds` needs.

* One data set: :func:`bayescm.analysis.compare_folds` (the Bayesian correlated
  t-test with the Nadeau–Bengio correlation 1/k; Benavoli, Corani, Demšar & Zaffalon,
  "Time for a change", 2017) -- exact draws, computed at once on every edit
  (:func:`analyse`).
* Several data sets: :func:`bayescm.analysis.compare_datasets` (the hierarchical model
  of Corani, Benavoli, Demšar, Mangili & Zaffalon, "Statistical comparison of
  classifiers through Bayesian hierarchical modelling", 2017) -- NUTS, in the page's
  background job (:func:`datasets_job`, a :class:`~bayescm.app.fitjob.TaskJob`).
  Everything the fit needs is checked before it starts (:func:`prepare`): the CSV, the
  metric on every fold, the sampler's options and the server's bounds.

Nothing here imports a web framework.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.analysis.fold_metrics import as_folds, check_pair, metric_key, plug_in_values
from bayescm.app import fitjob
from bayescm.app.downloads import new_figure
from bayescm.app.pages_common import InputError, field, read_rows_csv

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_FOLDS", "MAX_DATASETS", "MAX_ROWS", "DatasetsResult", "FoldTable",
           "FoldsResult", "Prepared", "analyse", "datasets_job", "parse_folds", "prepare",
           "read_upload"]

DEFAULT_FOLDS = """algorithm, fold, tp, fn, fp, tn
A, 1, 29, 1, 4, 36
A, 2, 26, 4, 6, 34
A, 3, 29, 1, 5, 35
A, 4, 27, 3, 3, 37
A, 5, 26, 4, 3, 37
A, 6, 28, 2, 6, 34
A, 7, 27, 3, 6, 34
A, 8, 26, 4, 10, 30
A, 9, 28, 2, 6, 34
A, 10, 26, 4, 4, 36
B, 1, 30, 0, 11, 29
B, 2, 27, 3, 5, 35
B, 3, 23, 7, 7, 33
B, 4, 26, 4, 8, 32
B, 5, 29, 1, 8, 32
B, 6, 27, 3, 3, 37
B, 7, 25, 5, 10, 30
B, 8, 27, 3, 7, 33
B, 9, 27, 3, 8, 32
B, 10, 25, 5, 5, 35"""
"""Two algorithms, 10-fold cross-validation on one data set of 70 cases a fold."""

# Bounds that keep an edit (parsing, exact draws of every fold) well under a second and
# a fit within the server's limits.
MAX_ROWS = 20_000  # rows of the CSV (K-class: one per actual class of a fold)
MAX_DATASETS = 100
MAX_FOLDS = 1_000  # matrices per algorithm and data set (runs x folds)
MAX_DATASET_VALUES = 20_000_000  # draws x chains x data sets kept by compare_datasets
FOLD_DRAWS = 10_000  # joint draws of the fold metrics (compare_folds' mixture components)
KEYS = ("algorithm", "dataset", "run", "fold")
HEADER = "algorithm, fold, [run, dataset,] tp, fn, fp, tn"


def read_upload(data: bytes | str) -> str:
    """An uploaded file's text (UTF-8, with or without a byte-order mark).

    >>> read_upload(b"\\xef\\xbb\\xbfalgorithm, fold")
    'algorithm, fold'
    """
    try:
        return data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError as err:
        raise InputError("folds", f"The file is not UTF-8 text ({err.reason} at byte "
                                  f"{err.start}): save it as CSV UTF-8 and upload it "
                                  "again.") from None


def _natural(values: Any) -> list[str]:
    """Distinct labels in order: numbers by value, then names alphabetically."""
    def key(text: str) -> tuple[int, float, str]:
        try:
            return (0, float(text), text)
        except ValueError:
            return (1, 0.0, text)
    return sorted(dict.fromkeys(values), key=key)


def _text(column: pd.Series) -> pd.Series:
    """Key labels as text: whole-number floats (a column with gaps) as integers."""
    return column.map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer()
                      else str(v).strip())


@dataclasses.dataclass(frozen=True)
class FoldTable:
    """Per-fold confusion matrices read from the page's CSV.

    Attributes
    ----------
    algorithms, datasets
        Algorithms in order of first appearance, data sets in order (numbers by
        value, names alphabetically; ``("",)`` without a ``dataset`` column).
    runs
        Repetitions of cross-validation (the same on every data set).
    folds
        ``{data set: {algorithm: batch}}``: each batch a ConfusionMatrix or
        MulticlassConfusionMatrix with one matrix per fold, runs × folds in order.
    """

    algorithms: tuple[str, ...]
    datasets: tuple[str, ...]
    runs: int
    folds: dict[str, dict[str, Any]]

    def pair(self, a: str, b: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A's and B's batches per data set, as compare_datasets takes them."""
        return ({d: f[a] for d, f in self.folds.items()},
                {d: f[b] for d, f in self.folds.items()})


def parse_folds(text: str) -> FoldTable:
    """The page's CSV of per-fold confusion matrices, grouped and ordered.

    Raises
    ------
    InputError
        For field ``folds``: no rows, a missing or unknown column, a repeated fold,
        algorithms with different folds, runs with different numbers of folds, more
        than the page's bounds.

    Examples
    --------
    >>> t = parse_folds("algorithm, run, fold, tp, fn, fp, tn\\n"
    ...                 "A, 1, 2, 9, 1, 2, 8\\nA, 1, 1, 8, 2, 1, 9\\n"
    ...                 "B, 1, 1, 7, 3, 2, 8\\nB, 1, 2, 8, 2, 3, 7")
    >>> t.algorithms, t.datasets, t.runs, t.folds[""]["A"].to_frame()["tp"].tolist()
    (('A', 'B'), ('',), 1, [8, 9])
    """
    frame = read_rows_csv(text, "folds", header=HEADER, row="fold", nothing="folds",
                          max_rows=MAX_ROWS,
                          instead="bcm.analysis.compare_folds or compare_datasets")
    lower = {c.lower(): c for c in frame.columns}
    frame = frame.rename(columns={c: c.lower() for c in frame.columns
                                  if c.lower() in (*KEYS, "actual", *bcm.CELLS)})
    for need in ("algorithm", "fold"):
        if need not in frame.columns:
            raise InputError("folds", f"No column {need!r}: the header must name the columns "
                                      f"({HEADER}); it has {', '.join(lower.values())}.")
    multiclass = "actual" in frame.columns
    keys = [k for k in KEYS if k in frame.columns]
    cells = ([c for c in frame.columns if c not in (*keys, "actual")] if multiclass
             else list(bcm.CELLS))
    if not multiclass:
        missing = [c for c in bcm.CELLS if c not in frame.columns]
        extra = [c for c in frame.columns if c not in (*keys, *bcm.CELLS)]
        if missing or extra:
            raise InputError("folds", "Binary folds need the columns tp, fn, fp, tn (K-class "
                             "folds: a column 'actual' and one column per predicted class)"
                             + (f"; missing {', '.join(missing)}" if missing else "")
                             + (f"; unknown {', '.join(extra)}" if extra else "") + ".")
    for k in (*keys, *(["actual"] if multiclass else [])):
        if frame[k].isna().any():
            row = int(np.flatnonzero(frame[k].isna().to_numpy())[0]) + 2
            raise InputError("folds", f"Line {row}: the column {k!r} is empty; every row "
                                      "needs its algorithm and fold (and run, data set).")
        frame[k] = _text(frame[k])
    if "run" not in frame.columns:
        frame["run"] = "1"
    if "dataset" not in frame.columns:
        frame["dataset"] = ""
    unit = ["dataset", "algorithm", "run", "fold", *(["actual"] if multiclass else [])]
    twice = frame.duplicated(unit)
    if twice.any():
        row = frame[twice].iloc[0]
        raise InputError("folds", "A fold is given twice: " + ", ".join(
            f"{k} {row[k]}" for k in unit if row[k] != "") + ". Give each one row.")
    with field("folds"):
        values = frame[cells].apply(pd.to_numeric, errors="raise")
    frame[cells] = values
    algorithms = tuple(dict.fromkeys(frame["algorithm"]))
    datasets = tuple(_natural(frame["dataset"]))
    if len(algorithms) < 2:
        raise InputError("folds", f"Give the folds of at least two algorithms (column "
                                  f"algorithm); found only {algorithms[0]!r}.")
    if len(datasets) > MAX_DATASETS:
        raise InputError("folds", f"{len(datasets)} data sets: this page compares at most "
                                  f"{MAX_DATASETS}. Use bcm.analysis.compare_datasets in "
                                  "Python for more.")
    runs_seen: set[int] = set()
    folds: dict[str, dict[str, Any]] = {}
    for d in datasets:
        part = frame[frame["dataset"] == d]
        order = _order(part, d)
        runs_seen.add(len({r for r, _ in order}))
        folds[d] = {a: _batch(part[part["algorithm"] == a], order, cells, multiclass, d, a)
                    for a in algorithms}
    if len(runs_seen) > 1:
        raise InputError("folds", f"The data sets have different numbers of runs "
                                  f"({', '.join(map(str, sorted(runs_seen)))}): repeat "
                                  "cross-validation equally often on each.")
    return FoldTable(algorithms, datasets, runs_seen.pop(), folds)


def _order(part: pd.DataFrame, dataset: str) -> list[tuple[str, str]]:
    """The (run, fold) pairs of one data set, runs × folds in order, after checking that
    every algorithm has them all and every run has as many folds."""
    where = f" of data set {dataset!r}" if dataset else ""
    grid = {a: set(zip(g["run"], g["fold"], strict=True))
            for a, g in part.groupby("algorithm", sort=False)}
    first, *others = grid.items()
    for name, pairs in others:
        if pairs != first[1]:
            gone = sorted(first[1] ^ pairs)[:3]
            raise InputError("folds", f"Algorithms {first[0]!r} and {name!r} have different "
                                      f"folds{where} (e.g. run, fold {gone}): compare them on "
                                      "the same folds.")
    order = [(r, f) for r in _natural(p[0] for p in first[1])
             for f in _natural(f for run, f in first[1] if run == r)]
    per_run = {r: sum(1 for run, _ in order if run == r) for r, _ in order}
    if len(set(per_run.values())) > 1:
        raise InputError("folds", f"The runs{where} have different numbers of folds "
                                  f"({per_run}): give k folds for every run.")
    if len(order) > MAX_FOLDS:
        raise InputError("folds", f"{len(order):,} folds per algorithm{where}: this page reads "
                                  f"at most {MAX_FOLDS:,}.")
    return order


def _batch(rows: pd.DataFrame, order: list[tuple[str, str]], cells: list[str],
           multiclass: bool, dataset: str, algorithm: str) -> Any:
    names = [f"run {r} fold {f}" for r, f in order]
    where = f"{algorithm!r}" + (f" on {dataset!r}" if dataset else "")
    indexed = rows.set_index(["run", "fold"])
    with field("folds"):
        if not multiclass:
            table = indexed.loc[order, cells]
            return bcm.ConfusionMatrix(**{c: table[c].to_numpy() for c in cells},
                                       classifier=names)
        matrices, labels = [], cells
        for key in order:
            crosstab = indexed.loc[[key]].set_index("actual")[cells]
            try:
                matrices.append(bcm.MulticlassConfusionMatrix.from_frame(
                    crosstab, labels=labels).counts[0])
            except ValueError as err:
                raise ValueError(f"Algorithm {where}, run {key[0]} fold {key[1]}: "
                                 f"{err}") from None
        return bcm.MulticlassConfusionMatrix(np.stack(matrices), labels, classifier=names)


# -- what the page computes ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Prepared:
    """The checked inputs of a comparison: the folds, A and B, the metric's key."""

    table: FoldTable
    a: str
    b: str
    metric: str

    @property
    def several(self) -> bool:
        """Several data sets: the hierarchical model (a background fit)."""
        return len(self.table.datasets) > 1


def _pick(state: Any, names: tuple[str, ...]) -> tuple[str, str]:
    a = state.a or names[0]
    b = state.b or next(n for n in names if n != a)
    for key, value in (("a", a), ("b", b)):
        if value not in names:
            raise InputError(key, f"No algorithm named {value!r}; the algorithms are "
                                  f"{', '.join(names)}.")
    if a == b:
        raise InputError("b", "Choose two different algorithms to compare.")
    return a, b


def prepare(state: Any) -> Prepared:
    """Read and check everything the comparison of a page state needs (fields
    ``folds``, ``a``, ``b``, ``metric``, ``rope``, ``hdi_prob``, ``seed`` and, for
    several data sets, ``draws``, ``tune``, ``chains``), before anything is sampled.

    >>> from bayescm.app.compare_logic import CompareState
    >>> p = prepare(CompareState(mode="folds", metric="accuracy"))
    >>> p.a, p.b, p.metric, p.several
    ('A', 'B', 'acc', False)
    """
    with field("rope"):
        if not np.isfinite(state.rope) or state.rope < 0:
            raise ValueError(f"The ROPE's half-width must be a finite number >= 0 (in metric "
                             f"units), got {state.rope!r}.")
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    with field("seed"):
        fitjob.check_seed(state.seed)
    table = parse_folds(state.folds)
    a, b = _pick(state, table.algorithms)
    first = table.folds[table.datasets[0]][a]
    with field("metric"):
        key, _ = metric_key(as_folds(first), state.metric)
    for d in table.datasets:
        with field("folds"):
            check_pair(table.folds[d][a], table.folds[d][b], table.runs)
    prepared = Prepared(table, a, b, key)
    if prepared.several:
        fitjob.check_sampler(state)
        values = state.draws * state.chains * len(table.datasets)
        if values > MAX_DATASET_VALUES:
            raise InputError("draws", f"{state.draws:,} draws x {state.chains} chains x "
                                      f"{len(table.datasets)} data sets is more than the "
                                      f"{MAX_DATASET_VALUES:,} values this server keeps for "
                                      "one fit; use fewer draws.")
        for d in table.datasets:  # the hierarchical model takes plug-in values: defined?
            with field("metric"):
                diff = (plug_in_values(table.folds[d][a], key, f"{a} on {d}")
                        - plug_in_values(table.folds[d][b], key, f"{b} on {d}"))
            if np.ptp(diff) == 0:
                raise InputError("folds", f"All fold differences of {key} are equal on data "
                                          f"set {d!r}: no within-set variance, and the "
                                          "hierarchical model's likelihood is unbounded "
                                          "there. Drop that data set.")
    elif state.plug_in:
        with field("metric"):
            plug_in_values(first, key, a)
            plug_in_values(table.folds[table.datasets[0]][b], key, b)
    return prepared


@dataclasses.dataclass(frozen=True)
class FoldsResult:
    """One data set: :func:`bayescm.analysis.compare_folds`' result and the page's views."""

    a: str
    b: str
    comparison: Any  # bayescm.analysis.FoldComparison
    hdi_prob: float

    @property
    def summary(self) -> pd.DataFrame:
        return self.comparison.summary(self.hdi_prob)

    @property
    def folds_table(self) -> pd.DataFrame:
        return self.comparison.to_frame()

    def figure(self) -> Figure:
        """The posterior of the mean difference, ROPE shaded
        (:func:`bayescm.plots.fold_difference`)."""
        fig, ax = new_figure(6, 3.2)
        bcm.plots.fold_difference(self.comparison, ax=ax)
        return fig


def analyse(state: Any, prepared: Prepared | None = None) -> FoldsResult:
    """Compare A with B on one data set's folds (exact draws: at once).

    Examples
    --------
    >>> from bayescm.app.compare_logic import CompareState
    >>> res = analyse(CompareState(mode="folds", metric="acc", plug_in=True))
    >>> round(res.comparison.p_a_better, 3), res.comparison.folds
    (0.818, 10)
    """
    prepared = prepared or prepare(state)
    if prepared.several:
        raise InputError("folds", "Several data sets are compared with the hierarchical "
                                  "model: fit it (NUTS) with the page's button.")
    table, a, b = prepared.table, prepared.a, prepared.b
    folds = table.folds[table.datasets[0]]
    with field("metric"):
        comparison = bcm.analysis.compare_folds(
            folds[a], folds[b], prepared.metric, rope=state.rope, runs=table.runs,
            plug_in=state.plug_in, draws=FOLD_DRAWS, random_seed=state.seed, names=(a, b))
    return FoldsResult(a, b, comparison, state.hdi_prob)


@dataclasses.dataclass(frozen=True)
class DatasetsResult:
    """Several data sets: :func:`bayescm.analysis.compare_datasets`' result."""

    a: str
    b: str
    comparison: Any  # bayescm.analysis.DatasetComparison
    hdi_prob: float

    @property
    def converged(self) -> bool:
        c = self.comparison
        return bool(c.r_hat < 1.01 and c.divergences == 0)

    @property
    def convergence(self) -> str:
        c = self.comparison
        words = "Converged" if self.converged else "NOT converged"
        return (f"{words}: max R-hat {c.r_hat:.3f}, {c.divergences} divergences."
                + ("" if self.converged else "\n- Run longer (more tune and draws)."))

    @property
    def overall(self) -> pd.DataFrame:
        """The mean difference over data sets (δ0) and a new data set's: mean, HDI."""
        table = self.comparison.summary(self.hdi_prob)
        table.attrs = {}
        return table

    @property
    def probabilities(self) -> pd.DataFrame:
        """The decision (the share of posterior draws in which each region is the most
        probable for a new data set: baycomp's rule) and the predictive (each region's
        probability for a new data set)."""
        c = self.comparison
        rows = {"decision": (c.p_a_better, c.p_rope, c.p_b_better),
                "new data set": c.predictive_probs}
        return pd.DataFrame.from_dict(
            rows, orient="index",
            columns=[f"p_{self.a}_better", "p_rope", f"p_{self.b}_better"]).rename_axis(
                "probability")

    @property
    def per_dataset(self) -> pd.DataFrame:
        """Per data set: the observed mean difference next to its shrunk posterior."""
        return self.comparison.to_frame(self.hdi_prob)

    def simplex_figure(self) -> Figure:
        fig, ax = new_figure(4.6, 4.2, left=0.3, bottom=0.3)
        bcm.plots.datasets_simplex(self.comparison, ax=ax)
        return fig

    def forest_figure(self) -> Figure:
        n = len(self.comparison.datasets)
        # room above the axes for the legend the library puts there
        fig, ax = new_figure(6, 1.6 + 0.3 * min(n, 60), left=1.4, top=0.9)
        bcm.plots.datasets_forest(self.comparison, ax=ax, hdi_prob=self.hdi_prob)
        return fig


def _datasets_task(state: Any, _path: Path, _progress: Any) -> DatasetsResult:
    """The hierarchical comparison, in the fit's child process (read again there: the
    state travels, the parsed folds need not)."""
    prepared = prepare(state)
    cms_a, cms_b = prepared.table.pair(prepared.a, prepared.b)
    comparison = bcm.analysis.compare_datasets(
        cms_a, cms_b, prepared.metric, rope=state.rope, runs=prepared.table.runs,
        draws=state.draws, tune=state.tune, chains=state.chains, random_seed=state.seed,
        names=(prepared.a, prepared.b))
    return DatasetsResult(prepared.a, prepared.b, comparison, state.hdi_prob)


def datasets_job(state: Any, *, directory: str | Path | None = None) -> fitjob.TaskJob:
    """A background job fitting :func:`bayescm.analysis.compare_datasets` for ``state``
    (checked first by :func:`prepare`: bad input raises InputError, nothing starts)."""
    if not prepare(state).several:
        raise InputError("folds", "One data set: the comparison needs no fit.")
    return fitjob.TaskJob(state, functools.partial(_datasets_task, state),
                          directory=directory)
