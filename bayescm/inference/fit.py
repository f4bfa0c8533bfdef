"""``fit``: sample a model, add predictive draws and metrics, check convergence.

Samplers
--------
``sampler="nuts"`` (default) runs the No-U-Turn sampler.  The engine is chosen by
``engine``:

* ``"auto"``: for an unmodified model whose family has a compiled density
  (:meth:`bayescm.models.Family.kernel`; each is tested equal to the PyMC model's
  ``logp`` and gradient, and cached on disk, so neither the first fit in a fresh
  process nor a refit with new counts or priors compiles anything), nutpie's NUTS
  on it; otherwise ``"nutpie"``.  With a nutpie that cannot take the compiled
  density, ``"nutpie"`` runs with a one-line :class:`~bayescm.inference.engines.EngineNotice`.
* ``"nutpie"``: nutpie compiles the PyMC model itself (numba backend); compiled
  models are reused for the same ``pm.Model`` object.
* ``"pymc"``: plain ``pm.sample``.

``sampler="exact"`` draws i.i.d. from the family's conjugate posterior
(:meth:`bayescm.models.Family.conjugate`).  Every path returns the same InferenceData layout and
runs the same convergence check.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.family import Conjugate, Family, families, family_of, is_unmodified, spec_of
from bayescm.inference import budget, engines
from bayescm.inference import draws as draws_mod
from bayescm.inference.arguments import check_seed, check_target_accept
from bayescm.inference.convergence import ConvergenceError, ConvergenceWarning, check_convergence

if TYPE_CHECKING:
    import arviz as az
    import pymc as pm

__all__ = ["ENGINES", "FIT_STAGES", "SAMPLERS", "FitProgress", "check_sizes", "fit",
           "fit_closed_form"]

SAMPLERS = ("nuts", "exact")
ENGINES = ("auto", "nutpie", "pymc")
# what fit does, in order (FitProgress.stage); each later one takes a fraction of sampling
FIT_STAGES = ("sampling", "predictive", "prior", "log_likelihood", "convergence")


class FitProgress(NamedTuple):
    """Where :func:`fit` stands, passed to its ``progress`` function.

    ``stage`` is one of :data:`FIT_STAGES`.  While sampling, ``done`` and ``total``
    count the draws of all chains, tuning included (``total = chains * (tune +
    draws)``), reported at most four times a second; each later stage is reported
    once, as it starts, with ``done = 0, total = 1``.
    """

    stage: str
    done: int
    total: int


def fit(
    model: pm.Model,
    *,
    draws: int | None = None,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    sampler: str = "nuts",
    engine: str = "auto",
    predictive_n: int | None = None,
    predictive: bool = True,
    prior: bool = True,
    log_likelihood: bool | None = None,
    metrics: Sequence[str] | None = None,
    strict: bool = False,
    progressbar: bool = False,
    target_accept: float | None = None,
    progress: Callable[[FitProgress], None] | None = None,
) -> az.InferenceData:
    r"""Sample a bayescm model and return a complete ``arviz.InferenceData``.

    Parameters
    ----------
    model
        From a builder in :mod:`bayescm.models` (or any PyMC model; metrics are
        then added when it has a ``theta`` with dim ``cell``).
    draws, tune, chains
        Posterior draws per chain, tuning steps per chain, number of chains.
        The exact sampler ignores ``tune`` and lays its i.i.d. draws out as
        ``chains`` chains of ``draws`` (the same layout as MCMC; the convergence
        report says they are independent, so R-hat does not apply).
        ``draws=None`` (default): 1,000 for NUTS; for the exact sampler enough that
        the HDI bounds of sampled metrics are stable to ±0.005 between seeds
        (:func:`bayescm.inference.draws.exact_draws`): a million i.i.d. draws per
        unit in all, fewer where the posterior group would pass 512 MB, never fewer
        than 1,000 per chain.  One binary matrix with every metric: 250,000 per chain,
        a posterior of 320 MB and, with the prior and predictive groups, about 0.7 GB
        and 5 s; turn those groups off or pass ``draws`` for less.
    random_seed
        Seed for reproducible results.
    sampler
        ``"nuts"`` (default) or ``"exact"`` (conjugate models only).
    engine
        NUTS engine: ``"auto"``, ``"nutpie"`` or ``"pymc"`` (see module docs).
    predictive_n
        Also draw confusion matrices of a future test set with this many cases
        (group ``predictions``).
    predictive, prior
        Add the predictive groups and the prior groups (both by default).  Turn
        them off for large batches where only the posterior of the metrics is
        wanted: each group costs as much as the posterior.
    log_likelihood
        Add the ``log_likelihood`` group (one entry per case, on dim ``case``), which
        ``az.loo`` and ``az.compare`` need.  ``None`` (default): for the families
        that add it by default (the latent-class models) unless it would exceed
        :data:`bayescm.inference.draws.LOG_LIKELIHOOD_MAX_VALUES` values (then left out with a
        :class:`~bayescm.inference.draws.LogLikelihoodNotice`); ``True``: always (the labelled
        count models too); ``False``: never.
    metrics
        Metric keys to add (default: every metric of the registry).
    strict
        Raise :class:`~bayescm.inference.convergence.ConvergenceError` instead of warning
        when the convergence check fails.
    progressbar
        Show the sampler's progress bar.
    target_accept
        NUTS target acceptance rate.  Default 0.9 for bayescm's models: a zero
        cell puts posterior mass at a boundary, which is a long tail on the logit
        scale, and the engines' usual 0.8 then gives occasional spurious
        divergences.  A family may ask for more (its ``target_accept``: 0.99 for the
        hierarchical ``groups``, whose scales of few levels curve the posterior).
        Other models get the engine's default.
    progress
        Called with a :class:`FitProgress` as sampling advances and as each later
        stage starts: what a web page or a job queue shows instead of
        ``progressbar`` (the web app's fits report their draws this way).  It runs in
        the sampling thread: keep it quick (e.g. put the value on a queue).

    Returns
    -------
    arviz.InferenceData
        Groups: ``posterior`` (parameters, ``theta`` and every metric computed
        from ``theta`` per draw: the posterior of the metric), ``prior``
        (parameters and ``theta`` under the prior, when it is proper; its
        metrics are ``bcm.metrics.compute(idata.prior["theta"])``),
        ``prior_predictive``, ``observed_data`` (``counts``), ``sample_stats``,
        ``posterior_predictive`` (confusion matrices ``counts`` of a repeat of
        the experiment with the observed N, and their metrics: what a repeated
        experiment would *observe*), ``predictions`` (the same at
        ``predictive_n``), ``log_likelihood`` (``counts``: the log-likelihood of
        each case, dims chain, draw, ``case``; see ``log_likelihood``).
        ``attrs`` record the priors, sampler, engine,
        package version and the convergence verdict.  Metric draws are float64.

    Notes
    -----
    Predictive metric distributions are wider than posterior ones: for a cell
    proportion :math:`V_i/N` with :math:`V \sim \mathrm{Multinomial}(N, \theta)`,
    :math:`\theta \sim \mathrm{Dirichlet}(\alpha)`,
    :math:`\mathrm{Var}[V_i/N] = (1 + \alpha_0/N)\,\mathrm{Var}[\theta_i]`
    (Tötsch & Hoffmann 2021, S4).  Report the posterior for "how good is the
    classifier", the predictive for "what would a replication show".

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), random_seed=1)
    >>> sorted(idata.groups())[:3]
    ['observed_data', 'posterior', 'posterior_predictive']
    >>> 0.85 < float(idata.posterior["tpr"].mean()) < 0.99
    True
    """
    if draws is None:
        draws = draws_mod.default_draws(model, sampler, chains)
    _check_args(model, draws, tune, chains, sampler, engine, predictive_n)
    if progress is not None and not callable(progress):  # progressbar= is the on/off switch
        raise TypeError(f"progress takes a function of a FitProgress (or None), got "
                        f"{progress!r}; for a progress bar pass progressbar=True.")
    check_seed(random_seed)
    check_target_accept(target_accept)
    fit_start = time.perf_counter()
    keys = draws_mod.metric_keys(metrics, model.named_vars_to_dims.get("theta") or ())
    spec = spec_of(model)
    family = family_of(model)
    # A model the user extended keeps its family's names and derived quantities, but
    # not the shortcuts that assume the builder's exact density.
    pristine = family is not None and is_unmodified(model)
    if log_likelihood not in (None, True, False):
        raise ValueError(f"log_likelihood must be None, True or False, got {log_likelihood!r}.")
    if log_likelihood and not pristine:
        raise ValueError("log_likelihood=True needs a model as a bayescm builder made it; for "
                         "this one compute the pointwise log-likelihood with "
                         "pm.compute_log_likelihood.")
    rng = np.random.default_rng(random_seed)
    seeds = rng.integers(0, 2**31 - 1, size=2)
    conj = family.conjugate(model, spec) if pristine else None
    if sampler == "exact" and conj is None:
        raise ValueError(_no_exact_reason(model, family))
    budget.check_fit(model, family if pristine else None, spec, conj, keys,  # before drawing
                     draws_mod.observed(model), draws=draws, tune=tune, chains=chains,
                     sampler=sampler, predictive=predictive, predictions=predictive_n is not None,
                     prior=prior and pristine, log_likelihood=log_likelihood if pristine else False)
    stage = _stages(progress)
    if sampler == "exact":
        posterior, stats = _draw_exact(conj, draws, chains, np.random.default_rng(seeds[0]))
        used_engine = "exact"
        stage("sampling", chains * draws, chains * draws)
    else:
        if target_accept is None and spec is not None:
            target_accept = family.nuts_target_accept(spec) or 0.9
        posterior, stats, used_engine = _run_nuts(
            model, family if pristine else None, conj, engine, draws=draws, tune=tune,
            chains=chains, seed=int(seeds[0]), progressbar=progressbar,
            target_accept=target_accept,
            progress=None if progress is None else functools.partial(stage, "sampling"),
        )
    post = draws_mod.complete(posterior, model, family, spec, conj)
    parameters = _parameters(model, family, spec, post)

    groups: dict[str, xr.Dataset] = {}
    pred_rng = np.random.default_rng(seeds[1])
    observed = draws_mod.observed(model)
    groups["posterior"] = draws_mod.with_metrics(post, keys)
    groups["sample_stats"] = stats
    if observed is not None:
        groups["observed_data"] = xr.Dataset({"counts": observed})
    if observed is not None and predictive:
        stage("predictive")
        n = observed.sum(observed.dims[1:])  # cases per unit (classifier, population)
        groups["posterior_predictive"] = draws_mod.predictive(post, n, pred_rng, keys,
                                                              family, spec)
        if predictive_n is not None:
            groups["predictions"] = draws_mod.predictive(
                post, xr.full_like(n, int(predictive_n)), pred_rng, keys, family, spec)
    if prior and pristine:
        stage("prior")
    prior_ds = (draws_mod.prior_draws(model, family, spec, draws, chains, pred_rng)
                if prior and pristine else None)
    if prior_ds is not None:
        groups["prior"] = prior_ds
        if observed is not None and predictive:
            groups["prior_predictive"] = draws_mod.predictive(
                prior_ds, observed.sum(observed.dims[1:]), pred_rng, [], family, spec)
    if pristine:
        stage("log_likelihood")
        groups["log_likelihood"] = draws_mod.log_likelihood(post, observed, family, spec,
                                                            log_likelihood)
    groups = {k: v for k, v in groups.items() if v is not None}
    if spec is not None:
        groups = draws_mod.with_unit_coords(groups, spec.data)
    attrs = _attrs(family, spec, sampler, used_engine, parameters, predictive_n, random_seed)
    if pristine:  # what the builder's own model drew: later additions are the user's
        attrs["builder_variables"] = ",".join(sorted(map(str, groups["posterior"].data_vars)))
    if sampler != "exact":
        # the convergence check keeps its own cost to a share of the fit (ARVIZ_MAX_SHARE)
        attrs["fit_seconds"] = round(time.perf_counter() - fit_start, 4)
    stage("convergence")
    return _finish(groups, attrs, parameters, strict)


def _stages(progress: Callable[[FitProgress], None] | None) -> Callable[..., None]:
    """``stage(name, done=0, total=1)``: report to ``progress`` (nothing without one)."""
    def stage(name: str, done: int = 0, total: int = 1) -> None:
        if progress is not None:
            progress(FitProgress(name, int(done), int(total)))
    return stage


def fit_closed_form(
    family: str | Family,
    data: Any,
    *,
    priors: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    draws: int | None = None,
    chains: int = 4,
    random_seed: int | None = None,
    metrics: Sequence[str] | None = None,
    strict: bool = False,
) -> xr.DataTree:
    """``fit(builder(data, priors=priors, **options), sampler="exact")`` without PyMC.

    The family's closed form (:meth:`bayescm.models.Family.closed_form`) gives the
    posterior without building the model, so neither PyMC nor ArviZ is imported:
    the light path of ``bayescm summarize``.  The posterior draws (same seed), its
    metrics, ``observed_data``, ``sample_stats``, the attrs and the convergence
    verdict equal those of :func:`fit` with ``sampler="exact"``; there are no
    predictive or prior groups.  ``draws=None``: the exact sampler's default for the
    posterior group alone (:func:`bayescm.inference.draws.exact_draws`: 250,000 per
    chain at 4 chains for one binary matrix, 320 MB with every metric, about 2 s).

    Returns
    -------
    xarray.DataTree
        The groups and attrs of an InferenceData as an ``xarray.DataTree`` (what
        ArviZ 1.x calls InferenceData), read by :func:`bayescm.summary` and
        :func:`bayescm.check_convergence`.  Use :func:`fit` for an
        ``arviz.InferenceData``.

    Raises
    ------
    ValueError
        When the family has no closed form.
    """
    from bayescm.family import get_family

    fam = get_family(family) if isinstance(family, str) else family
    check_sizes(1000 if draws is None else draws, 0, chains, sampler="exact")
    check_seed(random_seed)
    closed = fam.closed_form(data, priors, options)
    if closed is None:
        raise ValueError(f"The {fam.name} family has no closed-form posterior; build its model "
                         "and use bayescm.fit.")
    keys = draws_mod.metric_keys(metrics, closed.dims.get("theta") or tuple(closed.coords))
    if draws is None:  # as fit(sampler="exact") on the built model
        draws = draws_mod.closed_form_draws(closed, chains)
    budget.check_fit(None, fam, closed.spec, closed.conjugate, keys, closed.observed,
                     draws=draws, tune=0, chains=chains, sampler="exact", predictive=False,
                     prior=False, log_likelihood=False, closed=closed)
    rng = np.random.default_rng(random_seed)
    seeds = rng.integers(0, 2**31 - 1, size=2)  # as fit: the same draws for the same seed
    posterior, stats = _draw_exact(closed.conjugate, draws, chains,
                                   np.random.default_rng(seeds[0]))
    post = draws_mod.complete(posterior, None, fam, closed.spec, closed.conjugate,
                              closed=closed)
    parameters = [n for n in fam.parameters(closed.spec) if n in post]
    groups = {"posterior": draws_mod.with_metrics(post, keys), "sample_stats": stats}
    if closed.observed is not None:
        groups["observed_data"] = xr.Dataset({"counts": closed.observed})
    groups = draws_mod.with_unit_coords(groups, closed.spec.data)
    attrs = _attrs(fam, closed.spec, "exact", "exact", parameters, None, random_seed)
    return _finish(groups, attrs, parameters, strict, arviz=False)


def _finish(groups: dict[str, xr.Dataset], attrs: dict[str, Any], parameters: list[str],
            strict: bool, *, arviz: bool = True, backend: str = "auto") -> Any:
    """The result with its convergence verdict in the attrs (warn or raise when it fails)."""
    idata = idata_mod.make(groups, attrs, arviz=arviz)
    # the attrs say which sampler ran: the check reads it (i.i.d. draws need no R-hat)
    report = check_convergence(idata, var_names=parameters, backend=backend)
    idata_mod.attrs(idata).update(converged=int(report.ok), convergence=report.message())
    if not report.ok:
        if strict:
            raise ConvergenceError(report.message())
        warnings.warn(report.message(), ConvergenceWarning, stacklevel=3)
    return idata


def _no_exact_reason(model: pm.Model, family: Family | None) -> str:
    if family is not None and type(family).conjugate is not Family.conjugate \
            and not is_unmodified(model):
        return ("This model has variables its builder did not create, so its posterior is no "
                "longer conjugate; use sampler='nuts'.")
    closed = sorted(name for name, f in families().items()
                    if type(f).conjugate is not Family.conjugate)
    return ("The exact sampler needs a model whose posterior has a closed form (built by "
            f"bayescm.models.{' or bayescm.models.'.join(closed)}); use sampler='nuts' for "
            "other models.")


def _parameters(model: pm.Model, family: Family | None, spec, post: xr.Dataset) -> list[str]:
    """The model's free parameters (what convergence is judged on)."""
    names = family.parameters(spec) if family is not None else []
    if not names:
        names = [v.name for v in model.free_RVs]
    return [n for n in names if n in post]


