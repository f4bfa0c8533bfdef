"""Ratings tables: R raters give one of K labels to items, some items with a gold class.

A :class:`RatingsTable` holds, for every item (dim ``item``) and rater (dim ``rater``),
how many times the rater gave each label (dim ``rating``): a rater may skip an item
(a row of zeros) or rate it several times (Dawid & Skene's first anaesthetist rated
every patient three times).  Some items may carry a *gold* label, their known class.
This is the input of latent-class models of many raters, such as
:func:`bayescm.models.dawid_skene`: a rater is a classifier whose labels are compared
with a class nobody observes.

Tables are built from long data (one row per rating: the layout of crowd-kit and R's
``rater``) with :meth:`RatingsTable.from_long`, from wide data (one column per rater)
with :meth:`RatingsTable.from_wide`, or from an items × raters × labels array of
counts.  Every path validates and gives a :class:`~bayescm.CountsError` naming what is
wrong.  Items whose ratings (and gold class) are the same are collapsed into patterns
with multiplicities by :meth:`RatingsTable.patterns` (:mod:`bayescm.data.ratings_patterns`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.counts import CountsError
from bayescm.data.ratings_frames import (
    check_counts,
    coo_from_columns,
    gold_index,
    long_from_wide,
    pandas_frame,
    plain,
)
from bayescm.data.ratings_patterns import RatingPatterns, collapse
from bayescm.data.ratings_predictions import from_predictions as _from_predictions

__all__ = ["DIMS", "RatingsTable"]

DIMS: tuple[str, str, str] = ("item", "rater", "rating")
"""Dims of the dense counts: items, raters, the label given."""


class RatingsTable:
    """Ratings of I items by R raters with K class labels (immutable, validated).

    Parameters
    ----------
    counts
        ``(I, R, K)`` array of whole numbers: ``counts[i, r, k]`` is how many times
        rater ``r`` gave item ``i`` the label ``labels[k]`` (0 where it did not).
    items
        I item names (default ``0, 1, ...``): any hashable values, unique.
    raters
        R rater names (default ``"r0", "r1", ...``); kept as strings.
    labels
        The K class labels (default ``0, 1, ...``): any hashable values, unique, K >= 2.
    gold
        Known classes: a mapping ``item -> label`` for the gold items, or a sequence of
        I labels with None (or NaN) for items without one.

    Raises
    ------
    CountsError
        For negative, fractional, NaN, infinite or boolean counts, a wrong shape, an
        empty table, an item without a rating, fewer than two labels, repeated names,
        and gold labels that are not among the labels or name unknown items.

    Examples
    --------
    >>> import pandas as pd
    >>> import bayescm as bcm
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 3, 3, 3],
    ...                    "rater": ["a", "b", "b", "a", "c", "a", "b", "c"],
    ...                    "rating": ["x", "x", "y", "y", "y", "x", "x", "x"]})
    >>> rt = bcm.RatingsTable.from_long(df, gold={2: "y"})
    >>> rt.raters, rt.labels, rt.n_items, rt.n_ratings
    (('a', 'b', 'c'), ('x', 'y'), 3, 8)
    >>> rt.counts[0].tolist()  # item 1: a said x once, b said x once and y once
    [[1, 0], [1, 1], [0, 0]]
    >>> rt.gold.to_dict()
    {2: 'y'}
    """

    __slots__ = ("_coo", "_gold", "_items", "_labels", "_patterns", "_raters")

    def __init__(self, counts: Any, *, items: Sequence[Hashable] | None = None,
                 raters: Sequence[Any] | None = None, labels: Sequence[Hashable] | None = None,
                 gold: Any = None) -> None:
        arr = check_counts(counts)
        n_items, n_raters, n_classes = arr.shape
        items = _names(range(n_items) if items is None else items, n_items, "item")
        raters = tuple(str(r) for r in _names(
            [f"r{j}" for j in range(n_raters)] if raters is None else raters, n_raters, "rater"))
        labels = _labels(range(n_classes) if labels is None else labels, n_classes)
        i, r, k = np.nonzero(arr)
        gold_idx = gold_index(gold, items, labels)
        self._set(items, raters, labels, (i, r, k, arr[i, r, k]), gold_idx)

    def _set(self, items: tuple, raters: tuple[str, ...], labels: tuple,
             coo: tuple[np.ndarray, ...], gold: np.ndarray) -> None:
        i, r, k, c = (np.ascontiguousarray(x, dtype=np.int64) for x in coo)
        if i.size == 0:
            raise CountsError("No ratings given: the table is empty.")
        if len(set(raters)) != len(raters):
            raise CountsError(f"Rater names must be unique (as strings); got {list(raters)}.")
        rated = np.bincount(i, minlength=len(items)) > 0
        if not rated.all():
            bad = [items[j] for j in np.flatnonzero(~rated)[:10]]
            raise CountsError(
                f"Item(s) {bad} have no rating: an item nobody rated carries no information "
                "about the raters (and a gold item without ratings none about them either). "
                "Drop those items or give their ratings.")
        order = np.lexsort((k, r, i))
        coo = tuple(x[order] for x in (i, r, k, c))
        gold = np.array(gold, dtype=np.int64)
        for arr in (gold, *coo):
            arr.setflags(write=False)
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_raters", raters)
        object.__setattr__(self, "_labels", labels)
        object.__setattr__(self, "_coo", coo)
        object.__setattr__(self, "_gold", gold)
        object.__setattr__(self, "_patterns", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RatingsTable is immutable; build a new one instead.")

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        for name, value in state[1].items():
            object.__setattr__(self, name, value)

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_long(cls, df: Any, *, item: str = "item", rater: str = "rater",
                  rating: str = "rating", gold: Any = None,
                  labels: Sequence[Hashable] | None = None,
                  raters: Sequence[Any] | None = None) -> RatingsTable:
        """One row per rating (columns item, rater, rating): crowd-kit's and ``rater``'s layout.

        Parameters
        ----------
        df
            A pandas DataFrame, or a Dask DataFrame (its three or four columns are
            computed to pandas).  Repeated rows are repeated ratings (a rater rating an
            item twice); a row whose rating is missing (None, NaN) is not a rating.
        item, rater, rating
            Column names.
        gold
            A column name (the item's known class on its rows, missing where unknown;
            the same on every row of an item), or a mapping ``item -> label`` (a dict
            or a pandas Series indexed by item).
        labels
            The K classes in order; include classes nobody chose.  Default: every label
            in the ratings and the gold labels, sorted (in order of first appearance
            when they cannot be sorted).  Whole-number floats (what a column with
            missing values holds) are read as integers.
        raters
            The raters in order (default: in order of first appearance); every rater
            of the data, each once.

        Examples
        --------
        >>> import pandas as pd
        >>> import bayescm as bcm
        >>> df = pd.DataFrame({"item": [0, 0, 1, 1], "rater": ["a", "b", "a", "b"],
        ...                    "rating": [1, 1, 0, None], "truth": [None, None, 0, 0]})
        >>> rt = bcm.RatingsTable.from_long(df, gold="truth")
        >>> rt.n_ratings, rt.gold.to_dict(), rt.labels
        (3, {1: 0}, (0, 1))
        """
        frame = pandas_frame(df, [item, rater, rating] + ([gold] if isinstance(gold, str)
                                                           else []), "from_long")
        table = cls._from_frame(frame, item, rater, rating, gold, labels)
        if raters is None:
            return table
        names = [str(x) for x in raters]
        extra = sorted(set(names) - set(table.raters))
        left = [x for x in table.raters if x not in names]
        if extra or left or len(set(names)) != len(names):
            raise CountsError(
                f"raters= must list every rater of the data once: {left} not listed, "
                f"{extra} without a rating" + ("" if len(set(names)) == len(names)
                                               else ", and some listed twice") + ".")
        return table._with_rater_order(names)

    @classmethod
    def from_wide(cls, df: Any, *, raters: Sequence[str] | Mapping[str, Any] | None = None,
                  item: str | None = None, gold: Any = None,
                  labels: Sequence[Hashable] | None = None) -> RatingsTable:
        """One row per item, one column per rater (missing values: no rating).

        Parameters
        ----------
        df
            A pandas (or Dask) DataFrame.
        raters
            The rating columns (each its own rater), or a mapping ``column -> rater``
            (several columns of one rater are its repeated ratings).  Default: every
            column except ``item`` and a gold column.
        item
            The column naming the items; default the index.
        gold, labels
            As in :meth:`from_long` (``gold`` a column of ``df`` or a mapping).

        Examples
        --------
        >>> import pandas as pd
        >>> import bayescm as bcm
        >>> wide = pd.DataFrame({"a1": [1, 2], "a2": [1, 2], "b": [1, None]},
        ...                     index=["p1", "p2"])
        >>> rt = bcm.RatingsTable.from_wide(wide, raters={"a1": "a", "a2": "a", "b": "b"})
        >>> rt.raters, rt.counts[:, 0].tolist()
        (('a', 'b'), [[2, 0], [0, 2]])
        """
        long, names = long_from_wide(df, raters, item, gold)
        table = cls._from_frame(long, "item", "rater", "rating",
                                "gold" if gold is not None and isinstance(gold, str) else gold,
                                labels)
        return table._with_rater_order(names)

    #: The model under test and its judges as raters of the same items
    #: (:func:`bayescm.data.ratings_predictions.from_predictions`).
    from_predictions = classmethod(_from_predictions)

    @classmethod
    def _from_frame(cls, frame: pd.DataFrame, item: str, rater: str, rating: str, gold: Any,
                    labels: Sequence[Hashable] | None) -> RatingsTable:
        items, raters, label_values, coo, gold_values = coo_from_columns(
            frame, item, rater, rating, gold)
        if labels is None:
            labels = _default_labels(label_values, gold_values)
        labels = _labels(labels, None)
        index = {lab: j for j, lab in enumerate(labels)}
        unknown = [v for v in label_values if v not in index]
        if unknown:
            raise CountsError(
                f"Rating(s) {unknown[:10]} are not among the labels {list(labels)}; add them "
                "to labels= (the K classes in order) or fix the data.")
        codes = np.array([index[v] for v in label_values], dtype=np.int64)
        i, r, k = coo[0], coo[1], codes[coo[2]]
        # repeated (item, rater, label) rows are repeated ratings: their counts add up
        key = (i * len(raters) + r) * len(labels) + k
        uniq, inverse = np.unique(key, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=coo[3]).astype(np.int64)
        ui, rest = np.divmod(uniq, len(raters) * len(labels))
        ur, uk = np.divmod(rest, len(labels))
        table = object.__new__(cls)
        gold_idx = gold_index(dict(gold_values), items, labels) if gold_values else \
            np.full(len(items), -1, dtype=np.int64)
        table._set(items, raters, labels, (ui, ur, uk, counts), gold_idx)
        return table

    def _with_rater_order(self, names: Sequence[str]) -> RatingsTable:
        """The same table with raters in the order ``names`` (wide columns' order)."""
        order = [self._raters.index(n) for n in names if n in self._raters]
        if order == list(range(len(self._raters))):
            return self
        new_of_old = np.empty(len(order), dtype=np.int64)
        new_of_old[order] = np.arange(len(order))
        i, r, k, c = self._coo
        table = object.__new__(type(self))
        table._set(self._items, tuple(self._raters[j] for j in order), self._labels,
                   (i, new_of_old[r], k, c), self._gold)
        return table

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RatingsTable:
        """Inverse of :meth:`to_dict` (list-valued names read back from JSON become tuples)."""
        need = {"items", "raters", "labels", "entries", "gold"}
        if not isinstance(data, Mapping) or not need <= set(data):
            raise CountsError(f"from_dict needs a mapping with keys {sorted(need)}, as written "
                              "by to_dict().")

        def hashable(values: Sequence[Any]) -> tuple:
            return tuple(tuple(x) if isinstance(x, list) else x for x in values)

        items, labels = hashable(data["items"]), _labels(hashable(data["labels"]), None)
        entries = np.asarray(data["entries"], dtype=np.int64).reshape(-1, 4)
        table = object.__new__(cls)
        table._set(items, tuple(str(r) for r in data["raters"]), labels, tuple(entries.T),
                   np.asarray(data["gold"], dtype=np.int64))
        return table

    # -- views --------------------------------------------------------------------------
    @property
    def items(self) -> tuple[Hashable, ...]:
        return self._items

    @property
    def raters(self) -> tuple[str, ...]:
        return self._raters

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The K class labels, in class order (coords of ``class``, ``actual``, ...)."""
        return self._labels

    @property
    def n_items(self) -> int:
        return len(self._items)

    @property
    def n_raters(self) -> int:
        return len(self._raters)

    @property
    def n_classes(self) -> int:
        return len(self._labels)

    @property
    def n_ratings(self) -> int:
        """All ratings, repeats included."""
        return int(self._coo[3].sum())

    @property
    def gold(self) -> pd.Series:
        """The gold items' labels (index ``item``; empty when there are none)."""
        known = np.flatnonzero(self._gold >= 0)
        return pd.Series([self._labels[g] for g in self._gold[known]],
                         index=pd.Index([self._items[j] for j in known], name="item",
                                        dtype=object),
                         name="gold", dtype=object)

    @property
    def gold_index(self) -> np.ndarray:
        """``(I,)`` int64: each item's gold class position, -1 for none (read-only)."""
        return self._gold

    @property
    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The nonzero counts as (item, rater, label, count) position arrays, sorted."""
        return self._coo

    @property
    def counts(self) -> np.ndarray:
        """Dense ``(I, R, K)`` int64 counts (built on each call: large for big tables)."""
        out = np.zeros((self.n_items, self.n_raters, self.n_classes), dtype=np.int64)
        i, r, k, c = self._coo
        out[i, r, k] = c
        out.setflags(write=False)
        return out

    @property
    def coords(self) -> dict[str, list]:
        return {"item": list(self._items), "rater": list(self._raters),
                "rating": list(self._labels)}

    def patterns(self) -> RatingPatterns:
        """The distinct rating patterns with their multiplicities (computed once)."""
        if self._patterns is None:
            object.__setattr__(self, "_patterns", collapse(
                *self._coo, self._gold, self.n_raters, self.n_classes))
        return self._patterns

    def ratings_per_item(self) -> np.ndarray:
        """``(I,)`` int64: how many ratings each item has (repeats included)."""
        return np.bincount(self._coo[0], weights=self._coo[3],
                           minlength=self.n_items).astype(np.int64)

    def to_xarray(self) -> xr.DataArray:
        """Dense counts with dims ``(item, rater, rating)``."""
        return xr.DataArray(self.counts, dims=DIMS, coords=self.coords, name="counts")

    def to_frame(self) -> pd.DataFrame:
        """Long data, one row per rating (repeats repeated), columns ``item, rater,
        rating`` and ``gold`` (None where unknown) when any item is gold:
        ``from_long(rt.to_frame(), gold="gold", labels=rt.labels, raters=rt.raters)``
        gives the table back."""
        i, r, k = (np.repeat(x, self._coo[3]) for x in self._coo[:3])
        frame = pd.DataFrame({
            "item": pd.Series([self._items[j] for j in i], dtype=object),
            "rater": [self._raters[j] for j in r],
            "rating": pd.Series([self._labels[j] for j in k], dtype=object)})
        if (self._gold >= 0).any():
            frame["gold"] = pd.Series([self._labels[g] if g >= 0 else None
                                       for g in self._gold[i]], dtype=object)
        return frame

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record: names, the nonzero ``entries`` ``[item, rater, label,
        count]`` (positions) and ``gold`` (positions, -1 for none)."""
        return {"items": [plain(x) for x in self._items], "raters": list(self._raters),
                "labels": [plain(x) for x in self._labels],
                "entries": np.stack(self._coo, axis=-1).tolist(),
                "gold": self._gold.tolist()}

    def to_agreement(self, positive: Any = None) -> Any:
        """The binary (K = 2) table as a :class:`~bayescm.AgreementTable` (one result per
        rater and item at most; missing ratings become ``"?"``, gold items verified cells).

        Raises
        ------
        CountsError
            When K != 2 or a rater rated an item more than once.
        """
        from bayescm.data.agreement import AgreementTable

        if self.n_classes != 2:
            raise CountsError(f"An agreement table is binary; this table has {self.n_classes} "
                              "classes.")
        i, r, k, c = self._coo
        if (c > 1).any() or np.unique(i * self.n_raters + r).size != i.size:
            raise CountsError("An agreement table holds one result per classifier and case; "
                              "some rater rated an item more than once.")
        preds = {name: np.full(self.n_items, None, dtype=object) for name in self._raters}
        for ii, rr, kk in zip(i, r, k, strict=True):
            preds[self._raters[rr]][ii] = self._labels[kk]
        truth = None
        if (self._gold >= 0).any():
            truth = np.array([self._labels[g] if g >= 0 else None for g in self._gold],
                             dtype=object)
        return AgreementTable.from_predictions(preds, positive=positive, y_true=truth)

    def __len__(self) -> int:
        return self.n_items

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RatingsTable) and self._items == other._items
                and self._raters == other._raters and self._labels == other._labels
                and np.array_equal(self._gold, other._gold)
                and all(np.array_equal(a, b) for a, b in zip(self._coo, other._coo, strict=True)))

    def __hash__(self) -> int:
        return hash((self._items, self._raters, self._labels, self._gold.tobytes(),
                     *(x.tobytes() for x in self._coo)))

    def __repr__(self) -> str:
        n_gold = int((self._gold >= 0).sum())
        return (f"RatingsTable({self.n_items} items, {self.n_raters} raters "
                f"{list(self._raters)[:8]}{'...' if self.n_raters > 8 else ''}, "
                f"labels {list(self._labels)}, {self.n_ratings} ratings, {n_gold} gold)")


