"""Reading item-level benchmark results from a long table (pandas or Dask).

The column work behind :meth:`bayescm.ItemResults.from_frame`: check the columns,
the scores (0/1, or counts out of a trials column), duplicates, clusters constant
within an item, and that every model has every item; then count successes and runs
per model and item.  Errors are :class:`~bayescm.CountsError` naming the column and
a few offending rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.counts import MAX_COUNT, CountsError, is_hashable, names_as_text

__all__ = ["from_frame", "plain"]


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value."""
    return value.item() if isinstance(value, np.generic) else value


def _pandas(df: Any, columns: list[str]) -> pd.DataFrame:
    """``df[columns]`` as pandas; a Dask DataFrame is computed once (those columns only)."""
    have = list(getattr(df, "columns", []))
    missing = [c for c in columns if c not in have]
    if not hasattr(df, "columns"):
        raise CountsError(f"ItemResults.from_frame needs a pandas or Dask DataFrame, got "
                          f"{type(df).__name__}.")
    if missing:
        raise CountsError(f"Column(s) {missing} are not in the data; its columns are "
                          f"{[str(c) for c in have][:20]}: name them with item=, model=, "
                          "correct= (and cluster=, run=, trials=).")
    twice = [c for c in columns if have.count(c) > 1]
    if twice:
        raise CountsError(f"Column(s) {twice} appear more than once in the data: rename or "
                          "drop the copies, so that each role reads one column.")
    if hasattr(df, "compute") and hasattr(df, "npartitions"):  # Dask: one computation
        df = df[columns].compute()
    if not isinstance(df, pd.DataFrame):
        raise CountsError(f"ItemResults.from_frame needs a pandas or Dask DataFrame, got "
                          f"{type(df).__name__}.")
    frame = df[columns]
    if frame.empty:
        raise CountsError("No results given: the table is empty.")
    return frame


def _rows(frame: pd.DataFrame, mask: np.ndarray) -> list:
    return [plain(x) for x in frame.index[np.flatnonzero(mask)[:5]]]


def _numbers(frame: pd.DataFrame, col: str, what: str) -> np.ndarray:
    values = frame[col]
    if values.dtype == bool:
        return values.to_numpy().astype(np.int64)
    if pd.api.types.is_integer_dtype(values.dtype) and (values > MAX_COUNT).any():
        # above 2**53 a float rounds: 2**53 + 1 would pass the limit as 2**53
        raise CountsError(f"Column {col!r} has numbers above 2**53 in rows "
                          f"{_rows(frame, (values > MAX_COUNT).to_numpy())}.")
    num = pd.to_numeric(values, errors="coerce")
    real = not pd.api.types.is_complex_dtype(num.dtype)
    num = num.to_numpy(dtype=float) if real else np.full(len(values), np.nan)
    bad = ~np.isfinite(num)
    if bad.any():
        raise CountsError(f"Column {col!r} must hold {what}; rows {_rows(frame, bad)} have "
                          f"{[_shown(v) for v in values.to_numpy()[np.flatnonzero(bad)[:5]]]}.")
    return num


def _shown(value: Any) -> Any:
    """A value as an error message shows it (a NumPy date as a date, not its integer)."""
    return str(value) if isinstance(value, np.datetime64 | np.timedelta64) else plain(value)


def _item_labels(values: pd.Series, column: Any) -> pd.Series:
    """Item ids as coordinate labels: numbers and text as they are, anything else
    (timestamps, tuples) as text; ids that would print alike (``1`` and ``"1"``) refused."""
    names_as_text(values, column)
    codes, distinct = pd.factorize(pd.Series(list(values), dtype=object), sort=False)
    labels = [plain(v) if isinstance(plain(v), str | int | float) else str(v)
              for v in distinct]
    return pd.Series(np.array(labels, dtype=object)[codes], dtype=object)


