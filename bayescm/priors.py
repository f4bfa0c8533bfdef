"""Prior specifications: small, typed, immutable, visible.

Priors are data.  Each model has named defaults (:func:`defaults`); users swap
any of them by name, for all classifiers at once or per classifier, and the
result is recorded in ``idata.attrs``.  Nothing here mutates what it is given.

Examples
--------
>>> from bayescm import priors
>>> priors.defaults("three_beta")
{'prevalence': Beta(1, 1), 'tpr': Beta(1, 1), 'tnr': Beta(1, 1)}
>>> priors.parse("beta:20,4")
Beta(20, 4)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The elicitation helpers live in bayescm.elicitation (one idea per module); they are
# reachable here as ``priors.elicit_beta`` etc. and imported on first use (module
# ``__getattr__`` below), which keeps ``import bayescm`` free of scipy.optimize and
# avoids a circular import.
_ELICITATION = ("beta_from_mean", "beta_pert", "describe", "dirichlet_from_mean", "elicit_beta")

__all__ = [
    "Beta",
    "Dirichlet",
    "Gamma",
    "HalfNormal",
    "Normal",
    "Prior",
    "PriorError",
    "check_names",
    "coerce",
    "defaults",
    "match_rows",
    "named",
    "parse",
    "resolve",
    "to_attrs",
    *_ELICITATION,
]


class PriorError(ValueError):
    """A prior specification that cannot be used; the message says what to change."""


@dataclass(frozen=True)
class _TwoParameter:
    """A prior with two non-negative parameters ``alpha`` and ``beta``."""

    alpha: float
    beta: float
    # How the prior was stated (``bayescm.elicitation``) and why it was chosen (for
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
    # How the prior was stated (``bayescm.elicitation``) and why it was chosen (for
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
    def _symmetric(cls, k: int, a: float, preset: str) -> Dirichlet:
        if not _is_count(k) or k < 2:
            raise PriorError(f"Dirichlet.{preset}(k) needs the number of categories k >= 2 (an "
                             f"integer), got {k!r}.")
        return cls((a,) * int(k), elicited=f"Dirichlet.{preset}({int(k)})")

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

_KINDS: dict[str, type] = {"beta": Beta, "dirichlet": Dirichlet, "gamma": Gamma}
_HOW = {
    "beta": ("bayescm.priors.Beta(a, b), a string 'beta:a,b', a pair (a, b), "
             "scipy.stats.beta(a, b) or pymc_extras Prior('Beta', alpha=a, beta=b)"),
    "dirichlet": ("bayescm.priors.Dirichlet((a1, ..., ak)), a string 'dirichlet:a1,...,ak', "
                  "a sequence of k concentrations or pymc_extras Prior('Dirichlet', a=[...])"),
    "gamma": ("bayescm.priors.Gamma(alpha, beta), a pair (alpha, beta), "
              "scipy.stats.gamma(alpha, scale=1 / beta) or pymc_extras "
              "Prior('Gamma', alpha=alpha, beta=beta)"),
}

# Each model family registers its defaults here (bayescm.models.register_family): the
# families own their priors, this module only shows them.
_DEFAULTS: dict[str, dict[str, Prior]] = {}


def register_defaults(model: str, priors: Mapping[str, Prior]) -> None:
    """Record the default priors of a model family (called by ``register_family``)."""
    _DEFAULTS[model] = dict(priors)


def defaults(model: str) -> dict[str, Prior]:
    """Default priors of a model (a fresh dict: change it freely).

    Tötsch & Hoffmann (2021) use the Laplace prior Beta(1, 1) for prevalence,
    tpr and tnr; Caelen (2017) a flat Dirichlet(1, 1, 1, 1) over the cells.
    """
    if model not in _DEFAULTS:
        import bayescm.models  # noqa: F401  (registers the built-in families)
    if model not in _DEFAULTS:
        raise KeyError(f"Unknown model {model!r}; models: {sorted(_DEFAULTS)}.")
    return dict(_DEFAULTS[model])


def coerce(spec: Any, *, kind: str | None = None, name: str = "the parameter",
           matrix: bool = False) -> Prior:
    """Turn any accepted prior into a :class:`Beta`, :class:`Dirichlet` or :class:`Gamma`.

    The one place where priors are read; every builder and function that takes
    ``priors={name: prior}`` goes through it (via :func:`resolve` or directly).

    Parameters
    ----------
    spec
        One of

        * bayescm's own specs: :class:`Beta`, :class:`Dirichlet`, :class:`Gamma`;
        * a string ``"beta:a,b"`` or ``"dirichlet:a1,...,ak"``;
        * a ``pymc_extras.prior.Prior`` (or any object with a ``distribution``
          name and a ``parameters`` mapping): ``Prior("Beta", alpha=, beta=)`` or
          ``Prior("Beta", mu=, sigma=)``, ``Prior("Dirichlet", a=)``,
          ``Prior("Gamma", alpha=, beta=)`` or ``Prior("Gamma", mu=, sigma=)``,
          with numeric parameters;
        * a frozen ``scipy.stats.beta(a, b)`` (loc 0 and scale 1 only) or
          ``scipy.stats.gamma(a, scale=s)`` (loc 0; rate ``1 / s``);
        * a pair ``(a, b)`` (Beta, or Gamma when ``kind="gamma"``), or a sequence of
          concentrations (a NumPy array too) when ``kind="dirichlet"``; with
          ``matrix=True`` also a K×K nested sequence, array or DataFrame.
    kind
        ``"beta"``, ``"dirichlet"`` or ``"gamma"`` to require that family (and to
        read pairs and sequences as it); None accepts any.
    name
        The parameter's name, for messages.
    matrix
        The parameter is made of rows, each a Dirichlet, and takes a K×K matrix
        Dirichlet (``rows`` of ``multiclass_rows``); otherwise a matrix is an error.

    Raises
    ------
    PriorError
        For anything else, saying what to pass.

    Examples
    --------
    >>> from scipy import stats
    >>> coerce(stats.beta(2, 3), name="tpr"), coerce((2, 3), kind="gamma", name="kappa")
    (Beta(2, 3), Gamma(2, 3))
    """
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)} or None, got {kind!r}.")
    out = _coerce_any(spec, kind, name)
    if isinstance(out, Dirichlet) and len(out.shape) == 2 and not matrix:
        raise PriorError(
            f"The prior for {name!r} is a {out.shape[0]}×{out.shape[1]} matrix {out!r}; only a "
            "parameter made of one Dirichlet per row (multiclass_rows' 'rows') takes a matrix. "
            f"Pass a sequence of concentrations for {name!r}.")
    if kind is not None and not isinstance(out, _KINDS[kind]):
        raise PriorError(
            f"The prior for {name!r} must be a {_KINDS[kind].__name__}, got {out!r}; pass "
            f"{_HOW[kind]}."
        )
    return out


def _coerce_any(spec: Any, kind: str | None, name: str) -> Prior:
    how = _HOW[kind or "beta"]
    if isinstance(spec, tuple(_KINDS.values())):
        return spec
    scale = _read_normal(spec, kind, name)  # Normal / HalfNormal (bayescm.priors_normal)
    if scale is not None:
        return scale
    if isinstance(spec, str):
        return parse(spec)
    dist = getattr(spec, "distribution", None)
    params = getattr(spec, "parameters", None)
    if isinstance(dist, str) and isinstance(params, Mapping):  # pymc_extras Prior
        return _from_named(dist, dict(params), name, how)
    frozen = getattr(spec, "dist", None)
    if hasattr(frozen, "shapes") and hasattr(spec, "args") and hasattr(spec, "kwds"):
        return _from_scipy(spec, name, how)
    if kind == "dirichlet" and getattr(spec, "ndim", 0) in (1, 2):  # array or DataFrame
        return Dirichlet(spec)
    if isinstance(spec, Sequence) and not isinstance(spec, bytes):
        if kind == "dirichlet" and spec and all(isinstance(r, Sequence) for r in spec):
            return Dirichlet(spec)  # a matrix of rows
        try:
            values = tuple(float(v) for v in spec)
        except (TypeError, ValueError):
            values = ()
        if kind == "dirichlet" and values:
            return Dirichlet(values)
        if len(values) == 2:
            return (Gamma if kind == "gamma" else Beta)(*values)
    raise PriorError(f"Cannot use {spec!r} as the prior for {name!r}; pass {how}.")


def _number(value: Any, what: str, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise PriorError(
            f"Prior for {name!r}: parameter {what} must be a number, got {value!r} (nested "
            "or hierarchical priors are not supported here)."
        ) from None


def _from_named(dist: str, params: dict[str, Any], name: str, how: str) -> Prior:
    keys = set(params)
    if dist in ("Beta", "Gamma"):
        if keys == {"alpha", "beta"}:
            a, b = (_number(params[k], k, name) for k in ("alpha", "beta"))
            return Beta(a, b) if dist == "Beta" else Gamma(a, b)
        if keys == {"mu", "sigma"}:
            mu, sigma = (_number(params[k], k, name) for k in ("mu", "sigma"))
            if dist == "Gamma" and mu > 0 and sigma > 0:
                return Gamma(mu**2 / sigma**2, mu / sigma**2)
            kappa = mu * (1 - mu) / sigma**2 - 1 if sigma > 0 else -1.0
            if dist == "Beta" and 0 < mu < 1 and kappa > 0:
                return Beta(mu * kappa, (1 - mu) * kappa)
            raise PriorError(f"Prior for {name!r}: {dist}(mu={mu:g}, sigma={sigma:g}) is not a "
                             "valid distribution.")
    if dist == "Dirichlet" and keys == {"a"}:
        try:
            return Dirichlet(params["a"])
        except PriorError:
            pass
    raise PriorError(
        f"Prior for {name!r}: cannot use {dist} with parameters {sorted(params)}; pass {how}."
    )


def _from_scipy(spec: Any, name: str, how: str) -> Prior:
    dist = spec.dist
    shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
    params = {"loc": 0.0, "scale": 1.0}
    params.update(zip([*shapes, "loc", "scale"], spec.args, strict=False))
    params.update(spec.kwds)
    family = getattr(dist, "name", type(dist).__name__)
    if family == "beta" and set(shapes) == {"a", "b"}:
        if float(params["loc"]) != 0 or float(params["scale"]) != 1:
            raise PriorError(
                f"Prior for {name!r}: scipy.stats.beta with loc={params['loc']:g}, "
                f"scale={params['scale']:g} is not a distribution on (0, 1); pass "
                "scipy.stats.beta(a, b) without loc and scale."
            )
        return Beta(float(params["a"]), float(params["b"]))
    if family == "gamma" and shapes == ["a"]:
        if float(params["loc"]) != 0 or not float(params["scale"]) > 0:
            raise PriorError(
                f"Prior for {name!r}: scipy.stats.gamma with loc={params['loc']:g} is not "
                "supported; pass scipy.stats.gamma(alpha, scale=1 / beta)."
            )
        return Gamma(float(params["a"]), 1.0 / float(params["scale"]))
    raise PriorError(f"Prior for {name!r}: cannot use scipy's {family} distribution; pass {how}.")


def check_names(
    priors: Any,
    defaults: Mapping[str, Prior],
    *,
    where: str,
    hints: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``priors`` as a dict after checking it is ``{name: prior}`` with known names.

    ``hints`` adds a sentence for particular unknown names (e.g. why a parameter
    plays no role).  Raises :class:`PriorError` saying what to pass.
    """
    if priors is not None and (not isinstance(priors, Mapping) or hasattr(priors, "parameters")):
        example = next(iter(defaults))
        raise PriorError(
            f"{where}: priors must be a dict {{name: prior}} with names {list(defaults)}, e.g. "
            f"{{{example!r}: {defaults[example]!r}}}; got {type(priors).__name__}."
        )
    given = dict(priors or {})
    unknown = sorted(set(map(str, given)) - set(defaults))
    if unknown:
        hint = "".join(f" ({text})" for key, text in (hints or {}).items() if key in unknown)
        raise PriorError(
            f"{where}: priors has unknown key(s) {unknown}{hint}; it takes priors for "
            f"{list(defaults)} only."
        )
    return given


