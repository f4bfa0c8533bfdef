"""Agreement tables: how T >= 1 classifiers agree on unlabelled cases.

An :class:`AgreementTable` counts, per population (dim ``population``), how many
cases fall into each outcome pattern of the T classifiers (dim ``pattern``).
Patterns are named by the classifiers' calls in order, first classifier first:
for two classifiers ``"++"``, ``"+-"``, ``"-+"``, ``"--"`` (``"+-"``: the first
says positive, the second negative).

Missing results and verified cases
----------------------------------
A classifier that gave no result for a case is written ``"?"`` (``"+?"``); a case
whose true class is known carries ``"|D+"`` or ``"|D-"`` (``"+-|D+"``).  Such cells
follow the complete patterns on the ``pattern`` dim; :mod:`bayescm.data.agreement_cells`
defines them and the likelihood they enter (results missing at random are summed
out; verified cases contribute the joint probability of their class and results).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.agreement_cells import (
    CellDesign,
    canonical_cells,
    cell_design,
    parse_cell,
    patterns,
)
from bayescm.data.agreement_cells import patterns as _patterns
from bayescm.data.confusion import CountsError, resolve_positive, validate_counts


def pattern_matrix(n_classifiers: int) -> np.ndarray:
    """0/1 matrix (pattern x classifier): 1 where the classifier says positive."""
    return np.array([[c == "+" for c in p] for p in patterns(n_classifiers)], dtype=np.int64)


class AgreementTable:
    """Counts of outcome patterns of T >= 1 classifiers in P >= 1 populations.

    Parameters
    ----------
    counts
        Array of shape ``(P, C)`` (or ``(C,)`` for one population): without
        ``patterns``, the ``C = 2**T`` complete patterns in the order of
        :func:`patterns`; with ``patterns``, one column per named cell.
    classifiers
        T classifier names (default ``"A", "B", ...``).
    populations
        P population names (default ``"all"`` for one, ``"pop0", ...`` otherwise).
    patterns
        Cell names of the columns, when they include missing results (``"+?"``) or
        verified cases (``"+-|D+"``): see :mod:`bayescm.data.agreement_cells`.  The table
        keeps every cell of each block that occurs (zeros where no case fell), after
        the complete patterns.

    Raises
    ------
    CountsError
        A ``ValueError`` naming the pattern and population: negative, non-integer,
        NaN or infinite counts, a population with no cases, no classifier, a
        malformed or repeated cell name, or a count vector that does not match
        ``2**T`` patterns.

    Examples
    --------
    >>> import bayescm as bcm
    >>> tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    >>> tab.classifiers, tab.populations, int(tab.n[0])
    (('A', 'B'), ('all',), 150)
    >>> tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100,
    ...                                       "+?": 5, "--|D+": 2})
    >>> tab.patterns[4:7], tab.complete
    (('+?', '-?', '++|D+'), False)
    """

    __slots__ = ("_classifiers", "_counts", "_patterns", "_populations")

    def __init__(
        self,
        counts: Any,
        *,
        classifiers: Sequence[str] | None = None,
        populations: Sequence[str] | None = None,
        patterns: Sequence[str] | None = None,
    ) -> None:
        try:
            arr = np.array(counts, dtype=object)
        except ValueError as err:
            raise CountsError(f"Counts are not a rectangular table: {err}") from None
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2:
            raise CountsError(
                f"Counts must have shape (populations, patterns), got shape {arr.shape}."
            )
        if patterns is not None:
            arr, cells, t = _to_canonical(arr, patterns)
        else:
            n_pat = arr.shape[1]
            t = round(np.log2(n_pat)) if n_pat > 1 else 0
            if classifiers is None and (2**t != n_pat or t < 1):
                raise CountsError(
                    f"{n_pat} counts per population do not form the 2**T patterns of T >= 1 "
                    "classifiers (2, 4, 8, ...)."
                )
            if classifiers is not None:
                t = len(classifiers)
                if 2**t != n_pat:
                    raise CountsError(
                        f"{t} classifiers have {2**t} outcome patterns, but the counts "
                        f"have {n_pat} columns."
                    )
            cells = _patterns(t)
        if classifiers is not None:
            classifiers = tuple(str(c) for c in classifiers)
            if len(classifiers) != t:
                raise CountsError(
                    f"The patterns name {t} classifier(s), but {len(classifiers)} names were "
                    f"given: {list(classifiers)}."
                )
            if len(set(classifiers)) != len(classifiers):
                raise CountsError(f"Classifier names must be unique: {list(classifiers)}.")
        else:
            classifiers = tuple(chr(ord("A") + i) for i in range(t))
        if not classifiers:
            raise CountsError("An agreement table needs at least one classifier.")
        if populations is None:
            populations = ("all",) if arr.shape[0] == 1 else tuple(
                f"pop{i}" for i in range(arr.shape[0]))
        populations = tuple(str(p) for p in populations)
        fields = {name: arr[:, j] for j, name in enumerate(cells)}
        checked, pops = validate_counts(fields, populations, kind="pattern", unit="population")
        object.__setattr__(self, "_counts", checked)
        object.__setattr__(self, "_classifiers", classifiers)
        object.__setattr__(self, "_populations", pops)
        object.__setattr__(self, "_patterns", cells)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("AgreementTable is immutable; build a new one instead.")

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_counts(
        cls,
        counts: Mapping[str, Any] | Mapping[str, Mapping[str, Any]],
        *,
        classifiers: Sequence[str] | None = None,
    ) -> AgreementTable:
        """Build from ``{pattern: count}`` or ``{population: {pattern: count}}``.

        Every complete pattern of the T classifiers must be given (zeros
        explicitly).  Cells with missing results (``"+?"``) and verified cells
        (``"+-|D+"``) may be added; cells of their blocks that are not given are 0.
        """
        if not isinstance(counts, Mapping):
            raise TypeError(
                "counts must be a mapping {pattern: count}, e.g. {'++': 40, '+-': 3, "
                "'-+': 7, '--': 100}, or {population: {pattern: count}}; not "
                f"{type(counts).__name__}."
            )
        if not counts:
            raise CountsError("No counts given.")
        first = next(iter(counts.values()))
        nested = isinstance(first, Mapping)
        tables = dict(counts) if nested else {"all": counts}
        bad = [pop for pop, table in tables.items() if not isinstance(table, Mapping)]
        if bad:
            raise TypeError(
                f"counts by population must map every population to {{pattern: count}}; "
                f"population(s) {bad} are not mappings."
            )
        keys = [str(k) for table in tables.values() for k in table]
        lengths = {len(parse_cell(k)[0]) for k in keys}
        if len(lengths) != 1:
            raise CountsError(f"Patterns of different lengths {sorted(set(keys))}: they must "
                              "all name one call per classifier.")
        t = lengths.pop()
        if classifiers is not None and len(classifiers) != t:
            raise CountsError(f"Patterns have {t} calls but {len(classifiers)} classifier names "
                              "were given.")
        names = patterns(t)
        cells = canonical_cells(keys, t)
        rows = []
        for pop, table in tables.items():
            table = {str(k): v for k, v in table.items()}
            missing = [p for p in names if p not in table]
            if missing:
                raise CountsError(
                    f"Population {pop!r} lacks pattern(s) {missing}; give every pattern of "
                    f"{names}, with 0 where no case fell."
                )
            rows.append([table.get(c, 0) for c in cells])
        return cls(np.array(rows, dtype=object), classifiers=classifiers,
                   populations=list(tables) if nested else None, patterns=cells)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, classifiers: Sequence[str] | None = None
                   ) -> AgreementTable:
        """Build from a DataFrame: one row per population (index), one column per pattern."""
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            raise CountsError("from_frame needs a non-empty pandas DataFrame.")
        nested = {str(i): {str(c): frame.loc[i, c] for c in frame.columns} for i in frame.index}
        return cls.from_counts(nested, classifiers=classifiers)

    @classmethod
    def from_predictions(
        cls,
        *predictions: Any,
        population: Any = None,
        positive: Any = None,
        classifiers: Sequence[str] | None = None,
        y_true: Any = None,
    ) -> AgreementTable:
        """Cross-tabulate the predictions of T >= 1 classifiers on the same cases.

        Parameters
        ----------
        *predictions
            One 1-d sequence of labels per classifier (any two labels), or a single
            mapping ``name -> labels``.  A missing prediction (None or NaN) is a
            missing result: the case counts in a cell with ``"?"`` for that
            classifier.
        population
            Optional population label of each case (one table per population).
        positive
            The label meaning positive; may be omitted for ``{0, 1}`` or booleans.
        classifiers
            Names of the classifiers (default ``A, B, ...`` or the mapping's keys).
        y_true
            Optional true label of each case, missing (None or NaN) for cases that
            were not verified.  Verified cases count in the cells ``"...|D+"`` and
            ``"...|D-"``.

        Examples
        --------
        >>> import bayescm as bcm
        >>> tab = bcm.AgreementTable.from_predictions([1, 1, 0, 0], [1, 0, 0, 0])
        >>> tab.to_frame().loc["all"].tolist()
        [1, 1, 0, 2]
        >>> tab = bcm.AgreementTable.from_predictions([1, 1, None, 0], [1, 0, 0, 0],
        ...                                           y_true=[1, None, None, 0])
        >>> {k: v for k, v in tab.to_frame().loc["all"].items() if v}
        {'+-': 1, '?-': 1, '++|D+': 1, '--|D-': 1}
        """
        if len(predictions) == 1 and isinstance(predictions[0], Mapping):
            classifiers = classifiers or list(predictions[0])
            predictions = tuple(predictions[0].values())
        if not predictions:
            raise CountsError("An agreement table needs the predictions of a classifier.")
        names = tuple(classifiers) if classifiers is not None else tuple(
            chr(ord("A") + i) for i in range(len(predictions)))
        if len(names) != len(predictions):
            raise CountsError(f"{len(names)} names for {len(predictions)} prediction lists.")
        arrays = [np.asarray(p, dtype=object) for p in predictions]
        n = arrays[0].shape
        for name, a in zip(names, arrays, strict=True):
            if a.ndim != 1 or a.size == 0:
                raise CountsError(f"Predictions of {name!r} must be a non-empty 1-d sequence.")
            if a.shape != n:
                raise CountsError(
                    f"Predictions of {name!r} have {a.size} cases, those of {names[0]!r} "
                    f"{n[0]}: every classifier must predict the same cases."
                )
        truth = None
        if y_true is not None:
            truth = np.asarray(y_true, dtype=object)
            if truth.shape != n:
                raise CountsError(f"y_true has {truth.size} labels for {n[0]} cases.")
        missing = np.stack([pd.isna(a) for a in arrays], axis=-1)
        given = [a[~m] for a, m in zip(arrays, missing.T, strict=True)]
        if truth is not None:
            given.append(truth[~pd.isna(truth)])
        values = np.concatenate(given)
        if values.size == 0:
            raise CountsError("Every prediction is missing: there is nothing to count.")
        labels = np.unique(values.astype(str))
        raw = np.unique(values)
        pos = resolve_positive(raw if raw.size <= 2 else labels, positive)
        calls = np.stack([a == pos for a in arrays], axis=-1)
        chars = np.where(missing, "?", np.where(calls, "+", "-"))
        cell_names = np.array(["".join(row) for row in chars], dtype=object)
        if truth is not None:
            known = ~pd.isna(truth)
            suffix = np.where(truth == pos, "|D+", "|D-")
            cell_names[known] = cell_names[known] + suffix[known]
        if population is None:
            pops = np.zeros(n[0], dtype=int)
            pop_names: list[str] = ["all"]
        else:
            pop_arr = np.asarray(population, dtype=object)
            if pop_arr.shape != n:
                raise CountsError(f"population has {pop_arr.size} labels for {n[0]} cases.")
            if pd.isna(pop_arr).any():
                raise CountsError("population has missing labels.")
            pop_names = [str(p) for p in pd.unique(pop_arr)]
            pops = np.array([pop_names.index(str(p)) for p in pop_arr])
        cells = canonical_cells(list(set(cell_names)), len(names))
        counts = np.zeros((len(pop_names), len(cells)), dtype=np.int64)
        np.add.at(counts, (pops, [cells.index(c) for c in cell_names]), 1)
        return cls(counts, classifiers=names, populations=pop_names, patterns=cells)

    # -- views ----------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Read-only int64 array ``(populations, patterns)``."""
        return self._counts

    @property
    def classifiers(self) -> tuple[str, ...]:
        return self._classifiers

    @property
    def populations(self) -> tuple[str, ...]:
        return self._populations

    @property
    def patterns(self) -> tuple[str, ...]:
        """Cell names: the complete patterns, then cells with missing results or verified."""
        return self._patterns

    @property
    def complete(self) -> bool:
        """True when every case has every classifier's result and none is verified."""
        return len(self._patterns) == 2 ** len(self._classifiers)

    def design(self) -> CellDesign:
        """How each cell's probability follows from the complete patterns' (see
        :func:`bayescm.data.agreement_cells.cell_design`)."""
        return cell_design(self._patterns, len(self._classifiers))

    @property
    def n(self) -> np.ndarray:
        """Cases per population."""
        return self._counts.sum(axis=-1)

    def __len__(self) -> int:
        return len(self._populations)

    def __iter__(self) -> Iterator[str]:
        return iter(self._populations)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AgreementTable) and self._classifiers == other._classifiers
                and self._populations == other._populations
                and self._patterns == other._patterns
                and np.array_equal(self._counts, other._counts))

    def __hash__(self) -> int:
        return hash((self._classifiers, self._populations, self._patterns,
                     self._counts.tobytes()))

    def to_xarray(self) -> xr.DataArray:
        """Counts with dims ``(population, pattern)``."""
        return xr.DataArray(self._counts, dims=("population", "pattern"),
                            coords={"population": list(self._populations),
                                    "pattern": list(self.patterns)}, name="counts")

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self._counts, index=pd.Index(self._populations, name="population"),
                            columns=list(self.patterns))

    def __repr__(self) -> str:
        return (f"AgreementTable(classifiers={list(self._classifiers)}, "
                f"populations={list(self._populations)})\n{self.to_frame()}")


def pattern_index(calls: np.ndarray) -> np.ndarray:
    """Index into :func:`patterns` of boolean calls ``(..., T)`` (True = positive)."""
    t = calls.shape[-1]
    weights = 2 ** np.arange(t - 1, -1, -1)
    return ((~calls.astype(bool)).astype(np.int64) * weights).sum(axis=-1)


def _to_canonical(arr: np.ndarray, cells: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...], int]:
    """Columns named ``cells`` reordered into canonical cells (zeros where none given)."""
    names = [str(c) for c in cells]
    if len(names) != arr.shape[1]:
        raise CountsError(f"{len(names)} pattern names for {arr.shape[1]} count columns.")
    if len(set(names)) != len(names):
        raise CountsError(f"Pattern names must be unique: {names}.")
    lengths = {len(parse_cell(c)[0]) for c in names}
    if len(lengths) != 1:
        raise CountsError(f"Patterns of different lengths {names}: they must all name one "
                          "call per classifier.")
    t = lengths.pop()
    canonical = canonical_cells(names, t)
    out = np.zeros((arr.shape[0], len(canonical)), dtype=object)
    for j, name in enumerate(names):
        out[:, canonical.index(name)] = arr[:, j]
    return out, canonical, t
