"""Reading priors: the one grammar, for Python, the CLI and the app.

Every function that takes ``priors={name: prior}`` goes through :func:`resolve` (or
:func:`coerce` directly): bayescm's own specs, strings such as ``"beta:20,4"`` or
``"jeffreys"`` (the grammar of :func:`parse`), ``pymc_extras`` ``Prior`` objects, frozen
scipy distributions and plain numbers are all read here, and what cannot be used gets a
:class:`~bayescm.priors.PriorError` saying what to pass instead.  The CLI's ``--prior
NAME=TEXT`` and the app's prior fields hand their text to the same :func:`parse`, so a
text means the same prior wherever it is typed.  What was used is recorded in
``idata.attrs`` (:func:`to_attrs`).

Sizes: a text that does not list its K numbers (``"jeffreys"``, ``"dirichlet:0.1"``,
``"diagonal:8,1"``) takes K from ``parse(text, k=K)``; as a model's prior
(``priors={"rows": "jeffreys"}``, ``--prior rows=jeffreys``) K comes from the data, as
:func:`resolve` passes the model's K to :func:`parse`.

Examples
--------
>>> from bayescm import priors
>>> priors.parse("beta:20,4"), priors.parse("jeffreys", k=3)
(Beta(20, 4), Dirichlet(0.5, 0.5, 0.5))
>>> priors.coerce((2, 3))
Beta(2, 3)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bayescm.priors.defaults import defaults
from bayescm.priors.normal import HOW as _NORMAL_HOW
from bayescm.priors.normal import HalfNormal, Normal
from bayescm.priors.normal import read as _read_normal
from bayescm.priors.specs import (
    Beta,
    Dirichlet,
    Gamma,
    Prior,
    PriorError,
    _as_tuple,
    match_rows,
)

__all__ = ["check_names", "coerce", "named", "parse", "resolve", "to_attrs"]

_KINDS: dict[str, type] = {"beta": Beta, "dirichlet": Dirichlet, "gamma": Gamma,
                           "normal": Normal, "halfnormal": HalfNormal}
_HOW = {
    "beta": ("bayescm.priors.Beta(a, b), a string such as 'beta:a,b' or 'jeffreys' "
             "(bayescm.priors.parse), a pair (a, b), scipy.stats.beta(a, b) or pymc_extras "
             "Prior('Beta', alpha=a, beta=b)"),
    "dirichlet": ("bayescm.priors.Dirichlet((a1, ..., ak)), a string such as "
                  "'dirichlet:a1,...,ak' or 'jeffreys' (bayescm.priors.parse), a sequence of "
                  "k concentrations or pymc_extras Prior('Dirichlet', a=[...])"),
    "gamma": ("bayescm.priors.Gamma(alpha, beta), a string 'gamma:alpha,beta', a pair "
              "(alpha, beta), scipy.stats.gamma(alpha, scale=1 / beta) or pymc_extras "
              "Prior('Gamma', alpha=alpha, beta=beta)"),
}
# what to write, per family, when a text cannot be read (parse's grammar)
_FORMS = {
    "beta": ("beta:a,b, flat, jeffreys, perks, mean:m;weight:w, elicit:mode,lower,prob "
             "(P(X > lower) = prob), elicit_upper:mode,upper,prob or pert:minimum,mode,maximum"),
    "dirichlet": ("dirichlet:c (all equal), dirichlet:a1,...,aK, flat, jeffreys, perks, "
                  "mean:m1,...,mK;weight:w (expected proportions worth w cases); for the rows "
                  "also dirichlet:row1;...;rowK, mean:row1;...;rowK;weight:w or "
                  "diagonal:correct,wrong"),
    "gamma": "gamma:alpha,beta (shape, rate)",
}

_HOW.update(_NORMAL_HOW)


def coerce(spec: Any, *, kind: str | None = None, name: str = "the parameter",
           matrix: bool = False, k: int | None = None) -> Prior:
    """Turn any accepted prior into a :class:`Beta`, :class:`Dirichlet` or :class:`Gamma`.

    The one place where priors are read; every builder and function that takes
    ``priors={name: prior}`` goes through it (via :func:`resolve` or directly).

    Parameters
    ----------
    spec
        One of

        * bayescm's own specs: :class:`Beta`, :class:`Dirichlet`, :class:`Gamma`;
        * a string of :func:`parse`'s grammar (``"beta:a,b"``, ``"jeffreys"``, ...);
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
    k
        The number of categories, for texts that do not list them (:func:`parse`).

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
    out = _coerce_any(spec, kind, name, k)
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


