"""Agreement tables: how T >= 2 classifiers agree on unlabelled cases.

An :class:`AgreementTable` counts, per population (dim ``population``), how many
cases fall into each outcome pattern of the T classifiers (dim ``pattern``).
Patterns are named by the classifiers' calls in order, first classifier first:
for two classifiers ``"++"``, ``"+-"``, ``"-+"``, ``"--"`` (``"+-"``: the first
says positive, the second negative).

Missing predictions
-------------------
Rows in which any classifier has no prediction (None or NaN) are **rejected** with
a message giving their number: modelling them by their marginal pattern is not
implemented, and silently dropping them could bias the prevalence.  Drop or impute
them explicitly before building the table.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data import CountsError, resolve_positive, validate_counts


def patterns(n_classifiers: int) -> tuple[str, ...]:
    """Pattern names for ``n_classifiers`` classifiers, ``"+" * T`` first.

    >>> patterns(2)
    ('++', '+-', '-+', '--')
    """
    return tuple("".join(p) for p in itertools.product("+-", repeat=n_classifiers))


def pattern_matrix(n_classifiers: int) -> np.ndarray:
    """0/1 matrix (pattern x classifier): 1 where the classifier says positive."""
    return np.array([[c == "+" for c in p] for p in patterns(n_classifiers)], dtype=np.int64)


class AgreementTable:
    """Counts of outcome patterns of T >= 2 classifiers in P >= 1 populations.

    Parameters
    ----------
    counts
        Array of shape ``(P, 2**T)`` (or ``(2**T,)`` for one population) in the
        order of :func:`patterns`.
    classifiers
        T classifier names (default ``"A", "B", ...``).
    populations
        P population names (default ``"all"`` for one, ``"pop0", ...`` otherwise).

    Raises
    ------
    CountsError
        A ``ValueError`` naming the pattern and population: negative, non-integer,
        NaN or infinite counts, a population with no cases, fewer than two
        classifiers, or a count vector that does not match ``2**T`` patterns.

    Examples
    --------
    >>> import bayescm as bcm
    >>> tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    >>> tab.classifiers, tab.populations, int(tab.n[0])
    (('A', 'B'), ('all',), 150)
    """

    __slots__ = ("_classifiers", "_counts", "_populations")

    def __init__(
        self,
        counts: Any,
        *,
        classifiers: Sequence[str] | None = None,
        populations: Sequence[str] | None = None,
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
        n_pat = arr.shape[1]
        t = round(np.log2(n_pat)) if n_pat > 0 else 0
        if classifiers is not None:
            classifiers = tuple(str(c) for c in classifiers)
            t_given = len(classifiers)
            if t_given < 2:
                raise CountsError(
                    f"An agreement table needs at least two classifiers, got {list(classifiers)}."
                )
            if 2**t_given != n_pat:
                raise CountsError(
                    f"{t_given} classifiers have {2**t_given} outcome patterns, but the counts "
                    f"have {n_pat} columns."
                )
            if len(set(classifiers)) != t_given:
                raise CountsError(f"Classifier names must be unique: {list(classifiers)}.")
        elif 2**t != n_pat or t < 2:
            raise CountsError(
                f"{n_pat} counts per population do not form the 2**T patterns of T >= 2 "
                "classifiers (4, 8, 16, ...)."
            )
        else:
            classifiers = tuple(chr(ord("A") + i) for i in range(t))
        names = patterns(len(classifiers))
        if populations is None:
            populations = ("all",) if arr.shape[0] == 1 else tuple(
                f"pop{i}" for i in range(arr.shape[0]))
        populations = tuple(str(p) for p in populations)
        fields = {name: arr[:, j] for j, name in enumerate(names)}
        checked, pops = validate_counts(fields, populations, kind="pattern", unit="population")
        object.__setattr__(self, "_counts", checked)
        object.__setattr__(self, "_classifiers", classifiers)
        object.__setattr__(self, "_populations", pops)

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

        Every pattern of the T classifiers must be given (zeros explicitly).
        """
        if not counts:
            raise CountsError("No counts given.")
        first = next(iter(counts.values()))
        nested = isinstance(first, Mapping)
        tables = dict(counts) if nested else {"all": counts}
        keys = {str(k) for table in tables.values() for k in table}
        lengths = {len(k) for k in keys}
        bad = sorted(k for k in keys if set(k) - {"+", "-"})
        if bad:
            raise CountsError(f"Patterns are strings of '+' and '-'; got {bad}.")
        if len(lengths) != 1:
            raise CountsError(f"Patterns of different lengths {sorted(keys)}: they must all "
                              "name one call per classifier.")
        t = lengths.pop()
        if t < 2:
            raise CountsError("An agreement table needs at least two classifiers.")
        if classifiers is not None and len(classifiers) != t:
            raise CountsError(f"Patterns have {t} calls but {len(classifiers)} classifier names "
                              "were given.")
        names = patterns(t)
        rows = []
        for pop, table in tables.items():
            missing = [p for p in names if p not in table]
            if missing:
                raise CountsError(
                    f"Population {pop!r} lacks pattern(s) {missing}; give every pattern of "
                    f"{names}, with 0 where no case fell."
                )
            rows.append([table[p] for p in names])
        return cls(np.array(rows, dtype=object), classifiers=classifiers,
                   populations=list(tables) if nested else None)

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
    ) -> AgreementTable:
        """Cross-tabulate the predictions of T >= 2 classifiers on the same cases.

        Parameters
        ----------
        *predictions
            One 1-d sequence of labels per classifier (any two labels), or a single
            mapping ``name -> labels``.
        population
            Optional population label of each case (one table per population).
        positive
            The label meaning positive; may be omitted for ``{0, 1}`` or booleans.
        classifiers
            Names of the classifiers (default ``A, B, ...`` or the mapping's keys).

        Examples
        --------
        >>> import bayescm as bcm
        >>> tab = bcm.AgreementTable.from_predictions([1, 1, 0, 0], [1, 0, 0, 0])
        >>> tab.to_frame().loc["all"].tolist()
        [1, 1, 0, 2]
        """
        if len(predictions) == 1 and isinstance(predictions[0], Mapping):
            classifiers = classifiers or list(predictions[0])
            predictions = tuple(predictions[0].values())
        if len(predictions) < 2:
            raise CountsError("An agreement table needs predictions of at least two classifiers.")
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
        missing = np.zeros(n, dtype=bool)
        for a in arrays:
            missing |= pd.isna(a)
        if missing.any():
            raise CountsError(
                f"{int(missing.sum())} case(s) lack a prediction of at least one classifier. "
                "Missing predictions are not modelled: drop or impute those cases first."
            )
        labels = np.unique(np.concatenate(arrays).astype(str))
        raw = np.unique(np.concatenate(arrays))
        pos = resolve_positive(raw if raw.size <= 2 else labels, positive)
        calls = np.stack([a == pos for a in arrays], axis=-1)
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
        index = pattern_index(calls)
        counts = np.zeros((len(pop_names), 2 ** len(names)), dtype=np.int64)
        np.add.at(counts, (pops, index), 1)
        return cls(counts, classifiers=names, populations=pop_names)

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
        return patterns(len(self._classifiers))

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
                and np.array_equal(self._counts, other._counts))

    def __hash__(self) -> int:
        return hash((self._classifiers, self._populations, self._counts.tobytes()))

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
