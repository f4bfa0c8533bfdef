"""``fit``: sample a model, add predictive draws and metrics, check convergence.

Samplers
--------
``sampler="nuts"`` (default) runs the No-U-Turn sampler.  The engine is chosen by
``engine``:

* ``"auto"``: for an unmodified model from bayescm's builders, nutpie's NUTS on
  bayescm's compiled density of that model's posterior (:mod:`bayescm._kernels`,
  :mod:`bayescm._kernel_hui_walter`; each is tested equal to the PyMC model's
  ``logp`` and gradient, and cached on disk, so neither the first fit in a fresh
  process nor a refit with new counts or priors compiles anything); otherwise
  ``"nutpie"``.
* ``"nutpie"``: nutpie compiles the PyMC model itself (numba backend); compiled
  models are reused for the same ``pm.Model`` object.
* ``"pymc"``: plain ``pm.sample``.

``sampler="exact"`` draws i.i.d. from the conjugate posterior
(:mod:`bayescm.exact`).  Every path returns the same InferenceData layout and
runs the same convergence check.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import arviz as az
import numpy as np
import pymc as pm
import xarray as xr

from bayescm import draws as draws_mod
from bayescm import metrics as metric_registry
from bayescm.convergence import ConvergenceError, ConvergenceWarning, check_convergence
from bayescm.data import CELLS
from bayescm.exact import CONJUGATE_FAMILIES, ConjugatePosterior, conjugate_posterior
from bayescm.models._spec import is_unmodified, spec_of
from bayescm.priors import to_attrs

SAMPLERS = ("nuts", "exact")
ENGINES = ("auto", "nutpie", "pymc")
# Compiled nutpie models, by model structure: a new model with the same structure
# (new counts or prior parameters, same shapes) reuses the compiled one via
# ``with_data``; models built by hand are cached by identity.
_NUTPIE_CACHE: dict[Any, Any] = {}
_NUTPIE_BY_MODEL: weakref.WeakKeyDictionary[pm.Model, Any] = weakref.WeakKeyDictionary()


def _version() -> str:
    from bayescm import __version__

    return __version__


def fit(
    model: pm.Model,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    sampler: str = "nuts",
    engine: str = "auto",
    predictive_n: int | None = None,
    predictive: bool = True,
    prior: bool = True,
    metrics: Sequence[str] | None = None,
    strict: bool = False,
    progressbar: bool = False,
    target_accept: float | None = None,
) -> az.InferenceData:
    r"""Sample a bayescm model and return a complete ``arviz.InferenceData``.

    Parameters
    ----------
    model
        From a builder in :mod:`bayescm.models` (or any PyMC model; metrics are
        then added when it has a ``theta`` with dim ``cell``).
    draws, tune, chains
        Posterior draws per chain, tuning steps per chain, number of chains.
        The exact sampler ignores ``tune`` and splits its i.i.d. draws into
        ``chains`` chains so that R-hat can be computed as for MCMC.
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
    metrics
        Metric keys to add (default: every metric of the registry).
    strict
        Raise :class:`~bayescm.convergence.ConvergenceError` instead of warning
        when the convergence check fails.
    progressbar
        Show the sampler's progress bar.
    target_accept
        NUTS target acceptance rate.  Default 0.9 for bayescm's models: a zero
        cell puts posterior mass at a boundary, which is a long tail on the logit
        scale, and the engines' usual 0.8 then gives occasional spurious
        divergences.  Other models get the engine's default.

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
        ``predictive_n``).  ``attrs`` record the priors, sampler, engine,
        package version and the convergence verdict.  Metric draws are float32
        (seven significant digits, well below Monte Carlo error).

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
    _check_args(model, draws, tune, chains, sampler, engine, predictive_n)
    keys = [m.key for m in metric_registry.resolve(metrics)]
    spec = spec_of(model)
    rng = np.random.default_rng(random_seed)
    seeds = rng.integers(0, 2**31 - 1, size=2)
    conj = None
    if spec is not None and spec.family in CONJUGATE_FAMILIES and is_unmodified(model):
        conj = conjugate_posterior(model)
    if sampler == "exact":
        if conj is None:
            conjugate_posterior(model)  # raises with the reason
        posterior, stats = _draw_exact(conj, draws, chains, np.random.default_rng(seeds[0]))
        used_engine = "exact"
    else:
        if target_accept is None and spec is not None:
            target_accept = 0.9
        used_engine = engine
        if engine == "auto":
            has_kernel = conj is not None or (
                spec is not None and spec.family == "hui_walter" and is_unmodified(model))
            used_engine = "bayescm-kernel" if has_kernel else "nutpie"
        posterior, stats = _run_nuts(
            model, conj, used_engine, draws=draws, tune=tune, chains=chains,
            seed=int(seeds[0]), progressbar=progressbar, target_accept=target_accept,
        )
    fixed = conj.fixed_prevalence if conj is not None else None
    post = draws_mod.complete(posterior, model, spec, fixed)
    parameters = _parameters(model, spec, post)

    groups: dict[str, xr.Dataset] = {}
    pred_rng = np.random.default_rng(seeds[1])
    observed = draws_mod.observed(model)
    groups["posterior"] = draws_mod.with_metrics(post, keys)
    groups["sample_stats"] = stats
    if observed is not None:
        groups["observed_data"] = xr.Dataset({"counts": observed})
    if observed is not None and predictive:
        n = observed.sum(observed.dims[-1])
        groups["posterior_predictive"] = draws_mod.predictive(post, n, pred_rng, keys, spec)
        if predictive_n is not None:
            groups["predictions"] = draws_mod.predictive(
                post, xr.full_like(n, int(predictive_n)), pred_rng, keys, spec
            )
    prior_ds = draws_mod.prior_draws(model, spec, draws, chains, pred_rng) if prior else None
    if prior_ds is not None:
        groups["prior"] = prior_ds
        if observed is not None and predictive:
            groups["prior_predictive"] = draws_mod.predictive(
                prior_ds, observed.sum(observed.dims[-1]), pred_rng, [], spec)
    idata = az.InferenceData(**groups)
    report = check_convergence(idata, var_names=parameters)
    idata.attrs.update(_attrs(spec, conj, sampler, used_engine, parameters, predictive_n,
                              random_seed, report))
    if not report.ok:
        if strict:
            raise ConvergenceError(report.message())
        warnings.warn(report.message(), ConvergenceWarning, stacklevel=2)
    return idata


