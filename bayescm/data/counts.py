"""Checking what users hand in: counts per unit, and labels of cases.

:func:`validate_counts` turns named count fields (the cells of a confusion matrix, the
outcome patterns of an agreement table) into a read-only integer array, one row per
unit (classifier, slice, population), refusing NaN/infinite, negative, fractional,
boolean, too large or all-zero counts with a message that names the field and the
unit.  :func:`check_labels` and :func:`resolve_positive` do the same for the labels
of cases before they are counted.  Every data class of bayescm builds on these, so a
bad input gets one message wherever it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CELLS", "MAX_COUNT", "CountsError", "check_labels", "is_boolean", "is_hashable",
           "resolve_positive", "unit_names", "validate_counts"]

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
    allow_empty: bool = False,
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
    allow_empty
        Accept rows whose counts are all zero (the empty slices of a sliced matrix,
        kept and flagged); refused otherwise.

    Returns
    -------
    counts, names
        ``counts`` has shape ``(n_classifiers, n_fields)`` and dtype int64.

    Raises
    ------
    CountsError
        For NaN/inf, negative, non-integer, wrongly shaped or all-zero counts,
        naming the field and the classifier.

    Examples
    --------
    >>> counts, names = validate_counts({"tp": [5, 0], "fn": [1, 0]}, ["a", "b"],
    ...                                 unit="slice", allow_empty=True)
    >>> counts.tolist(), names
    ([[5, 1], [0, 0]], ('a', 'b'))
    >>> try:
    ...     validate_counts({"tp": 2.5, "fn": 1})
    ... except CountsError as err:
    ...     print(err)
    cell 'tp' of the confusion matrix is not a whole number (2.5); give counts, not rates \
(multiply rates by the number of cases).
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
        if total == 0 and not allow_empty:
            raise CountsError(
                f"All counts of {_where(names, i, unit)} are zero: it has no data, and an empty "
                "table carries no information; drop it or give its counts."
            )
    counts.setflags(write=False)
    return counts, names


def check_labels(values: Any, what: str) -> np.ndarray:
    """``values`` as a 1-d array of labels; a CountsError when it is empty, not 1-d or
    holds a missing label (``what`` names it in the message)."""
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


def is_hashable(value: Any) -> bool:
    """Whether ``value`` can be a label (a dict key): lists and dicts cannot."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def names_as_text(values: Any, column: Any) -> list[Any]:
    """The values of a name column as text (missing values kept), refusing two distinct
    values that print alike (``1`` and ``"1"``): written out as names they would be one
    model, rater or algorithm, and their results would be merged."""
    codes, distinct = pd.factorize(pd.Series(list(values), dtype=object), sort=False)
    text = [str(v.item() if isinstance(v, np.generic) else v) for v in distinct]
    if len(set(text)) != len(text):
        first: dict[str, Any] = {}
        for v, t in zip(distinct, text, strict=True):
            if t in first:
                raise CountsError(
                    f"Column {column!r} has {first[t]!r} and {v!r}: distinct values that "
                    "read the same as names. Make the column one type (e.g. "
                    f"df[{column!r}].astype(str)) or rename one of them.")
            first[t] = v
    out = np.array([*text, np.nan], dtype=object)[codes]  # code -1 (missing): NaN
    return out.tolist()
