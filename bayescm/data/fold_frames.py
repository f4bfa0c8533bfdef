"""Reading cross-validation results (pandas or Dask): the column work of FoldResults.

Behind :class:`bayescm.FoldResults`: the roles' columns, counts in long form
(algorithm, data set, run, fold, true label, predicted label, count), the classes of a
data set, the order of its (run, fold) pairs, one algorithm's batch of matrices, and
the checks with plain messages (:class:`~bayescm.CountsError`): an algorithm lacking a
fold or a data set, unequal folds per run, one fold per run, classes not shared.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.confusion import ConfusionMatrix
from bayescm.data.counts import MAX_COUNT, CountsError, names_as_text, resolve_positive
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.data.slices import is_dask

__all__ = ["ONE", "Batch", "check_dataset", "check_paired", "check_rows", "codes", "columns",
           "matrices_of", "plain", "roles", "sorted_values", "standard", "units"]

Batch = ConfusionMatrix | MulticlassConfusionMatrix
ONE = "data"  # the name of the one data set when the table has no data-set column
_A, _D, _R, _F, _T, _P, _N = "algorithm", "dataset", "run", "fold", "true", "pred", "n"


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value."""
    return value.item() if isinstance(value, np.generic) else value


def sorted_values(values: Any) -> list:
    """The distinct values, sorted (in order of appearance when they cannot be)."""
    values = [plain(v) for v in pd.unique(pd.Series(list(values), dtype=object))]
    try:
        return sorted(values)
    except TypeError:  # mixed types keep their order of appearance
        return values


def roles(**cols: str | None) -> dict[str, str]:
    """Role -> column for the roles given; each role its own column."""
    given = {k: c for k, c in cols.items() if c is not None}
    for role, col in given.items():
        if not isinstance(col, str | int):
            raise TypeError(f"{role}= names a column, got {type(col).__name__}.")
    if len(set(given.values())) < len(given):
        raise CountsError(f"Each role needs its own column; got {given}.")
    return given


def columns(df: Any, names: list, how: str) -> Any:
    """``df`` restricted to the columns ``names`` (each once), checked: a pandas or Dask
    DataFrame holding them all, not empty."""
    if not (isinstance(df, pd.DataFrame) or (is_dask(df) and hasattr(df, "columns"))):
        raise TypeError(f"FoldResults.{how} needs a pandas or Dask DataFrame, got "
                        f"{type(df).__name__}.")
    missing = [c for c in dict.fromkeys(names) if c not in list(df.columns)]
    if missing:
        raise CountsError(f"Column(s) {missing} are not in the data; its columns are "
                          f"{[str(c) for c in df.columns][:20]}: name them with fold=, run=, "
                          "algorithm=, dataset= (and y_true=, y_pred=).")
    frame = df[list(dict.fromkeys(names))]
    if not is_dask(frame) and frame.empty:
        raise CountsError("No results given: the table is empty.")
    return frame


def standard(long: pd.DataFrame) -> pd.DataFrame:
    """Absent roles filled: one algorithm, one data set, one run."""
    for col, value in ((_A, "algorithm"), (_D, ONE), (_R, 0)):
        if col not in long.columns:
            long[col] = value
    long[_A] = names_as_text(long[_A], "algorithm")
    long[_D] = names_as_text(long[_D], "dataset")
    return long


def check_rows(frame: pd.DataFrame, ids: list[str], actual: str) -> None:
    """Within a data set every (algorithm, run, fold) has rows for the same classes."""
    ds_col = _D if _D in frame.columns else None
    for ds, part in (frame.groupby(ds_col, sort=False) if ds_col else [(ONE, frame)]):
        sets = part.groupby([c for c in ids if c != _D], sort=False)[actual].agg(
            lambda s: frozenset(plain(v) for v in s))
        if sets.nunique() > 1:
            common = frozenset.union(*sets)
            short = [(k, sorted(map(str, common - v))) for k, v in sets.items() if v != common]
            raise CountsError(
                f"The classes are not shared on data set {ds!r}: every algorithm, run and "
                f"fold needs one row per actual class {sorted(map(str, common))}; "
                f"{short[0][0]} lacks {short[0][1]} ({len(short)} fold(s) in all).  Add the "
                "rows (zeros where no case of that class was in the fold).")


