"""Counting predictions into slices: group values, time windows, pandas or Dask.

A *slice* is one combination of group values (``sex=F|age=40-60``), optionally with
a time window (``window=2024-01-01``).  The slices of a sliced
:class:`~bayescm.data.ConfusionMatrix` are the cartesian product of the values each
grouping factor takes somewhere in the data, times every window between the first
and the last case: a combination nobody fell into is kept with zero counts and
flagged (``cm.empty``), so that a later model sees it (its posterior is the prior)
instead of silently losing it.

Counting is one ``groupby(...).size()`` over the raw label values, the group
values and the window index; the table of counts per (slice, y_true, y_pred) is
small and everything else (which label is positive, the cells, the empty slices)
is done on it.  The same code runs on a pandas DataFrame and on a Dask DataFrame;
on Dask the rows are never gathered: the aggregation runs on the current Dask
scheduler (a ``dask.distributed.Client`` when one is active) and only the counts
come back.  Time windows take one more pass over the time column (its minimum and
maximum fix the window edges).

Windows: ``window`` is any pandas offset alias.  Fixed-length windows (``"7D"``,
``"12h"``) start at midnight of the first case's day and follow each other without
gaps (pandas' ``Grouper(freq=..., origin="start_day")``); calendar windows
(``"W-MON"``, ``"MS"``, ``"QS"``) start on the offset's anchor at or before the
first case.  A window is labelled by its start.

Missing group values (NaN/None) are refused with a message saying to fill them:
an explicit level such as ``frame[col].fillna("missing")`` keeps those cases as a
slice of their own, dropping the rows excludes them; bayescm does not choose.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.counts import CELLS, CountsError, resolve_positive

__all__ = ["TRUTH_COLUMNS", "WINDOW", "Columns", "count_slices", "is_dask",
           "prediction_columns", "slice_label", "sum_slices"]

WINDOW = "window"
"""The level name of the time window."""

_TRUE, _PRED, _WIN = "__y_true", "__y_pred", "__window"

TRUTH_COLUMNS = ("y_true", "truth")
"""The column of true labels of a table of predictions when none is named: the first
of these that the table has (:func:`prediction_columns`)."""


def is_dask(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (checked without importing Dask)."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


def _fmt(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        if value == value.normalize() and value.tz is None:
            return value.strftime("%Y-%m-%d")
        return value.isoformat()
    return str(value)


def slice_label(levels: Mapping[str, Any]) -> str:
    """``"name=value|name=value"``: the readable label of one slice.

    >>> slice_label({"sex": "F", "window": pd.Timestamp("2024-01-08")})
    'sex=F|window=2024-01-08'
    """
    return "|".join(f"{k}={_fmt(v)}" for k, v in levels.items())


def _is_series(values: Any) -> bool:
    return isinstance(values, pd.Series) or (is_dask(values) and type(values).__name__ == "Series")


def _is_frame(values: Any) -> bool:
    return isinstance(values, pd.DataFrame) or (is_dask(values)
                                                and type(values).__name__ == "DataFrame")


def _group_columns(groups: Any, n: int | None, what: str) -> dict[str, Any]:
    """``name -> values`` from one array/Series, a mapping of them, a (pandas or Dask)
    DataFrame (one factor per column) or a list of named (pandas or Dask) Series."""
    if groups is None:
        return {}
    if _is_frame(groups):  # one factor per column
        cols = {str(c): groups[c] for c in groups.columns}
    elif isinstance(groups, Mapping):
        cols = {str(k): v for k, v in groups.items()}
    elif isinstance(groups, list | tuple) and groups and all(map(_is_series, groups)):
        names = [getattr(g, "name", None) for g in groups]
        if None in names or len(set(map(str, names))) != len(names):
            raise CountsError(f"groups= as a list of Series takes each factor's name from its "
                              f"Series, but the names are {names}; name them (.rename('sex')) "
                              "or pass a dict {name: values}.")
        cols = {str(g.name): g for g in groups}
    else:
        name = getattr(groups, "name", None)
        cols = {str(name) if name is not None else "group": groups}
    if not cols:
        raise CountsError("groups is an empty mapping; give at least one grouping factor.")
    clash = sorted(set(cols) & {WINDOW})
    if clash:
        raise CountsError(f"A grouping factor may not be called {clash[0]!r}: that is the name "
                          "of the time-window level; rename it.")
    for name, values in cols.items():
        if not is_dask(values) and n is not None and len(values) != n:
            raise CountsError(f"Group {name!r} has {len(values)} values for {n} cases in {what}; "
                              "give one value per case.")
    return cols


def _offset(window: Any) -> pd.DateOffset:
    try:
        return pd.tseries.frequencies.to_offset(window)
    except (TypeError, ValueError) as err:
        raise CountsError(f"window={window!r} is not a pandas offset alias; use e.g. '7D', "
                          "'W-MON', 'MS' or '12h'.") from err


def window_edges(first: pd.Timestamp, last: pd.Timestamp, window: Any) -> pd.DatetimeIndex:
    """Start of every window from the one holding ``first`` to the one holding ``last``.

    >>> edges = window_edges(pd.Timestamp("2024-01-03 10:00"), pd.Timestamp("2024-01-20"), "7D")
    >>> edges.strftime("%d %b").tolist()
    ['03 Jan', '10 Jan', '17 Jan']
    >>> window_edges(pd.Timestamp("2024-01-03"), pd.Timestamp("2024-02-20"), "MS").day.tolist()
    [1, 1]
    """
    offset = _offset(window)
    start = first.normalize()
    if not isinstance(offset, pd.offsets.Tick):  # calendar windows start on their anchor
        start = offset.rollback(start)
    return pd.date_range(start, last, freq=offset)


def _window_index(times: pd.Series, edges: np.ndarray) -> pd.Series:
    """Index of the window each time falls in (edges sorted, first edge <= every time)."""
    idx = np.searchsorted(edges, times.to_numpy(dtype=edges.dtype), side="right") - 1
    return pd.Series(idx, index=times.index, dtype=np.int64)


def _frame(y_true: Any, y_pred: Any, cols: Mapping[str, Any], time: Any) -> Any:
    """One (pandas or Dask) frame with the labels, the group values and the times."""
    parts = {_TRUE: y_true, _PRED: y_pred, **cols}
    if time is not None:
        parts[_WIN] = time
    lazy = [k for k, v in parts.items() if is_dask(v)]
    if lazy and len(lazy) != len(parts):
        eager = [k.strip("_") for k in parts if k not in lazy]
        raise CountsError(f"Mix of Dask and in-memory inputs ({eager} are in memory); give "
                          "every column as a Dask Series of one Dask DataFrame, or none.")
    if lazy:
        frame = parts[_TRUE].to_frame(name=_TRUE)
        for k in list(parts)[1:]:
            frame = frame.assign(**{k: parts[k]})
        return frame
    data = {}
    for k, v in parts.items():
        if isinstance(getattr(v, "dtype", None), pd.CategoricalDtype):
            arr = pd.Categorical(v)  # keeps the category order (as Dask does)
        else:
            arr = v.to_numpy() if isinstance(v, pd.Series | pd.Index) else np.asarray(v)
        if arr.ndim != 1:
            raise CountsError(f"{k.strip('_')} must be 1-d, got shape {arr.shape}.")
        data[k] = arr
    sizes = {k.strip("_"): len(a) for k, a in data.items()}
    if len(set(sizes.values())) != 1:
        raise CountsError(f"Inputs have different lengths {sizes}; give one value per case.")
    if sizes["y_true"] == 0:
        raise CountsError("y_true is empty.")
    return pd.DataFrame(data)


def _compute(*objs: Any) -> tuple:
    if objs and is_dask(objs[0]):
        import dask  # only when the user handed Dask collections

        return dask.compute(*objs)
    return objs


def count_slices(y_true: Any, y_pred: Any, *, groups: Any = None, time: Any = None,
                 window: Any = None, positive: Any = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Counts per slice (shape ``(n_slices, 4)``, cells ``tp, fn, fp, tn``) and the slices.

    ``y_true``, ``y_pred``, the group values and ``time`` are arrays/Series of one
    case each, all in memory or all Dask Series of one Dask DataFrame.  The
    slices frame is indexed by the slice labels, with one column per factor (and
    ``window``, the window start, last).
    """
    _check_window(time, window)
    n = None if is_dask(y_true) else len(y_true)
    cols = _group_columns(groups, n, "y_true")
    frame, edges = _with_windows(_frame(y_true, y_pred, cols, time), time, window)
    keys = [*cols, *([_WIN] if edges is not None else []), _TRUE, _PRED]
    grouped = frame.groupby(keys, dropna=False, observed=True)
    # the counts table is small: a tree reduction into one partition, no shuffle
    (sizes,) = _compute(grouped.size(split_out=1) if is_dask(frame) else grouped.size())
    sizes = sizes[sizes > 0]
    index = _no_missing(sizes.index.to_frame(index=False), keys)
    labels = pd.unique(np.concatenate([index[_TRUE].to_numpy(), index[_PRED].to_numpy()]))
    try:
        labels = np.sort(labels)
    except TypeError:  # labels of mixed types keep their order of appearance
        pass
    pos = resolve_positive(labels, positive)
    is_pos, pred_pos = (index[_TRUE] == pos).to_numpy(), (index[_PRED] == pos).to_numpy()
    index["__cell"] = 2 * (~is_pos).astype(int) + (~pred_pos).astype(int)  # tp fn fp tn
    return _assemble(index, sizes.to_numpy(), list(cols), edges)


