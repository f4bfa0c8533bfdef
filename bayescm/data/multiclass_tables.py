"""K×K tables as arrays: their dims, validation, one-vs-rest cells, label alignment.

The array layer under :class:`bayescm.MulticlassConfusionMatrix` and the multiclass
metrics: plain NumPy and xarray, for counts and cell probabilities alike.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.confusion import MAX_COUNT, CountsError, unit_names

__all__ = ["DIMS", "align_predicted", "as_label", "check_labels", "label_array",
           "one_vs_rest_cells", "validate_tables"]

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
    >>> from bayescm.data.multiclass import one_vs_rest_cells
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

def as_label(value: Any, what: str) -> Hashable:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NaT:
        raise CountsError(f"{what} contains a missing label ({value!r}); drop or name it first.")
    try:
        hash(value)
    except TypeError as err:
        raise CountsError(f"{what}: labels must be hashable, got {value!r}.") from err
    return value


def check_labels(labels: Any, k: int | None, what: str = "labels") -> tuple[Hashable, ...]:
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | np.ndarray | pd.Index):
        raise CountsError(f"{what} must be a sequence of class labels, got {labels!r}.")
    out = tuple(as_label(x, what) for x in labels)
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


def validate_tables(raw: Any, labels: Any, names: Any
              ) -> tuple[np.ndarray, tuple[Hashable, ...], tuple[str, ...]]:
    """Counts (C, K, K) int64 read-only, labels and classifier names, or a CountsError.

    ``raw`` is one K×K table or a batch (C × K × K); ``labels`` default to ``0..K-1``,
    ``names`` to ``"cm"`` or ``"cm0", "cm1", ...``.
    """
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
    labels = check_labels(range(k) if labels is None else labels, k)
    names = unit_names(names, c)

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


def label_array(values: Any, what: str) -> np.ndarray:
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