def named(
    priors: Mapping[str, Any] | None,
    defaults: Mapping[str, Prior],
    *,
    where: str,
    proper: bool = False,
) -> dict[str, Prior]:
    """``defaults`` with the user's ``priors={name: prior}`` applied, each coerced.

    For functions whose priors are one per named quantity (no per-classifier
    mappings).  Every value goes through :func:`coerce` with the default's family.

    Parameters
    ----------
    priors
        The user's mapping (None for the defaults).
    defaults
        ``name -> default prior``; its keys are the names accepted.
    where
        The function's name, for messages.
    proper
        Require proper priors (positive parameters).

    Raises
    ------
    PriorError
        For a value that is not a mapping, unknown names, or priors that cannot be used.

    Examples
    --------
    >>> named({"tpr": (2, 3)}, {"tpr": Beta(1, 1), "fpr": Beta(1, 1)}, where="roc")
    {'tpr': Beta(2, 3), 'fpr': Beta(1, 1)}
    """
    given = check_names(priors, defaults, where=where)
    out = {}
    for key, default in defaults.items():
        kind = next(k for k, cls in _KINDS.items() if isinstance(default, cls))
        out[key] = coerce(given.get(key, default), kind=kind, name=key)
        if proper and not out[key].proper:
            raise PriorError(
                f"{where}: the prior for {key!r} must be proper (positive parameters), got "
                f"{out[key]!r}; e.g. Beta(1, 1) (flat) or Beta(0.5, 0.5) (Jeffreys)."
            )
    return out


