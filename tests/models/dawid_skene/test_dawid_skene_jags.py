"""The JAGS twin of dawid_skene against bayescm's NUTS fit: Dawid & Skene's anaesthesia data.

45 patients, 5 anaesthetists (the first rated every patient three times), K = 4, with
R's ``rater`` defaults as the issue states them: prevalence Dirichlet(3, 3, 3, 3),
every confusion row 4.8 on the diagonal and 3.2/3 off it.  The twin samples each
patient's class as a discrete node (no marginalisation, no collapsed patterns, Gibbs),
so agreement checks the summed-out likelihood, the collapsing and the sampler at once.

For the 4 prevalences and the 20 diagonal entries of the confusion matrices, the
posterior means must agree within Z = 4.5 combined Monte Carlo standard errors: each
side's ArviZ MCSE of the mean (from its ESS: JAGS's draws are autocorrelated, NUTS's
too), in quadrature.  24 comparisons at a two-sided normal tail of 7e-6 each: a false
alarm in under 0.02 % of seeds.
"""

from __future__ import annotations

import functools

import arviz as az
import numpy as np
import pytest

import bayescm as bcm
from bayescm.data.datasets_ratings import anaesthesia, anaesthesia_table
from bayescm.inference import jags
from bayescm.priors import Dirichlet

Z = 4.5
PRIORS = {"prevalence": Dirichlet((3, 3, 3, 3)),
          "confusion": Dirichlet.diagonal(4, correct=4.8, wrong=3.2 / 3)}


@functools.cache
def fits():
    model = bcm.models.dawid_skene(anaesthesia(), priors=PRIORS)
    twin = jags.fit_twin(model, chains=4, draws=4000, burn=1000, seed=5)
    nuts = bcm.fit(model, random_seed=6, predictive=False, prior=False, log_likelihood=False)
    return model, twin, nuts


def z_scores(a, b) -> dict[str, float]:
    pairs = {f"prevalence[{c}]": (a["prevalence"].isel({"class": c}),
                                  b["prevalence"].isel({"class": c})) for c in range(4)}
    for r in range(5):
        for c in range(4):
            pairs[f"confusion[{r}, {c}, {c}]"] = (
                a["confusion"].isel(rater=r, actual=c, predicted=c),
                b["confusion"].isel(rater=r, actual=c, predicted=c))
    out = {}
    for key, (x, y) in pairs.items():
        se = np.hypot(az.mcse(x.values).item(), az.mcse(y.values).item())
        out[key] = abs(float(x.mean()) - float(y.mean())) / se
    return out


@pytest.mark.engine("jags")
def test_the_jags_twin_agrees_with_nuts_on_the_anaesthesia_data():
    model, twin, nuts = fits()
    a, b = twin.posterior, nuts.posterior
    assert a["confusion"].dims == (*b["confusion"].dims[:2], "rater", "actual", "predicted")
    assert list(a["rater"].values) == list(b["rater"].values)
    np.testing.assert_allclose(a["confusion"].sum("predicted"), 1, atol=1e-5)  # CODA digits
    assert bcm.check_convergence(twin, var_names=["prevalence", "confusion"]).ok
    assert nuts.attrs["converged"] == 1
    scores = z_scores(a, b)
    assert len(scores) == 24
    worst = max(scores, key=scores.get)
    assert scores[worst] < Z, (worst, scores[worst])
    # the twin's fit feeds the same item classes
    res = bcm.analysis.item_classes(twin, model=model)
    ref = bcm.analysis.item_classes(nuts)
    se = np.hypot(res.mcse.values, ref.mcse.values)
    ok = se > 0
    assert np.all(np.abs(res.mean.values - ref.mean.values)[ok] < 5 * se[ok] + 1e-9)


def test_the_twin_is_declared_shipped_and_fed_the_models_data():
    model = bcm.models.dawid_skene(anaesthesia(), priors=PRIORS)
    family, spec = bcm.models.family_of(model), bcm.models.spec_of(model)
    assert family.jags is not None
    assert jags.script_path(family.jags.script).read_text().lstrip().startswith("#")
    data = family.jags.data(model, spec)
    assert (data["I"], data["J"], data["K"], data["N"]) == (45, 5, 4, 315)
    assert data["beta"].shape == (5, 4, 4) and data["beta"][0, 0].tolist() == pytest.approx(
        [4.8, 3.2 / 3, 3.2 / 3, 3.2 / 3])
    assert "z" not in data  # no gold items
    inits = family.jags.inits(np.random.default_rng(0), spec, 2)
    assert len(inits) == 2 and inits[0]["theta"].shape == (5, 4, 4)
    # gold items are observed classes: the others NA, and no initial value where observed
    gold = bcm.RatingsTable.from_long(anaesthesia_table(), gold={2: 3}, labels=[1, 2, 3, 4])
    gm = bcm.models.dawid_skene(gold, priors=PRIORS)
    gdata = family.jags.data(gm, bcm.models.spec_of(gm))
    assert gdata["z"][1] == "3" and gdata["z"][0] == "NA"
    ginit = family.jags.inits(np.random.default_rng(0), bcm.models.spec_of(gm), 1)[0]
    assert ginit["z"][1] == "NA" and ginit["z"][0] != "NA"


@functools.cache
def partial_fits():
    from tests.models.dawid_skene.test_dawid_skene_partial import simulate

    rt, _ = simulate(120, 4, sparse=10, seed=21)
    model = bcm.models.dawid_skene(rt, pooling="partial")
    twin = jags.fit_twin(model, chains=4, draws=4000, burn=1000, seed=5)
    nuts = bcm.fit(model, random_seed=6, predictive=False, prior=False, log_likelihood=False)
    return model, twin, nuts


@pytest.mark.slow  # JAGS's slice sampler on the logits: minutes
@pytest.mark.engine("jags")
def test_the_partial_twin_agrees_with_nuts():
    """pooling="partial" on 120 simulated items, four raters around one pattern (the last
    rates 10 items): JAGS's discrete classes and slice-sampled logits against NUTS on
    the summed-out, collapsed, non-centred model.  The 3 prevalences, 12 recalls and 3
    population recalls agree within Z = 4.5 combined MCSEs (18 comparisons: a false
    alarm in about 0.01 % of seeds)."""
    _, twin, nuts = partial_fits()
    a, b = twin.posterior, nuts.posterior
    assert nuts.attrs["converged"] == 1, nuts.attrs["convergence"]
    pairs = {f"prevalence[{c}]": (a["prevalence"].isel({"class": c}),
                                  b["prevalence"].isel({"class": c})) for c in range(3)}
    for c in range(3):
        for r in range(4):
            pairs[f"confusion[{r}, {c}, {c}]"] = (
                a["confusion"].isel(rater=r, actual=c, predicted=c),
                b["confusion"].isel(rater=r, actual=c, predicted=c))
        pairs[f"confusion_population[{c}, {c}]"] = (
            a["confusion_population"].isel(actual=c, predicted=c),
            b["confusion_population"].isel(actual=c, predicted=c))
    scores = {}
    for key, (x, y) in pairs.items():
        se = np.hypot(az.mcse(x.values).item(), az.mcse(y.values).item())
        scores[key] = abs(float(x.mean()) - float(y.mean())) / se
    worst = max(scores, key=scores.get)
    assert len(scores) == 18 and scores[worst] < Z, (worst, scores[worst])