# -- validation helpers ----------------------------------------------------------------
def _names(values: Any, n: int, what: str) -> tuple:
    names = tuple(plain(v) for v in values)
    if len(names) != n:
        raise CountsError(f"{len(names)} {what} names given for {n} {what}s.")
    if len(set(names)) != len(names):
        dup = sorted({str(x) for x in names if names.count(x) > 1})[:10]
        raise CountsError(f"{what.capitalize()} names must be unique; repeated: {dup}.")
    return names


def _labels(values: Any, k: int | None) -> tuple:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray
                                                         | pd.Index | range):
        raise CountsError(f"labels must be a sequence of class labels, got {values!r}.")
    out = tuple(plain(v) for v in values)
    if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in out):
        raise CountsError(f"labels contain a missing value: {list(out)}.")
    if k is not None and len(out) != k:
        raise CountsError(f"{len(out)} labels given for {k} classes; give one per class.")
    if len(out) < 2:
        raise CountsError(f"A ratings table needs at least two classes; the labels are "
                          f"{list(out)}. Pass labels= with every class, including those "
                          "nobody chose.")
    if len(set(out)) != len(out):
        raise CountsError(f"labels must be unique; got {list(out)}.")
    return out


def _default_labels(ratings: Sequence[Any], gold: Sequence[tuple[Any, Any]]) -> list:
    seen = list(dict.fromkeys([*ratings, *(g for _, g in gold)]))
    try:
        return sorted(seen)
    except TypeError:
        return seen
