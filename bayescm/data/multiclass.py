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

from bayescm.data.confusion import CELLS, ConfusionMatrix, CountsError
from bayescm.data.multiclass_tables import (
    DIMS,
    align_predicted,
    as_label,
    check_labels,
    label_array,
    one_vs_rest_cells,
    validate_tables,
)

__all__ = ["DIMS", "MulticlassConfusionMatrix", "align_predicted", "one_vs_rest_cells"]


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
        if isinstance(counts, xr.DataArray) and labels is not None:
            raise CountsError("A DataArray's labels are its 'actual' and 'predicted' coords; "
                              "set them there (assign_coords) instead of passing labels=.")
        if isinstance(counts, pd.DataFrame | xr.DataArray):
            other = (self.from_frame(counts, labels=labels) if isinstance(counts, pd.DataFrame)
                     else self.from_xarray(counts))
            if classifier is not None:
                other = type(self)(other.counts, other.labels, classifier=classifier)
            values = (other._counts, other._labels, other._names)
        else:
            values = validate_tables(counts, labels, classifier)
        for slot, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("MulticlassConfusionMatrix is immutable; build a new one instead.")

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        # pickle (a Dask task shipping a batch to a worker) restores the slots
        for name, value in state[1].items():
            object.__setattr__(self, name, value)

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
        truth = label_array(y_true, "y_true")
        arrays = {}
        for name, p in preds.items():
            arr = label_array(p, f"predictions of {name!r}")
            if arr.shape != truth.shape:
                raise CountsError(
                    f"y_true has {truth.size} labels but the predictions of {name!r} have "
                    f"{arr.size}; they must be paired case by case.")
            arrays[name] = arr
        if labels is None:
            seen = pd.unique(np.concatenate([truth.astype(object),
                                             *(a.astype(object) for a in arrays.values())]))
            seen = [as_label(x, "labels") for x in seen]
            try:
                labels = sorted(seen)
            except TypeError:
                labels = seen
        labels = check_labels(labels, None)
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
        rows = check_labels(list(frame.index), None, "row (actual) labels")
        cols = check_labels(list(frame.columns), None, "column (predicted) labels")
        if labels is not None:
            labels = check_labels(labels, None)
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
        labels = check_labels(labels, 2, "labels (positive, negative)")
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
