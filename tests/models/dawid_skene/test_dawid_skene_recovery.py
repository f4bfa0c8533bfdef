"""Parameter recovery (slow): simulated raters with missing ratings, repeats and gold.

300 items, K = 3 classes with prevalence (0.5, 0.3, 0.2), five raters of different
quality (one rates every item twice), 30 % of the ratings missing, 15 gold items.
The posterior of every prevalence and every confusion entry must cover the truth:
|posterior mean - truth| < 4 posterior sds for all 48 of them (for a calibrated
posterior each deviation is about N(0, 1) in sd units: a false alarm in about 0.3 %
of data sets; the data set is fixed by its seed).  The most probable class of each
item (bcm.analysis.item_classes) must be right at least as often as the majority vote.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm

K, N_ITEMS = 3, 300
PREVALENCE = np.array([0.5, 0.3, 0.2])
ACCURACY = [0.85, 0.7, 0.6, 0.55, 0.75]


def simulate(seed: int = 12):
    rng = np.random.default_rng(seed)
    z = rng.choice(K, size=N_ITEMS, p=PREVALENCE)
    conf = []
    for acc in ACCURACY:
        rows = rng.dirichlet(np.ones(K) * 2, size=K) * (1 - acc)
        rows[np.arange(K), np.arange(K)] += acc
        conf.append(rows / rows.sum(axis=1, keepdims=True))
    conf = np.array(conf)
    rows = []
    for i in range(N_ITEMS):
        for r in range(len(ACCURACY)):
            for _ in range(2 if r == 0 else 1):
                if rng.random() < 0.3:
                    continue
                rows.append((i, f"r{r}", int(rng.choice(K, p=conf[r, z[i]]))))
    df = pd.DataFrame(rows, columns=["item", "rater", "rating"])
    rated = np.unique(df["item"])
    gold = {int(i): int(z[i]) for i in rng.choice(rated, 15, replace=False)}
    rt = bcm.RatingsTable.from_long(df, gold=gold, labels=list(range(K)),
                                    raters=[f"r{r}" for r in range(len(ACCURACY))])
    return rt, z[list(rt.items)], conf


@pytest.mark.slow
def test_the_posterior_recovers_prevalence_and_every_confusion_entry():
    rt, z, conf = simulate()
    idata = bcm.fit(bcm.models.dawid_skene(rt), random_seed=3, predictive=False)
    assert idata.attrs["converged"] == 1
    post = idata.posterior
    mean = post["prevalence"].mean(("chain", "draw")).values
    sd = post["prevalence"].std(("chain", "draw")).values
    assert np.all(np.abs(mean - PREVALENCE) < 4 * sd), (mean, sd)
    cm = post["confusion"].transpose("chain", "draw", "rater", "actual", "predicted").values
    dev = np.abs(cm.mean(axis=(0, 1)) - conf) / cm.std(axis=(0, 1))
    assert dev.max() < 4, np.unravel_index(dev.argmax(), dev.shape)
    # the most probable classes are right at least as often as majority votes
    classes = bcm.analysis.item_classes(idata)
    votes = rt.counts.sum(axis=1).argmax(axis=1)
    assert np.mean(classes.most_probable.to_numpy() == z) >= np.mean(votes == z)
