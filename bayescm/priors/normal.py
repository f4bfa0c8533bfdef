r"""Normal and half-normal priors: locations and scales on the logit scale.

The hierarchical ``groups`` family puts a Normal prior on each rate's mean log-odds
and half-normal priors on the standard deviations of its effects
(:func:`bayescm.models.groups`).  These specs are registered with
:mod:`bayescm.priors` (``bcm.priors.Normal``, ``bcm.priors.HalfNormal``) and go
through the same :func:`~bayescm.priors.coerce` as Beta and Gamma: bayescm's own
specs, strings ``"normal:mu,sigma"`` and ``"halfnormal:sigma"``, pairs ``(mu, sigma)``
or one number ``sigma`` where the default says which, ``pymc_extras`` priors
``Prior("Normal", mu=, sigma=)`` / ``Prior("HalfNormal", sigma=)`` and frozen
``scipy.stats.norm(mu, sigma)`` / ``scipy.stats.halfnorm(scale=sigma)``.

Examples
--------
>>> from bayescm import priors
>>> priors.coerce("halfnormal:0.5", kind="halfnormal"), priors.coerce((0, 1.5), kind="normal")
(HalfNormal(0.5), Normal(0, 1.5))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bayescm.priors.specs import PriorError

__all__ = ["HalfNormal", "Normal", "read"]


def _positive(value: Any, what: str, cls: str) -> float:
    if (not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value)
            or value <= 0):
        raise PriorError(f"{cls} {what} must be a finite number > 0, got {value!r}.")
    return float(value)


@dataclass(frozen=True)
class Normal:
    r"""Normal(mu, sigma) prior on a real quantity (a mean log-odds).

    >>> Normal(0, 1.5).params
    (0.0, 1.5)
    """

    mu: float
    sigma: float
    elicited: str | None = field(default=None, compare=False, repr=False, kw_only=True)
    rationale: str | None = field(default=None, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        if (not isinstance(self.mu, int | float) or isinstance(self.mu, bool)
                or not math.isfinite(self.mu)):
            raise PriorError(f"Normal mu must be a finite number, got {self.mu!r}.")
        object.__setattr__(self, "mu", float(self.mu))
        object.__setattr__(self, "sigma", _positive(self.sigma, "sigma", "Normal"))

    proper = True

    @property
    def params(self) -> tuple[float, float]:
        return (self.mu, self.sigma)

    def scipy(self) -> Any:
        """The frozen ``scipy.stats`` distribution."""
        from scipy import stats

        return stats.norm(self.mu, self.sigma)

    def __repr__(self) -> str:
        return f"Normal({self.mu:g}, {self.sigma:g})"


@dataclass(frozen=True)
class HalfNormal:
    r"""HalfNormal(sigma) prior on a standard deviation: :math:`|N(0, \sigma^2)|`.

    Mean :math:`\sigma\sqrt{2/\pi}`; HalfNormal(1) on a logit-scale spread says
    that effects of a few tenths to about two log-odds units are plausible and
    larger ones are not.

    >>> HalfNormal(1).params
    (1.0,)
    """

    sigma: float
    elicited: str | None = field(default=None, compare=False, repr=False, kw_only=True)
    rationale: str | None = field(default=None, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive(self.sigma, "sigma", "HalfNormal"))

    proper = True

    @property
    def params(self) -> tuple[float]:
        return (self.sigma,)

    def scipy(self) -> Any:
        """The frozen ``scipy.stats`` distribution."""
        from scipy import stats

        return stats.halfnorm(scale=self.sigma)

    def __repr__(self) -> str:
        return f"HalfNormal({self.sigma:g})"


HOW = {
    "normal": ("bayescm.priors.Normal(mu, sigma), a string 'normal:mu,sigma', a pair "
               "(mu, sigma), scipy.stats.norm(mu, sigma) or pymc_extras "
               "Prior('Normal', mu=mu, sigma=sigma)"),
    "halfnormal": ("bayescm.priors.HalfNormal(sigma), a string 'halfnormal:sigma', a number "
                   "sigma, scipy.stats.halfnorm(scale=sigma) or pymc_extras "
                   "Prior('HalfNormal', sigma=sigma)"),
}


def read(spec: Any, kind: str | None, name: str) -> Normal | HalfNormal | None:
    """``spec`` as a Normal or HalfNormal when it is written as one, else None.

    Only where such a prior can be meant (``kind`` None, ``"normal"`` or
    ``"halfnormal"``): elsewhere the caller's own message says what to pass.
    """
    if kind not in (None, *HOW):
        return None
    if isinstance(spec, str):
        head, _, rest = spec.strip().partition(":")
        head = head.lower()
        if head in HOW:
            try:
                values = [float(x) for x in rest.replace(" ", "").split(",") if x]
                return Normal(*values) if head == "normal" else HalfNormal(*values)
            except (TypeError, ValueError) as err:
                raise PriorError(f"Cannot read prior {spec!r} for {name!r}; pass "
                                 f"{HOW[head]}.") from err
        return None
    dist, params = getattr(spec, "distribution", None), getattr(spec, "parameters", None)
    if dist in ("Normal", "HalfNormal") and isinstance(params, dict):
        try:
            return (Normal(float(params["mu"]), float(params["sigma"])) if dist == "Normal"
                    else HalfNormal(float(params["sigma"])))
        except (KeyError, TypeError, ValueError) as err:
            raise PriorError(f"Prior for {name!r}: cannot use {dist} with parameters "
                             f"{sorted(params)}; pass {HOW[dist.lower()]}.") from err
    family = getattr(getattr(spec, "dist", None), "name", None)
    if family in ("norm", "halfnorm") and hasattr(spec, "kwds"):
        args = dict(zip(("loc", "scale"), spec.args, strict=False), **spec.kwds)
        loc, scale = float(args.get("loc", 0.0)), float(args.get("scale", 1.0))
        if family == "norm":
            return Normal(loc, scale)
        if loc != 0:
            raise PriorError(f"Prior for {name!r}: scipy.stats.halfnorm with loc={loc:g} is "
                             "not a scale prior; pass scipy.stats.halfnorm(scale=sigma).")
        return HalfNormal(scale)
    if kind == "normal" and isinstance(spec, tuple | list) and len(spec) == 2:
        return Normal(*(float(v) for v in spec))
    if kind == "halfnormal" and isinstance(spec, int | float) and not isinstance(spec, bool):
        return HalfNormal(float(spec))
    return None
