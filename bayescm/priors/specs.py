"""Prior specifications: small, typed, immutable, visible.

:class:`Beta`, :class:`Dirichlet` and :class:`Gamma` (location and scale priors are in
:mod:`bayescm.priors.normal`); how any accepted form is read into them is
:mod:`bayescm.priors.read`.  Nothing here mutates what it is given.

Examples
--------
>>> from bayescm.priors import Beta, Dirichlet
>>> Beta(20, 4), Beta(20, 4).alpha
(Beta(20, 4), 20.0)
>>> Dirichlet.flat(3)
Dirichlet(1, 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Beta", "Dirichlet", "Gamma", "Prior", "PriorError", "match_rows"]


class PriorError(ValueError):
    """A prior specification that cannot be used; the message says what to change."""


PriorError.__module__ = "bayescm.priors"  # where users import it from


@dataclass(frozen=True)
class _TwoParameter:
    """A prior with two non-negative parameters ``alpha`` and ``beta``."""

    alpha: float
    beta: float
    # How the prior was stated (``bayescm.priors.elicitation``) and why it was chosen (for
    # reports, ``bcm.report``); notes, not part of its identity.
    elicited: str | None = field(default=None, compare=False, repr=False, kw_only=True)
    rationale: str | None = field(default=None, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if (not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v)
                    or v < 0):
                raise PriorError(
                    f"{type(self).__name__} {name} must be a finite number >= 0, got {v!r}.")
        object.__setattr__(self, "alpha", float(self.alpha))
        object.__setattr__(self, "beta", float(self.beta))

    @property
    def proper(self) -> bool:
        """True when the prior itself integrates to one."""
        return self.alpha > 0 and self.beta > 0

    @property
    def params(self) -> tuple[float, float]:
        return (self.alpha, self.beta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.alpha:g}, {self.beta:g})"


@dataclass(frozen=True, repr=False)
class Beta(_TwoParameter):
    r"""Beta(alpha, beta) prior on a rate in (0, 1).

    ``alpha`` and ``beta`` act as pseudo-counts of successes and failures.
    Beta(1, 1) is uniform (Laplace), Beta(1/2, 1/2) Jeffreys, and Beta(0, 0)
    Haldane's improper prior, accepted only where the posterior is proper.

    ``rationale`` says why this prior was chosen (a previous study, an expert);
    ``elicited`` how it was stated (set by :func:`bayescm.priors.elicit_beta` and
    its siblings).  Both are kept through fitting, ``bcm.save`` and ``bcm.load``,
    shown by ``bcm.report``, and are not part of the prior's equality.

    >>> p = Beta(20, 4, rationale="Se of the assay in an earlier labelled study")
    >>> p == Beta(20, 4), p.rationale
    (True, 'Se of the assay in an earlier labelled study')
    """

    @classmethod
    def flat(cls) -> Beta:
        """Beta(1, 1): uniform (Bayes–Laplace); :meth:`Dirichlet.flat` at K = 2.

        >>> Beta.flat(), Beta.jeffreys(), Beta.perks()
        (Beta(1, 1), Beta(0.5, 0.5), Beta(0.5, 0.5))
        """
        return cls(1.0, 1.0, elicited="Beta.flat()")

    @classmethod
    def jeffreys(cls) -> Beta:
        """Beta(1/2, 1/2): Jeffreys' prior for a binomial rate."""
        return cls(0.5, 0.5, elicited="Beta.jeffreys()")

    @classmethod
    def perks(cls) -> Beta:
        """Beta(1/2, 1/2): Perks' prior (1/K per category at K = 2; equals Jeffreys')."""
        return cls(0.5, 0.5, elicited="Beta.perks()")


