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
from dataclasses import dataclass
from typing import Any


class PriorError(ValueError):
    """A prior specification that cannot be used; the message says what to change."""


@dataclass(frozen=True)
class Beta:
    r"""Beta(alpha, beta) prior on a rate in (0, 1).

    ``alpha`` and ``beta`` act as pseudo-counts of successes and failures.
    Beta(1, 1) is uniform (Laplace), Beta(1/2, 1/2) Jeffreys, and Beta(0, 0)
    Haldane's improper prior, accepted only where the posterior is proper.
    """

    alpha: float
    beta: float

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise PriorError(f"Beta {name} must be a finite number >= 0, got {v!r}.")
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
        return f"Beta({self.alpha:g}, {self.beta:g})"


@dataclass(frozen=True)
class Dirichlet:
    """Dirichlet prior over the cells of a table; ``alpha`` in cell order."""

    alpha: tuple[float, ...]

    def __post_init__(self) -> None:
        try:
            a = tuple(float(x) for x in self.alpha)
        except (TypeError, ValueError) as err:
            raise PriorError(f"Dirichlet alpha must be numbers, got {self.alpha!r}.") from err
        if any(not math.isfinite(x) or x < 0 for x in a):
            raise PriorError(f"Dirichlet alpha must be finite and >= 0, got {a}.")
        object.__setattr__(self, "alpha", a)

    @property
    def proper(self) -> bool:
        return all(x > 0 for x in self.alpha)

    @property
    def params(self) -> tuple[float, ...]:
        return self.alpha

    def __repr__(self) -> str:
        return "Dirichlet(" + ", ".join(f"{x:g}" for x in self.alpha) + ")"


Prior = Beta | Dirichlet

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


def coerce(spec: Any, *, name: str) -> Prior:
    """Turn a user's prior into a :class:`Beta` or :class:`Dirichlet`.

    Accepts our own specs, strings like ``"beta:20,4"`` or ``"dirichlet:1,1,1,1"``,
    ``pymc_extras.prior.Prior("Beta", alpha=..., beta=...)``, frozen
    ``scipy.stats.beta(a, b)`` distributions and ``(alpha, beta)`` tuples.
    """
    if isinstance(spec, Beta | Dirichlet):
        return spec
    if isinstance(spec, str):
        return parse(spec)
    dist = getattr(spec, "distribution", None)
    params = getattr(spec, "parameters", None)
    if isinstance(dist, str) and isinstance(params, Mapping):  # pymc_extras Prior
        if dist == "Beta" and set(params) == {"alpha", "beta"}:
            return Beta(float(params["alpha"]), float(params["beta"]))
        if dist == "Dirichlet" and set(params) == {"a"}:
            return Dirichlet(tuple(params["a"]))
        raise PriorError(
            f"Prior for {name!r}: only Beta(alpha, beta) and Dirichlet(a) are supported "
            f"here, got {dist} with {sorted(params)}."
        )
    sp = getattr(spec, "dist", None)
    if getattr(sp, "name", None) == "beta" and len(getattr(spec, "args", ())) == 2:
        if getattr(spec, "kwds", {}):
            raise PriorError(f"Prior for {name!r}: scipy beta with loc/scale is not a rate prior.")
        return Beta(*map(float, spec.args))
    if isinstance(spec, Sequence) and len(spec) == 2:
        return Beta(float(spec[0]), float(spec[1]))
    raise PriorError(
        f"Cannot use {spec!r} as the prior for {name!r}; give bayescm.priors.Beta(a, b), "
        "a string 'beta:a,b', or pymc_extras Prior('Beta', alpha=a, beta=b)."
    )


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
) -> dict[str, list[Prior]]:
    """Per-unit priors: defaults with the user's overrides applied by name.

    ``overrides[name]`` is one prior for all units or a mapping ``unit -> prior``;
    units are classifiers unless ``units[name]`` names others (populations for a
    prevalence).  Unknown names are an error (typos must not pass silently).
    """
    base = defaults(model)
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(base))
    if unknown:
        raise PriorError(
            f"{model} has no parameter(s) {unknown}; its priors are {sorted(base)}."
        )
    out: dict[str, list[Prior]] = {}
    units = dict(units or {})
    for key, default in base.items():
        names = list(units.get(key, classifiers))
        spec = overrides.get(key, default)
        if isinstance(spec, Mapping) and not hasattr(spec, "distribution"):
            bad = sorted(set(map(str, spec)) - set(names))
            if bad:
                raise PriorError(
                    f"Prior for {key!r} names {bad}, which are not in the data ({names})."
                )
            per = [coerce(spec.get(c, default), name=key) for c in names]
        else:
            per = [coerce(spec, name=key)] * len(names)
        if any(type(p) is not type(default) for p in per):
            raise PriorError(f"Prior for {key!r} must be a {type(default).__name__}.")
        if isinstance(default, Dirichlet) and any(len(p.alpha) != len(default.alpha) for p in per):
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