def _check_args(model, draws, tune, chains, sampler, engine, predictive_n) -> None:
    import pymc as pm  # a model exists, so PyMC is imported already

    if not isinstance(model, pm.Model):
        raise TypeError(
            f"fit needs a pymc.Model (from bayescm.models), got {type(model).__name__}."
        )
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}.")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}.")
    check_sizes(draws, tune, chains, sampler=sampler, engine=engine)
    if predictive_n is not None and (
        not isinstance(predictive_n, int | np.integer) or isinstance(predictive_n, bool)
        or predictive_n < 1
    ):
        raise ValueError(f"predictive_n must be a positive integer, got {predictive_n!r}.")


def check_sizes(draws: Any, tune: Any, chains: Any, *, sampler: str = "nuts",
                engine: str = "auto") -> None:
    """Raise ValueError unless ``draws >= 4``, ``tune >= 0`` and ``chains >= 1`` are
    integers, NUTS on nutpie gets ``tune >= 1``, and one value per step of every chain
    fits the memory bound (:class:`~bayescm.inference.budget.SizeError`; :func:`fit`
    then checks the whole fit's estimate).  What :func:`fit` checks first; the web app
    checks a page's fields with it.

    >>> check_sizes(1000, 1000, 0)
    Traceback (most recent call last):
    ...
    ValueError: chains must be an integer >= 1, got 0.
    >>> check_sizes(1000, 0, 4, engine="pymc")  # PyMC's NUTS may skip tuning
    """
    for name, v, low in (("draws", draws, 4), ("chains", chains, 1), ("tune", tune, 0)):
        if not isinstance(v, int | np.integer) or isinstance(v, bool) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}.")
    budget.check_steps(draws, tune, chains, sampler)
    if sampler == "nuts" and engine != "pymc" and tune == 0:
        # nutpie's adaptation windows need at least one tuning step (it panics otherwise)
        raise ValueError(
            "tune=0 cannot run on nutpie (engine='auto' or 'nutpie'): its NUTS adapts the "
            "step size and mass matrix during tuning and needs tune >= 1. Use tune >= 1 "
            "(default 1000), engine='pymc' to sample without tuning, or sampler='exact' for "
            "a conjugate model.")