def codes(part: pd.DataFrame, classes: list, ds: str, by_text: bool) -> pd.DataFrame:
    """Rows with the class positions ``_t``, ``_p`` of their true and predicted labels."""
    index = pd.Index(classes, dtype=object)
    if index.has_duplicates:
        raise CountsError(f"The classes of data set {ds!r} must be unique; repeated: "
                          f"{index[index.duplicated()].tolist()[:5]}.")
    t = index.get_indexer(pd.Index(part[_T], dtype=object))
    p = index.get_indexer(pd.Index(part[_P], dtype=object))
    if by_text:  # a CSV's column names are text: classes matched by str; empty ones dropped
        text = pd.Index([str(x) for x in classes], dtype=object)
        p = np.where(p < 0, text.get_indexer(pd.Index([str(x) for x in part[_P]])), p)
        keep = (p >= 0) | (part[_N].to_numpy() > 0)
        part, t, p = part[keep], t[keep], p[keep]
    bad = (t < 0) | (p < 0)
    if bad.any():
        rows = part[bad]
        unknown = sorted({str(x) for x in (*rows[_T][t[bad] < 0], *rows[_P][p[bad] < 0])})
        raise CountsError(f"On data set {ds!r} algorithm {rows[_A].iloc[0]!r} has labels "
                          f"{unknown[:10]} that are not among the classes {classes}: the "
                          "algorithms of a data set share their classes; give labels= with "
                          "every class.")
    return part.assign(_t=t, _p=p)


def units(part: pd.DataFrame, ds: str) -> list[tuple]:
    """The data set's (run, fold) pairs in order; every algorithm has all, runs equal k."""
    run_order, fold_order = sorted_values(part[_R]), sorted_values(part[_F])
    units = part[[_R, _F]].drop_duplicates()
    per_run = units.groupby(_R, sort=False).size()
    if per_run.nunique() > 1:
        sizes = {plain(r): int(n) for r, n in per_run.items()}
        raise CountsError(f"On data set {ds!r} the runs have unequal numbers of folds {sizes}; "
                          "every repetition of cross-validation needs the same k folds.")
    order = sorted(units.itertuples(index=False, name=None),
                   key=lambda rf: (run_order.index(plain(rf[0])),
                                   fold_order.index(plain(rf[1]))))
    everything = set(order)
    for alg, rows in part.groupby(_A, sort=False):
        have = set(rows[[_R, _F]].drop_duplicates().itertuples(index=False, name=None))
        if have != everything:
            gone = sorted(everything - have, key=order.index)
            shown = [f"run {r}, fold {f}" for r, f in gone[:5]]
            raise CountsError(
                f"On data set {ds!r} algorithm {alg!r} lacks {len(gone)} fold(s): {shown}. "
                "Every algorithm needs every fold of every run (comparisons are paired by "
                "fold); add its results or drop those folds for all algorithms.")
    return order