def from_frame(df: Any, *, item: str, model: str, correct: str, cluster: str | None,
               run: str | None, trials: str | None
               ) -> tuple[np.ndarray, np.ndarray, list[str], list, list | None]:
    """Successes and runs ``(M, N)``, model names, item names and item clusters."""
    if run is not None and trials is not None:
        raise CountsError("Give run= (one row per run, scores 0/1) or trials= (one row per "
                          "model and item with a count of successes), not both.")
    names = {"item": item, "model": model, "correct": correct, "cluster": cluster,
             "run": run, "trials": trials}
    for key, col in names.items():
        if (col is not None or key in ("item", "model", "correct")) \
                and not isinstance(col, str | int):
            raise TypeError(f"{key}= names a column, got {type(col).__name__}.")
    columns = list(dict.fromkeys(c for c in names.values() if c is not None))
    if len(columns) < sum(c is not None for c in names.values()):
        raise CountsError(f"Each role needs its own column; got {names}.")
    frame = _pandas(df, columns)
    for col in [c for c in (item, model, cluster, run) if c is not None]:
        bad = pd.isna(frame[col]).to_numpy()
        if bad.any():
            raise CountsError(f"Column {col!r} has missing values (rows {_rows(frame, bad)}).")
        if frame[col].dtype == object:
            bad = ~frame[col].map(is_hashable).to_numpy(dtype=bool)
            if bad.any():
                raise CountsError(f"Column {col!r} must hold labels (numbers, text); rows "
                                  f"{_rows(frame, bad)} hold "
                                  f"{[frame[col].iloc[j] for j in np.flatnonzero(bad)[:3]]}.")
    if trials is None:
        y = _numbers(frame, correct, "scores 0 or 1")
        bad = (y != 0) & (y != 1)
        if bad.any():
            raise CountsError(
                f"Scores must be 0 or 1 (or booleans); column {correct!r} has "
                f"{sorted({plain(v) for v in y[bad]})[:5]} in rows {_rows(frame, bad)}. For a "
                "count of successes out of several runs name the runs column with trials=.")
        n = np.ones_like(y)
    else:
        y = _numbers(frame, correct, "counts of successes")
        n = _numbers(frame, trials, "numbers of runs")
        bad = ((n < 1) | (n != np.round(n)) | (y < 0) | (y > n) | (y != np.round(y))
               | (n > MAX_COUNT))
        if bad.any():
            raise CountsError(f"Each row needs whole numbers 0 <= {correct} <= {trials} with "
                              f"1 <= {trials} <= 2**53; rows {_rows(frame, bad)} do not.")
    keys = [model, item] + ([run] if run is not None else [])
    dup = frame.duplicated(subset=keys, keep=False).to_numpy()
    if dup.any():
        hint = ("" if run is not None else
                "; if these are repeated runs of the same item, name the run column with run=")
        raise CountsError(f"Duplicate rows for the same {' and '.join(keys)}: rows "
                          f"{_rows(frame, dup)}{hint}.")
    m_codes, models = pd.factorize(pd.Series(names_as_text(frame[model], model)), sort=False)
    i_codes, items = pd.factorize(_item_labels(frame[item], item), sort=False)
    clusters = None
    if cluster is not None:
        per_item = frame.groupby(i_codes, sort=True)[cluster].nunique()
        if (per_item > 1).any():
            shown = [plain(items[k]) for k in per_item.index[per_item.to_numpy() > 1][:5]]
            raise CountsError(f"Column {cluster!r} must be constant within an item; items "
                              f"{shown} have rows in several clusters.")
        names_as_text(frame[cluster], cluster)  # 1 and "1": one cluster by name, or two?
        first = pd.Series(frame[cluster].to_numpy(), index=i_codes)
        clusters = [plain(v) for v in first[~first.index.duplicated()].sort_index().to_numpy()]
    m_, n_ = len(models), len(items)
    seen = np.zeros((m_, n_), dtype=bool)
    seen[m_codes, i_codes] = True
    if not seen.all():
        lines = []
        for m in np.flatnonzero(~seen.all(axis=1))[:5]:
            gone = [plain(items[k]) for k in np.flatnonzero(~seen[m])[:5]]
            lines.append(f"{models[m]!r} lacks {int((~seen[m]).sum())} item(s), e.g. {gone}")
        raise CountsError("Every model must have every item (paired comparisons need the same "
                          "items): " + "; ".join(lines) + ". Drop those items for all models "
                          "or add the missing results.")
    succ = np.zeros((m_, n_), dtype=np.int64)
    runs = np.zeros((m_, n_), dtype=np.int64)
    np.add.at(succ, (m_codes, i_codes), np.rint(y).astype(np.int64))
    np.add.at(runs, (m_codes, i_codes), np.rint(n).astype(np.int64))
    return succ, runs, [str(m) for m in models], [plain(x) for x in items], clusters