# -- samplers -----------------------------------------------------------------
def _draw_exact(conj: Conjugate, draws: int, chains: int, rng: np.random.Generator):
    values = conj.draw(rng, (chains, draws))
    stats = xr.Dataset(
        {"diverging": (("chain", "draw"), np.zeros((chains, draws), dtype=bool))},
        coords={"chain": np.arange(chains), "draw": np.arange(draws)},
    )
    return values, stats


def _run_nuts(model, family, conj, engine, **kwargs) -> tuple[dict, xr.Dataset, str]:
    """Run NUTS on the requested engine; returns draws, stats and the engine that ran."""
    if engine == "auto":
        kernel = family.kernel(model, spec_of(model), conj) if family is not None else None
        if kernel is not None and not engines.kernel_supported():
            import nutpie

            warnings.warn(
                f"nutpie {nutpie.__version__} cannot take bayescm's compiled density; "
                "sampling with engine='nutpie' (nutpie compiles the PyMC model) instead.",
                engines.EngineNotice, stacklevel=3)
            kernel = None
        if kernel is not None:
            return (*engines.sample_kernel(kernel, **kwargs), "bayescm-kernel")
        engine = "nutpie"
    if engine == "nutpie":
        return (*engines.sample_nutpie(model, structure=_structure(model), **kwargs),
                "nutpie")
    return (*engines.sample_pymc(model, **kwargs), "pymc")