def _parameters(model: pm.Model, spec, post: xr.Dataset) -> list[str]:
    """The model's free parameters (what convergence is judged on)."""
    family = spec.family if spec is not None else None
    if family == "three_beta":
        names = ["tpr", "tnr"] + ([] if spec.fixed_prevalence is not None else ["prevalence"])
    elif family == "dirichlet_multinomial":
        names = ["theta"]
    elif family == "hui_walter":
        names = ["sensitivity", "specificity", "prevalence", "cov_se", "cov_sp"]
    elif family == "folds":
        names = ["tpr_mean", "tnr_mean", "tpr_kappa", "tnr_kappa", "prevalence", "tpr_fold",
                 "tnr_fold", "tpr_new", "tnr_new"]
    else:
        names = [v.name for v in model.free_RVs]
    return [n for n in names if n in post]


def _check_args(model, draws, tune, chains, sampler, engine, predictive_n) -> None:
    if not isinstance(model, pm.Model):
        raise TypeError(
            f"fit needs a pymc.Model (from bayescm.models), got {type(model).__name__}."
        )
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}.")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}.")
    for name, v, low in (("draws", draws, 4), ("chains", chains, 1), ("tune", tune, 0)):
        if not isinstance(v, int | np.integer) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}.")
    if predictive_n is not None and (
        not isinstance(predictive_n, int | np.integer) or predictive_n < 1
    ):
        raise ValueError(f"predictive_n must be a positive integer, got {predictive_n!r}.")


