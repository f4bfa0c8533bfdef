"""What integrating the item effects out would buy the ``items`` model (issue 27: the
scales' mixing), measured with a prototype before it is built into the family.

Design: ``simulate_items`` (one model of accuracy 0.7, clusters of 5, one run, ICC 0.3,
the calibration grid's defaults).  With one model and one score per item, the item
effects integrate out exactly per cluster: given the cluster's effect :math:`v_c`, its
:math:`n_c` scores are i.i.d. Bernoulli(:math:`A(\\beta + v_c, \\sigma_\\mathrm{item})`)
(:mod:`bayescm.models.items.quadrature`'s logistic-normal integral), so the likelihood
is :math:`\\prod_c A_c^{k_c}(1 - A_c)^{n_c - k_c}` and the sampler no longer carries one
coordinate per item.  The prototype is that density in PyMC (same priors, same
parametrisation of location, offset and cluster effects as ``bcm.models.items``; the
cluster integrals by the trapezoid rule, step 0.2 on [-8, 8]), sampled by nutpie's own
compilation; beside it ``bcm.fit(bcm.models.items(...))`` on the same data, both
4 chains x 1,000 draws.  Printed per data set: wall time of sampling (the prototype's
compilation apart), bulk ESS of ``accuracy``, ``sigma_item`` and ``sigma_cluster``,
the largest R-hat, divergences, and the 2.5/50/97.5% quantiles of ``accuracy`` (the
two posteriors must agree: the prototype is an exact marginalisation up to the
quadrature).

What it showed (stop 40, ``--sizes 100,300 --seeds 11,12``; bulk ESS of sigma_item and
sigma_cluster out of 4,000 draws, marginal / landed):

* N = 100 (20 clusters): 988 / 565 and 1,019 / 983 (seed 11); 862 / 384 and
  1,019 / 921 (seed 12); R-hat 1.01 in all four fits; 2-3 divergences in the prototype;
* N = 300 (60 clusters): 619 / 139 and 713 / 224 (R-hat 1.00 / 1.02); 776 / 84 and
  861 / 175 (R-hat 1.01 / 1.05): the landed model fails the convergence check there;
* the accuracy's 2.5/50/97.5% quantiles agree within 0.004 in every fit; sampling took
  2.4-4.8 s in PyMC's generic compilation against 0.7-1.3 s for the landed kernel.

So the item effects' coordinates are what slows the scales at 60 clusters (5-9x in ESS),
less so at 20 (the cluster scale's ESS is unchanged there); the next step is this
marginal density in the family's compiled kernel, patterns of scores per cluster for
several models and runs, and draws of the item effects from their conditionals.

    .venv/bin/python benchmarks/bench_items_marginal.py [--sizes 100,300] [--seeds 11,12]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items
from bayescm.models.items.model import Items
from bayescm.models.items.quadrature import NODES, WEIGHTS

TRUE, ICC = 0.7, 0.3
SCALES = {k: Items.default_priors[k].sigma for k in ("sigma_item", "sigma_cluster")}
# the prototype's accuracy prior is the family's default Beta(1, 1): density dA/dalpha
assert (Items.default_priors["accuracy"].alpha, Items.default_priors["accuracy"].beta) == (1, 1)


def marginal_model(res: bcm.ItemResults):
    """The items model of one model and one run with the item effects integrated out."""
    import pymc as pm
    import pytensor.tensor as pt

    y, ci, c_ = res.successes_array[0], res.cluster_index, res.n_clusters
    k = np.bincount(ci, weights=y, minlength=c_)
    nc = np.bincount(ci, minlength=c_)
    step = 0.2
    z = np.arange(-8.0, 8.0 + 1e-9, step)
    w = step * np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi)
    with pm.Model(coords={"cluster": list(res.clusters)}) as model:
        beta = pm.Flat("location")
        sig_i = pm.HalfNormal("sigma_item", SCALES["sigma_item"])
        sig_c = pm.HalfNormal("sigma_cluster", SCALES["sigma_cluster"])
        offset = pm.Normal("z_offset", 0.0, 1.0)
        v = sig_c * pm.ZeroSumNormal("z_cluster", sigma=1.0, dims="cluster")
        # as bcm.models.items: beta the benchmark's location, alpha the population's
        alpha = beta - sig_c / np.sqrt(c_) * offset
        eta_k = alpha + pt.sqrt(sig_i**2 + sig_c**2) * NODES
        pm.Deterministic("accuracy", pt.dot(pt.sigmoid(eta_k), WEIGHTS))
        # Beta(1, 1) on the accuracy: the density of alpha is dA/dalpha
        pm.Potential("accuracy_prior",
                     pt.log(pt.dot(pt.sigmoid(eta_k) * pt.sigmoid(-eta_k), WEIGHTS)))
        eta = (beta + v)[:, None] + sig_i * z[None, :]
        pm.Potential("clusters", pt.sum(k * pt.log(pt.dot(pt.sigmoid(eta), w))
                                        + (nc - k) * pt.log(pt.dot(pt.sigmoid(-eta), w))))
    return model


def main() -> None:
    import arviz as az
    import nutpie

    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="100,300")
    p.add_argument("--seeds", default="11,12")
    a = p.parse_args()
    names = ["accuracy", "sigma_item", "sigma_cluster"]
    print(f"one model, accuracy {TRUE}, clusters of 5, one run, ICC {ICC}; 4 x 1,000 draws")
    print(f"{'N':>4} {'seed':>4} {'fit':<10} {'s':>6} {'ESS acc':>8} {'ESS s_i':>8} "
          f"{'ESS s_c':>8} {'R-hat':>6} {'div':>4}  accuracy 2.5/50/97.5%")
    for n in (int(x) for x in a.sizes.split(",")):
        for seed in (int(x) for x in a.seeds.split(",")):
            df = simulate_items(n, TRUE, icc=ICC, rng=np.random.default_rng(seed))
            res = bcm.ItemResults.from_frame(df, cluster="cluster")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = marginal_model(res)
                compiled = nutpie.compile_pymc_model(model)  # clusters differ: compiled anew
                start = time.perf_counter()
                trace = nutpie.sample(compiled, draws=1000, tune=1000, chains=4, seed=1,
                                      progress_bar=False)
                t_marg = time.perf_counter() - start
                start = time.perf_counter()
                idata = bcm.fit(bcm.models.items(res), prior=False, predictive=False,
                                random_seed=1)
                t_bcm = time.perf_counter() - start
            for label, data, secs in (("marginal", trace, t_marg), ("bayescm", idata, t_bcm)):
                summ = az.summary(data, var_names=names, kind="diagnostics")
                ess = summ["ess_bulk"].to_numpy()
                acc = data.posterior["accuracy"].to_numpy().ravel()
                q = np.quantile(acc, [0.025, 0.5, 0.975])
                div = int(data.sample_stats["diverging"].sum())
                print(f"{n:4d} {seed:4d} {label:<10} {secs:6.2f} {ess[0]:8.0f} {ess[1]:8.0f} "
                      f"{ess[2]:8.0f} {summ['r_hat'].max():6.3f} {div:4d}  "
                      f"{q[0]:.4f} {q[1]:.4f} {q[2]:.4f}", flush=True)


if __name__ == "__main__":
    main()
