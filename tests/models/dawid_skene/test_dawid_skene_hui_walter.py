"""At K = 2 Dawid–Skene is Hui–Walter: the same log density and the same posterior.

Binary ratings of 400 items by three conditionally independent raters in one
population, 10 % of the ratings missing and every 20th item gold, give a RatingsTable
and (``rt.to_agreement``) the equivalent AgreementTable with cells such as ``"+?-"``
and ``"++-|D+"``.  With matching priors (Se ~ Beta(a, b) is the class-1 row
Dirichlet(b, a), Sp ~ Beta(c, d) the class-0 row Dirichlet(c, d), prevalence ~ Beta(e, f)
the class prevalences Dirichlet(f, e)):

* on the constrained scale the two log densities differ by a constant at every
  parameter value with Se + Sp > 1 (where Hui–Walter's truncation is inactive), and the
  constant is exactly what the two write differently: Hui–Walter's multinomial
  coefficients of its blocks and the normalisers of its specificity kernels,
  :math:`3 \\log B(c, d)`;
* NUTS fits of both give posterior means of Se, Sp and prevalence within Z = 4.5
  combined Monte Carlo standard errors (ArviZ's MCSE, from each fit's ESS): 7
  comparisons, two-sided normal tail 7e-6 each.
"""

from __future__ import annotations

import functools

import arviz as az
import numpy as np
import pandas as pd
from pymc.model.transform.conditioning import remove_value_transforms
from scipy.special import betaln, gammaln

import bayescm as bcm
from bayescm.priors import Beta, Dirichlet

Z = 4.5
# Se ~ Beta(A, B), Sp ~ Beta(C, D), prevalence ~ Beta(E, F)
A, B, C, D, E, F = 3.0, 1.5, 4.0, 2.0, 2.0, 3.0


@functools.cache
def tables() -> tuple[bcm.RatingsTable, bcm.AgreementTable]:
    rng = np.random.default_rng(7)
    n = 400
    z = rng.random(n) < 0.3
    se, sp = np.array([0.9, 0.8, 0.85]), np.array([0.95, 0.85, 0.9])
    rows = []
    for i in range(n):
        for t, name in enumerate("ABC"):
            if rng.random() < 0.1:
                continue  # a missing rating
            say = rng.random() < se[t] if z[i] else rng.random() >= sp[t]
            rows.append((i, name, int(say)))
    df = pd.DataFrame(rows, columns=["item", "rater", "rating"])
    gold = {i: int(z[i]) for i in set(df["item"]) if i % 20 == 0}
    rt = bcm.RatingsTable.from_long(df, gold=gold, labels=[0, 1])
    return rt, rt.to_agreement(positive=1)


@functools.cache
def models():
    rt, tab = tables()
    hw = bcm.models.hui_walter(tab, priors={"sensitivity": Beta(A, B),
                                            "specificity": Beta(C, D), "prevalence": Beta(E, F)})
    ds = bcm.models.dawid_skene(rt, priors={"confusion": Dirichlet([[C, D], [B, A]]),
                                            "prevalence": Dirichlet((F, E))})
    return hw, ds


def test_the_tables_are_the_same_data():
    rt, tab = tables()
    assert tab.classifiers == rt.raters and int(tab.n[0]) == rt.n_items
    assert not tab.complete  # missing results and verified cells
    assert sum(int(c) for c, p in zip(tab.counts[0], tab.patterns, strict=True)
               if "|" in p) == int((rt.gold_index >= 0).sum())


def test_the_log_densities_differ_by_a_known_constant():
    hw, ds = models()
    _, tab = tables()
    lhw = remove_value_transforms(hw).compile_logp()
    lds = remove_value_transforms(ds).compile_logp()
    rng = np.random.default_rng(11)
    diffs = []
    for _ in range(25):
        se = rng.uniform(0.55, 0.99, 3)
        sp = rng.uniform(1.01 - se, 0.995)  # Se + Sp > 1: Hui-Walter's support
        prev = rng.uniform(0.05, 0.95)
        conf = np.stack([[[sp[t], 1 - sp[t]], [1 - se[t], se[t]]] for t in range(3)])
        diffs.append(lhw({"sensitivity": se, "specificity": sp, "prevalence": np.array([prev])})
                     - lds({"prevalence": np.array([1 - prev, prev]), "confusion": conf}))
    assert np.ptp(diffs) < 1e-9
    design = tab.design()
    coefficients = sum(
        gammaln(tab.counts[0][design.block == b].sum() + 1)
        - gammaln(tab.counts[0][design.block == b] + 1).sum()
        for b in range(len(design.blocks)))
    assert abs(np.mean(diffs) - (coefficients + 3 * betaln(C, D))) < 1e-8


def test_the_posteriors_agree_within_monte_carlo_error():
    hw, ds = models()
    kw = {"draws": 1000, "tune": 1000, "chains": 2, "predictive": False, "prior": False,
          "log_likelihood": False}
    post_hw = bcm.fit(hw, random_seed=3, **kw).posterior
    post_ds = bcm.fit(ds, random_seed=4, **kw).posterior
    pairs = {"prevalence": (post_hw["prevalence"].isel(population=0),
                            post_ds["prevalence"].sel({"class": 1}))}
    for name in "ABC":
        pairs[f"Se {name}"] = (post_hw["sensitivity"].sel(classifier=name),
                               post_ds["confusion"].sel(rater=name, actual=1, predicted=1))
        pairs[f"Sp {name}"] = (post_hw["specificity"].sel(classifier=name),
                               post_ds["confusion"].sel(rater=name, actual=0, predicted=0))
    scores = {}
    for key, (x, y) in pairs.items():
        se = np.hypot(az.mcse(x.values).item(), az.mcse(y.values).item())
        scores[key] = abs(float(x.mean()) - float(y.mean())) / se
    worst = max(scores, key=scores.get)
    assert scores[worst] < Z, (worst, scores)
    # and the metrics agree: each rater's recall of class 1 is its sensitivity
    np.testing.assert_allclose(post_ds["tpr"].sel(classifier="B", **{"class": 1}).values,
                               post_ds["confusion"].sel(rater="B", actual=1,
                                                        predicted=1).values, rtol=1e-5)