def _coerce_any(spec: Any, kind: str | None, name: str, k: int | None) -> Prior:
    how = _HOW[kind or "beta"]
    if isinstance(spec, tuple(_KINDS.values())):
        return spec
    if isinstance(spec, str):
        return parse(spec, k=k, kind=kind, name=name)
    scale = _read_normal(spec, kind, name)  # Normal / HalfNormal (bayescm.priors.normal)
    if scale is not None:
        return scale
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
            # True is not a concentration, though float(True) == 1.0
            values = () if any(isinstance(v, bool) for v in spec) else tuple(
                float(v) for v in spec)
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
        out[key] = coerce(given.get(key, default), kind=kind, name=key, k=_size(default))
        if proper and not out[key].proper:
            raise PriorError(
                f"{where}: the prior for {key!r} must be proper (positive parameters), got "
                f"{out[key]!r}; e.g. Beta(1, 1) (flat) or Beta(0.5, 0.5) (Jeffreys)."
            )
    return out


def parse(text: str, *, k: int | None = None, kind: str | None = None,
          name: str = "the parameter") -> Prior:
    r"""Read a prior written as text: the one grammar of Python, the CLI and the app.

    ======================================  ===============================================
    text (family name in any case)          prior
    ======================================  ===============================================
    ``beta:a,b``                            ``Beta(a, b)``
    ``gamma:alpha,beta``                    ``Gamma(alpha, beta)`` (shape, rate)
    ``normal:mu,sigma``                     ``Normal(mu, sigma)``; ``halfnormal:sigma``
    ``dirichlet:a1,...,aK``                 ``Dirichlet((a1, ..., aK))``
    ``dirichlet:c``                         ``Dirichlet.symmetric(K, c)``: c for every one
    ``dirichlet:row1;...;rowK``             a K×K row prior (``rows`` of multiclass_rows)
    ``flat``, ``jeffreys``, ``perks``       for a rate ``Beta.flat()`` (1, 1),
                                            ``Beta.jeffreys()`` (1/2, 1/2), ``Beta.perks()``;
                                            else ``Dirichlet.flat(K)`` (1 each),
                                            ``.jeffreys(K)`` (1/2), ``.perks(K)`` (1/K)
    ``mean:m;weight:w``                     ``beta_from_mean(m, w)``: Beta(w m, w (1 - m))
    ``mean:m1,...,mK;weight:w``             ``dirichlet_from_mean``: alpha = w m (K mean rows
                                            ``mean:row1;...;rowK;weight:w`` for the rows)
    ``diagonal:correct,wrong``              ``Dirichlet.diagonal(K, correct=, wrong=)``
    ``elicit:mode,lower,prob``              ``elicit_beta(mode=, lower=, prob=)``:
                                            :math:`P(X > lower) = prob`
    ``elicit_upper:mode,upper,prob``        ``elicit_beta(mode=, upper=, prob=)``
    ``pert:minimum,mode,maximum``           ``beta_pert(minimum, mode, maximum)``
    ======================================  ===============================================

    Spaces are ignored.  Whether a text fits the parameter (a Dirichlet's length, a
    matrix for a parameter of rows, propriety with the data) is checked where the
    prior is used (:func:`resolve`, the model).  ``k`` is K for the texts that do not
    list K numbers (as a model's prior, the model supplies it: :func:`resolve`);
    ``kind`` (``"beta"``, ``"dirichlet"``, ...) the family the parameter requires: the
    presets read as it, another family is an error; ``name`` is for messages.

    Raises
    ------
    PriorError
        For a text outside the grammar, numbers that are not numbers, a form that
        needs K without ``k``, or a prior of another family than ``kind``.

    Examples
    --------
    >>> parse("beta:20,4"), parse("jeffreys", kind="beta"), parse("dirichlet:0.1", k=3)
    (Beta(20, 4), Beta(0.5, 0.5), Dirichlet(0.1, 0.1, 0.1))
    >>> parse("mean:0.5,0.3,0.2;weight:20"), parse("diagonal:8,1", k=2)
    (Dirichlet(10, 6, 4), Dirichlet([[8, 1], [1, 8]]))
    """
    if not isinstance(text, str):
        raise PriorError(f"The prior of {name} as text must be a string, got "
                         f"{type(text).__name__}.")
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)} or None, got {kind!r}.")
    head, _, rest = text.strip().partition(":")
    head = head.strip().lower()
    out = _read_text(head, rest, text, k, kind, name)
    if out is None:
        forms = _FORMS.get(kind) if kind else "; ".join(_FORMS.values())
        raise PriorError(f"Cannot read the prior of {name} ({text!r}): write "
                         f"{forms or _HOW[kind]}.")
    if kind is not None and not isinstance(out, _KINDS[kind]):
        raise PriorError(f"The prior for {name!r} must be a {_KINDS[kind].__name__}, got "
                         f"{out!r} from {text!r}: write {_FORMS.get(kind) or _HOW[kind]}.")
    return out


