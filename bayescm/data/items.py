r"""Benchmark results item by item: :class:`ItemResults`.

Many models answer the same items (questions) of a benchmark, each item once or in
several runs; items may come in clusters (several questions on one passage, topic or
task).  :class:`ItemResults` holds, for every model :math:`m` and item :math:`i`, the
number of successes :math:`y_{mi}` out of :math:`n_{mi} \ge 1` runs, and each item's
cluster.  Every model must have every item (comparisons on the same items are paired
only when the items are the same); the number of runs may differ.

The frame work (pandas or Dask, checks with plain messages) is in
:mod:`bayescm.data.items_frames`.

Examples
--------
>>> import pandas as pd, bayescm as bcm
>>> df = pd.DataFrame({"item": ["q1", "q2", "q3"] * 2, "model": ["a"] * 3 + ["b"] * 3,
...                    "correct": [1, 0, 1, 1, 1, 1]})
>>> res = bcm.ItemResults.from_frame(df)
>>> res.models, res.n_items
(('a', 'b'), 3)
>>> res.successes.sum("item").values.tolist()
[2, 3]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.counts import CountsError, is_hashable, names_as_text
from bayescm.data.items_frames import from_frame as _from_frame
from bayescm.data.items_frames import plain

__all__ = ["OUTCOMES", "ItemResults"]

OUTCOMES: tuple[str, str] = ("correct", "wrong")
"""Coordinates of dim ``outcome`` of the items model's observed counts (``counts_data``,
and ``observed_data`` of its fits): each model's correct and wrong answers per item."""


_RECORD_KEYS = ("successes", "trials", "models", "items")  # what to_dict always writes


