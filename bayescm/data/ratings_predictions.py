"""Ratings from predictions: a model under test and its judges label the same items.

The shape of judge-assisted evaluation: a model's predicted class for each of N items,
one or more judges' labels (an LLM-as-judge, annotators) for the same items, and the
true class (gold) of a few of them.  :func:`from_predictions` lines these up as a
:class:`~bayescm.RatingsTable` whose raters are the model and the judges, so that a
latent-class model (:func:`bayescm.models.dawid_skene`) treats the model under test as
one more rater: its confusion matrix is the rater's.  It is bound to the class as
:meth:`bayescm.RatingsTable.from_predictions`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm.data.counts import CountsError
from bayescm.data.ratings_frames import plain, tidy_values

if TYPE_CHECKING:
    from bayescm.data.ratings import RatingsTable

__all__ = ["from_predictions", "judges_mapping"]


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (
        isinstance(value, float) and np.isnan(value))


def _column(values: Any, name: str, n: int | None, index: pd.Index | None
            ) -> tuple[np.ndarray, pd.Index | None]:
    """One rater's labels as an object array of plain values (missing: None), checked
    for length (and for the index of a pandas Series against the model's)."""
    if isinstance(values, str | bytes) or np.ndim(values) == 0:
        raise CountsError(f"{name} must be a sequence of labels (one per item), got "
                          f"{type(values).__name__}.")
    if hasattr(values, "compute") and hasattr(values, "npartitions"):  # Dask Series/array
        values = values.compute()
    own = values.index if isinstance(values, pd.Series) else None
    arr = np.asarray(values.to_numpy(dtype=object) if isinstance(values, pd.Series | pd.Index)
                     else values, dtype=object)
    if arr.ndim != 1:
        raise CountsError(f"{name} must be one-dimensional (one label per item); it has "
                          f"shape {arr.shape}.")
    if n is not None and arr.size != n:
        raise CountsError(f"{name} has {arr.size} labels for {n} items (the model's "
                          "predictions); give one per item, None where it gave none.")
    if index is not None and own is not None and not own.equals(index):
        raise CountsError(f"{name} is a pandas Series whose index differs from the model's "
                          "predictions'; align them first (e.g. .reindex(y_pred.index)).")
    out = tidy_values(arr)
    return np.array([None if _missing(v) else v for v in out], dtype=object), own


def judges_mapping(judges: Any) -> dict[str, Any]:
    """``judges`` as ``{name: labels}``: a mapping, a DataFrame (one column per judge) or
    one sequence of labels (a single judge named ``"judge"``)."""
    if isinstance(judges, pd.DataFrame):
        return {str(c): judges[c] for c in judges.columns}
    if isinstance(judges, Mapping):
        return {str(k): v for k, v in judges.items()}
    if judges is None or isinstance(judges, str | bytes) or np.ndim(judges) == 0:
        raise CountsError("judges must be a mapping {name: labels}, a DataFrame with one "
                          f"column per judge, or one sequence of labels; got {judges!r}.")
    return {"judge": judges}


def from_predictions(cls: type[RatingsTable], y_pred: Any, judges: Any, *,
                     gold: Any = None, model: str = "model",
                     labels: Sequence[Hashable] | None = None) -> RatingsTable:
    """The model under test and its judges as raters of the same N items.

    Parameters
    ----------
    y_pred
        The model's predicted class for each of the N items (a sequence, NumPy array or
        pandas Series; no missing values: every item is one the model labelled).  A
        Series' index names the items; otherwise they are ``0, ..., N-1``.
    judges
        ``{name: labels}`` with N labels per judge (None or NaN where a judge gave
        none), a DataFrame with one column per judge, or one sequence of N labels (a
        judge named ``"judge"``).  Series must share ``y_pred``'s index.
    gold
        The true class of the items that have one: N values with None/NaN for the
        others, or a mapping ``item -> class``.
    model
        The rater name of the model under test (not a judge's name).
    labels
        The K classes in order (include classes nobody chose); default every label of
        the predictions, judges and gold, sorted.

    Returns
    -------
    RatingsTable
        Raters ``[model, *judges]``, items as above, the gold classes.

    Raises
    ------
    CountsError
        (a ValueError) for lengths that differ, a missing prediction, labels outside
        ``labels``, a judge named like the model, or no judge.

    Examples
    --------
    >>> import bayescm as bcm
    >>> rt = bcm.RatingsTable.from_predictions(
    ...     ["cat", "dog", "dog", "cat"], {"llm": ["cat", "dog", "cat", None]},
    ...     gold=[None, "dog", None, "cat"])
    >>> rt.raters, rt.labels, rt.n_ratings, rt.gold.to_dict()
    (('model', 'llm'), ('cat', 'dog'), 7, {1: 'dog', 3: 'cat'})
    """
    model = str(model)
    pred, index = _column(y_pred, "y_pred", None, None)
    n = pred.size
    if n == 0:
        raise CountsError("y_pred is empty: give the model's predicted class for each item.")
    missing = np.flatnonzero([v is None for v in pred])
    if missing.size:
        raise CountsError(f"y_pred has missing predictions at position(s) "
                          f"{missing[:10].tolist()}; every item must be one the model "
                          "labelled (drop the others).")
    named = judges_mapping(judges)
    if not named:
        raise CountsError("No judges given: pass judges={name: labels} with at least one.")
    if model in named:
        raise CountsError(f"A judge is named {model!r}, the model's name; rename it or pass "
                          "model= another name.")
    columns = {model: pred}
    for name, values in named.items():
        columns[name] = _column(values, f"Judge {name!r}", n, index)[0]
    items = index if index is not None else pd.RangeIndex(n)
    if items.has_duplicates:
        raise CountsError("y_pred's index names the items and must be unique; "
                          f"{items[items.duplicated()].tolist()[:10]} repeat.")
    gold_map = _gold(gold, items, index)
    wide = pd.DataFrame(columns, index=pd.Index([plain(i) for i in items], dtype=object))
    return cls.from_wide(wide, raters=list(columns), gold=gold_map, labels=labels)


def _gold(gold: Any, items: pd.Index, index: pd.Index | None) -> dict[Any, Any] | None:
    """Gold as a mapping item -> class (missing classes dropped)."""
    if gold is None:
        return None
    if isinstance(gold, pd.Series) and not (len(gold) == len(items)
                                            and gold.index.equals(items)):
        gold = gold.to_dict()  # indexed by some of the items: a mapping item -> class
    if isinstance(gold, Mapping):
        known = set(plain(i) for i in items)
        unknown = [k for k in gold if plain(k) not in known]
        if unknown:
            raise CountsError(f"gold names item(s) {unknown[:10]} that are not among the "
                              "model's items (positions 0..N-1, or y_pred's index).")
        values = tidy_values(list(gold.values()))
        return {plain(k): v for k, v in zip(gold, values, strict=True) if not _missing(v)}
    values, _ = _column(gold, "gold", len(items), index)
    return {plain(i): v for i, v in zip(items, values, strict=True) if v is not None}
