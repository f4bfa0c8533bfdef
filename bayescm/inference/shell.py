"""NUTS on a family's compiled density without building its PyMC model: the shell's path.

:func:`fit_kernel` is ``fit(builder(data, priors=priors, **options))`` for a family
whose density is a cached compiled kernel (:meth:`bayescm.models.Family.kernel_form`):
the family lays the kernel's inputs out from the data and the resolved priors, nutpie
samples the kernel (as ``fit``'s ``engine="auto"`` does), and the draws are completed,
given their metrics, replicated data and convergence verdict as ``fit`` gives them.
Neither PyMC nor PyTensor is imported: ``bayescm unlabeled`` answers in a fraction of
the time.  (nutpie itself imports ArviZ; bayescm's result does not need it.)  With
``sampler="gibbs"`` a family that gives a Gibbs sampler of the same posterior
(:class:`~bayescm.models.KernelForm`'s ``gibbs``: the Hui–Walter model of a complete
table) is sampled in NumPy instead, and nutpie is not imported either.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayescm.family import Family, get_family
from bayescm.inference import budget, engines
from bayescm.inference import draws as draws_mod
from bayescm.inference.arguments import check_seed, check_target_accept
from bayescm.inference.fit import _attrs, _finish, check_sizes

__all__ = ["fit_kernel"]


def fit_kernel(
    family: str | Family,
    data: Any,
    *,
    priors: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    draws: int | None = None,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    predictive: bool = True,
    log_likelihood: bool | None = None,
    metrics: Sequence[str] | None = None,
    strict: bool = False,
    progressbar: bool = False,
    target_accept: float | None = None,
    sampler: str = "nuts",
) -> xr.DataTree:
    """``fit(builder(data, priors=priors, **options))`` on the family's compiled density,
    without PyMC.

    The compiled density is the one ``fit`` samples with ``engine="auto"`` (same
    ``user_data``, same nutpie settings and seeds), so for the same ``random_seed`` the
    posterior draws, ``sample_stats``, ``posterior_predictive`` and ``log_likelihood``
    equal :func:`bayescm.fit`'s (tested).  There is no ``prior`` group (its draws read
    the built model).

    Parameters
    ----------
    family
        A registered family (or its name) with :meth:`~bayescm.models.Family.kernel_form`.
    data, priors, options
        What the builder takes: ``builder(data, priors=priors, **options)``.
    draws, tune, chains, random_seed, predictive, log_likelihood, metrics, strict, \
