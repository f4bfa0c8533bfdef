"""Reading ratings from data frames: long and wide layouts, pandas or Dask.

The column work behind :meth:`bayescm.RatingsTable.from_long` and
:meth:`~bayescm.RatingsTable.from_wide`: check the columns, drop missing ratings,
read whole-number floats (what a column with missing values holds) as integers, and
turn the rows into coordinate lists (item, rater, label value, count) and gold pairs.
Errors are :class:`~bayescm.CountsError` naming the column and the offending rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.counts import (
    MAX_COUNT,
    CountsError,
    is_boolean,
    is_hashable,
    names_as_text,
)

__all__ = ["check_counts", "coo_from_columns", "gold_index", "long_from_wide", "pandas_frame",
           "plain", "tidy_values"]


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value."""
    return value.item() if isinstance(value, np.generic) else value


def pandas_frame(df: Any, columns: Sequence[str], what: str) -> pd.DataFrame:
    """``df[columns]`` as pandas: a Dask DataFrame is computed (only those columns)."""
    if hasattr(df, "compute") and hasattr(df, "npartitions"):  # a Dask DataFrame
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise CountsError(_missing_columns(missing, df.columns, what))
        df = df[list(columns)].compute()
    if not isinstance(df, pd.DataFrame):
        raise CountsError(f"{what} needs a pandas or Dask DataFrame, got {type(df).__name__}.")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise CountsError(_missing_columns(missing, df.columns, what))
    if df.empty:
        raise CountsError("No ratings given: the table is empty.")
    return df


def _missing_columns(missing: Sequence[str], columns: Any, what: str) -> str:
    hint = ("name them with item=, rater=, rating= (and gold=)" if what == "from_long"
            else "name them with raters=, item= (and gold=)")
    return (f"Column(s) {list(missing)} are not in the data; its columns are "
            f"{[str(c) for c in columns][:20]}: {hint}.")


def tidy_values(values: Any) -> np.ndarray:
    """Object array of plain Python values; floats that are all whole numbers become ints
    (a rating column with missing values is float in pandas)."""
    arr = np.asarray(values, dtype=object)
    out = _objects([v.item() if isinstance(v, np.generic) else v for v in arr.ravel()])
    floats = [v for v in out if isinstance(v, float)]
    if floats and all(v.is_integer() for v in floats if np.isfinite(v)):
        out = _objects([int(v) if isinstance(v, float) and np.isfinite(v) else v
                        for v in out])
    return out


def _objects(values: list[Any]) -> np.ndarray:
    """A 1-d object array of ``values`` (``np.array`` would make equal-length tuples
    a second axis)."""
    return np.fromiter(values, dtype=object, count=len(values))


def coo_from_columns(frame: pd.DataFrame, item: str, rater: str, rating: str, gold: Any
                     ) -> tuple[tuple, tuple[str, ...], list, tuple[np.ndarray, ...], list]:
    """Items, raters, distinct label values, COO (item, rater, value, count) and gold pairs.

    Rows with a missing rating are dropped (not a rating); an item all of whose rows
    are missing keeps its place and is reported as an item without a rating.
    """
    for col, name in ((item, "item"), (rater, "rater")):
        bad = np.flatnonzero(pd.isna(frame[col]).to_numpy())
        if bad.size:
            raise CountsError(f"Column {col!r} has missing values (rows "
                              f"{[frame.index[j] for j in bad[:10]]}); every rating needs its "
                              f"{name}.")
    items_all = tidy_values(frame[item].to_numpy())
    item_codes, items = pd.factorize(pd.Series(items_all, dtype=object), sort=False)
    items = tuple(items)
    raters_all = np.array(names_as_text(tidy_values(frame[rater].to_numpy()), rater),
                          dtype=object)
    rated = ~pd.isna(frame[rating]).to_numpy()
    values_all = tidy_values(frame[rating].to_numpy()[rated])
    rater_codes, raters = pd.factorize(pd.Series(raters_all[rated], dtype=object), sort=False)
    try:  # factorize hashes every value: an unhashable one raises TypeError
        value_codes, label_values = pd.factorize(pd.Series(values_all, dtype=object),
                                                 sort=False)
    except TypeError:
        v = next(v for v in values_all if not is_hashable(v))
        raise CountsError(f"Ratings must be hashable labels (numbers, strings), got "
                          f"{v!r}.") from None
    names_as_text(label_values, rating)  # 1 and "1" would be two classes of one name
    coo = (item_codes[rated].astype(np.int64), rater_codes.astype(np.int64),
           value_codes.astype(np.int64), np.ones(int(rated.sum()), dtype=np.int64))
    gold_pairs: list = []
    if isinstance(gold, str):
        gold_pairs = _gold_column(frame[gold].to_numpy(), item_codes, items, gold)
    elif isinstance(gold, pd.Series):
        gold_pairs = list(zip(tidy_values(gold.index), tidy_values(gold.to_numpy()),
                              strict=True))
    elif isinstance(gold, Mapping):
        gold_pairs = list(zip(tidy_values(list(gold)), tidy_values(list(gold.values())),
                              strict=True))
    elif gold is not None:
        raise CountsError(f"gold must be a column name or a mapping item -> label, got "
                          f"{type(gold).__name__}.")
    gold_pairs = [(i, g) for i, g in gold_pairs if not _missing(g)]
    return items, tuple(str(r) for r in raters), list(label_values), coo, gold_pairs


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NaT