class ItemResults:
    r"""Successes out of runs of M models on the same N items (immutable, validated).

    Parameters
    ----------
    successes, trials
        ``(M, N)`` whole numbers: model :math:`m`'s successes on item :math:`i` and
        its runs of that item, :math:`0 \le y_{mi} \le n_{mi}`, :math:`n_{mi} \ge 1`.
    models
        The M model names (unique; default ``"model_0", ...``).
    items
        The N item names (unique, hashable; default ``0, 1, ...``).
    clusters
        Each item's cluster label (N values, no missing ones), or None for
        independent items.

    Attributes
    ----------
    successes, trials
        ``xarray.DataArray`` of dims ``(model, item)`` (int64), with the item's
        cluster as a coordinate on ``item`` when there are clusters.
    cluster
        ``xarray.DataArray`` item -> cluster label (dim ``item``), or None.

    Examples
    --------
    >>> import bayescm as bcm
    >>> res = bcm.ItemResults([[1, 0, 2]], [[1, 1, 2]], models=["m"],
    ...                       items=["a", "b", "c"], clusters=["x", "x", "y"])
    >>> res.clusters, res.cluster_index.tolist(), res.runs_per_item.tolist()
    (('x', 'y'), [0, 0, 1], [1.0, 1.0, 2.0])
    """

    __slots__ = ("_cluster_of", "_clusters", "_items", "_models", "_successes", "_trials")

    def __init__(self, successes: Any, trials: Any, *, models: Sequence[Any] | None = None,
                 items: Sequence[Hashable] | None = None,
                 clusters: Sequence[Hashable] | None = None) -> None:
        y, n = _whole(successes, "successes"), _whole(trials, "trials")
        if y.ndim == 1:
            y, n = y[None, :], (n[None, :] if n.ndim == 1 else n)
        if y.ndim != 2 or y.shape != n.shape:
            raise CountsError(f"successes and trials must be two (models, items) arrays of one "
                              f"shape, got shapes {y.shape} and {n.shape}.")
        m_, n_ = y.shape
        if m_ == 0 or n_ == 0:
            raise CountsError("No results given: at least one model and one item are needed.")
        if (n < 1).any():
            m, i = np.argwhere(n < 1)[0]
            raise CountsError(f"Every model needs at least one run of every item; trials "
                              f"[{m}, {i}] is {n[m, i]}.")
        if (y < 0).any() or (y > n).any():
            m, i = np.argwhere((y < 0) | (y > n))[0]
            raise CountsError(f"successes must lie between 0 and the runs; [{m}, {i}] has "
                              f"{y[m, i]} successes out of {n[m, i]}.")
        models = tuple(str(x) for x in (models if models is not None
                                        else [f"model_{k}" for k in range(m_)]))
        items = tuple(plain(x) for x in (items if items is not None else range(n_)))
        unhashable = [x for x in items if not is_hashable(x)]
        if unhashable:
            raise CountsError(f"Item names must be labels (numbers, text, tuples), got "
                              f"{unhashable[0]!r}.")
        for what, names, size in (("models", models, m_), ("items", items, n_)):
            if len(names) != size:
                raise CountsError(f"{len(names)} {what} named for {size} rows/columns.")
            if len(set(names)) != size:
                dup = pd.Index(names)[pd.Index(names).duplicated()].tolist()[:5]
                raise CountsError(f"The {what} must be unique; repeated: {dup}.")
        cluster_names: tuple | None = None
        cluster_of: np.ndarray | None = None
        if clusters is not None:
            labels = [plain(c) for c in clusters]
            if len(labels) != n_:
                raise CountsError(f"{len(labels)} cluster labels for {n_} items.")
            if not all(is_hashable(c) for c in labels):
                raise CountsError(f"Cluster labels must be labels (numbers, text), got "
                                  f"{next(c for c in labels if not is_hashable(c))!r}.")
            if any(pd.isna(c) for c in labels):
                raise CountsError("Every item needs its cluster; some cluster labels are "
                                  "missing (drop clusters= for independent items).")
            names_as_text(labels, "clusters")  # 1 and "1" would be two clusters of one name
            codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
            cluster_names = tuple(plain(c) for c in uniques)
            cluster_of = codes.astype(np.int64)
            cluster_of.flags.writeable = False
        for arr in (y, n):
            arr.flags.writeable = False
        object.__setattr__(self, "_successes", y)
        object.__setattr__(self, "_trials", n)
        object.__setattr__(self, "_models", models)
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_clusters", cluster_names)
        object.__setattr__(self, "_cluster_of", cluster_of)

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_frame(cls, df: Any, item: str = "item", model: str = "model",
                   correct: str = "correct", cluster: str | None = None,
                   run: str | None = None, *, trials: str | None = None) -> ItemResults:
        """Results from a long table: one row per model, item (and run).

        Parameters
        ----------
        df
            A pandas or Dask DataFrame (a Dask frame is computed once, only the
            columns named here).
        item, model, correct
            Columns of the item, the model, and its score: 0/1 (or booleans) per
            row, or the count of successes when ``trials`` is given.
        cluster
            Column of each item's cluster (the same on all rows of an item), or None.
        run
            Column naming the run of a row, when items were answered several times
            (one row per model, item and run).
        trials
            Column of the number of runs a row's ``correct`` count is out of (one row
            per model and item).  Not with ``run``.

        Raises
        ------
        CountsError
            Missing columns or values, scores outside 0/1 (or counts outside 0 to
            trials), duplicate rows, a cluster that changes within an item, a model
            without some items.
        """
        y, n, models, items, clusters = _from_frame(df, item=item, model=model,
                                                    correct=correct, cluster=cluster,
                                                    run=run, trials=trials)
        return cls(y, n, models=models, items=items, clusters=clusters)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemResults:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping) or any(key not in data for key in _RECORD_KEYS):
            raise CountsError("ItemResults.from_dict needs a mapping with keys 'successes', "
                              "'trials', 'models', 'items' (and 'clusters'), as to_dict "
                              "writes it.")
        return cls(np.asarray(data["successes"], dtype=np.int64),
                   np.asarray(data["trials"], dtype=np.int64), models=data["models"],
                   items=[tuple(x) if isinstance(x, list) else x for x in data["items"]],
                   clusters=data.get("clusters"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record (names, counts, each item's cluster or None)."""
        return {"models": list(self._models), "items": list(self._items),
                "successes": self._successes.tolist(), "trials": self._trials.tolist(),
                "clusters": (None if self._clusters is None
                             else [self._clusters[c] for c in self._cluster_of])}

    # -- names and counts --------------------------------------------------------
    @property
    def models(self) -> tuple[str, ...]:
        return self._models

    @property
    def items(self) -> tuple[Hashable, ...]:
        return self._items

    @property
    def n_models(self) -> int:
        return len(self._models)

    @property
    def n_items(self) -> int:
        return len(self._items)

    @property
    def clusters(self) -> tuple[Hashable, ...] | None:
        """The distinct cluster labels in order of first appearance, or None."""
        return self._clusters

    @property
    def n_clusters(self) -> int:
        """Number of clusters (the number of items when there are none: each its own)."""
        return self.n_items if self._clusters is None else len(self._clusters)

    @property
    def cluster_index(self) -> np.ndarray:
        """``(N,)`` int64: each item's cluster position (``0..N-1`` without clusters)."""
        idx = (np.arange(self.n_items) if self._cluster_of is None else self._cluster_of)
        return idx.copy()

    @property
    def cluster_sizes(self) -> np.ndarray:
        """Items per cluster, in the order of :attr:`clusters` (all 1 without clusters)."""
        return np.bincount(self.cluster_index, minlength=self.n_clusters)

    @property
    def successes_array(self) -> np.ndarray:
        """``(M, N)`` int64 successes (read-only)."""
        return self._successes

    @property
    def trials_array(self) -> np.ndarray:
        """``(M, N)`` int64 runs (read-only)."""
        return self._trials

    @property
    def outcome_counts_array(self) -> np.ndarray:
        """``(M, N, 2)`` int64 correct and wrong answers of each model on each item (the
        last axis is dim ``outcome``, labelled :data:`OUTCOMES`)."""
        return np.stack([self._successes, self._trials - self._successes], -1)

    @property
    def successes(self) -> xr.DataArray:
        return self._named(self._successes, "successes")

    @property
    def trials(self) -> xr.DataArray:
        return self._named(self._trials, "trials")

    @property
    def cluster(self) -> xr.DataArray | None:
        if self._clusters is None:
            return None
        labels = np.array([self._clusters[c] for c in self._cluster_of], dtype=object)
        return xr.DataArray(labels, dims="item", coords={"item": list(self._items)},
                            name="cluster")

    @property
    def runs_per_item(self) -> np.ndarray:
        """``(N,)`` mean number of runs of each item over the models."""
        return self._trials.mean(axis=0)

    @property
    def one_run(self) -> bool:
        """True when every model answered every item exactly once."""
        return bool((self._trials == 1).all())

    def scores(self) -> xr.DataArray:
        """Each model's mean score on each item, successes / runs (dims model, item)."""
        return self._named(self._successes / self._trials, "score")

    def to_xarray(self) -> xr.DataArray:
        """The successes (dims ``model, item``; the cluster as a coordinate of ``item``)."""
        return self.successes

    def to_frame(self) -> pd.DataFrame:
        """One row per model and item: ``model, item, [cluster,] correct, trials``."""
        m, i = np.meshgrid(np.arange(self.n_models), np.arange(self.n_items), indexing="ij")
        frame = pd.DataFrame({"model": np.asarray(self._models, dtype=object)[m.ravel()],
                              "item": np.asarray(self._items, dtype=object)[i.ravel()]})
        if self._clusters is not None:
            frame["cluster"] = np.asarray(self.cluster.values)[i.ravel()]
        frame["correct"] = self._successes.ravel()
        frame["trials"] = self._trials.ravel()
        return frame

    def _named(self, values: np.ndarray, name: str) -> xr.DataArray:
        coords: dict[str, Any] = {"model": list(self._models), "item": list(self._items)}
        if self._clusters is not None:
            coords["cluster"] = ("item", [self._clusters[c] for c in self._cluster_of])
        return xr.DataArray(values, dims=("model", "item"), coords=coords, name=name)

    # -- protocol ----------------------------------------------------------------
    def __len__(self) -> int:
        return self.n_models

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ItemResults):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self._models, self._items, self._successes.tobytes(),
                     self._trials.tobytes()))

    def __reduce__(self) -> tuple:
        return (type(self).from_dict, (self.to_dict(),))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ItemResults is immutable; build a new one.")

    def __repr__(self) -> str:
        k, n = self._successes.sum(axis=1), self._trials.sum(axis=1)
        shown = ", ".join(f"{m}: {a}/{b}" for m, a, b in
                          zip(self._models[:5], k[:5], n[:5], strict=False))
        more = ", ..." if self.n_models > 5 else ""
        where = (f" in {self.n_clusters} clusters" if self._clusters is not None else "")
        return (f"ItemResults({self.n_models} model(s) x {self.n_items} item(s){where}; "
                f"correct/runs {shown}{more})")


def _whole(values: Any, what: str) -> np.ndarray:
    """An int64 array of whole numbers, or a CountsError saying what is wrong."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not (
            np.isfinite(arr).all() and (arr == np.round(arr)).all())):
        raise CountsError(f"{what} must be whole numbers without missing values.")
    return arr.astype(np.int64)
