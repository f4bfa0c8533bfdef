"""Validated, immutable, labelled counts.

A :class:`ConfusionMatrix` holds one or many binary confusion matrices (dim
``classifier``) with named cells ``tp, fn, fp, tn``: rows are the actual class
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

CELLS: tuple[str, ...] = ("tp", "fn", "fp", "tn")
"""Cell names of a binary confusion matrix, in the order used for arrays."""


MAX_COUNT = 2**53
"""The largest count accepted: counts pass through float64, exact up to here."""


class CountsError(ValueError):
    """Invalid counts: the message names the offending field and classifier."""


def is_boolean(raw: Any) -> bool:
    """True for a boolean or an array or sequence holding booleans (not counts)."""
    if isinstance(raw, bool | np.bool_):
        return True
    if isinstance(raw, str | bytes | Mapping):
        return False
    arr = np.asarray(raw, dtype=object) if not isinstance(raw, np.ndarray) else raw
    if arr.dtype == bool:
        return True
    return arr.dtype == object and any(isinstance(x, bool | np.bool_) for x in arr.ravel())


def _where(names: Sequence[str], index: int, unit: str) -> str:
    if len(names) > 1 or unit != "classifier":
        return f"{unit} {names[index]!r}"
    return "the confusion matrix"


def unit_names(names: Any, n: int, unit: str = "classifier") -> tuple[str, ...]:
    """``n`` unique unit names as strings (default ``cm``, or ``cm0, cm1, ...``)."""
    if names is None:
        return ("cm",) if n == 1 else tuple(f"cm{i}" for i in range(n))
    if isinstance(names, str):
        names = [names]
    names = tuple(str(x) for x in names)
    if len(names) != n:
        raise CountsError(f"{len(names)} {unit} names given for {n} sets of counts.")
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise CountsError(f"{unit.capitalize()} names must be unique; repeated: {dup}.")
    return names


def validate_counts(
    values: Mapping[str, Any],
    names: Sequence[str] | None = None,
    *,
    kind: str = "cell",
    unit: str = "classifier",
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Check named count fields and stack them into an integer array.

    Parameters
    ----------
    values
        Field name -> scalar or 1-d array of counts (one entry per classifier).
    names
        Classifier names; defaults to ``"cm"`` for one matrix, ``"cm0", "cm1", ...``
        for a batch.
    kind
        What a field is called in error messages.
    unit
        What a row is called in error messages (``classifier``, ``population``).

    Returns
    -------
    counts, names
        ``counts`` has shape ``(n_classifiers, n_fields)`` and dtype int64.

    Raises
    ------
    CountsError
        For NaN/inf, negative, non-integer, wrongly shaped or all-zero counts,
        naming the field and the classifier.
    """
    fields = list(values)
    arrays = {}
    for field in fields:
        raw = values[field]
        try:
            if is_boolean(raw):
                raise CountsError(
                    f"{kind} {field!r} is a boolean ({raw!r}); booleans are not counts. Give "
                    "whole numbers (tally the True values first, e.g. with sum()).")
            arr = np.asarray(raw, dtype=float)
        except (TypeError, ValueError, OverflowError) as err:
            if isinstance(err, CountsError):
                raise
            raise CountsError(
                f"{kind} {field!r} must be a number or a 1-d array of numbers, got {raw!r}."
            ) from err
        if arr.ndim > 1:
            raise CountsError(
                f"{kind} {field!r} has shape {arr.shape}; give a number or a 1-d array "
                "with one count per classifier."
            )
        arrays[field] = np.atleast_1d(arr)
    sizes = {f: a.size for f, a in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise CountsError(
            f"{kind}s have different lengths {sizes}; every {kind} needs one count per {unit}."
        )
    n = next(iter(sizes.values()))
    if n == 0:
        raise CountsError("No counts given: every field is empty.")
    names = unit_names(names, n, unit)
    for field, arr in arrays.items():
        for i, v in enumerate(arr):
            where = _where(names, i, unit)
            if not np.isfinite(v):
                raise CountsError(f"{kind} {field!r} of {where} is {v}; counts must be finite.")
            if v < 0:
                raise CountsError(
                    f"{kind} {field!r} of {where} is negative ({v:g}); counts are >= 0."
                )
            if v > MAX_COUNT:
                raise CountsError(
                    f"{kind} {field!r} of {where} is {v:g}, above the largest count bayescm "
                    f"holds exactly (2**53 = {MAX_COUNT:.4g}); no real test set is this large."
                )
            if v != np.floor(v):
                raise CountsError(
                    f"{kind} {field!r} of {where} is not a whole number ({v:g}); "
                    "give counts, not rates (multiply rates by the number of cases)."
                )
    counts = np.stack([arrays[f] for f in fields], axis=-1).astype(np.int64)
    for i, total in enumerate(counts.sum(axis=-1)):
        if total == 0:
            raise CountsError(
                f"All counts of {_where(names, i, unit)} are zero: it has no data, and an empty "
                "table carries no information; drop it or give its counts."
            )
    counts.setflags(write=False)
    return counts, names


class ConfusionMatrix:
    """One or many binary confusion matrices with named cells.

    ``tp`` and ``fn`` count the actual positives predicted positive and negative;
    ``fp`` and ``tn`` the actual negatives predicted positive and negative.  Each
    argument is a count or a 1-d array of counts, one per classifier (dim
    ``classifier``).  Objects are immutable; every construction path validates.

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

    __slots__ = ("_counts", "_names")

    def __init__(self, tp: Any, fn: Any, fp: Any, tn: Any, *, classifier: Any = None) -> None:
        if isinstance(classifier, str):
            classifier = [classifier]
        counts, names = validate_counts({"tp": tp, "fn": fn, "fp": fp, "tn": tn}, classifier)
        object.__setattr__(self, "_counts", counts)
        object.__setattr__(self, "_names", names)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ConfusionMatrix is immutable; build a new one instead.")

    # -- alternative constructors -------------------------------------------------
    @classmethod
    def from_counts(cls, counts: Mapping[str, Any], *, classifier: Any = None) -> ConfusionMatrix:
        """Build from a mapping with keys ``tp, fn, fp, tn`` (any order, any case)."""
        lower = {str(k).lower(): v for k, v in counts.items()}
        missing = [c for c in CELLS if c not in lower]
        extra = sorted(set(lower) - set(CELLS))
        if missing or extra:
            raise CountsError(
                f"Counts need exactly the cells {list(CELLS)}; missing {missing}, unknown {extra}."
            )
        return cls(**{c: lower[c] for c in CELLS}, classifier=classifier)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, classifier: str | None = None) -> ConfusionMatrix:
        """Build a batch from a DataFrame with columns ``tp, fn, fp, tn``.

        The classifier names come from column ``classifier`` when given, else from
        the index.  Column names are matched case-insensitively; other columns are
        ignored.

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> df = pd.DataFrame({"tp": [26, 24], "fn": [0, 2], "fp": [2, 2], "tn": [6, 6]},
        ...                   index=["7a", "7b"])
        >>> bcm.ConfusionMatrix.from_frame(df).classifiers
        ('7a', '7b')
        """
        if not isinstance(frame, pd.DataFrame):
            raise CountsError(f"from_frame needs a pandas DataFrame, got {type(frame).__name__}.")
        if len(frame) == 0:
            raise CountsError("The DataFrame has no rows.")
        cols = {str(c).lower(): c for c in frame.columns}
        missing = [c for c in CELLS if c not in cols]
        if missing:
            raise CountsError(
                f"DataFrame lacks column(s) {missing}; it needs {list(CELLS)} "
                f"(has {list(frame.columns)})."
            )
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
    ) -> ConfusionMatrix:
        """Tally predictions against true labels.

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
            Name of a single classifier.

        Examples
        --------
        >>> import bayescm as bcm
        >>> cm = bcm.ConfusionMatrix.from_predictions(
        ...     ["ill", "ill", "well", "well"], ["ill", "well", "well", "well"], positive="ill")
        >>> cm.to_dict()
        {'tp': 1, 'fn': 1, 'fp': 0, 'tn': 2}
        """
        preds = dict(y_pred) if isinstance(y_pred, Mapping) else {classifier or "cm": y_pred}
        truth = _labels(y_true, "y_true")
        for name, p in preds.items():
            p_arr = _labels(p, f"predictions of {name!r}")
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
        """Classifier names (coords of dim ``classifier``)."""
        return self._names

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
        row = self._counts[key]
        return ConfusionMatrix(*row, classifier=self._names[key])

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ConfusionMatrix)
            and self._names == other._names
            and np.array_equal(self._counts, other._counts)
        )

    def __hash__(self) -> int:
        return hash((self._names, self._counts.tobytes()))

    def to_xarray(self) -> xr.DataArray:
        """Counts as a DataArray with dims ``(classifier, cell)``."""
        return xr.DataArray(
            self._counts,
            dims=("classifier", "cell"),
            coords={"classifier": list(self._names), "cell": list(CELLS)},
            name="counts",
        )

    def to_frame(self) -> pd.DataFrame:
        """Counts as a DataFrame, one row per classifier, columns ``tp, fn, fp, tn``."""
        return pd.DataFrame(self._counts, index=pd.Index(self._names, name="classifier"),
                            columns=list(CELLS))

    def to_dict(self) -> dict[str, int | list[int]]:
        """Counts as ``{cell: count}`` (one matrix) or ``{cell: [counts]}`` (a batch)."""
        if len(self) == 1:
            return {c: int(v) for c, v in zip(CELLS, self._counts[0], strict=True)}
        return {c: self._counts[:, i].tolist() for i, c in enumerate(CELLS)}

    def __repr__(self) -> str:
        if len(self) == 1:
            inner = ", ".join(f"{k}={v}" for k, v in self.to_dict().items())
            return f"ConfusionMatrix({inner}, classifier={self._names[0]!r})"
        return f"ConfusionMatrix({len(self)} classifiers)\n{self.to_frame()}"


def _labels(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise CountsError(f"{what} must be a 1-d sequence of labels, got shape {arr.shape}.")
    if arr.size == 0:
        raise CountsError(f"{what} is empty.")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise CountsError(f"{what} contains NaN; drop or impute missing labels first.")
    if arr.dtype == object and pd.isna(arr).any():
        raise CountsError(f"{what} contains missing labels; drop or impute them first.")
    return arr


def resolve_positive(labels: np.ndarray, positive: Any) -> Any:
    """Choose the positive label among at most two observed labels.

    Without ``positive``, labels ``{0, 1}`` and ``{False, True}`` take 1/True as
    positive; any other labelling needs an explicit choice.
    """
    labels = np.asarray(labels)
    if labels.size > 2:
        raise CountsError(
            f"Binary classification needs at most two labels; found {labels.size}: "
            f"{labels.tolist()[:10]}."
        )
    if positive is not None:
        if positive not in labels.tolist() and labels.size == 2:
            raise CountsError(f"positive={positive!r} is not one of the labels {labels.tolist()}.")
        return positive
    if set(labels.tolist()) <= {0, 1}:
        return 1
    raise CountsError(
        f"Cannot tell which of the labels {labels.tolist()} is positive; pass positive=..."
    )
