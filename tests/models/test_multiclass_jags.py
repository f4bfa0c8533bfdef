"""The JAGS twins of multiclass_rows and multiclass_cells against the exact posterior.

K = 3, a batch of two classifiers (one with an empty cell and a class that is never
predicted right), non-flat priors that differ between the classifiers.  For every
scalar of the prevalence, theta's nine cells, the per-class recall, accuracy and
macro-F1, the JAGS posterior mean and 95 % HDI endpoints must equal the exact
conjugate posterior's (``bcm.fit(sampler="exact")``, 100,000 i.i.d. draws) within
Z = 4.5 combined Monte Carlo standard errors:

* a mean: the JAGS draws' ArviZ MCSE (from their ESS; Gibbs draws are autocorrelated)
  and the exact draws' sd / sqrt(n), in quadrature;
* an HDI endpoint: its estimator spreads more than a fixed quantile (the window
  slides), so its standard error for JAGS is the sd of that endpoint over 100 HDIs of
  ESS draws resampled from the exact posterior (ESS = min(bulk, tail) ESS of the JAGS
  draws); the exact side adds the same scaled to its n: factor sqrt(1 + ESS / n).

About 110 comparisons per case at Z = 4.5 (two-sided normal tail 7e-6 each): a false
alarm in under 0.1 % of seeds.
"""

from __future__ import annotations

import functools

import arviz as az
import numpy as np
import pytest

import bayescm as bcm
from bayescm.inference import jags
from bayescm.priors import Dirichlet

Z = 4.5
LABELS = ["cat", "dog", "bird"]
TABLES = np.array([[[5, 1, 0], [2, 7, 1], [0, 3, 9]],
                   [[12, 0, 3], [0, 0, 4], [1, 2, 20]]])
FIXED = [0.2, 0.3, 0.5]
CASES = {
    "rows": lambda mc: bcm.models.multiclass_rows(mc, priors={
        "prevalence": {"a": Dirichlet((2, 1, 0.5))}, "rows": Dirichlet((3, 1, 0.5))}),
    "rows_fixed_prevalence": lambda mc: bcm.models.multiclass_rows(
        mc, prevalence=FIXED, priors={"rows": {"b": Dirichlet((0.5, 2, 1))}}),
    "cells": lambda mc: bcm.models.multiclass_cells(mc, priors={
        "theta": {"b": Dirichlet(tuple(np.linspace(0.5, 3, 9)))}}),
}
N_EXACT = (4, 25_000)  # chains x draws of the exact reference
REPLICATES = 100


@functools.cache
def batch() -> bcm.MulticlassConfusionMatrix:
    return bcm.MulticlassConfusionMatrix(TABLES, labels=LABELS, classifier=["a", "b"])


@functools.cache
def fits(case: str):
    model = CASES[case](batch())
    twin = jags.fit_twin(model, chains=2, draws=3000, burn=500, seed=5)
    exact = bcm.fit(model, sampler="exact", chains=N_EXACT[0], draws=N_EXACT[1],
                    random_seed=6, predictive=False, prior=False, metrics=[])
    return model, twin, exact.posterior


def quantities(post) -> dict[str, np.ndarray]:
    """name -> draws (chain, draw, scalar index) of what is compared."""
    metrics = bcm.metrics.compute_multiclass(post["theta"], ["tpr", "acc", "f1_macro"])
    out = {"theta": post["theta"], "recall": metrics["tpr"], "acc": metrics["acc"],
           "f1_macro": metrics["f1_macro"]}
    if "prevalence" in post:
        out["prevalence"] = post["prevalence"]
    return {k: v.transpose("chain", "draw", ...).values.reshape(*v.shape[:2], -1)
            for k, v in out.items()}


def z_scores(case: str) -> dict[tuple[str, int, str], float]:
    """|JAGS - exact| / combined MCSE of every mean and HDI endpoint."""
    _, twin, exact = fits(case)
    return z_scores_of(twin.posterior, exact, case)


def z_scores_of(twin, exact, case: str) -> dict[tuple[str, int, str], float]:
    """:func:`z_scores` of a JAGS posterior against an exact one (``case`` for messages)."""
    rng = np.random.default_rng(0)
    out = {}
    mine, ref = quantities(twin), quantities(exact)
    for name, draws in mine.items():
        for j in range(draws.shape[-1]):
            x, y = draws[..., j], ref[name][..., j]
            n = y.size
            if np.ptp(y) == 0:  # a fixed prevalence: the same constant on both sides
                assert np.all(x == y.flat[0]), (case, name, j)
                continue
            se = np.hypot(az.mcse(x).item(), y.std() / np.sqrt(n))
            out[name, j, "mean"] = abs(x.mean() - y.mean()) / se
            ess = int(min(az.ess(x, method="bulk"), az.ess(x, method="tail")))
            reps = np.stack(bcm.stats.hdi(rng.choice(y.ravel(), (REPLICATES, ess))), -1)
            sd = reps.std(axis=0) * np.sqrt(1 + ess / n)
            diff = np.abs(np.array(bcm.stats.hdi(x.ravel())) - np.array(bcm.stats.hdi(y.ravel())))
            out[name, j, "hdi_lower"], out[name, j, "hdi_upper"] = diff / sd
    return out


@pytest.mark.engine("jags")
@pytest.mark.parametrize("case", list(CASES))
def test_jags_twin_agrees_with_the_exact_posterior(case):
    model, idata, exact = fits(case)
    twin = idata.posterior
    assert twin["theta"].dims == exact["theta"].dims
    assert list(twin.data_vars) == [v for v in ("prevalence", "rows", "theta") if v in exact]
    # JAGS writes its CODA output with six significant digits
    np.testing.assert_allclose(twin["theta"].sum(("actual", "predicted")), 1, atol=1e-5)
    free = bcm.models.family_of(model).parameters(bcm.models.spec_of(model))
    assert bcm.check_convergence(idata, var_names=free).ok  # a fixed prevalence is constant
    scores = z_scores(case)
    assert len(scores) >= 3 * 2 * (9 + 3 + 2)
    worst = max(scores, key=scores.get)
    assert scores[worst] < Z, (case, worst, scores[worst])


def test_twins_are_declared_on_the_families_and_shipped():
    for name in CASES:
        family = bcm.models.family_of(CASES[name](batch()))
        assert family.jags is not None
        assert jags.script_path(family.jags.script).read_text().lstrip().startswith("#")


def test_the_twin_refuses_improper_priors_before_running():
    m = bcm.models.multiclass_cells(batch(), priors={"theta": Dirichlet((1,) * 8 + (0,))})
    with pytest.raises(ValueError, match="proper 'theta' prior"):
        jags.fit_twin(m)
    # a zero prevalence concentration is allowed by bayescm (every class is observed)
    m = bcm.models.multiclass_rows(batch(), priors={"prevalence": Dirichlet((0, 1, 1))})
    with pytest.raises(ValueError, match="proper 'prevalence' prior"):
        jags.fit_twin(m)