def sum_slices(frame: Any, cells: Mapping[str, str], *, groups: Any, time: str | None = None,
               window: Any = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Counts already tallied (columns ``cells[c]`` for c in tp, fn, fp, tn), summed
    into slices by the group columns ``groups`` and the windows of column ``time``.

    The frame may hold several rows per slice (e.g. one per day) and may be a Dask
    DataFrame; the result is that of :func:`count_slices` on the underlying cases.
    """
    _check_window(time, window)
    names = [] if groups is None else [groups] if isinstance(groups, str) else list(groups)
    cols = _group_columns({str(g): frame[g] for g in names}, None, "the frame") if names \
        else {}
    parts = frame[[*names, *([time] if time is not None else []), *cells.values()]]
    parts = parts.rename(columns={**{cells[c]: c for c in CELLS},
                                  **({time: _WIN} if time is not None else {})})
    parts, edges = _with_windows(parts, time, window)
    keys = [*cols, *([_WIN] if edges is not None else [])]
    counts = parts[list(CELLS)]
    summed, lowest, missing = _compute(
        parts.groupby(keys, dropna=False, observed=True)[list(CELLS)]
        .sum(**({"split_out": 1} if is_dask(parts) else {})),
        counts.min().min(), counts.isna().sum().sum())
    if missing or lowest < 0:
        raise CountsError(f"The frame's counts hold {int(missing)} missing value(s) and a "
                          f"lowest value of {lowest}; counts are whole numbers >= 0.")
    index = _no_missing(summed.index.to_frame(index=False), keys)
    long = pd.concat([index.assign(__cell=i) for i in range(len(CELLS))], ignore_index=True)
    values = summed.to_numpy().T.ravel()  # cell by cell, as ``long`` is stacked
    return _assemble(long, values, list(cols), edges)


def _check_window(time: Any, window: Any) -> None:
    if window is not None and time is None:
        raise CountsError("window= needs time= (the time of each case) to bin cases into "
                          "windows.")
    if time is not None and window is None:
        raise CountsError("time= needs window= (a pandas offset alias such as '7D' or 'MS').")


def _with_windows(frame: Any, time: Any, window: Any) -> tuple[Any, pd.DatetimeIndex | None]:
    """The frame with its time column (``_WIN``) replaced by the window index."""
    if time is None:
        return frame, None
    t = frame[_WIN]
    if not pd.api.types.is_datetime64_any_dtype(t.dtype):
        if is_dask(t):
            raise CountsError("time must be a datetime column (convert it with "
                              "dd.to_datetime first).")
        try:
            t = pd.to_datetime(t)
        except (ValueError, TypeError, OverflowError) as err:
            raise CountsError(f"time must hold dates or times (datetimes, or text such as "
                              f"2024-01-31); {str(err).splitlines()[0][:120]}.") from None
    first, last, missing = _compute(t.min(), t.max(), t.isna().sum())
    if missing:
        raise CountsError(f"time has {int(missing)} missing value(s); drop those cases or "
                          "give them a time.")
    edges = window_edges(pd.Timestamp(first), pd.Timestamp(last), window)
    values = edges.to_numpy()
    if is_dask(t):
        return frame.assign(**{_WIN: t.map_partitions(_window_index, values,
                                                      meta=(_WIN, "i8"))}), edges
    return frame.assign(**{_WIN: _window_index(t, values)}), edges


def _no_missing(index: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``index`` unless a key column holds NaN/None (then a message saying what to do)."""
    for k in keys:
        if index[k].isna().any():
            what = {_TRUE: "y_true", _PRED: "y_pred"}.get(k, f"group {k!r}")
            hint = ("drop or impute missing labels first" if k in (_TRUE, _PRED) else
                    "fill them with an explicit level (e.g. .fillna('missing')) to keep those "
                    "cases as a slice, or drop those cases")
            raise CountsError(f"{what} has missing values (NaN/None); {hint}.")
    return index


def _assemble(index: pd.DataFrame, sizes: np.ndarray, cols: list[str],
              edges: pd.DatetimeIndex | None) -> tuple[np.ndarray, pd.DataFrame]:
    """The counts table over the cartesian product of the levels, and the slices frame.

    ``index`` has one row per counted (slice, cell): the factor columns, ``_WIN``
    (window index) when there are windows, and ``__cell`` (0..3); ``sizes`` the counts.
    """
    levels = [_levels(index[k]) for k in cols]
    if edges is not None:
        levels.append(list(range(len(edges))))
    factors = [*cols, *([_WIN] if edges is not None else [])]
    # position of each counted (slice, cell) in the cartesian product: the counts
    # table is filled by one scatter-add, no loop over slices
    codes = [pd.Index(lv, dtype=object).get_indexer(index[k].to_numpy(dtype=object))
             for k, lv in zip(factors, levels, strict=True)]
    shape = tuple(len(lv) for lv in levels)
    flat = np.ravel_multi_index(codes, shape) if shape else np.zeros(len(index), dtype=int)
    table = np.zeros((int(np.prod(shape)), 4), dtype=float)
    np.add.at(table, (flat, index["__cell"].to_numpy()), np.asarray(sizes, dtype=float))
    combos = list(itertools.product(*levels))
    slices = pd.DataFrame(combos, columns=[*cols, *([WINDOW] if edges is not None else [])])
    if edges is not None:
        slices[WINDOW] = edges[slices[WINDOW].to_numpy()]
    names = [slice_label(row) for row in slices.to_dict("records")]
    if len(set(names)) != len(names):
        raise CountsError("Two different group values print the same (e.g. 1 and '1'); give "
                          "each factor values of one type.")
    slices.index = pd.Index(names, name="slice")
    return table, slices


def _levels(values: pd.Series) -> list:
    """The distinct values of a factor, sorted (category order for a categorical)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return [c for c in values.cat.categories if c in set(values)]
    uniq = pd.unique(values.to_numpy())
    try:
        return sorted(uniq.tolist())
    except TypeError:  # mixed types: order of first appearance
        return uniq.tolist()


def frame_matrix(cls: type, frame: Any, *, y_true: Any, y_pred: Any, positive: Any,
                 classifier: Any, groups: Any, time: Any, window: Any) -> Any:
    """What ``ConfusionMatrix.from_frame`` builds from a frame of predictions or of counts
    by group; None for a plain pandas frame of counts (checked), its own path."""
    listed = [] if groups is None else [groups] if isinstance(groups, str) else list(groups)
    lazy = is_dask(frame)
    if not lazy and not isinstance(frame, pd.DataFrame):
        raise CountsError(f"from_frame needs a pandas DataFrame, got {type(frame).__name__}.")
    if y_true is not None or y_pred is not None:
        if y_true is None or y_pred is None:
            raise CountsError("A frame of predictions needs both y_true= and y_pred= "
                              "(the names of the label columns).")
        _need_columns(frame, [y_true, y_pred, *listed, *([time] if time else [])])
        return cls.from_predictions(frame[y_true], frame[y_pred], positive=positive,
                                    classifier=classifier,
                                    groups={str(g): frame[g] for g in listed} or None,
                                    time=None if time is None else frame[time], window=window)
    if not lazy and len(frame) == 0:
        raise CountsError("The DataFrame has no rows.")
    cols = {str(c).lower(): c for c in frame.columns}
    missing = [c for c in CELLS if c not in cols]
    if missing:
        raise CountsError(
            f"DataFrame lacks column(s) {missing}; it needs {list(CELLS)} "
            f"(has {list(frame.columns)}), or name the label columns of a frame of "
            "predictions with y_true= and y_pred=."
        )
    if listed or time is not None or window is not None:
        _need_columns(frame, [*listed, *([time] if time else []),
                              *([classifier] if classifier is not None else [])])
        table, slices = sum_slices(frame, {c: cols[c] for c in CELLS}, groups=listed,
                                   time=time, window=window)
        return cls.from_slices(table, slices, classifier=_one_classifier(frame, classifier))
    if lazy:
        raise CountsError("A Dask DataFrame of counts is summed into slices: give groups= "
                          "(or time= and window=), or .compute() it first.")
    return None


def sliced_predictions(cls: type, y_true: Any, y_pred: Any, *, positive: Any, classifier: Any,
                       groups: Any, time: Any, window: Any) -> Any:
    """What ``ConfusionMatrix.from_predictions`` builds with slicing or from Dask inputs;
    None for in-memory predictions without slicing (its own path)."""
    sliced = groups is not None or time is not None or window is not None
    if not (sliced or is_dask(y_true)):
        return None
    if isinstance(y_pred, Mapping):
        if len(y_pred) != 1:
            if sliced:
                raise CountsError(
                    f"Slicing takes one classifier's predictions, got {len(y_pred)} "
                    f"({list(y_pred)}); build one sliced ConfusionMatrix per classifier.")
            raise CountsError("Dask predictions are counted one classifier at a time; call "
                              "from_predictions once per classifier.")
        classifier, y_pred = next(iter(y_pred.items()))
    table, slices = count_slices(y_true, y_pred, groups=groups, time=time, window=window,
                                 positive=positive)
    if sliced:
        return cls.from_slices(table, slices,
                               classifier=None if classifier is None else str(classifier))
    return cls(*table[0], classifier=classifier or "cm")


def _one_classifier(frame: Any, column: Any) -> str | None:
    """The one name in the classifier column of a frame of counts by group (None
    without the column); a CountsError when it names several classifiers."""
    if column is None:
        return None
    (names,) = _compute(frame[column].drop_duplicates())
    names = [str(x) for x in names]
    if len(names) != 1:
        raise CountsError(f"Column {column!r} names {len(names)} classifiers "
                          f"({names[:5]}); slicing adds up one classifier's counts: select "
                          "one classifier's rows (one sliced ConfusionMatrix each).")
    return names[0]


def _need_columns(frame: Any, names: list[Any]) -> None:
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise CountsError(f"Column(s) {missing} are not in the frame (it has "
                          f"{list(frame.columns)}).")


@dataclass(frozen=True)
class Columns:
    """What each column of a table of predictions is (:func:`prediction_columns`)."""

    truth: str | None
    classifiers: tuple[str, ...]
    groups: tuple[str, ...]
    population: str | None

    def describe(self, unused: Sequence[str] = ()) -> str:
        """One line saying which column was taken as what (``unused`` columns left out)."""
        def names(cols: Sequence[str]) -> str:
            return ", ".join(repr(c) for c in cols if c not in unused)

        parts = [f"true labels {self.truth!r}" if self.truth else "no true labels",
                 f"classifier(s) {names(self.classifiers)}"]
        if names(self.groups):
            parts.append(f"group(s) {names(self.groups)}")
        if self.population and self.population not in unused:
            parts.append(f"population {self.population!r}")
        return "; ".join(parts)


def prediction_columns(columns: Sequence[Any], *, truth: str | None = None,
                       groups: Sequence[str] | None = None, population: str | None = None,
                       classifiers: Sequence[str] | None = None,
                       reserved: Sequence[str] = ()) -> Columns:
    """Which column of a table of predictions (one row per case) is what: the one rule
    of the CLI's ``--csv`` and the app's Upload page.

    A name given must be a column (else a :class:`CountsError` naming it and the
    columns there are); a role not given is found by name: the true labels in the
    first of :data:`TRUTH_COLUMNS` present, the groups in ``group``, the population in
    ``population``.  The classifiers are the columns named, else every other column
    (``reserved`` ones, such as a time column, excepted).

    >>> prediction_columns(["y_true", "A", "B", "group", "population"]).describe()
    "true labels 'y_true'; classifier(s) 'A', 'B'; group(s) 'group'; population 'population'"
    >>> prediction_columns(["truth", "A"]).truth
    'truth'
    """
    cols = [str(c) for c in columns]

    def need(names: Sequence[str], what: str) -> None:
        missing = [c for c in names if c not in cols]
        if missing:
            raise CountsError(f"No column {', '.join(map(repr, missing))} ({what}) in the "
                              f"table; its columns are {cols}.")

    if truth is not None:
        need([truth], "the true labels")
    else:
        truth = next((c for c in TRUTH_COLUMNS if c in cols), None)
    need(list(groups or []), "the groups")
    groups = list(groups) if groups is not None else [c for c in ("group",) if c in cols]
    if population is not None:
        need([population], "the population")
    else:
        population = "population" if "population" in cols else None
    need(list(reserved), "")
    roles = {truth, population, *groups, *reserved}
    if classifiers is not None:
        need(list(classifiers), "predictions")
        clash = sorted(roles & set(classifiers))
        if clash:
            raise CountsError(f"Column(s) {clash} cannot hold both predictions and the true "
                              "labels, groups or population.")
    chosen = list(classifiers) if classifiers is not None else [c for c in cols
                                                                if c not in roles]
    return Columns(truth, tuple(chosen), tuple(groups), population)
