"""The ``items`` model's marginal route against the landed one (issue 27: the scales'
mixing with one model).

Design: ``simulate_items`` (one model of accuracy 0.7, clusters of 5, ICC 0.3, one run
unless ``--runs``; the calibration grid's defaults).  Each data set is fitted twice
by ``bcm.fit`` with its defaults (4 chains x 1,000 draws after 1,000 tuning steps):
``bcm.models.items(res, marginal=True)`` -- item and cluster effects integrated out
by quadrature, NUTS over alpha and the two log-scales
(:mod:`bayescm.models.items.marginal`) -- and ``marginal=False`` -- one coordinate per
item and cluster (the landed route).  Printed per fit: wall seconds of ``bcm.fit``
(sampling and the convergence check; the compiled kernels are cached), bulk ESS of
``accuracy``, ``sigma_item`` and ``sigma_cluster``, the largest R-hat of the three,
divergences, whether ``bcm.fit``'s convergence check passed, and the 2.5/50/97.5%
quantiles of ``accuracy`` (the two must agree: the marginal route integrates exactly
what the landed one samples, up to quadrature error below 1e-8 in log L).

What it printed (``--sizes 100,300 --seeds 11,12``, then ``--runs 3``; 2-core machine,
seconds of one fit with the kernels cached):

    one model, accuracy 0.7, clusters of 5, 1 run(s), ICC 0.3; 4 x 1,000 draws
       N seed fit             s  ESS acc  ESS s_i  ESS s_c  R-hat  div conv  accuracy 2.5/50/97.5%
     100   11 marginal     1.56     2672      947     1503  1.002    0  yes  0.5937 0.7408 0.8503
     100   11 landed       0.76     4539      565      983  1.008    0  yes  0.5916 0.7418 0.8503
     100   12 marginal     1.35     2380     1066     1499  1.004    0  yes  0.5574 0.7093 0.8279
     100   12 landed       0.69     5818      384      921  1.011    0  yes  0.5631 0.7095 0.8220
     300   11 marginal     2.02     3239      678      889  1.004    0  yes  0.6357 0.7147 0.7846
     300   11 landed       1.25     3755      139      224  1.016    0   no  0.6328 0.7138 0.7818
     300   12 marginal     2.15     3463      831      840  1.006    0  yes  0.6449 0.7174 0.7794
     300   12 landed       1.23     4785       84      175  1.054    0   no  0.6452 0.7170 0.7803

    one model, accuracy 0.7, clusters of 5, 3 run(s), ICC 0.3; 4 x 1,000 draws
     100   11 marginal     4.96     3225     2476     2511  1.001    0  yes  0.6466 0.7615 0.8467
     100   11 landed       0.69     4879      887      860  1.004    0  yes  0.6483 0.7620 0.8478
     100   12 marginal     5.58     2526     1728     1688  1.002    0  yes  0.6538 0.7720 0.8532
     100   12 landed       0.75     4872      402     1120  1.005    0   no  0.6591 0.7741 0.8551
     300   11 marginal     5.62     4035     2866     2710  1.001    0  yes  0.6380 0.7114 0.7773
     300   11 landed       1.22     3844      664      658  1.006    0  yes  0.6358 0.7109 0.7742
     300   12 marginal     4.89     4127     2599     2943  1.004    0  yes  0.6774 0.7412 0.7981
     300   12 landed       1.77     5154      810     1143  1.009    0  yes  0.6736 0.7412 0.7972

The marginal route converges in every case (the landed one fails three of eight) and
agrees with it on accuracy's quantiles.  It costs more per fit: the grids multiply
(outer nodes x inner nodes x patterns), 2-3x the landed route's seconds with one run and
4-8x with three (outer step 0.25/sqrt(15) for 15 trials in a cluster), though the scales'
ESS per second stays comparable.

Before it, the PyMC prototype of the same marginalisation (stop 40, cluster
integrals by a step-0.2 trapezoid, the cluster effects still sampled) had shown the
gain: sigma_item / sigma_cluster bulk ESS 619-988 / 713-1,019 against 84-565 /
175-983 for the landed model, the same accuracy quantiles within 0.004.

    .venv/bin/python benchmarks/bench_items_marginal.py [--sizes 100,300] [--seeds 11,12]
        [--runs 1]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items

TRUE, ICC = 0.7, 0.3
NAMES = ["accuracy", "sigma_item", "sigma_cluster"]


def one_fit(res: bcm.ItemResults, marginal: bool) -> tuple[float, object]:
    """Wall seconds of ``bcm.fit`` and the fit (the kernel compiled once beforehand)."""
    model = bcm.models.items(res, marginal=marginal)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(model, prior=False, predictive=False, random_seed=1)
    return time.perf_counter() - start, idata


def main() -> None:
    import arviz as az

    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="100,300")
    p.add_argument("--seeds", default="11,12")
    p.add_argument("--runs", type=int, default=1)
    a = p.parse_args()
    print(f"one model, accuracy {TRUE}, clusters of 5, {a.runs} run(s), ICC {ICC}; "
          "4 x 1,000 draws")
    print(f"{'N':>4} {'seed':>4} {'fit':<10} {'s':>6} {'ESS acc':>8} {'ESS s_i':>8} "
          f"{'ESS s_c':>8} {'R-hat':>6} {'div':>4} {'conv':>4}  accuracy 2.5/50/97.5%")
    warm = simulate_items(20, TRUE, icc=ICC, runs=a.runs, rng=0)
    for flag in (True, False):  # numba's compiled kernels load from cache once
        one_fit(bcm.ItemResults.from_frame(warm, cluster="cluster", run="run"), flag)
    for n in (int(x) for x in a.sizes.split(",")):
        for seed in (int(x) for x in a.seeds.split(",")):
            df = simulate_items(n, TRUE, icc=ICC, runs=a.runs, rng=np.random.default_rng(seed))
            res = bcm.ItemResults.from_frame(df, cluster="cluster", run="run")
            for label, flag in (("marginal", True), ("landed", False)):
                secs, idata = one_fit(res, flag)
                summ = az.summary(idata, var_names=NAMES, kind="diagnostics", round_to="none")
                ess = summ["ess_bulk"].to_numpy()
                q = np.quantile(idata.posterior["accuracy"].to_numpy().ravel(),
                                [0.025, 0.5, 0.975])
                div = int(idata.sample_stats["diverging"].sum())
                conv = "yes" if idata.attrs.get("converged") else "no"
                print(f"{n:4d} {seed:4d} {label:<10} {secs:6.2f} {ess[0]:8.0f} {ess[1]:8.0f} "
                      f"{ess[2]:8.0f} {summ['r_hat'].max():6.3f} {div:4d} {conv:>4}  "
                      f"{q[0]:.4f} {q[1]:.4f} {q[2]:.4f}", flush=True)


if __name__ == "__main__":
    main()