def _gold_column(values: np.ndarray, item_codes: np.ndarray, items: tuple, column: str
                 ) -> list[tuple[Any, Any]]:
    """One gold label per item from a column (the same on all its rows, or missing)."""
    values = tidy_values(values)
    known = ~np.array([_missing(v) for v in values], dtype=bool)
    seen: dict[int, Any] = {}
    for code, value in zip(item_codes[known], values[known], strict=True):
        if code in seen and seen[code] != value:
            raise CountsError(f"Item {items[code]!r} has different gold labels in column "
                              f"{column!r} ({seen[code]!r} and {value!r}); give one per item.")
        seen[code] = value
    return [(items[code], value) for code, value in seen.items()]


def long_from_wide(df: Any, raters: Sequence[str] | Mapping[str, Any] | None,
                   item: str | None, gold: Any) -> tuple[pd.DataFrame, list[str]]:
    """Wide ratings (one row per item, one column per rater) as long rows, and the
    raters in column order."""
    gold_col = gold if isinstance(gold, str) else None
    if isinstance(raters, Mapping):
        columns = list(raters)
        names = [str(raters[c]) for c in columns]
    elif raters is not None:
        columns = list(raters)
        names = [str(c) for c in columns]
    else:
        columns = None
        names = []
    if hasattr(df, "compute") and hasattr(df, "npartitions"):
        want = None if columns is None else [*columns, *(c for c in (item, gold_col) if c)]
        df = (df if want is None else df[want]).compute()
    if not isinstance(df, pd.DataFrame):
        raise CountsError(f"from_wide needs a pandas or Dask DataFrame, got {type(df).__name__}.")
    if columns is None:
        columns = [c for c in df.columns if c not in (item, gold_col)]
        names = [str(c) for c in columns]
    pandas_frame(df, [*columns, *(c for c in (item, gold_col) if c)], "from_wide")
    if not columns:
        raise CountsError("from_wide found no rater columns; name them with raters=.")
    item_values = df[item].to_numpy() if item is not None else df.index.to_numpy()
    n = len(df)
    long = pd.DataFrame({
        "item": np.tile(np.asarray(item_values, dtype=object), len(columns)),
        "rater": np.repeat(np.asarray(names, dtype=object), n),
        "rating": np.concatenate([df[c].to_numpy(dtype=object) for c in columns]),
    })
    if gold_col is not None:
        long["gold"] = np.tile(df[gold_col].to_numpy(dtype=object), len(columns))
    if pd.Series(item_values).duplicated().any():
        dup = pd.Series(item_values)[pd.Series(item_values).duplicated()].tolist()[:10]
        raise CountsError(f"Wide data have one row per item; item(s) {dup} appear more than "
                          "once (use from_long for one row per rating).")
    return long, list(dict.fromkeys(names))


def check_counts(raw: Any) -> np.ndarray:
    """The dense ``(I, R, K)`` counts as int64, or a CountsError naming the cell."""
    if is_boolean(raw):
        raise CountsError("The counts contain booleans; booleans are not counts. Give whole "
                          "numbers (how many times each rater gave each label).")
    try:
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise CountsError(f"Counts must be an items × raters × labels array of numbers; could "
                          f"not read {type(raw).__name__}: {err}") from err
    if arr.ndim != 3:
        raise CountsError(f"Counts have shape {arr.shape}; give items × raters × labels (3-d). "
                          "Use RatingsTable.from_long or from_wide for one row per rating or "
                          "per item.")
    if arr.size == 0:
        raise CountsError("No ratings given: the table is empty.")
    for mask, why in ((~np.isfinite(arr), "is not finite"), (arr < 0, "is negative"),
                      (arr > MAX_COUNT, "is above the largest count held exactly (2**53)"),
                      (arr != np.floor(arr), "is not a whole number")):
        if mask.any():
            i, r, k = (int(x[0]) for x in np.nonzero(mask))
            raise CountsError(f"counts[{i}, {r}, {k}] (item {i}, rater {r}, label {k}) = "
                              f"{arr[i, r, k]:g} {why}; counts are whole numbers >= 0.")
    return arr.astype(np.int64)


def gold_index(gold: Any, items: tuple, labels: tuple) -> np.ndarray:
    """Each item's gold class position (-1 for none) from a mapping or an I-sequence."""
    out = np.full(len(items), -1, dtype=np.int64)
    if gold is None:
        return out
    index = {lab: j for j, lab in enumerate(labels)}
    if isinstance(gold, pd.Series):
        gold = dict(zip(gold.index, gold.to_numpy(), strict=True))
    if isinstance(gold, Mapping):
        position = {it: j for j, it in enumerate(items)}
        unknown = [g for g in gold if plain(g) not in position]
        if unknown:
            raise CountsError(f"Gold labels are given for item(s) {unknown[:10]} that have no "
                              "ratings in the table; drop them or add their ratings.")
        pairs = [(position[plain(it)], lab) for it, lab in gold.items()]
    else:
        values = list(gold)
        if len(values) != len(items):
            raise CountsError(f"gold has {len(values)} entries for {len(items)} items; give "
                              "one per item (None where unknown) or a mapping item -> label.")
        pairs = list(enumerate(values))
    for j, lab in pairs:
        lab = plain(lab)
        if lab is None or (isinstance(lab, float) and np.isnan(lab)):
            continue
        if lab not in index:
            raise CountsError(f"Gold label {lab!r} of item {items[j]!r} is not among the labels "
                              f"{list(labels)}; fix it or add it to labels=.")
        out[j] = index[lab]
    return out