def matrices_of(rows: pd.DataFrame, order: list, names: list[str], classes: list, positive: Any,
           ds: str) -> Batch:
    """One algorithm's matrices on one data set, in the order of ``order``."""
    unit = pd.MultiIndex.from_tuples(order).get_indexer(
        pd.MultiIndex.from_arrays([rows[_R], rows[_F]]))
    k = len(classes)
    n = pd.to_numeric(rows[_N], errors="coerce").to_numpy(dtype=float)
    if (np.abs(n) > MAX_COUNT).any():  # before int64, which would wrap them round
        raise CountsError(f"On data set {ds!r} a count is {np.nanmax(np.abs(n)):g}, above "
                          "2**53: counts that large cannot be held exactly; check the column.")
    counts = np.zeros((len(order), k, k), dtype=np.int64)
    np.add.at(counts, (unit, rows["_t"].to_numpy(), rows["_p"].to_numpy()),
              rows[_N].to_numpy(dtype=np.int64))
    binary = k <= 2 and (positive is not None or set(classes) <= {0, 1})
    if not binary:
        if k < 2:
            raise CountsError(f"Data set {ds!r} has one class, {classes}: give labels= with "
                              "every class (or positive= for binary matrices).")
        return MulticlassConfusionMatrix(counts, classes, classifier=names)
    pos = resolve_positive(np.asarray(classes), positive)
    if pos not in classes or (k == 1 and set(classes) - {0, 1}):
        raise CountsError(f"Data set {ds!r} shows only the label(s) {classes}: give labels= "
                          "with both classes.")
    i = classes.index(pos)
    if k == 1:  # labels 0/1 with only the positive one seen
        return ConfusionMatrix(counts[:, 0, 0], 0 * counts[:, 0, 0], 0 * counts[:, 0, 0],
                               0 * counts[:, 0, 0], classifier=names)
    j = 1 - i
    return ConfusionMatrix(counts[:, i, i], counts[:, i, j], counts[:, j, i], counts[:, j, j],
                           classifier=names)


def check_dataset(ds: str, batches: list[tuple[str, Batch]], runs: int) -> None:
    """Same kind, classes and folds for every algorithm; equal folds per run, k >= 2."""
    first_alg, first = batches[0]
    for alg, batch in batches[1:]:
        if type(batch) is not type(first) or getattr(batch, "labels", None) != \
                getattr(first, "labels", None):
            raise CountsError(
                f"On data set {ds!r}, {alg!r} and {first_alg!r} have different classes "
                f"({getattr(batch, 'labels', 'binary')} and {getattr(first, 'labels', 'binary')});"
                " the algorithms of a data set must share their classes (labels=).")
        if batch.classifiers != first.classifiers:
            gone = [f for f in first.classifiers if f not in batch.classifiers][:5]
            extra = [f for f in batch.classifiers if f not in first.classifiers][:5]
            raise CountsError(
                f"On data set {ds!r}, {alg!r} and {first_alg!r} do not have the same folds: "
                f"{alg!r} lacks {gone} and has {extra} besides.  Every algorithm needs every "
                "fold of every run (comparisons are paired by fold).")
    n = len(first)
    if runs < 1 or n % runs:
        raise CountsError(f"On data set {ds!r}, {n} matrices per algorithm cannot be {runs} "
                          "run(s) of the same number of folds; give runs × folds matrices, "
                          "run by run.")
    if n // runs < 2:
        raise CountsError(
            f"Data set {ds!r} has one fold per run ({n} matrices in {runs} run(s)): the "
            "correlated t-test's correlation between folds is rho = 1/k (the test fraction of "
            "k-fold cross-validation), and at k = 1 it is 1, an infinite variance of the mean. "
            "Give the per-fold matrices of k >= 2 folds (name the fold column with fold= and "
            "the repetition column with run=), not one matrix per run.")


def check_paired(matrices: Mapping[tuple[str, str], Batch]) -> None:
    """Warn when the algorithms of a data set were not tested on the same cases per fold."""
    by_ds: dict[str, list[Batch]] = {}
    for (_, ds), batch in matrices.items():
        by_ds.setdefault(ds, []).append(batch)
    for ds, batches in by_ds.items():
        totals = [_actual_totals(b) for b in batches]
        if any(t.shape != totals[0].shape or not np.array_equal(t, totals[0])
               for t in totals[1:]):
            warnings.warn(
                f"On data set {ds!r} the algorithms' folds hold different numbers of cases "
                "of each class: they were not tested on the same folds.  The fold "
                "comparisons pair fold j of A with fold j of B; split once (e.g. one "
                "StratifiedKFold per run with a fixed random_state) and reuse the splits.",
                UserWarning, stacklevel=4)


def _actual_totals(batch: Batch) -> np.ndarray:
    if isinstance(batch, ConfusionMatrix):
        return np.column_stack([batch.n_pos, batch.n_neg])
    return batch.counts.sum(axis=2)
