r"""Prior sensitivity: refit a model under other priors and see how its posterior moves.

:func:`prior_sensitivity` takes an unsampled model from a :mod:`bayescm.models`
builder, fits it as built (the *baseline*), rebuilds it through its family with each
alternative set of priors -- named overrides, the family's defaults, or every
Beta/Dirichlet prior scaled toward flat -- refits each, and returns a
:class:`PriorSensitivity`: one tidy table of how every posterior summary moved, the
fits, and a forest plot.

A refit compiles nothing: priors are data of the built model (``pm.Data``), and a
family's compiled density reads them at sampling time, so each refit of a
Hui–Walter model runs the kernel numba cached on disk (``idata.attrs["engine"] ==
"bayescm-kernel"``).  A refit of a two-classifier, two-population model with 4 chains
of 1,000 draws takes about 0.3 s, of which rebuilding the ``pm.Model`` is 0.05-0.07 s
and sampling 0.25 s (``benchmarks/bench_prior_sensitivity.py``, 2-core machine).
Changing the priors of one model in place (``pm.set_data``, 0.01 s) would save that
rebuild, but only a rebuild through the family's builder validates the new priors and
records them, and the family's identifiability verdict, exactly; so each alternative
is rebuilt.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm import idata as idata_mod
from bayescm.analysis.sensitivity_table import BASELINE, PriorSensitivity, assemble, rows_of
from bayescm.family import Family, ModelSpec, family_of, is_unmodified, spec_of
from bayescm.priors import Beta, Dirichlet, PriorError
from bayescm.stats import check_hdi_prob

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["BASELINE", "DEFAULTS", "PriorSensitivity", "prior_sensitivity", "scaled_prior"]

DEFAULTS = ("flat", "defaults")
"""Strings that stand for the family's default priors (:func:`bayescm.priors.defaults`).
``"flat"`` is another name for them, not a promise of flatness: the binary rates'
Beta(1, 1) is flat, but the K-class defaults are Dirichlet(2/K) per row cell (flat only
at K = 2), ``groups`` has Normal and HalfNormal priors and ``dawid_skene`` a
diagonal-leaning confusion prior."""
# fit's groups that a sensitivity analysis does not read: left out unless asked for
_LEAN = {"predictive": False, "prior": False, "log_likelihood": False}


def scaled_prior(prior: Any, s: float) -> Any:
    r"""A Beta or Dirichlet prior moved toward flat by the factor ``s`` in [0, 1].

    Every concentration :math:`a` becomes :math:`a' = 1 + s\,(a - 1)`: ``s = 1`` is
    the prior itself, ``s = 0`` the flat Beta(1, 1) / Dirichlet(1, ..., 1).  The
    pseudo-counts beyond the flat prior's, :math:`a - 1`, shrink by ``s``, so the mode
    keeps its direction from the centre, :math:`(a' - 1) / (a' + b' - 2) = (a - 1) /
    (a + b - 2)`.  The prior's weight shrinks only where its concentrations exceed 1: a
    prior lighter than flat (Jeffreys' Beta(1/2, 1/2), the K-class default
    Dirichlet(2/K) at K > 2) moves *up* to flat, which adds pseudo-cases (K per row
    at ``s = 0`` instead of the default's 2).  Other priors (a Gamma concentration)
    have no flat member and are returned unchanged.

    Examples
    --------
    >>> from bayescm.priors import Beta, Dirichlet
    >>> scaled_prior(Beta(20, 4), 0.5), scaled_prior(Dirichlet((3, 1, 1, 2)), 0)
    (Beta(10.5, 2.5), Dirichlet(1, 1, 1, 1))
    """
    if isinstance(prior, Beta):
        return Beta(1 + s * (prior.alpha - 1), 1 + s * (prior.beta - 1))
    if isinstance(prior, Dirichlet):
        return Dirichlet(1 + s * (np.asarray(prior.alpha, dtype=float) - 1))
    return prior


def prior_sensitivity(
    model: pm.Model,
    alternatives: Mapping[str, Any] | str | None = None,
    *,
    scale: float | Sequence[float] | None = (0.5, 0.0),
    parameters: Sequence[str] | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    hdi_prob: float = 0.95,
    **fit_kwargs: Any,
) -> PriorSensitivity:
    r"""Refit a model under alternative priors and report how each posterior summary moves.

    The model is fitted as built (``"baseline"``), then rebuilt by its family with
    each alternative's priors and refitted with the same settings and seed.  For every
    parameter and unit the table gives the posterior mean, sd and HDI under each
    alternative and

    .. math::

        \mathrm{shift} = \frac{\bar\theta_{alt} - \bar\theta_{base}}{s_{base}},\qquad
        \mathrm{width\_ratio} = \frac{w_{alt}}{w_{base}},

    the move of the posterior mean in baseline posterior sds and the ratio of HDI
    widths.  A shift well below 1 in every row says the conclusions do not hinge on
    the priors; a large one says which prior carries them.

    Parameters
    ----------
    model
        An unsampled model from a :mod:`bayescm.models` builder, unmodified (any
        registered family).
    alternatives
        ``name -> priors``: each value is what the builder's ``priors=`` takes, applied
        on top of the model's own priors (``{"sensitivity": {"A": Beta(2, 1)}}``
        changes A's sensitivity prior and keeps every other), or ``"defaults"`` (also
        spelled ``"flat"``) for the family's default priors
        (:func:`bayescm.priors.defaults`: flat Beta(1, 1) rates for the binary
        families, but not flat for K classes, Dirichlet(2/K) per row cell, nor for
        ``groups`` or ``dawid_skene``; :data:`DEFAULTS`).  The string ``"flat"`` (or
        ``"defaults"``) alone means ``{"flat": "flat"}``.
    scale
        Factors :math:`s \in [0, 1]`, each giving an alternative ``"scaled s"`` in which
        every Beta and Dirichlet prior moves toward flat: each concentration
        :math:`a \mapsto 1 + s\,(a - 1)` (:func:`scaled_prior`).  This keeps the
        direction of each prior's mode and shrinks its pseudo-counts beyond flat's by
        the factor :math:`s`: ``s = 1`` is the baseline, ``s = 0`` flat (heavier than
        a K-class default, whose concentrations 2/K are below 1).  ``None`` or ``()``
        for none.
    parameters
        Variables to report (default: the family's parameters,
        :meth:`bayescm.models.Family.parameters`).  Metric keys (``"ppv"``) and derived
        variables (``"theta"``) are accepted.
    draws, tune, chains, random_seed
        As in :func:`bayescm.fit`; every fit uses the same seed (one is drawn when
        None), so differences between alternatives are not differences of seeds.
    hdi_prob
        Mass of the HDIs.
    **fit_kwargs
        Passed to :func:`bayescm.fit` (``sampler="exact"`` for a conjugate family,
        ``engine``, ``target_accept``, ...).  The predictive, prior and log-likelihood
        groups are left out unless asked for here (the analysis reads the posterior
        only).

    Returns
    -------
    PriorSensitivity
        ``.table`` / ``.to_frame()``, ``.fits``, ``.alternatives``, ``.shifts``,
        ``.plot()``.

    Notes
    -----
    A latent-class model that an alternative leaves unidentified (flat priors on a
    model identified only through its priors) is fitted anyway: each rebuild is told
    not to warn (its builder's ``identifiability`` option, when it has one, is set to
    ``"ignore"``) and the family's verdict is recorded in the ``identifiability``
    column instead.  Fits that do not converge are marked in the table
    (``converged``, ``r_hat``, ``ess_bulk``, ``divergences``), with at most one
    :class:`~bayescm.inference.convergence.ConvergenceWarning` naming them all.

    Raises
    ------
    TypeError
        ``model`` not from a bayescm builder, or ``alternatives`` not a mapping or a
        known string.
    ValueError
        A model with variables its builder did not create, a factor outside [0, 1],
        clashing names, or ``fit_kwargs`` that :func:`bayescm.fit` does not take.
    bayescm.priors.PriorError
        An alternative naming a parameter or unit the model does not have, or priors
        the builder rejects (raised before anything is sampled).
    KeyError
        A requested parameter that is not in the posterior.

    Examples
    --------
    An expert's Beta(20, 4) on the TPR of a classifier with 26 of 26 positives found,
    against a sceptic's Beta(4, 4) and the prior scaled toward flat; exact draws:

    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> m = bcm.models.three_beta(cm, priors={"tpr": bcm.priors.Beta(20, 4)})
    >>> sens = bcm.analysis.prior_sensitivity(
    ...     m, {"sceptic": {"tpr": bcm.priors.Beta(4, 4)}}, sampler="exact", random_seed=1)
    >>> t = sens.table
    >>> t.loc[("scaled 0.5", "tpr", "cm"), "prior"]
    'Beta(10.5, 2.5)'
    >>> round(float(t.loc[("baseline", "tpr", "cm"), "mean"]), 2)   # Beta(46, 4): 0.92
    0.92
    >>> round(float(t.loc[("scaled 0", "tpr", "cm"), "mean"]), 2)   # Beta(27, 1): 0.964
    0.96
    >>> shift = t.loc[("sceptic", "tpr", "cm"), "shift"]  # Beta(30, 4): 0.882, -0.99 sds
    >>> bool(-1.1 < shift < -0.9)
    True
    """
    from bayescm.inference.fit import fit

    spec, family = _check_model(model)
    hdi_prob = check_hdi_prob(hdi_prob)
    factors = _factors(scale)
    named = _alternatives(alternatives)
    scaled = {f"scaled {s:g}": s for s in factors}
    names = [BASELINE, *named, *(f"scaled {s:g}" for s in factors)]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"Alternative name(s) {clash} are used twice (the model's own priors "
                         f"are {BASELINE!r}, scaled ones 'scaled s'); rename them.")
    bad = sorted(set(fit_kwargs) - set(inspect.signature(fit).parameters))
    if bad:
        raise ValueError(f"prior_sensitivity passes extra keywords to bcm.fit, which does not "
                         f"take {bad}.")
    built = _rebuilt(model, spec, family, named, scaled)
    parameters = _parameters(parameters, family, spec)
    seed = (int(np.random.default_rng().integers(2**31 - 1)) if random_seed is None
            else random_seed)
    kwargs = {**_LEAN, "metrics": _metrics(parameters, model), **fit_kwargs,
              "draws": draws, "tune": tune, "chains": chains, "random_seed": seed}
    from bayescm.inference.convergence import ConvergenceWarning

    fits: dict[str, Any] = {}
    records: dict[str, dict[str, Any]] = {}
    blocks = []
    for name, (m, build_seconds) in built.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            # one summarised warning at the end, not one per fit
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits[name] = fit(m, **kwargs)
        seconds = build_seconds + time.perf_counter() - start
        if name == BASELINE:
            _check_present(parameters, fits[name])
        m_spec = spec_of(m)
        records[name], rows = rows_of(name, fits[name], parameters, hdi_prob,
                                      family.prior_record(m_spec),
                                      m_spec.extra.get("identifiability"), seconds)
        blocks.append(rows)
    table, alt = assemble(records, blocks)
    not_ok = alt.index[~alt["converged"]].tolist()
    if not_ok:
        warnings.warn(
            f"{len(not_ok)} of {len(alt)} fits did not converge: {', '.join(not_ok)}. Their "
            "rows carry converged=False (and r_hat, ess_bulk, divergences); "
            ".alternatives['convergence'] says what failed. Refit with more draws and tune.",
            ConvergenceWarning, stacklevel=2)
    return PriorSensitivity(table, fits, alt, spec.family, hdi_prob, parameters, seed,
                            chains=chains, draws=draws)


def _rebuilt(model: Any, spec: ModelSpec, family: Family, named: Mapping[str, Any],
             scaled: Mapping[str, float]) -> dict[str, tuple[Any, float]]:
    """``name -> (model, seconds to build it)``: the baseline, then each alternative
    rebuilt by the family with its priors.

    Every model is built before anything is sampled, so a bad alternative fails at
    once.  A builder with an ``identifiability`` option is told not to warn: the
    verdict goes into the table.
    """
    base = family.prior_record(spec)
    options = dict(spec.options)
    if "identifiability" in options:
        options["identifiability"] = "ignore"
    out: dict[str, tuple[Any, float]] = {BASELINE: (model, 0.0)}
    for name in [*named, *scaled]:
        start = time.perf_counter()
        if name in named:
            priors = _override(base, named[name], name)
        else:
            priors = {k: {u: scaled_prior(p, scaled[name]) for u, p in per.items()}
                      for k, per in base.items()}
        out[name] = (family.rebuild(spec.data, priors, options), time.perf_counter() - start)
    return out


# -- checks -----------------------------------------------------------------------------
def _check_model(model: Any) -> tuple[ModelSpec, Family]:
    spec, family = spec_of(model), family_of(model)
    if spec is None or family is None:
        raise TypeError(f"prior_sensitivity needs an unsampled model from a bayescm.models "
                        f"builder (e.g. bcm.models.hui_walter(tab)), got "
                        f"{type(model).__name__}; for a saved fit use bcm.rebuild(idata).")
    if not is_unmodified(model):
        raise ValueError("This model has variables its builder did not create; "
                         "prior_sensitivity rebuilds models through their builder, which would "
                         "drop them. Analyse the model as the builder made it.")
    return spec, family


def _factors(scale: Any) -> list[float]:
    if scale is None:
        return []
    if isinstance(scale, int | float | np.number):
        values = [scale]
    elif isinstance(scale, Sequence | np.ndarray) and not isinstance(scale, str):
        values = list(np.ravel(np.asarray(scale, dtype=object)))
    else:
        raise ValueError(f"scale takes a factor in [0, 1] or a sequence of them, got "
                         f"{scale!r}.")
    out = []
    for s in values:
        if (isinstance(s, bool) or not isinstance(s, int | float | np.number)
                or not 0 <= float(s) <= 1):
            raise ValueError(f"scale takes factors in [0, 1] (1: the model's priors, 0: flat), "
                             f"got {s!r}.")
        out.append(float(s))
    return out


def _alternatives(alternatives: Any) -> dict[str, Any]:
    if alternatives is None:
        return {}
    if isinstance(alternatives, str):
        alternatives = {alternatives: alternatives}
    if not isinstance(alternatives, Mapping) or hasattr(alternatives, "parameters"):
        raise TypeError(f"alternatives must map a name to priors (what the builder's priors= "
                        f"takes) or to one of {DEFAULTS}, e.g. {{'sceptic': {{'tpr': "
                        f"bcm.priors.Beta(4, 4)}}}}; got {type(alternatives).__name__}.")
    out = {}
    for name, value in alternatives.items():
        if isinstance(value, str) and value not in DEFAULTS:
            raise TypeError(f"Alternative {name!r}: {value!r} is not one of {DEFAULTS}; give "
                            "a mapping of priors by name instead.")
        if not isinstance(value, str | Mapping) or hasattr(value, "parameters"):
            raise TypeError(f"Alternative {name!r} must be a mapping of priors by name (what "
                            f"the builder's priors= takes) or one of {DEFAULTS}; got "
                            f"{type(value).__name__}.")
        out[str(name)] = value
    return out


def _override(base: Mapping[str, Mapping[str, Any]], given: Any, name: str
              ) -> dict[str, dict[str, Any]]:
    """The model's priors with an alternative's applied on top (or none: the defaults)."""
    if isinstance(given, str):
        return {}  # the builder's defaults
    unknown = sorted(set(map(str, given)) - set(base))
    if unknown:
        raise PriorError(f"Alternative {name!r} names {unknown}, which the model has no prior "
                         f"for; its priors are {sorted(base)}.")
    out = {k: dict(per) for k, per in base.items()}
    for key, value in given.items():
        if isinstance(value, Mapping) and not hasattr(value, "parameters"):
            units = sorted(set(map(str, value)) - set(out[key]))
            if units:
                raise PriorError(f"Alternative {name!r}: the prior for {key!r} names {units}, "
                                 f"which are not in the data ({list(out[key])}).")
            out[key].update({str(u): p for u, p in value.items()})
        else:
            out[key] = dict.fromkeys(out[key], value)
    return out


def _parameters(parameters: Any, family: Family, spec: ModelSpec) -> list[str]:
    if parameters is None:
        return list(family.parameters(spec))
    if isinstance(parameters, str):
        return [parameters]
    return [str(p) for p in parameters]


def _metrics(parameters: Sequence[str], model: Any) -> list[str]:
    """Requested names that the metric registry computes (the rest are variables)."""
    from bayescm.inference import draws as draws_mod

    dims = model.named_vars_to_dims.get("theta") or ()
    out = []
    for p in parameters:
        if p in model.named_vars:
            continue
        try:
            out += draws_mod.metric_keys([p], dims)
        except (KeyError, ValueError):
            continue  # a derived variable (theta) or unknown: checked against the posterior
    return out


def _check_present(parameters: Sequence[str], idata: Any) -> None:
    post = idata_mod.group(idata, "posterior")
    missing = [p for p in parameters if p not in post]
    if missing:
        raise KeyError(f"Parameter(s) {missing} are not in the posterior; choose from "
                       f"{sorted(map(str, post.data_vars))}.")