@dataclass(frozen=True)
class Dirichlet:
    r"""Dirichlet prior over categories; ``alpha`` in category order.

    ``alpha`` is a sequence of K concentrations, or -- for a parameter made of
    rows, each a Dirichlet (``rows`` of ``multiclass_rows``) -- a K×K matrix: row
    ``a`` is the Dirichlet of actual class ``a``'s predicted-class probabilities.
    A matrix is a nested sequence with rows of equal length, a 2-d NumPy array,
    or a pandas DataFrame (index = actual, columns = predicted class), which is
    matched to the data's classes by label (``labels``).  Every other parameter
    takes a 1-d Dirichlet only.

    Examples
    --------
    >>> Dirichlet((1, 1, 1)), Dirichlet([[20, 4], [4, 20]]).shape
    (Dirichlet(1, 1, 1), (2, 2))
    """

    alpha: tuple[float, ...] | tuple[tuple[float, ...], ...]
    labels: tuple[str, ...] | None = None
    # How the prior was stated (``bayescm.priors.elicitation``) and why it was chosen (for
    # reports, ``bcm.report``); notes, not part of its identity.
    elicited: str | None = field(default=None, compare=False, repr=False, kw_only=True)
    rationale: str | None = field(default=None, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        alpha, labels = self.alpha, self.labels
        if hasattr(alpha, "columns") and hasattr(alpha, "index"):  # a labelled matrix
            alpha, labels = _from_frame(alpha)
        try:
            arr = np.asarray(alpha, dtype=float)
        except (TypeError, ValueError) as err:
            raise PriorError(f"Dirichlet alpha must be numbers (a sequence of concentrations "
                             f"or a matrix with rows of equal length), got {alpha!r}.") from err
        if arr.ndim not in (1, 2) or arr.size == 0:
            raise PriorError(f"Dirichlet alpha must be a sequence of concentrations or a K×K "
                             f"matrix of them, got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise PriorError(f"Dirichlet alpha must be finite and >= 0, got {arr.tolist()}.")
        if arr.ndim == 2 and arr.shape[0] != arr.shape[1]:
            raise PriorError(f"A matrix Dirichlet has one row per class and one column per "
                             f"class (K×K), got shape {arr.shape}.")
        if labels is not None:
            labels = tuple(str(x) for x in labels)
            if arr.ndim != 2 or len(labels) != arr.shape[0]:
                raise PriorError("Dirichlet labels name the rows of a K×K matrix; got "
                                 f"{len(labels)} labels for shape {arr.shape}.")
        object.__setattr__(self, "alpha", _as_tuple(arr))
        object.__setattr__(self, "labels", labels)

    @classmethod
    def diagonal(cls, classes: int | Sequence[Any], *, correct: float,
                 wrong: float) -> Dirichlet:
        r"""A K×K row prior: ``correct`` on the diagonal, ``wrong`` off it.

        The K-class form of "TPR ~ Beta(a, b) and TNR ~ Beta(a, b)": row ``a`` is
        :math:`\mathrm{Dirichlet}(w, \dots, c, \dots, w)` with ``c`` at position
        ``a``, so by aggregation each class's recall :math:`\rho_{aa}` is a priori

        .. math::

            \mathrm{recall}_a \sim \mathrm{Beta}(c,\ (K - 1)\, w),

        with mean :math:`c / (c + (K-1) w)`, and each wrong class gets
        :math:`w / (c + (K-1) w)`.  At K = 2 it is tpr ~ Beta(c, w) and
        tnr ~ Beta(c, w).

        Parameters
        ----------
        classes
            K, or the class labels (then the matrix is matched to the data's classes
            by label).
        correct, wrong
            Concentrations on and off the diagonal (>= 0).

        Examples
        --------
        >>> Dirichlet.diagonal(3, correct=8, wrong=1)
        Dirichlet([[8, 1, 1], [1, 8, 1], [1, 1, 8]])
        >>> Dirichlet.diagonal(["cat", "dog"], correct=20, wrong=4).labels
        ('cat', 'dog')
        """
        labels = None
        if _is_count(classes):
            k = int(classes)
        else:
            labels = tuple(classes)
            k = len(labels)
        if k < 2:
            raise PriorError(f"Dirichlet.diagonal needs K >= 2 classes, got {classes!r}.")
        m = np.full((k, k), float(wrong))
        np.fill_diagonal(m, float(correct))
        return cls(_as_tuple(m), labels=labels)

    @classmethod
    def flat(cls, k: int) -> Dirichlet:
        """Dirichlet(1, ..., 1): uniform over the K-simplex (Bayes–Laplace).

        >>> Dirichlet.flat(3), Dirichlet.jeffreys(2), Dirichlet.perks(4)
        (Dirichlet(1, 1, 1), Dirichlet(0.5, 0.5), Dirichlet(0.25, 0.25, 0.25, 0.25))
        """
        return cls._symmetric(k, 1.0, "flat")

    @classmethod
    def jeffreys(cls, k: int) -> Dirichlet:
        """Dirichlet(1/2, ..., 1/2): Jeffreys' prior for a multinomial."""
        return cls._symmetric(k, 0.5, "jeffreys")

    @classmethod
    def perks(cls, k: int) -> Dirichlet:
        """Dirichlet(1/K, ..., 1/K): Perks' prior, total weight one pseudo-observation."""
        return cls._symmetric(k, 1.0 / k if _is_count(k) and k > 0 else 0.0, "perks")

    @classmethod
    def weighted(cls, k: int, total: float) -> Dirichlet:
        r"""Dirichlet(w/K, ..., w/K): ``total`` = w pseudo-observations spread evenly.

        The prior weight is the same at every K: ``weighted(k, 2)`` is Beta(1, 1)'s
        two pseudo-observations (the K-class defaults of ``multiclass_rows``), and
        ``flat(k)``, ``jeffreys(k)`` and ``perks(k)`` are ``total`` = K, K/2 and 1.
        Each component is a priori :math:`\mathrm{Beta}(w/K,\ w (K-1)/K)`.

        >>> Dirichlet.weighted(4, 2), Dirichlet.weighted(2, 2) == Dirichlet.flat(2)
        (Dirichlet(0.5, 0.5, 0.5, 0.5), True)
        """
        if (not isinstance(total, int | float | np.integer | np.floating)
                or isinstance(total, bool) or not math.isfinite(total) or total <= 0):
            raise PriorError(f"Dirichlet.weighted(k, total) needs a total weight > 0 (pseudo-"
                             f"observations), got {total!r}.")
        if not _is_count(k) or k < 2:
            raise PriorError(f"Dirichlet.weighted(k, total) needs the number of categories "
                             f"k >= 2 (an integer), got {k!r}.")
        return cls((float(total) / int(k),) * int(k),
                   elicited=f"Dirichlet.weighted({int(k)}, total={float(total):g})")

    @classmethod
    def symmetric(cls, k: int, concentration: float) -> Dirichlet:
        """Dirichlet(c, ..., c) over K categories (``"dirichlet:c"`` in the grammar).

        >>> Dirichlet.symmetric(3, 0.1)
        Dirichlet(0.1, 0.1, 0.1)
        """
        return cls._symmetric(k, concentration, "symmetric", f", {concentration!r}")

    @classmethod
    def _symmetric(cls, k: int, a: float, preset: str, extra: str = "") -> Dirichlet:
        if not _is_count(k) or k < 2:
            raise PriorError(f"Dirichlet.{preset}(k) needs the number of categories k >= 2 (an "
                             f"integer), got {k!r}.")
        return cls((a,) * int(k), elicited=f"Dirichlet.{preset}({int(k)}{extra})")

    @property
    def shape(self) -> tuple[int, ...]:
        """``(K,)`` for concentrations, ``(K, K)`` for a matrix of rows."""
        return np.shape(self.alpha)

    @property
    def proper(self) -> bool:
        return bool(np.all(np.asarray(self.alpha) > 0))

    @property
    def params(self) -> tuple[float, ...] | tuple[tuple[float, ...], ...]:
        return self.alpha

    def __repr__(self) -> str:
        if len(self.shape) == 1:
            return "Dirichlet(" + ", ".join(f"{x:g}" for x in self.alpha) + ")"
        rows = ", ".join("[" + ", ".join(f"{x:g}" for x in r) + "]" for r in self.alpha)
        extra = "" if self.labels is None else f", labels={list(self.labels)!r}"
        return f"Dirichlet([{rows}]{extra})"


def _is_count(k: Any) -> bool:
    return isinstance(k, int | np.integer) and not isinstance(k, bool)


def _as_tuple(arr: np.ndarray) -> tuple:
    return tuple(_as_tuple(x) for x in arr) if arr.ndim > 1 else tuple(float(x) for x in arr)


def _from_frame(frame: Any) -> tuple[np.ndarray, tuple[str, ...]]:
    """A DataFrame's values with its columns put in the order of its index (by label)."""
    index, columns = [str(x) for x in frame.index], [str(x) for x in frame.columns]
    if len(set(index)) != len(index) or sorted(index) != sorted(columns):
        raise PriorError(f"A DataFrame row prior needs the same class labels as index (actual) "
                         f"and columns (predicted), each once; got index {index} and columns "
                         f"{columns}.")
    order = [columns.index(x) for x in index]
    return np.asarray(frame, dtype=float)[:, order], tuple(index)


def match_rows(prior: Dirichlet, labels: Sequence[Any], *, name: str = "rows") -> np.ndarray:
    """The K×K concentrations of a row prior, in the order of the data's ``labels``.

    A 1-d Dirichlet is the same for every row; a labelled matrix is reordered by
    label (an error when its labels are not the data's); an unlabelled matrix is
    taken in the data's class order.

    Examples
    --------
    >>> match_rows(Dirichlet.diagonal(["b", "a"], correct=3, wrong=1), ["a", "b"]).tolist()
    [[3.0, 1.0], [1.0, 3.0]]
    >>> match_rows(Dirichlet((2, 1)), ["a", "b"]).tolist()
    [[2.0, 1.0], [2.0, 1.0]]
    """
    k = len(labels)
    alpha = np.asarray(prior.alpha, dtype=float)
    if alpha.ndim == 1:
        if alpha.size != k:
            raise PriorError(f"The prior for {name!r} needs {k} concentrations (one per class "
                             f"{[str(x) for x in labels]}), got {prior!r}.")
        return np.tile(alpha, (k, 1))
    if alpha.shape != (k, k):
        raise PriorError(f"The prior for {name!r} needs a {k}×{k} matrix (rows = actual, "
                         f"columns = predicted class), got shape {alpha.shape}.")
    if prior.labels is None:
        return alpha
    want = [str(x) for x in labels]
    if sorted(prior.labels) != sorted(want):
        raise PriorError(f"The prior for {name!r} is labelled {list(prior.labels)} but the data's "
                         f"classes are {want}; relabel the matrix (or pass it unlabelled, in the "
                         "data's class order).")
    order = [prior.labels.index(x) for x in want]
    return alpha[np.ix_(order, order)]


@dataclass(frozen=True, repr=False)
class Gamma(_TwoParameter):
    r"""Gamma(alpha, beta) prior on a positive quantity (shape ``alpha``, rate ``beta``).

    PyMC's parametrisation: mean :math:`\alpha / \beta`, variance
    :math:`\alpha / \beta^2` (``scipy.stats.gamma(alpha, scale=1 / beta)``).  Used
    for concentrations such as the ``kappa`` of the folds model; Gamma(0, 0) is
    improper (``proper`` is False).
    """


Prior = Beta | Dirichlet | Gamma