# -- samplers -----------------------------------------------------------------
def _draw_exact(conj: ConjugatePosterior, draws: int, chains: int, rng: np.random.Generator):
    values = conj.draw(rng, (chains, draws))
    stats = xr.Dataset(
        {"diverging": (("chain", "draw"), np.zeros((chains, draws), dtype=bool))},
        coords={"chain": np.arange(chains), "draw": np.arange(draws)},
    )
    return values, stats


def _run_nuts(model, conj, engine, *, draws, tune, chains, seed, progressbar, target_accept):
    if engine == "bayescm-kernel":
        return _sample_kernel(model, spec_of(model), conj, draws=draws, tune=tune,
                              chains=chains, seed=seed, progressbar=progressbar,
                              target_accept=target_accept)
    if engine == "nutpie":
        import nutpie

        compiled = _compiled_nutpie(model)
        kwargs = {} if target_accept is None else {"target_accept": target_accept}
        trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed,
                              progress_bar=progressbar, **kwargs)
        return _to_arrays(trace.posterior), _stats(trace.sample_stats)
    kwargs = {} if target_accept is None else {"target_accept": target_accept}
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, module="pymc")
        trace = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, **kwargs)
    return _to_arrays(trace.posterior), _stats(trace.sample_stats)


def _structure(model: pm.Model) -> tuple | None:
    spec = spec_of(model)
    if spec is None or not is_unmodified(model):
        return None
    data = tuple(sorted((v.name, np.shape(v.get_value())) for v in model.data_vars))
    dims = tuple(sorted((k, len(v)) for k, v in model.coords.items() if v is not None))
    return (spec.family, spec.fixed_prevalence is not None, tuple(spec.extra.get("pairs", ())),
            data, dims, spec.var_names)


def _compiled_nutpie(model: pm.Model) -> Any:
    """nutpie's compilation of ``model``, reusing one of the same structure."""
    import nutpie

    key = _structure(model)
    compiled = _NUTPIE_CACHE.get(key) if key is not None else _NUTPIE_BY_MODEL.get(model)
    if compiled is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = nutpie.compile_pymc_model(model)
        if key is not None:
            _NUTPIE_CACHE[key] = compiled
        else:
            _NUTPIE_BY_MODEL[model] = compiled
        return compiled
    # counts and prior parameters are data of the compiled model: no recompilation
    return compiled.with_data(**{v.name: np.asarray(v.get_value()) for v in model.data_vars})


def _to_arrays(posterior: xr.Dataset) -> dict[str, np.ndarray]:
    return {k: v.values for k, v in posterior.data_vars.items()}


def _stats(stats: xr.Dataset) -> xr.Dataset:
    stats = stats.copy()
    if "diverging" not in stats and "divergences" in stats:
        stats = stats.rename({"divergences": "diverging"})
    return stats.drop_vars([v for v in stats.data_vars if stats[v].ndim > 2])


