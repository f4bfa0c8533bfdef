r"""Cross-validation results of several algorithms: :class:`FoldResults`.

k-fold cross-validation, repeated ``runs`` times, of algorithms on data sets gives one
confusion matrix per (algorithm, data set, run, fold).  :class:`FoldResults` holds them,
checked, as one batch per (algorithm, data set) -- binary
:class:`~bayescm.ConfusionMatrix` or K-class :class:`~bayescm.MulticlassConfusionMatrix`
-- ordered *runs × folds* (run 1's folds, then run 2's, ...), the order
:func:`bayescm.analysis.compare_folds` and :func:`bayescm.analysis.compare_datasets`
expect: :meth:`~FoldResults.pair` and :meth:`~FoldResults.by_dataset` hand them over.

Built from a table of counts (:meth:`~FoldResults.from_frame`) or tallied from the
out-of-fold predictions (:meth:`~FoldResults.from_predictions`, pandas or Dask: a Dask
frame is reduced to counts by one computation, its rows never gathered).  Every
algorithm must have every fold of every data set, every run the same number of folds
:math:`k \ge 2` (the correlated t-test's correlation is :math:`\rho = 1/k`), and the
algorithms of one data set the same classes; the messages say what is wrong.

Examples
--------
>>> import pandas as pd, bayescm as bcm
>>> df = pd.DataFrame({"algorithm": ["a"] * 3 + ["b"] * 3, "fold": [0, 1, 2] * 2,
...                    "tp": [40, 42, 41, 38, 37, 40], "fn": [10, 8, 9, 12, 13, 10],
...                    "fp": [5, 6, 4, 7, 8, 6], "tn": [45, 44, 46, 43, 42, 44]})
>>> res = bcm.FoldResults.from_frame(df)
>>> res.algorithms, res.n_folds, res.n_runs
(('a', 'b'), 3, 1)
>>> cms_a, cms_b = res.pair("a", "b")
>>> cms_a.classifiers
('fold=0', 'fold=1', 'fold=2')
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.data.counts import CountsError
from bayescm.data.fold_frames import (
    ONE,
    Batch,
    check_dataset,
    check_paired,
    check_rows,
    codes,
    columns,
    matrices_of,
    plain,
    roles,
    sorted_values,
    standard,
    units,
)
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.data.slices import is_dask

__all__ = ["FoldResults"]

_A, _D, _R, _F, _T, _P, _N = "algorithm", "dataset", "run", "fold", "true", "pred", "n"


class FoldResults:
    r"""Per-fold confusion matrices of algorithms on data sets (immutable, validated).

    Parameters
    ----------
    matrices
        ``{algorithm: batch}`` (one data set) or ``{(algorithm, data set): batch}``:
        each batch one confusion matrix per fold, runs × folds in order, binary or
        K-class; the algorithms of a data set have the same number of folds and the
        same classes.
    runs
        Repetitions of k-fold cross-validation: one number, or ``{data set: runs}``.

    Attributes
    ----------
    algorithms, datasets
        Names in order of appearance (sorted from a Dask frame).
    n_folds, n_runs
        Folds per run (k) and runs: a number when every data set has the same, else
        ``{data set: number}``.

    Examples
    --------
    >>> import bayescm as bcm
    >>> a = bcm.ConfusionMatrix(tp=[9, 8], fn=[1, 2], fp=[2, 1], tn=[8, 9])
    >>> b = bcm.ConfusionMatrix(tp=[7, 8], fn=[3, 2], fp=[2, 3], tn=[8, 7])
    >>> res = bcm.FoldResults({"a": a, "b": b})
    >>> res.datasets, res.n_folds, res.matrices("b") is b
    (('data',), 2, True)
    """

    __slots__ = ("_algorithms", "_datasets", "_runs", "_tables")

    def __init__(self, matrices: Mapping[Any, Batch], *, runs: int | Mapping[str, int] = 1
                 ) -> None:
        if not isinstance(matrices, Mapping) or not matrices:
            raise TypeError("FoldResults takes {algorithm: per-fold batch} or {(algorithm, "
                            "data set): batch}; build it with FoldResults.from_frame or "
                            "from_predictions.")
        tables: dict[tuple[str, str], Batch] = {}
        for key, batch in matrices.items():
            alg, ds = key if isinstance(key, tuple) else (key, ONE)
            if not isinstance(batch, ConfusionMatrix | MulticlassConfusionMatrix):
                raise TypeError(f"The folds of {alg!r} on {ds!r} must be a ConfusionMatrix or "
                                f"MulticlassConfusionMatrix batch, got {type(batch).__name__}.")
            tables[(str(alg), str(ds))] = batch
        algorithms = tuple(dict.fromkeys(a for a, _ in tables))
        datasets = tuple(dict.fromkeys(d for _, d in tables))
        n_runs = {d: int(runs[d] if isinstance(runs, Mapping) else runs) for d in datasets}
        for ds in datasets:
            lacking = [a for a in algorithms if (a, ds) not in tables]
            if lacking:
                raise CountsError(
                    f"Algorithm(s) {lacking} have no results on data set {ds!r}: every "
                    "algorithm needs every data set (comparisons are paired); drop the data "
                    "set or add the results.")
            check_dataset(ds, [(a, tables[(a, ds)]) for a in algorithms], n_runs[ds])
        object.__setattr__(self, "_tables", tables)
        object.__setattr__(self, "_algorithms", algorithms)
        object.__setattr__(self, "_datasets", datasets)
        object.__setattr__(self, "_runs", n_runs)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FoldResults objects are immutable")

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_predictions(cls, df: Any, y_true: str = "y_true", y_pred: str | Sequence[str] =
                         "y_pred", fold: str = "fold", run: str | None = None,
                         algorithm: str | None = "algorithm", dataset: str | None = None,
                         labels: Sequence[Hashable] | Mapping[str, Sequence[Hashable]] |
                         None = None, positive: Any = None) -> FoldResults:
        """Tally out-of-fold predictions, one row per case (and algorithm), into matrices.

        Parameters
        ----------
        df
            A pandas or Dask DataFrame; a Dask frame is counted by one groupby and
            one computation.
        y_true, y_pred
            Columns of the true and the predicted labels.  Long data: ``y_pred``
            one column and ``algorithm`` the column naming the algorithm.  Wide
            data: ``y_pred`` a list of columns, one per algorithm (named by them).
        fold, run, dataset
            Columns of the fold, the repetition (None: one run) and the data set
            (None: one data set, named ``"data"``).  Runs and folds are ordered by
            their values; a fold's id may repeat across runs.
        algorithm
            Column naming the algorithm of each row (long data); None: each ``y_pred``
            column is an algorithm, named by the column.
        labels
            The classes in order (for every data set, or ``{data set: labels}``);
            default those seen in the data set.  Data with labels outside are an error.
        positive
            The positive label: a data set with two classes becomes binary matrices
            (``tp, fn, fp, tn``) when it is given or the labels are 0/1 or booleans;
            otherwise K-class matrices.

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> df = pd.DataFrame({"fold": [0, 0, 1, 1] * 2, "algorithm": ["a"] * 4 + ["b"] * 4,
        ...                    "y_true": [1, 0, 1, 0] * 2, "y_pred": [1, 0, 0, 0, 1, 1, 1, 0]})
        >>> res = bcm.FoldResults.from_predictions(df)
        >>> res.matrices("b").counts.tolist()
        [[1, 0, 1, 0], [1, 0, 0, 1]]
        """
        preds = [y_pred] if isinstance(y_pred, str) else list(y_pred)
        wide = not isinstance(y_pred, str) or algorithm is None  # algorithms named by column
        if not isinstance(y_pred, str) and algorithm is not None and \
                algorithm in getattr(df, "columns", ()):
            raise CountsError(f"y_pred names {len(preds)} columns (wide data, one per "
                              f"algorithm) but the frame also has an {algorithm!r} column "
                              "(long data); pass algorithm=None for wide data or one y_pred "
                              "column for long data.")
        keys = roles(dataset=dataset, run=run, fold=fold,
                      algorithm=None if wide else algorithm)
        if not preds:
            raise CountsError("y_pred names no column: give the column of predicted labels "
                              "(long data) or one column per algorithm (wide data).")
        named = [*keys.values(), y_true, *preds]
        if len(set(named)) < len(named):
            twice = sorted({str(c) for c in named if named.count(c) > 1})
            raise CountsError(f"Each role needs its own column; {twice} named twice among "
                              f"y_true={y_true!r}, y_pred={y_pred!r} and {keys}.")
        columns(df, [*keys.values(), y_true, *preds], "from_predictions")
        counted = []
        for col in preds:
            by = [*keys.values(), y_true, col]
            # pandas keeps the order of appearance; Dask's counts are sorted below
            grouped = (df[by].groupby(by, dropna=False, observed=True).size(split_out=1)
                       if is_dask(df) else
                       df[by].groupby(by, dropna=False, observed=True, sort=False).size())
            counted.append(grouped)
        if is_dask(df):
            import dask  # only when the user handed a Dask frame

            counted = [c.sort_index() for c in dask.compute(*counted)]
        parts = []
        for col, sizes in zip(preds, counted, strict=True):
            part = sizes.rename(_N).reset_index()
            part = part.rename(columns={v: k for k, v in keys.items()} | {y_true: _T, col: _P})
            if wide:
                part[_A] = str(col)
            parts.append(part)
        long = standard(pd.concat(parts, ignore_index=True))
        return cls._from_long(long, labels=labels, positive=positive, runs_given=run)

    @classmethod
    def from_frame(cls, df: Any, fold: str = "fold", run: str | None = None,
                   algorithm: str = "algorithm", dataset: str | None = None, *,
                   actual: str = "actual", labels: Sequence[Hashable] |
                   Mapping[str, Sequence[Hashable]] | None = None) -> FoldResults:
        """Matrices from a table of counts, pandas or Dask (computed once).

        Binary: one row per (algorithm, data set, run, fold) with columns ``tp, fn,
        fp, tn`` (any case).  K-class: crosstab rows as
        :meth:`bayescm.MulticlassConfusionMatrix.from_frame` reads them, one row per
        (algorithm, data set, run, fold, actual class): the actual class in column
        ``actual`` and one column of counts per predicted class (every other column;
        columns matched to classes by label, blank cells zero).

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> df = pd.DataFrame({"algorithm": ["a"] * 4 + ["b"] * 4, "fold": [0, 0, 1, 1] * 2,
        ...                    "actual": ["x", "y"] * 4, "x": [5, 1, 4, 2, 3, 1, 5, 0],
        ...                    "y": [0, 4, 1, 3, 2, 4, 0, 5]})
        >>> res = bcm.FoldResults.from_frame(df)
        >>> res.matrices("a").counts[1].tolist()
        [[4, 1], [2, 3]]
        """
        keys = roles(dataset=dataset, run=run, fold=fold, algorithm=algorithm)
        have = list(getattr(df, "columns", []))
        cells = {str(c).lower(): c for c in have}
        binary = set(CELLS) <= set(cells)
        if not binary and actual not in have:
            raise CountsError(
                f"from_frame needs columns tp, fn, fp, tn (binary) or an {actual!r} column "
                f"with one column per predicted class (K-class crosstab rows); the columns are "
                f"{[str(c) for c in have][:20]}.")
        value_cols = [cells[c] for c in CELLS] if binary else \
            [c for c in have if c not in (*keys.values(), actual)]
        frame = columns(df, [*keys.values(), *([] if binary else [actual]), *value_cols],
                         "from_frame")
        if is_dask(frame):
            frame = frame.compute()
        frame = frame.rename(columns={v: k for k, v in keys.items()})
        ids = list(keys)
        dup = frame.duplicated(subset=ids if binary else [*ids, actual], keep=False)
        if dup.any():
            rows = [plain(x) for x in frame.index[dup.to_numpy()][:5]]
            raise CountsError(f"Duplicate rows for the same {', '.join(keys.values())}"
                              f"{'' if binary else ' and ' + actual}: rows {rows}; give each "
                              "fold once (name the run column with run= for repeated "
                              "cross-validation).")
        values = frame[value_cols].apply(pd.to_numeric, errors="coerce")
        if not binary:
            values = values.fillna(0)  # a crosstab's blank cell: no such case
        bad = values.isna().any(axis=1).to_numpy() | (values < 0).any(axis=1).to_numpy()
        bad |= (values != np.round(values)).any(axis=1).to_numpy()
        if bad.any():
            raise CountsError(f"Counts must be whole numbers >= 0; rows "
                              f"{[plain(x) for x in frame.index[bad][:5]]} are not.")
        base = frame[ids]
        if binary:  # the four cells as (true, predicted) pairs of labels 1 (positive), 0
            pairs = {"tp": (1, 1), "fn": (1, 0), "fp": (0, 1), "tn": (0, 0)}
            long = pd.concat([base.assign(**{_T: t, _P: p, _N: values[cells[c]].to_numpy()})
                              for c, (t, p) in pairs.items()], ignore_index=True)
            return cls._from_long(standard(long), labels=None, positive=1, runs_given=run)
        check_rows(frame, ids, actual)
        long = pd.concat([base.assign(**{_T: frame[actual].to_numpy(), _P: col,
                                         _N: values[col].to_numpy()})
                          for col in value_cols], ignore_index=True)
        return cls._from_long(standard(long), labels=labels, positive=None, runs_given=run,
                              by_text=True)

    @classmethod
    def _from_long(cls, long: pd.DataFrame, *, labels: Any, positive: Any, runs_given: Any,
                   by_text: bool = False) -> FoldResults:
        """Batches from counts in long form: algorithm, dataset, run, fold, true, pred, n."""
        for col in (_A, _D, _R, _F, _T, _P):
            if long[col].isna().any():
                what = {_T: "true label", _P: "predicted label"}.get(col, col)
                raise CountsError(f"Some rows have no {what} ({col!r} column): drop them or "
                                  "fill them in first.")
        matrices: dict[tuple[str, str], Batch] = {}
        runs: dict[str, int] = {}
        for ds, part in long.groupby(_D, sort=False):
            given = labels.get(ds) if isinstance(labels, Mapping) else labels
            classes = list(given) if given is not None else sorted_values(
                part[_T] if by_text else pd.concat([part[_T], part[_P]]))
            part = codes(part, classes, ds, by_text)
            order = units(part, ds)
            names = [f"run={r}|fold={f}" if runs_given is not None else f"fold={f}"
                     for r, f in order]
            runs[ds] = part[_R].nunique()
            for alg, rows in part.groupby(_A, sort=False):
                matrices[(alg, ds)] = matrices_of(rows, order, names, classes, positive, ds)
        check_paired(matrices)
        return cls(matrices, runs=runs)

    # -- views ------------------------------------------------------------------
    @property
    def algorithms(self) -> tuple[str, ...]:
        """The algorithms, in order of appearance."""
        return self._algorithms

    @property
    def datasets(self) -> tuple[str, ...]:
        """The data sets, in order of appearance (``("data",)`` without a column)."""
        return self._datasets

    @property
    def n_runs(self) -> int | dict[str, int]:
        """Repetitions of k-fold cross-validation (``{data set: runs}`` when they differ)."""
        return _one_or_all(self._runs)

    @property
    def n_folds(self) -> int | dict[str, int]:
        """Folds per run, k (``{data set: k}`` when they differ)."""
        return _one_or_all({d: len(self._tables[(self._algorithms[0], d)]) // self._runs[d]
                            for d in self._datasets})

    def matrices(self, algorithm: str, dataset: str | None = None) -> Batch:
        """One algorithm's per-fold matrices on one data set, runs × folds in order."""
        if algorithm not in self._algorithms:
            raise KeyError(f"No algorithm {algorithm!r}; the algorithms are "
                           f"{list(self._algorithms)}.")
        return self._tables[(algorithm, self._dataset(dataset))]

    def pair(self, a: str, b: str, dataset: str | None = None) -> tuple[Batch, Batch]:
        """``(cms_a, cms_b)`` on one data set: the arguments of
        :func:`bayescm.analysis.compare_folds` (with ``runs=`` :meth:`runs_of`)."""
        return self.matrices(a, dataset), self.matrices(b, dataset)

    def by_dataset(self, algorithm: str) -> dict[str, Batch]:
        """``{data set: per-fold matrices}`` of one algorithm: what
        :func:`bayescm.analysis.compare_datasets` takes for A or B."""
        return {d: self.matrices(algorithm, d) for d in self._datasets}

    def runs_of(self, dataset: str | None = None) -> int:
        """The repetitions of cross-validation on one data set."""
        return self._runs[self._dataset(dataset)]

    def to_frame(self) -> pd.DataFrame:
        """One row per (algorithm, data set, fold): binary cells, or K-class counts
        flattened as ``actual|predicted`` columns."""
        frames = []
        for (alg, ds), batch in self._tables.items():
            if isinstance(batch, ConfusionMatrix):
                cols = list(CELLS)
                values = batch.counts
            else:
                cols = [f"{t}|{p}" for t in batch.labels for p in batch.labels]
                values = batch.counts.reshape(len(batch), -1)
            frames.append(pd.DataFrame(values, columns=cols).assign(
                algorithm=alg, dataset=ds, fold=list(batch.classifiers)))
        out = pd.concat(frames, ignore_index=True)
        return out.set_index(["algorithm", "dataset", "fold"])

    def overview(self) -> pd.DataFrame:
        """One row per data set: its classes, runs, folds per run and cases per run.

        Examples
        --------
        >>> import bayescm as bcm
        >>> a = bcm.ConfusionMatrix(tp=[9, 8], fn=[1, 2], fp=[2, 1], tn=[8, 9])
        >>> table = bcm.FoldResults({"a": a, "b": a}).overview()
        >>> table.loc["data"].astype(str).tolist()
        ['binary', '1', '2', '40']
        """
        rows = []
        for ds in self._datasets:
            batch = self._tables[(self._algorithms[0], ds)]
            labels = getattr(batch, "labels", None)
            rows.append({"dataset": ds, "classes": "binary" if labels is None else
                         f"K={len(labels)}", "runs": self._runs[ds],
                         "folds": len(batch) // self._runs[ds],
                         "cases": int(batch.n.sum()) // self._runs[ds]})
        return pd.DataFrame(rows).set_index("dataset")

    def _repr_html_(self) -> str:
        return f"<p>{self!r}</p>{self.overview().to_html()}"

    def _dataset(self, dataset: str | None) -> str:
        if dataset is None:
            if len(self._datasets) > 1:
                raise ValueError(f"These results hold {len(self._datasets)} data sets "
                                 f"{list(self._datasets)}; name one with dataset=.")
            return self._datasets[0]
        if str(dataset) not in self._datasets:
            raise KeyError(f"No data set {dataset!r}; the data sets are {list(self._datasets)}.")
        return str(dataset)

    def __repr__(self) -> str:
        return (f"FoldResults({len(self._algorithms)} algorithms {list(self._algorithms)}, "
                f"{len(self._datasets)} data set(s), {self.n_runs} run(s) × "
                f"{self.n_folds} folds)")


def _one_or_all(values: dict[str, int]) -> int | dict[str, int]:
    return next(iter(values.values())) if len(set(values.values())) == 1 else dict(values)