def parse(text: str) -> Prior:
    """Parse ``"beta:a,b"`` or ``"dirichlet:a1,a2,a3,a4"`` (case-insensitive)."""
    kind, _, rest = text.strip().partition(":")
    try:
        values = [float(x) for x in rest.replace(" ", "").split(",") if x]
    except ValueError as err:
        raise PriorError(f"Cannot read numbers in prior {text!r}.") from err
    kind = kind.lower()
    if kind == "beta" and len(values) == 2:
        return Beta(*values)
    if kind == "dirichlet" and values:
        return Dirichlet(tuple(values))
    raise PriorError(f"Cannot parse prior {text!r}; write 'beta:a,b' or 'dirichlet:a1,...'.")


def resolve(
    model: str,
    overrides: Mapping[str, Any] | None,
    classifiers: Sequence[str],
    *,
    units: Mapping[str, Sequence[str]] | None = None,
    base: Mapping[str, Prior] | None = None,
    matrices: Mapping[str, Sequence[Any]] | None = None,
) -> dict[str, list[Prior]]:
    """Per-unit priors: defaults with the user's overrides applied by name.

    ``overrides[name]`` is one prior for all units or a mapping ``unit -> prior``;
    units are classifiers unless ``units[name]`` names others (populations for a
    prevalence).  Unknown names are an error (typos must not pass silently).
    ``base`` replaces the model's registered defaults where their size depends on
    the data (a flat Dirichlet of length K for K classes); Dirichlet overrides must
    then have its length.  ``matrices[name]`` (class labels) marks a parameter made
    of rows, each a Dirichlet: it also takes a K×K matrix Dirichlet, which is
    matched to the labels (:func:`match_rows`) and kept unlabelled, in their order.
    """
    base = dict(defaults(model) if base is None else base)
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(base))
    if unknown:
        raise PriorError(
            f"{model} has no parameter(s) {unknown}; its priors are {sorted(base)}."
        )
    out: dict[str, list[Prior]] = {}
    units = dict(units or {})
    matrices = dict(matrices or {})
    for key, default in base.items():
        names = list(units.get(key, classifiers))
        spec = overrides.get(key, default)
        kind = next(k for k, cls in _KINDS.items() if isinstance(default, cls))
        if isinstance(spec, Mapping) and not hasattr(spec, "distribution"):
            bad = sorted(set(map(str, spec)) - set(names))
            if bad:
                raise PriorError(
                    f"Prior for {key!r} names {bad}, which are not in the data ({names})."
                )
            per = [coerce(spec.get(c, default), kind=kind, name=key, matrix=key in matrices)
                   for c in names]
        else:
            per = [coerce(spec, kind=kind, name=key, matrix=key in matrices)] * len(names)
        if key in matrices:
            per = [Dirichlet(_as_tuple(match_rows(p, matrices[key], name=key)),
                             elicited=p.elicited, rationale=p.rationale)
                   if len(p.shape) == 2 else p for p in per]
        if any(type(p) is not type(default) for p in per):
            raise PriorError(f"Prior for {key!r} must be a {type(default).__name__}.")
        if isinstance(default, Dirichlet) and any(p.shape[-1] != len(default.alpha) for p in per):
            raise PriorError(f"Prior for {key!r} needs {len(default.alpha)} concentrations.")
        out[key] = per
    return out


def to_attrs(
    priors: Mapping[str, Sequence[Prior]],
    classifiers: Sequence[str],
    units: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """JSON record of the priors actually used, for ``idata.attrs``."""
    units = units or {}
    return json.dumps({
        k: {c: repr(p) for c, p in zip(units.get(k, classifiers), v, strict=True)}
        for k, v in priors.items()
    })


# Location and scale priors (the groups family) live in their own module; registered
# here so that coerce, resolve and saved fits know them.
from bayescm.priors_normal import HOW as _NORMAL_HOW  # noqa: E402
from bayescm.priors_normal import HalfNormal, Normal  # noqa: E402
from bayescm.priors_normal import read as _read_normal  # noqa: E402

_KINDS.update(normal=Normal, halfnormal=HalfNormal)
_HOW.update(_NORMAL_HOW)


def __getattr__(name: str) -> Any:
    if name in _ELICITATION:
        from bayescm import elicitation

        return getattr(elicitation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ELICITATION})