def _kernel_problem(model: pm.Model, spec, conj) -> tuple:
    """The compiled density, its data and the layout of its draws for ``model``."""
    if conj is not None:
        from bayescm import _kernels as kernel

        names = list(conj.betas)
        c = len(conj.classifiers)
        a = np.concatenate([conj.betas[k][0] for k in names]) if names else np.zeros(0)
        b = np.concatenate([conj.betas[k][1] for k in names]) if names else np.zeros(0)
        nd, k = (c, len(CELLS)) if conj.dirichlet is not None else (0, 0)
        dvals = conj.dirichlet.ravel() if conj.dirichlet is not None else np.zeros(0)
        user_data = np.concatenate([[a.size, nd, k], a, b, dvals])
        n_dim = a.size + nd * (k - 1)
        shapes = [(c,)] * len(names) + ([(c, k)] if nd else [])
        return kernel, user_data, n_dim, names + (["theta"] if nd else []), shapes
    from bayescm import _kernel_hui_walter as kernel

    tab = spec.data
    t, p = len(tab.classifiers), len(tab.populations)
    pairs = spec.extra["pairs"]
    k, r = len(pairs), 2**t

    def value(name: str) -> np.ndarray:
        return np.asarray(model[name].get_value(), dtype=float).ravel()

    user_data = np.concatenate([
        [t, p, k, r], value("counts_data"),
        *(value(f"{v}_{ab}") for v in ("sensitivity", "specificity") for ab in ("alpha", "beta")),
        value("prevalence_alpha"), value("prevalence_beta"),
        [i for i, _ in pairs], [j for _, j in pairs],
    ])
    names = ["sensitivity", "specificity", "prevalence"]
    shapes = [(t,), (t,), (p,)]
    if pairs:
        names += ["cov_se_position", "cov_sp_position", "cov_se", "cov_sp"]
        shapes += [(k,)] * 4
    return kernel, user_data, 2 * t + p + 2 * k, [*names, "pattern_prob"], [*shapes, (p, r)]


def _sample_kernel(model, spec, conj, *, draws, tune, chains, seed, progressbar,
                   target_accept):
    """nutpie's NUTS on bayescm's compiled density of the model's posterior."""
    import nutpie
    from nutpie.compile_pymc import CompiledPyMCModel

    kernel, user_data, n_dim, var_names, shapes = _kernel_problem(model, spec, conj)
    user_data = np.ascontiguousarray(user_data, dtype=float)
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    slices = [slice(int(lo), int(hi)) for lo, hi in itertools.pairwise(sizes)]

    def initial_point(seed: Any) -> np.ndarray:
        # PyMC's default: jitter uniformly in (-1, 1) around 0 on the unconstrained scale.
        return np.random.default_rng(seed).uniform(-1.0, 1.0, n_dim)

    compiled = CompiledPyMCModel(
        compiled_logp_func=kernel.logp, compiled_expand_func=kernel.expand,
        initial_point_func=initial_point, shared_data={}, user_data=user_data,
        n_expanded=int(sizes[-1]), shape_info=(var_names, slices, shapes), logp_func=None,
        expand_func=None, _n_dim=n_dim, _shapes=dict(zip(var_names, shapes, strict=True)),
        _coords={}, dims={},
    )
    kwargs = {} if target_accept is None else {"target_accept": target_accept}
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed,
                          progress_bar=progressbar, **kwargs)
    out = {}
    for name, shape in zip(var_names, shapes, strict=True):
        out[name] = trace.posterior[name].values.reshape(chains, draws, *shape)
    return out, _stats(trace.sample_stats)


def _attrs(spec, conj, sampler, engine, parameters, predictive_n, seed, report) -> dict:
    import pytensor

    attrs = {
        "inference_library": "bayescm",
        "inference_library_version": _version(),
        "pymc_version": pm.__version__,
        "pytensor_version": pytensor.__version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sampler": sampler,
        "engine": engine,
        "parameters": ",".join(parameters),
        "random_seed": "None" if seed is None else int(seed),
        "converged": int(report.ok),
        "convergence": report.message(),
    }
    if spec is not None:
        attrs["model"] = spec.family
        units = ({"prevalence": spec.data.populations} if spec.family == "hui_walter" else None)
        attrs["priors"] = to_attrs(spec.priors, spec.data.classifiers, units)
        if "identifiability" in spec.extra:
            attrs["identifiability"] = spec.extra["identifiability"].message
        if spec.fixed_prevalence is not None:
            attrs["fixed_prevalence"] = spec.fixed_prevalence
    if predictive_n is not None:
        attrs["predictive_n"] = int(predictive_n)
    return attrs