progressbar, target_accept
        As :func:`bayescm.fit` (``draws=None``: 1,000 per chain).
    sampler
        ``"nuts"`` (nutpie on the compiled density, as ``fit``), ``"gibbs"`` (the
        family's Gibbs sampler: ``tune`` sweeps discarded, then ``draws``; an error when
        the family has none for this model) or ``"auto"`` (Gibbs where there is one).
        The Gibbs draws are other draws of the same posterior (tested against NUTS and
        JAGS); ``attrs["sampler"]`` says which ran.

    Returns
    -------
    xarray.DataTree
        The groups and attrs of ``fit``'s InferenceData (ArviZ 1.x's InferenceData),
        read by :func:`bayescm.summary`, :func:`bayescm.check_convergence` and
        :func:`bayescm.posterior_predictive_check`.

    Raises
    ------
    ValueError
        When the family has no compiled density or the installed nutpie cannot take
        one (then build the model and use :func:`bayescm.fit`).

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.inference import fit_kernel
    >>> tab = bcm.AgreementTable.from_counts({"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
    ...                                       "s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    >>> tree = fit_kernel("hui_walter", tab, random_seed=1)
    >>> 0.8 < float(tree["posterior"]["sensitivity"].sel(classifier="A").mean()) < 0.97
    True
    >>> tree.attrs["engine"], tree.attrs["converged"]
    ('bayescm-kernel', 1)
    """
    fam = get_family(family) if isinstance(family, str) else family
    draws = 1000 if draws is None else draws
    check_sizes(draws, tune, chains, sampler="nuts", engine="auto")
    check_seed(random_seed)
    check_target_accept(target_accept)
    if log_likelihood not in (None, True, False):
        raise ValueError(f"log_likelihood must be None, True or False, got {log_likelihood!r}.")
    if sampler not in ("nuts", "gibbs", "auto"):
        raise ValueError(f"sampler must be 'nuts', 'gibbs' or 'auto', got {sampler!r}.")
    start = time.perf_counter()
    form = fam.kernel_form(data, priors, options)
    if sampler == "auto":
        sampler = "gibbs" if form is not None and form.gibbs is not None else "nuts"
    if sampler == "gibbs" and (form is None or form.gibbs is None):
        raise ValueError(f"fit_kernel(sampler='gibbs'): the {fam.name} family has no Gibbs "
                         "sampler for this model (its conditionals are not conjugate); use "
                         "sampler='nuts'.")
    if sampler == "nuts" and (form is None or not engines.kernel_supported()):
        why = (f"the {fam.name} family has no compiled density" if form is None
               else "the installed nutpie cannot take bayescm's compiled densities")
        raise ValueError(f"fit_kernel cannot run: {why}. Build the model and use bayescm.fit.")
    spec, observed = form.spec, form.observed
    keys = draws_mod.metric_keys(metrics, form.dims.get("theta") or ())
    _check_memory(form, fam, keys, draws=draws, tune=tune, chains=chains,
                  predictive=predictive, log_likelihood=log_likelihood)
    rng = np.random.default_rng(random_seed)
    seeds = rng.integers(0, 2**31 - 1, size=2)  # as fit: the same draws for the same seed
    if target_accept is None:
        target_accept = fam.target_accept or 0.9
    if sampler == "gibbs":
        posterior = form.gibbs(draws=draws, tune=tune, chains=chains, seed=int(seeds[0]))
        stats = xr.Dataset()  # no step sizes, no divergences: a Gibbs sweep has none
    else:
        posterior, stats = engines.sample_kernel(
            form.kernel, draws=draws, tune=tune, chains=chains, seed=int(seeds[0]),
            progressbar=progressbar, target_accept=target_accept)
    post = draws_mod.complete(posterior, None, fam, spec, None, closed=form)  # type: ignore[arg-type]
    parameters = [n for n in fam.parameters(spec) if n in post]
    groups: dict[str, xr.Dataset | None] = {"posterior": draws_mod.with_metrics(post, keys),
                                            "sample_stats": stats}
    if observed is not None:
        groups["observed_data"] = xr.Dataset({"counts": observed})
        if predictive:  # the same generator, in the same order, as fit
            n = observed.sum(observed.dims[1:])
            groups["posterior_predictive"] = draws_mod.predictive(
                post, n, np.random.default_rng(seeds[1]), keys, fam, spec)
    groups["log_likelihood"] = draws_mod.log_likelihood(post, observed, fam, spec,
                                                        log_likelihood)
    kept = draws_mod.with_unit_coords({k: v for k, v in groups.items() if v is not None},
                                      spec.data)
    engine = "bayescm-gibbs" if sampler == "gibbs" else "bayescm-kernel"
    attrs = _attrs(fam, spec, sampler, engine, parameters, None, random_seed)
    attrs["fit_seconds"] = round(time.perf_counter() - start, 4)
    # ArviZ checks convergence where it is loaded already (nutpie loads it); else its
    # estimators vectorised (bayescm.inference.diagnostics, equal to ArviZ's)
    backend = "auto" if "arviz" in sys.modules else "vectorised"
    return _finish(kept, attrs, parameters, strict, arviz=False, backend=backend)


def _check_memory(form: Any, fam: Family, keys: Sequence[str], *, draws: int, tune: int,
                  chains: int, predictive: bool, log_likelihood: bool | None) -> None:
    """:func:`bayescm.inference.budget.check_memory` of the fit's estimate (as ``fit``):
    one draw of zeros completed with the family's derived quantities, plus the metrics."""
    values = {name: np.zeros((1, 1, *shape)) for name, shape in form.shapes().items()}
    sampled = int(sum(v.size for v in values.values()))
    with np.errstate(all="ignore"):
        ds = draws_mod.complete(values, None, fam, form.spec, None, closed=form)
    plain = int(sum(v.size for v in ds.data_vars.values()))
    units = int(ds["theta"].size // 4) if "theta" in ds else 0
    metrics = units * len(keys)
    observed = form.observed
    cases = 0
    if observed is not None and (log_likelihood or (
            log_likelihood is None and fam.log_likelihood_by_default)):
        cases = int(np.asarray(observed, dtype=float).sum())
        if log_likelihood is None and cases * float(draws) * chains > \
                draws_mod.LOG_LIKELIHOOD_MAX_VALUES:
            cases = 0  # left out, as fit does
    nbytes = budget.fit_bytes((plain + metrics, metrics, sampled), draws=draws, tune=tune,
                              chains=chains, sampler="nuts",
                              observed=0 if observed is None else int(observed.size),
                              predictive=predictive, predictions=False, prior=False,
                              log_likelihood=cases)
    budget.check_memory(nbytes, f"This fit ({chains:,} chains x {draws:,} draws after "
                                f"{tune:,} tuning steps, {plain + metrics:,} values per draw, "
                                "and the groups kept with them)",
                        budget.fit_advice(units, "nuts"))