def _read_text(head: str, rest: str, text: str, k: int | None, kind: str | None,
               name: str) -> Prior | None:
    """The prior of one text (:func:`parse`'s table), or None outside the grammar."""
    from bayescm.priors import elicitation  # scipy.optimize: imported when used

    if head in ("normal", "halfnormal"):
        return _read_normal(text, None, name)
    if head in ("flat", "jeffreys", "perks") and not rest.strip():
        return (getattr(Beta, head)() if kind == "beta"
                else getattr(Dirichlet, head)(_needs_k(k, text, name)))
    parts = [p for p in rest.split(";") if p.strip()]
    weight = None
    if head == "mean" and parts and parts[-1].partition(":")[0].strip().lower() == "weight":
        weight = _numbers(parts.pop().partition(":")[2], text, name)
    rows = [_numbers(p, text, name) for p in parts]
    one = rows[0] if len(rows) == 1 else []
    if head in ("beta", "gamma") and len(one) == 2:
        return (Beta if head == "beta" else Gamma)(*one)
    if head == "dirichlet" and rows and all(rows):
        if len(one) == 1:
            return Dirichlet.symmetric(_needs_k(k, text, name), one[0])
        return Dirichlet(one if one else rows)
    if head == "diagonal" and len(one) == 2:
        return Dirichlet.diagonal(_needs_k(k, text, name), correct=one[0], wrong=one[1])
    if head == "mean" and rows and all(rows) and weight is not None and len(weight) == 1:
        if len(one) == 1:
            return elicitation.beta_from_mean(one[0], weight[0])
        return elicitation.dirichlet_from_mean(one if one else rows, weight[0])
    forms = {"elicit": ("mode", "lower", "prob"), "elicit_upper": ("mode", "upper", "prob")}
    if head in forms and len(one) == 3:
        return elicitation.elicit_beta(**dict(zip(forms[head], one, strict=True)))
    if head == "pert" and len(one) == 3:
        return elicitation.beta_pert(*one)
    return None


def _numbers(part: str, text: str, name: str) -> list[float]:
    try:
        return [float(x) for x in part.split(",") if x.strip()]
    except ValueError:
        raise PriorError(f"Cannot read the numbers of the prior of {name} ({text!r}).") from None


def _needs_k(k: int | None, text: str, name: str) -> int:
    if k is None:
        raise PriorError(
            f"The prior {text!r} of {name} does not say over how many categories: give K, "
            f"e.g. bayescm.priors.parse({text!r}, k=3), or pass the text as a model's prior "
            f"(priors={{'rows': {text!r}}}, --prior rows={text.strip()}), where the data give "
            "K; for a rate write kind='beta' (or beta:a,b).")
    return k


def _size(default: Prior) -> int | None:
    """The number of categories of a Dirichlet default (what texts without K take)."""
    return default.shape[-1] if isinstance(default, Dirichlet) else None


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
    if overrides is not None and (not isinstance(overrides, Mapping)
                                  or hasattr(overrides, "parameters")):
        check_names(overrides, base, where=model)  # its message: pass {name: prior}
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(base))
    if unknown:
        raise PriorError(f"{model} has no parameter(s) {unknown}; its priors are {sorted(base)}.")
    out: dict[str, list[Prior]] = {}
    units = dict(units or {})
    matrices = dict(matrices or {})
    for key, default in base.items():
        names = list(units.get(key, classifiers))
        spec = overrides.get(key, default)
        kind = next(k for k, cls in _KINDS.items() if isinstance(default, cls))
        size = _size(default)
        if isinstance(spec, Mapping) and not hasattr(spec, "distribution"):
            keyed = {str(u): p for u, p in spec.items()}  # units go by their text: 1 is '1'
            if len(keyed) < len(spec):
                raise PriorError(f"Prior for {key!r} names one unit twice: {list(spec)}.")
            bad = sorted(set(keyed) - set(map(str, names)))
            if bad:
                raise PriorError(f"Prior for {key!r} names {bad}, which are not in the data "
                                 f"({names}).")
            per = [coerce(keyed.get(str(c), default), kind=kind, name=key,
                          matrix=key in matrices, k=size) for c in names]
        else:
            per = [coerce(spec, kind=kind, name=key, matrix=key in matrices, k=size)
                   ] * len(names)
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
