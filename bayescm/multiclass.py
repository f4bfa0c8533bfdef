"""Validated, immutable, labelled K-class confusion matrices.

A :class:`MulticlassConfusionMatrix` holds one or many K×K confusion matrices with
dims ``classifier`` × ``actual`` × ``predicted``: entry ``[c, i, j]`` counts the cases
of actual class ``labels[i]`` that classifier ``c`` predicted as ``labels[j]``.  The
class labels travel with the counts as coords of both ``actual`` and ``predicted``
(any hashable values, K >= 2), so nothing downstream relies on a position: tables
whose columns come in another order are re-ordered by label, never by place.

Each class seen one-vs-rest is a binary confusion matrix (:meth:`one_vs_rest`), and a
K = 2 matrix *is* a binary one once the positive label is named
(:meth:`~MulticlassConfusionMatrix.to_binary`, :meth:`~MulticlassConfusionMatrix.from_binary`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data import CELLS, MAX_COUNT, ConfusionMatrix, CountsError

__all__ = ["DIMS", "MulticlassConfusionMatrix", "align_predicted", "one_vs_rest_cells"]

DIMS: tuple[str, str, str] = ("classifier", "actual", "predicted")
"""Dims of the counts: classifiers, actual class (rows), predicted class (columns)."""

def one_vs_rest_cells(cells: Any, *, axes: tuple[int, int] = (-2, -1),
                      class_axis: int = -1) -> dict[str, np.ndarray]:
    r"""The binary cells of every class against the rest, from K×K tables.

    With :math:`C` the table (rows actual, columns predicted), :math:`r_k` its row and
    :math:`c_k` its column totals and :math:`n` its total, class :math:`k` has

    .. math::

        tp_k = C_{kk},\quad fn_k = r_k - C_{kk},\quad fp_k = c_k - C_{kk},\quad
        tn_k = n - r_k - c_k + C_{kk}.

    Works on counts and on cell probabilities (any other dims, e.g. chain, draw,
    classifier), vectorised.

    Parameters
    ----------
    cells
        Array whose ``axes`` are (actual, predicted), both of length K.
    axes
        Positions of the actual and predicted axes.
    class_axis
        Where the class axis (length K) goes in the results; the other axes keep
        their order.

    Returns
    -------
    dict
        ``{"tp", "fn", "fp", "tn"}`` -> float arrays.

    Examples
    --------
    >>> from bayescm.multiclass import one_vs_rest_cells
    >>> ovr = one_vs_rest_cells([[5, 1, 0], [2, 7, 1], [0, 3, 9]])
    >>> {k: v.tolist() for k, v in ovr.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'tp': [5.0, 7.0, 9.0], 'fn': [1.0, 3.0, 3.0], 'fp': [2.0, 4.0, 1.0],
     'tn': [20.0, 14.0, 15.0]}
    """
    arr = np.moveaxis(np.asarray(cells, dtype=float), axes, (0, 1))
    k = arr.shape[0]
    if arr.shape[1] != k:
        raise ValueError(f"The class axes have lengths {arr.shape[:2]}; they must be equal.")
    # class axis first: the sums over classes add K contiguous slabs
    diag = arr[np.arange(k), np.arange(k)]
    actual, predicted = arr.sum(axis=1), arr.sum(axis=0)
    n = actual.sum(axis=0)
    # n - r - c + d sums the cells outside row and column k: >= 0, up to rounding
    tn = np.maximum(n - actual - predicted + diag, 0.0)
    out = {"tp": diag, "fn": actual - diag, "fp": predicted - diag, "tn": tn}
    return {c: np.moveaxis(v, 0, class_axis) for c, v in out.items()}


# -- validation -------------------------------------------------------------------------

def _label(value: Any, what: str) -> Hashable:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NaT:
        raise CountsError(f"{what} contains a missing label ({value!r}); drop or name it first.")
    try:
        hash(value)
    except TypeError as err:
        raise CountsError(f"{what}: labels must be hashable, got {value!r}.") from err
    return value


def _check_labels(labels: Any, k: int | None, what: str = "labels") -> tuple[Hashable, ...]:
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | np.ndarray | pd.Index):
        raise CountsError(f"{what} must be a sequence of class labels, got {labels!r}.")
    out = tuple(_label(x, what) for x in labels)
    if k is not None and len(out) != k:
        raise CountsError(f"{len(out)} {what} given for {k} classes; give one label per class.")
    if len(out) < 2:
        raise CountsError(
            f"A multiclass confusion matrix needs at least two classes; {what} has {len(out)}. "
            "Pass labels= with every class, including those nobody predicted.")
    if len(set(out)) != len(out):
        seen: list = []
        dup = [x for x in out if x in seen or seen.append(x)]
        raise CountsError(f"{what} must be unique; repeated: {dup}.")
    return out


def _check_names(names: Any, c: int) -> tuple[str, ...]:
    if names is None:
        return ("cm",) if c == 1 else tuple(f"cm{i}" for i in range(c))
    if isinstance(names, str):
        names = [names]
    names = tuple(str(x) for x in names)
    if len(names) != c:
        raise CountsError(f"{len(names)} classifier names given for {c} confusion matrices.")
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise CountsError(f"Classifier names must be unique; repeated: {dup}.")
    return names


def _has_bool(raw: Any) -> bool:
    if isinstance(raw, np.ndarray):
        return raw.dtype == bool or (raw.dtype == object
                                     and any(isinstance(x, bool | np.bool_) for x in raw.flat))
    if isinstance(raw, bool | np.bool_):
        return True
    try:
        arr = np.asarray(raw, dtype=object)
    except ValueError:  # ragged: the float conversion reports it
        return False
    return any(isinstance(x, bool | np.bool_) for x in arr.flat)


def _validate(raw: Any, labels: Any, names: Any
              ) -> tuple[np.ndarray, tuple[Hashable, ...], tuple[str, ...]]:
    """Counts (C, K, K) int64 read-only, labels and classifier names, or a CountsError."""
    if _has_bool(raw):
        raise CountsError("The counts contain booleans; booleans are not counts. Give whole "
                          "numbers (tally the True values first).")
    try:
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise CountsError(
            "Counts must be a K×K array of numbers (rows actual, columns predicted) or a "
            f"batch of them (classifier × K × K); could not read {type(raw).__name__}: {err}"
        ) from err
    if arr.size == 0:
        raise CountsError("No counts given: the matrix is empty.")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise CountsError(f"Counts have shape {arr.shape}; give K×K (one matrix) or "
                          "classifier × K × K (a batch).")
    c, k, k2 = arr.shape
    if k != k2:
        raise CountsError(f"The matrix is not square: {k} actual classes (rows) but {k2} "
                          "predicted classes (columns); both run over the same K labels.")
    labels = _check_labels(range(k) if labels is None else labels, k)
    names = _check_names(names, c)

    def where(mask: np.ndarray) -> str:
        i, a, p = (int(x[0]) for x in np.nonzero(mask))
        unit = f"classifier {names[i]!r}" if c > 1 else "the confusion matrix"
        return (f"cell (actual={labels[a]!r}, predicted={labels[p]!r}) of {unit} is "
                f"{arr[i, a, p]:g}")

    for mask, why in (
        (~np.isfinite(arr), "; counts must be finite (a pivot table's empty cells? fill them "
                            "with 0)."),
        (arr < 0, "; counts are >= 0."),
        (arr > MAX_COUNT, f", above the largest count held exactly (2**53 = {MAX_COUNT:.4g})."),
        (arr != np.floor(arr), ", not a whole number; give counts, not rates."),
    ):
        if mask.any():
            raise CountsError(where(mask) + why)
    empty = np.flatnonzero(arr.sum(axis=(1, 2)) == 0)
    if empty.size:
        unit = f"classifier {names[empty[0]]!r}" if c > 1 else "the confusion matrix"
        raise CountsError(f"All counts of {unit} are zero: an empty table carries no "
                          "information; drop it or give its counts.")
    counts = arr.astype(np.int64)
    counts.setflags(write=False)
    return counts, labels, names


def _label_array(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values)
    if arr.dtype.kind in "US" and not isinstance(values, np.ndarray):
        # NumPy turns [1, "a"] into strings; keep each label's own type
        items = list(values)
        if not all(isinstance(x, str | bytes) for x in items):
            arr = np.empty(len(items), dtype=object)
            arr[:] = items
    if arr.ndim != 1:
        raise CountsError(f"{what} must be a 1-d sequence of labels, got shape {arr.shape}.")
    if arr.size == 0:
        raise CountsError(f"{what} is empty.")
    if pd.isna(arr).any():
        raise CountsError(f"{what} contains missing labels; drop or impute them first.")
    return arr


class MulticlassConfusionMatrix:
    """One or many K×K confusion matrices with labelled classes.

    Entry ``[c, i, j]`` of :attr:`counts` is the number of cases of actual class
    ``labels[i]`` that classifier ``c`` predicted as ``labels[j]`` (rows actual,
    columns predicted, dims ``classifier`` × ``actual`` × ``predicted``).  Objects are
    immutable; every construction path validates.

    Parameters
    ----------
    counts
        A K×K array (one matrix) or a classifier × K × K array of non-negative whole
        numbers; also a crosstab DataFrame (see :meth:`from_frame`) or a DataArray with
        dims ``actual``, ``predicted`` (and ``classifier``) and label coords.
    labels
        The K class labels in row (and column) order: any hashable values, unique.
        Default ``0, 1, ..., K-1`` (scikit-learn's ``confusion_matrix`` order).
    classifier
        Names of the classifiers; default ``"cm"`` (one matrix) or ``"cm0", "cm1", ...``.

    Raises
    ------
    CountsError
        For negative, fractional, NaN, infinite or boolean counts, empty, all-zero or
        non-square matrices, fewer than two classes, duplicate or missing labels, and
        labels that do not match the matrix; the message names the cell.

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> mc.labels, mc.classifiers, int(mc.n[0])
    (('cat', 'dog', 'bird'), ('cm',), 138)
    >>> mc.to_frame().loc["dog", "bird"]  # actual dog, predicted bird
    np.int64(6)
    """

    __slots__ = ("_counts", "_labels", "_names")

    def __init__(self, counts: Any, labels: Sequence[Hashable] | None = None, *,
                 classifier: Any = None) -> None:
        if isinstance(counts, pd.DataFrame | xr.DataArray):
            other = (self.from_frame(counts, labels=labels) if isinstance(counts, pd.DataFrame)
                     else self.from_xarray(counts))
            if classifier is not None:
                other = type(self)(other.counts, other.labels, classifier=classifier)
            values = (other._counts, other._labels, other._names)
        else:
            values = _validate(counts, labels, classifier)
        for slot, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("MulticlassConfusionMatrix is immutable; build a new one instead.")

    # -- alternative constructors -------------------------------------------------------
    @classmethod
    def from_predictions(cls, y_true: Any, y_pred: Any, labels: Sequence[Hashable] | None = None,
                         *, classifier: str | None = None) -> MulticlassConfusionMatrix:
        """Tally predictions against true labels.

        Parameters
        ----------
        y_true
            True class labels (any hashable values).
        y_pred
            Predicted labels of one classifier, paired case by case with ``y_true``, or
            a mapping ``name -> predictions`` for several classifiers on the same test
            set (a batch, dim ``classifier``).
        labels
            The classes and their order; include classes nobody saw or predicted to
            keep them.  Default: every label in ``y_true`` or a prediction, sorted
            (in order of first appearance when the labels cannot be sorted).
        classifier
            Name of a single classifier (default ``"cm"``).

        Examples
        --------
        >>> import bayescm as bcm
        >>> y = ["cat", "cat", "dog", "bird", "dog"]
        >>> mc = bcm.MulticlassConfusionMatrix.from_predictions(
        ...     y, {"a": ["cat", "dog", "dog", "bird", "dog"], "b": y},
        ...     labels=["cat", "dog", "bird", "fish"])
        >>> mc.classifiers, mc.labels
        (('a', 'b'), ('cat', 'dog', 'bird', 'fish'))
        >>> mc["a"].counts[0].tolist()
        [[1, 1, 0, 0], [0, 2, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]
        """
        if isinstance(y_pred, Mapping):
            preds = {str(name): p for name, p in y_pred.items()}
            if not preds:
                raise CountsError("The mapping of predictions is empty.")
        else:
            preds = {classifier or "cm": y_pred}
        truth = _label_array(y_true, "y_true")
        arrays = {}
        for name, p in preds.items():
            arr = _label_array(p, f"predictions of {name!r}")
            if arr.shape != truth.shape:
                raise CountsError(
                    f"y_true has {truth.size} labels but the predictions of {name!r} have "
                    f"{arr.size}; they must be paired case by case.")
            arrays[name] = arr
        if labels is None:
            seen = pd.unique(np.concatenate([truth.astype(object),
                                             *(a.astype(object) for a in arrays.values())]))
            seen = [_label(x, "labels") for x in seen]
            try:
                labels = sorted(seen)
            except TypeError:
                labels = seen
        labels = _check_labels(labels, None)
        index = pd.Index(list(labels), dtype=object)
        k = len(labels)

        def codes(arr: np.ndarray, what: str) -> np.ndarray:
            out = index.get_indexer(arr.astype(object))
            if (out < 0).any():
                unknown = pd.unique(arr[out < 0].astype(object))[:10].tolist()
                raise CountsError(f"{what} has labels {unknown} that are not in labels="
                                  f"{list(labels)}.")
            return out

        t = codes(truth, "y_true")
        counts = [np.bincount(t * k + codes(a, f"The predictions of {name!r}"), minlength=k * k)
                  .reshape(k, k) for name, a in arrays.items()]
        return cls(np.stack(counts), labels, classifier=list(arrays))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, labels: Sequence[Hashable] | None = None
                   ) -> MulticlassConfusionMatrix:
        """Build from a crosstab: index actual, columns predicted.

        A frame whose index has two levels (``classifier``, ``actual``) is a batch, as
        :meth:`to_frame` writes it.  Columns are matched to rows by label, not by
        position; row and column labels must be the same set, unless ``labels=`` is
        given: then both are re-indexed to ``labels`` with zeros for absent classes
        (``pd.crosstab`` drops classes never predicted).

        Examples
        --------
        >>> import pandas as pd, bayescm as bcm
        >>> tab = pd.crosstab(pd.Series(["a", "b", "b", "c"], name="actual"),
        ...                   pd.Series(["a", "b", "a", "c"], name="predicted"))
        >>> bcm.MulticlassConfusionMatrix.from_frame(tab).counts[0].tolist()
        [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
        """
        if not isinstance(frame, pd.DataFrame):
            raise CountsError(f"from_frame needs a pandas DataFrame, got {type(frame).__name__}.")
        if frame.size == 0:
            raise CountsError("The DataFrame is empty.")
        if frame.index.nlevels == 2:
            names = list(dict.fromkeys(frame.index.get_level_values(0)))
            parts = [cls.from_frame(frame.xs(name, level=0), labels=labels) for name in names]
            if len({p.labels for p in parts}) > 1:
                raise CountsError("The classifiers' crosstabs have different labels; pass "
                                  "labels= to put them on the same classes.")
            return cls(np.concatenate([p.counts for p in parts]), parts[0].labels,
                       classifier=names)
        if frame.index.nlevels != 1:
            raise CountsError("A crosstab has actual labels as its index (or classifier and "
                              "actual as a two-level index).")
        rows = _check_labels(list(frame.index), None, "row (actual) labels")
        cols = _check_labels(list(frame.columns), None, "column (predicted) labels")
        if labels is not None:
            labels = _check_labels(labels, None)
            extra = [x for x in (*rows, *dict.fromkeys(cols)) if x not in labels]
            if extra:
                raise CountsError(f"The frame has labels {extra} not in labels={list(labels)}.")
            frame = frame.reindex(index=list(labels), columns=list(labels), fill_value=0)
        else:
            if set(rows) != set(cols):
                only_rows = [x for x in rows if x not in cols]
                only_cols = [x for x in cols if x not in rows]
                raise CountsError(
                    "Row (actual) and column (predicted) labels differ: only in rows "
                    f"{only_rows}, only in columns {only_cols}. Pass labels= with every "
                    "class to fill absent rows and columns with zeros.")
            labels = rows
            frame = frame.loc[:, list(rows)]
        return cls(frame.to_numpy(), labels)

    @classmethod
    def from_xarray(cls, counts: xr.DataArray) -> MulticlassConfusionMatrix:
        """Build from a DataArray with dims ``actual``, ``predicted`` (and ``classifier``).

        Labels come from the ``actual`` coord (``0..K-1`` without one); the predicted
        axis is put in the same label order.
        """
        missing = [d for d in DIMS[1:] if d not in counts.dims]
        extra = [d for d in counts.dims if d not in DIMS]
        if missing or extra:
            raise CountsError(f"Counts need dims {list(DIMS)} (classifier optional); missing "
                              f"{missing}, unknown {extra}.")
        if "classifier" not in counts.dims:
            counts = counts.expand_dims(classifier=["cm"])
        try:
            counts = align_predicted(counts).transpose(*DIMS)
        except ValueError as err:
            raise CountsError(str(err)) from err
        labels = (counts["actual"].values.tolist() if "actual" in counts.coords else None)
        names = (counts["classifier"].values.tolist() if "classifier" in counts.coords
                 else None)
        return cls(counts.values, labels, classifier=names)

    @classmethod
    def from_binary(cls, cm: ConfusionMatrix, *, labels: Sequence[Hashable] = (1, 0)
                    ) -> MulticlassConfusionMatrix:
        """The K = 2 matrix of a binary :class:`~bayescm.ConfusionMatrix`.

        ``labels = (positive, negative)``: ``tp`` is (actual positive, predicted
        positive), ``fn`` (actual positive, predicted negative), ``fp`` (actual negative,
        predicted positive), ``tn`` (actual negative, predicted negative).

        Examples
        --------
        >>> import bayescm as bcm
        >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
        >>> mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("ill", "well"))
        >>> mc.counts[0].tolist()
        [[26, 0], [2, 6]]
        >>> mc.to_binary(positive="ill") == cm
        True
        """
        if not isinstance(cm, ConfusionMatrix):
            raise CountsError(f"from_binary needs a ConfusionMatrix, got {type(cm).__name__}.")
        labels = _check_labels(labels, 2, "labels (positive, negative)")
        cell = {c: cm.cell(c) for c in CELLS}
        counts = np.stack([np.stack([cell["tp"], cell["fn"]], -1),
                           np.stack([cell["fp"], cell["tn"]], -1)], -2)
        return cls(counts, labels, classifier=list(cm.classifiers))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MulticlassConfusionMatrix:
        """Inverse of :meth:`to_dict` (labels read back from JSON lists become tuples)."""
        if not isinstance(data, Mapping) or not {"labels", "counts"} <= set(data):
            raise CountsError("from_dict needs a mapping with keys 'labels' and 'counts' (and "
                              "'classifier'), as written by to_dict().")
        if tuple(data.get("dims", DIMS)) != DIMS:
            raise CountsError(f"Counts are stored with dims {data['dims']}; expected {DIMS}.")
        labels = [tuple(x) if isinstance(x, list) else x for x in data["labels"]]
        return cls(data["counts"], labels, classifier=data.get("classifier"))

    # -- views --------------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Read-only int64 array ``(n_classifiers, K, K)``: classifier, actual, predicted."""
        return self._counts

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """Class labels: coords of both ``actual`` and ``predicted``."""
        return self._labels

    @property
    def classifiers(self) -> tuple[str, ...]:
        """Classifier names (coords of dim ``classifier``)."""
        return self._names

    @property
    def n_classes(self) -> int:
        """K, the number of classes."""
        return len(self._labels)

    @property
    def n(self) -> np.ndarray:
        """Total number of cases per classifier."""
        return self._counts.sum(axis=(1, 2))

    @property
    def coords(self) -> dict[str, list]:
        """``{dim: coords}`` for ``classifier``, ``actual``, ``predicted`` (model coords)."""
        return {"classifier": list(self._names), "actual": list(self._labels),
                "predicted": list(self._labels)}

    def to_xarray(self) -> xr.DataArray:
        """Counts as a DataArray with dims ``(classifier, actual, predicted)``."""
        return xr.DataArray(self._counts, dims=DIMS, coords=self.coords, name="counts")

    def to_frame(self) -> pd.DataFrame:
        """A crosstab (index ``actual``, columns ``predicted``); for a batch the index
        has two levels, ``classifier`` and ``actual``."""
        cols = pd.Index(list(self._labels), name="predicted")
        if len(self) == 1:
            return pd.DataFrame(self._counts[0], index=pd.Index(list(self._labels),
                                                                name="actual"), columns=cols)
        index = pd.MultiIndex.from_product([list(self._names), list(self._labels)],
                                           names=["classifier", "actual"])
        k = self.n_classes
        return pd.DataFrame(self._counts.reshape(-1, k), index=index, columns=cols)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record: ``{"dims", "classifier", "labels", "counts"}``.

        ``counts`` is nested lists ``[classifier][actual][predicted]``; labels must be
        JSON values (str, int, float, bool) for :func:`json.dumps` to accept them.

        Examples
        --------
        >>> import bayescm as bcm
        >>> mc = bcm.MulticlassConfusionMatrix([[3, 1], [0, 4]], labels=["x", "y"])
        >>> mc.to_dict()["counts"]
        [[[3, 1], [0, 4]]]
        >>> bcm.MulticlassConfusionMatrix.from_dict(mc.to_dict()) == mc
        True
        """
        return {"dims": list(DIMS), "classifier": list(self._names),
                "labels": list(self._labels), "counts": self._counts.tolist()}

    def one_vs_rest(self, *, sep: str = ":") -> ConfusionMatrix:
        """Each class against the rest, as a batch of binary confusion matrices.

        Class ``k`` is the positive class of its matrix (``tp = counts[k, k]``).  For
        one matrix the binary classifiers are named by ``str(label)``; for a batch by
        ``f"{classifier}{sep}{label}"`` (classifier-major order).

        Examples
        --------
        >>> import bayescm as bcm
        >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
        ...                                    labels=["cat", "dog", "bird"])
        >>> mc.one_vs_rest()["dog"].to_dict()
        {'tp': 7, 'fn': 3, 'fp': 4, 'tn': 14}
        """
        ovr = one_vs_rest_cells(self._counts)
        if len(self) == 1:
            names = [str(x) for x in self._labels]
        else:
            names = [f"{c}{sep}{x}" for c in self._names for x in self._labels]
        return ConfusionMatrix(*(ovr[c].reshape(-1).astype(np.int64) for c in CELLS),
                               classifier=names)

    def to_binary(self, positive: Hashable | None = None) -> ConfusionMatrix:
        """The binary :class:`~bayescm.ConfusionMatrix` of a K = 2 matrix.

        ``positive`` names the positive label; it may be omitted when the labels are
        ``{0, 1}`` or ``{False, True}`` (1 is positive), as in
        :meth:`ConfusionMatrix.from_predictions`.
        """
        if self.n_classes != 2:
            raise CountsError(f"Only a K = 2 matrix is binary; this one has {self.n_classes} "
                              "classes (use one_vs_rest() for each class against the rest).")
        if positive is None:
            if set(self._labels) != {0, 1}:
                raise CountsError(f"Cannot tell which of the labels {list(self._labels)} is "
                                  "positive; pass positive=...")
            positive = 1
        if positive not in self._labels:
            raise CountsError(f"positive={positive!r} is not one of the labels "
                              f"{list(self._labels)}.")
        p = self._labels.index(positive)
        q = 1 - p
        c = self._counts
        return ConfusionMatrix(c[:, p, p], c[:, p, q], c[:, q, p], c[:, q, q],
                               classifier=list(self._names))

    def pooled(self, name: str = "pooled") -> MulticlassConfusionMatrix:
        """All classifiers' counts summed into one matrix (e.g. folds of one test set)."""
        return type(self)(self._counts.sum(axis=0), self._labels, classifier=name)

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[MulticlassConfusionMatrix]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, key: int | str) -> MulticlassConfusionMatrix:
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError(f"No classifier {key!r}; classifiers are {list(self._names)}.")
            key = self._names.index(key)
        if not isinstance(key, int | np.integer):
            raise TypeError(f"Index by classifier name or position, not {type(key).__name__}.")
        return type(self)(self._counts[key], self._labels, classifier=self._names[key])

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MulticlassConfusionMatrix) and self._names == other._names
                and self._labels == other._labels
                and np.array_equal(self._counts, other._counts))

    def __hash__(self) -> int:
        return hash((self._names, self._labels, self._counts.tobytes()))

    def __repr__(self) -> str:
        which = (f"classifier={self._names[0]!r}" if len(self) == 1
                 else f"{len(self)} classifiers")
        head = (f"MulticlassConfusionMatrix(K={self.n_classes}, labels={list(self._labels)}, "
                f"{which})")
        if len(self) > 3 or self.n_classes > 12:
            return head
        return f"{head}\n{self.to_frame()}"


def align_predicted(cells: xr.DataArray, *, actual: str = "actual",
                    predicted: str = "predicted") -> xr.DataArray:
    """Put the ``predicted`` axis in the label order of ``actual`` (by label, not place).

    Counts and cell probabilities alike; without label coords on either dim the two
    must only have the same length.

    Raises
    ------
    ValueError
        When the dims differ in length, or their labels are not the same set.
    """
    if cells.sizes[actual] != cells.sizes[predicted]:
        raise ValueError(f"{cells.sizes[actual]} {actual} but {cells.sizes[predicted]} "
                         f"{predicted} classes; both run over the same K labels.")
    has_a, has_p = actual in cells.coords, predicted in cells.coords
    if not (has_a and has_p):
        if has_a or has_p:
            raise ValueError(f"Give label coords on both {actual!r} and {predicted!r} "
                             "(or neither).")
        return cells
    rows, cols = cells[actual].values.tolist(), cells[predicted].values.tolist()
    if rows == cols:
        return cells
    if set(rows) != set(cols) or len(set(cols)) != len(cols):
        raise ValueError(f"{actual} labels {rows} and {predicted} labels {cols} differ.")
    return cells.sel({predicted: rows})