def _structure(model: pm.Model) -> tuple | None:
    """A key equal for models that compile to the same code (None: built by hand)."""
    spec = spec_of(model)
    if spec is None or not is_unmodified(model):
        return None
    data = tuple(sorted((v.name, np.shape(v.get_value()), str(v.dtype)) for v in model.data_vars))
    dims = tuple(sorted((k, len(v)) for k, v in model.coords.items() if v is not None))
    options = json.dumps(spec.options, sort_keys=True, default=str)
    return (spec.family, options, data, dims, spec.var_names)


def _attrs(family, spec, sampler, engine, parameters, predictive_n, seed) -> dict:
    from bayescm._version import __version__

    attrs: dict[str, Any] = {
        "inference_library": "bayescm",
        "inference_library_version": __version__,
        # the installed versions, read without importing them
        "pymc_version": importlib.metadata.version("pymc"),
        "pytensor_version": importlib.metadata.version("pytensor"),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sampler": sampler,
        "engine": engine,
        "parameters": ",".join(parameters),
        "random_seed": "None" if seed is None else int(seed),
    }
    if spec is not None:
        attrs["model"] = spec.family
        if family is not None:
            attrs["priors"] = json.dumps({name: {u: repr(p) for u, p in per.items()}
                                          for name, per in family.prior_record(spec).items()})
            attrs.update(family.attrs(spec))
            from bayescm.inference import persist

            attrs["model_spec"] = persist.encode_spec(family, spec)
    if predictive_n is not None:
        attrs["predictive_n"] = int(predictive_n)
    return attrs
