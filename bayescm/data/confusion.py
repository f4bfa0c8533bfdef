"""Validated, immutable, labelled counts.

A :class:`ConfusionMatrix` holds one or many binary confusion matrices (dim
``classifier``, or dim ``slice`` for the subgroups and time windows of one
classifier's predictions, see :mod:`bayescm.data.slices`) with named cells ``tp, fn,
fp, tn``: rows are the actual class
(positive, negative), columns the predicted class (positive, negative).  Sources
disagree on the order of these cells, so nothing in bayescm relies on a position:
every array carries the cell names with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

# validation lives in bayescm.data.counts; its names stay importable from here
from bayescm.data.counts import (
    CELLS,
    MAX_COUNT,
    CountsError,
    check_labels,
    is_boolean,
    resolve_positive,
    unit_names,
    validate_counts,
)

__all__ = ["CELLS", "MAX_COUNT", "UNIT_DIMS", "ConfusionMatrix", "CountsError", "is_boolean",
           "resolve_positive", "unit_names", "unit_of", "validate_counts"]

UNIT_DIMS: tuple[str, ...] = ("classifier", "slice", "model")
"""The batch dims of labelled results: classifiers, the slices of one, or the models of
item-level benchmark results (:class:`~bayescm.ItemResults`)."""


def unit_of(obj: Any) -> str | None:
    """The labelled batch dim (:data:`UNIT_DIMS`) of an xarray object, None without one."""
    return next((d for d in UNIT_DIMS if d in obj.dims), None)


class ConfusionMatrix:
    """One or many binary confusion matrices with named cells.

    ``tp`` and ``fn`` count the actual positives predicted positive and negative;
    ``fp`` and ``tn`` the actual negatives predicted positive and negative.  Each
    argument is a count or a 1-d array of counts, one per classifier (dim
    ``classifier``).  Objects are immutable; every construction path validates.

    :meth:`from_predictions` and :meth:`from_frame` with ``groups`` / ``time`` and
    ``window`` give a *sliced* batch instead: one classifier's cases split by group
    values and time windows, dim ``slice`` (:attr:`unit`), with the level values in
    :attr:`slices` and empty slices kept and flagged in :attr:`empty`.  Every model,
    the exact sampler and the summaries treat the slices as they treat classifiers.

    Parameters
    ----------
    tp, fn, fp, tn
        Non-negative whole numbers (scalars or equal-length 1-d arrays).
    classifier
        Names of the classifiers; default ``"cm"`` (one matrix) or
        ``"cm0", "cm1", ...`` (a batch).

    Raises
    ------
    CountsError
        A subclass of ``ValueError`` naming the offending cell and classifier.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> int(cm.n[0]), cm.classifiers
    (34, ('cm',))
    >>> batch = bcm.ConfusionMatrix(tp=[5, 10], fn=[0, 0], fp=[0, 1], tn=[3, 3],
    ...                             classifier=["1", "2"])
    >>> len(batch)
    2
    """

    __slots__ = ("_classifier", "_counts", "_names", "_slices", "_unit")

    def __init__(self, tp: Any, fn: Any, fp: Any, tn: Any, *, classifier: Any = None) -> None:
        if isinstance(classifier, str):
            classifier = [classifier]
        counts, names = validate_counts({"tp": tp, "fn": fn, "fp": fp, "tn": tn}, classifier)
        object.__setattr__(self, "_counts", counts)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_unit", "classifier")
        object.__setattr__(self, "_slices", None)
        object.__setattr__(self, "_classifier", None)

    @classmethod
    def from_slices(cls, counts: Any, slices: pd.DataFrame, *,
                    classifier: str | None = None) -> ConfusionMatrix:
        """A sliced batch from counts ``(n_slices, 4)`` and its slices frame.

        ``slices`` is indexed by the slice labels (unique strings) with one column
        per level (group factors, ``window``); empty slices (all counts zero) are
        allowed and flagged by :attr:`empty`.  ``classifier`` names the classifier
        whose predictions were sliced (kept as :attr:`classifier`).

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> levels = pd.DataFrame({"site": ["a", "b"]}, index=["site=a", "site=b"])
        >>> cm = bcm.ConfusionMatrix.from_slices([[3, 1, 0, 4], [0, 0, 0, 0]], levels,
        ...                                      classifier="model A")
        >>> cm.classifier, cm.empty.tolist()
        ('model A', [False, True])
        """
        if classifier is not None and not isinstance(classifier, str):
            raise CountsError(f"classifier= names the sliced classifier with a string, got "
                              f"{classifier!r}.")
        if not isinstance(slices, pd.DataFrame):
            raise CountsError(f"slices must be a pandas DataFrame, got {type(slices).__name__}.")
        arr = np.asarray(counts)
        if arr.ndim != 2 or arr.shape[1] != len(CELLS):
            raise CountsError(f"Sliced counts need shape (n_slices, 4), got {arr.shape}.")
        values, names = validate_counts(dict(zip(CELLS, arr.T, strict=True)),
                                        [str(i) for i in slices.index], unit="slice",
                                        allow_empty=True)
        self = object.__new__(cls)
        frame = slices.copy()
        frame.index = pd.Index(names, name="slice")
        for name, value in (("_counts", values), ("_names", names), ("_unit", "slice"),
                            ("_slices", frame), ("_classifier", classifier)):
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ConfusionMatrix is immutable; build a new one instead.")

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        # pickle (a Dask task shipping a batch to a worker) restores the slots; a
        # matrix pickled before slices recorded their classifier has none
        object.__setattr__(self, "_classifier", None)
        for name, value in state[1].items():
            object.__setattr__(self, name, value)

    # -- alternative constructors -------------------------------------------------
    @classmethod
    def from_counts(cls, counts: Mapping[str, Any], *, classifier: Any = None) -> ConfusionMatrix:
        """Build from a mapping with keys ``tp, fn, fp, tn`` (any order, any case)."""
        if not isinstance(counts, Mapping):
            raise TypeError(
                f"counts must be a mapping such as {{'tp': 26, 'fn': 0, 'fp': 2, 'tn': 6}}, "
                f"not {type(counts).__name__}; for a table of counts use "
                "ConfusionMatrix.from_frame."
            )
        lower = {str(k).lower(): v for k, v in counts.items()}
        missing = [c for c in CELLS if c not in lower]
        extra = sorted(set(lower) - set(CELLS))
        if missing or extra:
            raise CountsError(
                f"Counts need exactly the cells {list(CELLS)}; missing {missing}, unknown {extra}."
            )
        return cls(**{c: lower[c] for c in CELLS}, classifier=classifier)

    @classmethod
    def from_frame(cls, frame: Any, *, classifier: str | None = None, y_true: str | None = None,
                   y_pred: str | None = None, positive: Any = None, groups: Any = None,
                   time: str | None = None, window: Any = None) -> ConfusionMatrix:
        """Build a batch from a DataFrame of counts, or tally a frame of predictions.

        Counts: columns ``tp, fn, fp, tn``; the classifier names come from column
        ``classifier`` when given, else from the index.  Column names are matched
        case-insensitively; other columns are ignored.

        Counts by group: ``groups`` (a column name or a list of them), ``time`` and
        ``window`` sum the rows' counts into slices (several rows per slice are
        added up, e.g. daily counts into weekly windows), as :meth:`from_predictions`
        would have counted the underlying cases.  ``classifier``, a column, must then
        hold one name (the sliced matrix keeps it as :attr:`classifier`): the counts
        of several classifiers are never added together.

        Predictions: ``y_true`` and ``y_pred`` name the label columns, one row per
        case; ``groups`` (a column name or a list of them), ``time`` (a datetime
        column) and ``window`` slice the cases as in :meth:`from_predictions`.  The
        frame may be a Dask DataFrame (counted by one groupby on the current Dask
        scheduler; the rows are never gathered).  ``classifier`` is then the name of
        the classifier (kept by a sliced matrix as :attr:`classifier`).

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> df = pd.DataFrame({"tp": [26, 24], "fn": [0, 2], "fp": [2, 2], "tn": [6, 6]},
        ...                   index=["7a", "7b"])
        >>> bcm.ConfusionMatrix.from_frame(df).classifiers
        ('7a', '7b')
        >>> cases = pd.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 0, 1, 1],
        ...                       "site": ["a", "a", "a", "b", "b"]})
        >>> cm = bcm.ConfusionMatrix.from_frame(cases, y_true="y", y_pred="p", groups="site")
        >>> cm.unit, cm.classifiers, cm.counts.tolist()
        ('slice', ('site=a', 'site=b'), [[1, 1, 0, 1], [1, 0, 1, 0]])
        """
        from bayescm.data.slices import frame_matrix

        built = frame_matrix(cls, frame, y_true=y_true, y_pred=y_pred, positive=positive,
                             classifier=classifier, groups=groups, time=time, window=window)
        if built is not None:
            return built
        cols = {str(c).lower(): c for c in frame.columns}
        if classifier is not None:
            if classifier not in frame.columns:
                raise CountsError(f"Column {classifier!r} (classifier names) is not in the frame.")
            names = frame[classifier].astype(str).tolist()
        else:
            names = [str(i) for i in frame.index]
        return cls(**{c: frame[cols[c]].to_numpy() for c in CELLS}, classifier=names)

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_pred: Any,
        *,
        positive: Any = None,
        classifier: str | None = None,
        groups: Any = None,
        time: Any = None,
        window: Any = None,
    ) -> ConfusionMatrix:
        """Tally predictions against true labels, optionally into slices.

        Parameters
        ----------
        y_true
            True labels, any two distinct values.
        y_pred
            Predicted labels of one classifier (same length as ``y_true``), or a
            mapping ``name -> predictions`` for a batch of classifiers.
        positive
            The label that counts as positive.  May be omitted when the labels are
            ``{0, 1}`` or ``{False, True}``.
        classifier
            Name of a single classifier; a sliced matrix keeps it as :attr:`classifier`
            (so does a mapping ``{name: predictions}`` of one classifier).
        groups
            Slice the cases by group: one array/Series of group values (named by
            the Series' name, else ``"group"``), a mapping ``factor name ->
            values``, a DataFrame (one factor per column) or a list of named
            Series; pandas or Dask.  Several factors slice by every combination of
            their values.
        time, window
            Times of the cases (datetimes) and a pandas offset alias (``"7D"``,
            ``"W-MON"``, ``"MS"``): cases are binned into windows, one more level
            named ``window`` (see :mod:`bayescm.data.slices` for where windows start).

        Returns
        -------
        ConfusionMatrix
            Without slicing, dim ``classifier``.  With ``groups`` or ``time``, dim
            ``slice`` (:attr:`unit`): one matrix per combination of the observed
            values of every factor (and every window from the first to the last),
            labelled like ``"sex=F|age=40-60"``; combinations without cases are kept
            with zero counts and flagged in :attr:`empty`; :attr:`slices` gives the
            level values.  Inputs may be Dask Series of one Dask DataFrame.

        Raises
        ------
        CountsError
            For unequal lengths, missing labels or group values (fill them with an
            explicit level such as ``"missing"``, or drop those cases), ``window``
            without ``time``, or several classifiers with slicing (slice each
            classifier's predictions on its own).

        Examples
        --------
        >>> import bayescm as bcm
        >>> cm = bcm.ConfusionMatrix.from_predictions(
        ...     ["ill", "ill", "well", "well"], ["ill", "well", "well", "well"], positive="ill")
        >>> cm.to_dict()
        {'tp': 1, 'fn': 1, 'fp': 0, 'tn': 2}
        >>> import pandas as pd
        >>> cm = bcm.ConfusionMatrix.from_predictions(
        ...     [1, 1, 0, 0], [1, 0, 0, 0], groups={"sex": ["F", "M", "F", "F"],
        ...                                         "age": ["<40", "<40", "<40", "40+"]})
        >>> cm.classifiers
        ('sex=F|age=40+', 'sex=F|age=<40', 'sex=M|age=40+', 'sex=M|age=<40')
        >>> cm.empty.tolist()
        [False, False, True, False]
        >>> weekly = bcm.ConfusionMatrix.from_predictions(
        ...     [1, 0, 1], [1, 0, 0], time=pd.to_datetime(["2024-01-01", "2024-01-02",
        ...                                                "2024-01-20"]), window="7D")
        >>> weekly.slices["window"].dt.strftime("%d %b").tolist()
        ['01 Jan', '08 Jan', '15 Jan']
        """
        from bayescm.data.slices import sliced_predictions

        built = sliced_predictions(cls, y_true, y_pred, positive=positive, classifier=classifier,
                                   groups=groups, time=time, window=window)
        if built is not None:
            return built
        preds = dict(y_pred) if isinstance(y_pred, Mapping) else {classifier or "cm": y_pred}
        truth = check_labels(y_true, "y_true")
        for name, p in preds.items():
            p_arr = check_labels(p, f"predictions of {name!r}")
            if p_arr.shape != truth.shape:
                raise CountsError(
                    f"y_true has {truth.size} labels but the predictions of {name!r} have "
                    f"{p_arr.size}; they must be paired case by case."
                )
            preds[name] = p_arr
        values = np.unique(np.concatenate([truth, *preds.values()]))
        pos = resolve_positive(values, positive)
        rows = {c: [] for c in CELLS}
        is_pos = truth == pos
        for p in preds.values():
            pred_pos = p == pos
            rows["tp"].append(int(np.sum(is_pos & pred_pos)))
            rows["fn"].append(int(np.sum(is_pos & ~pred_pos)))
            rows["fp"].append(int(np.sum(~is_pos & pred_pos)))
            rows["tn"].append(int(np.sum(~is_pos & ~pred_pos)))
        return cls(**rows, classifier=list(preds))

    # -- views ------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Read-only int64 array of shape ``(n_classifiers, 4)`` in cell order ``CELLS``."""
        return self._counts

    @property
    def classifiers(self) -> tuple[str, ...]:
        """Unit names: the classifiers (dim ``classifier``) or the slice labels."""
        return self._names

    @property
    def unit(self) -> str:
        """The batch dim: ``"classifier"``, or ``"slice"`` for a sliced matrix."""
        return self._unit

    @property
    def slices(self) -> pd.DataFrame | None:
        """Level values per slice (index: slice labels; one column per factor, and
        ``window``), None unless :attr:`unit` is ``"slice"``."""
        return None if self._slices is None else self._slices.copy()

    @property
    def classifier(self) -> str | None:
        """The classifier a sliced matrix counts the predictions of (None when not
        given); for an unsliced matrix of one classifier its name, for a batch None."""
        if self._slices is None:
            return self._names[0] if len(self._names) == 1 else None
        return self._classifier

    @property
    def empty(self) -> np.ndarray:
        """Per unit: True where every count is zero (an empty slice, kept and flagged)."""
        return self.n == 0

    def cell(self, name: str) -> np.ndarray:
        """Counts of one named cell, one per classifier."""
        if name not in CELLS:
            raise KeyError(f"Unknown cell {name!r}; cells are {list(CELLS)}.")
        return self._counts[:, CELLS.index(name)]

    tp = property(lambda self: self.cell("tp"), doc="True positives per classifier.")
    fn = property(lambda self: self.cell("fn"), doc="False negatives per classifier.")
    fp = property(lambda self: self.cell("fp"), doc="False positives per classifier.")
    tn = property(lambda self: self.cell("tn"), doc="True negatives per classifier.")

    @property
    def n(self) -> np.ndarray:
        """Total number of cases per classifier."""
        return self._counts.sum(axis=-1)

    @property
    def n_pos(self) -> np.ndarray:
        """Actual positives (tp + fn) per classifier."""
        return self.tp + self.fn

    @property
    def n_neg(self) -> np.ndarray:
        """Actual negatives (fp + tn) per classifier."""
        return self.fp + self.tn

    def pooled(self, name: str = "pooled") -> ConfusionMatrix:
        """All classifiers' counts summed into one matrix.

        When k cross-validation folds partition one test set, every case is one
        test case of the same procedure: pool the folds and fit one matrix.  (When
        fold-to-fold variation matters, use :func:`bayescm.models.folds` instead.)

        Examples
        --------
        >>> import bayescm as bcm
        >>> cms = bcm.ConfusionMatrix(tp=[40, 35], fn=[8, 12], fp=[5, 9], tn=[47, 44])
        >>> cms.pooled().to_dict()
        {'tp': 75, 'fn': 20, 'fp': 14, 'tn': 91}
        """
        return ConfusionMatrix(*self._counts.sum(axis=0), classifier=name)

    def take(self, positions: Sequence[int] | np.ndarray) -> ConfusionMatrix:
        """The units at some positions, as a batch of the same kind (slices stay slices).

        Examples
        --------
        >>> import bayescm as bcm
        >>> cms = bcm.ConfusionMatrix(tp=[1, 2, 3], fn=[1] * 3, fp=[1] * 3, tn=[1] * 3)
        >>> cms.take([2, 0]).classifiers
        ('cm2', 'cm0')
        """
        idx = np.asarray(positions, dtype=int)
        if self._slices is not None:
            return ConfusionMatrix.from_slices(self._counts[idx], self._slices.iloc[idx],
                                               classifier=self._classifier)
        return ConfusionMatrix(*self._counts[idx].T, classifier=[self._names[i] for i in idx])

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[ConfusionMatrix]:
        for name in self._names:
            yield self[name]

    def __getitem__(self, key: int | str) -> ConfusionMatrix:
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError(f"No classifier {key!r}; classifiers are {list(self._names)}.")
            key = self._names.index(key)
        return self.take([key])

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ConfusionMatrix)
            and self._names == other._names
            and self._unit == other._unit
            and self._classifier == other._classifier
            and np.array_equal(self._counts, other._counts)
            and (self._slices is None or self._slices.equals(other._slices))
        )

    def __hash__(self) -> int:
        return hash((self._names, self._counts.tobytes()))

    def to_xarray(self) -> xr.DataArray:
        """Counts as a DataArray with dims ``(classifier, cell)`` or ``(slice, cell)``.

        A sliced matrix carries one non-dimension coordinate per level on dim
        ``slice`` (so it can be written to netCDF; ``da.set_index(slice=[...])``
        makes them a pandas MultiIndex), and the name of the sliced classifier, when
        recorded, in ``attrs["classifier"]``.
        """
        coords: dict[str, Any] = {self._unit: list(self._names), "cell": list(CELLS)}
        if self._slices is not None:
            coords.update({str(c): (self._unit, _level_values(self._slices[c]))
                           for c in self._slices.columns})
        attrs = {} if self._classifier is None else {"classifier": self._classifier}
        return xr.DataArray(self._counts, dims=(self._unit, "cell"), coords=coords,
                            name="counts", attrs=attrs)

    def to_frame(self) -> pd.DataFrame:
        """Counts as a DataFrame, one row per unit, columns ``tp, fn, fp, tn``.

        A sliced matrix is indexed by a pandas MultiIndex of its level values.
        """
        index = (pd.Index(self._names, name=self._unit) if self._slices is None
                 or self._slices.shape[1] == 0 else pd.MultiIndex.from_frame(self._slices))
        return pd.DataFrame(self._counts, index=index, columns=list(CELLS))

    def to_dict(self) -> dict[str, int | list[int]]:
        """Counts as ``{cell: count}`` (one matrix) or ``{cell: [counts]}`` (a batch)."""
        if len(self) == 1:
            return {c: int(v) for c, v in zip(CELLS, self._counts[0], strict=True)}
        return {c: self._counts[:, i].tolist() for i, c in enumerate(CELLS)}

    def __repr__(self) -> str:
        if len(self) == 1 and self._slices is None:
            inner = ", ".join(f"{k}={v}" for k, v in self.to_dict().items())
            return f"ConfusionMatrix({inner}, classifier={self._names[0]!r})"
        of = "" if self._classifier is None else f" of classifier {self._classifier!r}"
        return f"ConfusionMatrix({len(self)} {self._unit}s{of})\n{self.to_frame()}"


def _level_values(column: pd.Series) -> np.ndarray:
    """A level's values for xarray as netCDF stores and gives them back: text as
    fixed-width strings, datetimes as naive ``datetime64[ns]`` (UTC for zoned ones)."""
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        column = column.dt.tz_convert("UTC").dt.tz_localize(None)
    if column.dtype.kind == "M":
        return column.to_numpy().astype("datetime64[ns]")
    values = column.to_numpy()
    if values.dtype == object and all(isinstance(v, str) for v in values):
        return values.astype(str)
    return values
