"""Cost of a refit in ``bcm.analysis.prior_sensitivity``: where the time of one goes.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_prior_sensitivity.py [--draws 1000]

The model: Hui-Walter, two classifiers, two populations (1,200 cases), an informative
prior on one classifier's sensitivity, 4 chains.  After one warm-up analysis (imports,
the numba kernel loaded from its disk cache), ``prior_sensitivity`` runs with
``--alternatives`` alternatives (flat, then scaled toward flat); reported, as medians
over the refits:

* ``refit``: the seconds ``prior_sensitivity`` records per alternative (rebuild + fit);
* ``rebuild``: ``family.rebuild`` alone (a new ``pm.Model`` with the new priors);
* ``fit``: ``bcm.fit`` of a rebuilt model with the analysis's settings (no predictive,
  prior or log-likelihood groups), of which ``sampling`` is nutpie's run on the
  compiled kernel (``engines.sample_kernel``, draws converted included);
* ``pm.set_data``: the alternative path of changing the priors of one model in place
  (what a rebuild would save at most).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--alternatives", type=int, default=5)
    args = parser.parse_args()

    import pymc as pm

    import bayescm as bcm
    from bayescm.family import family_of, spec_of
    from bayescm.inference import engines

    tab = bcm.AgreementTable.from_counts({
        "site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
        "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    model = bcm.models.hui_walter(tab, priors={"sensitivity": {"A": bcm.priors.Beta(12, 8)}})
    settings = {"draws": args.draws, "tune": args.draws, "chains": args.chains}
    scale = tuple(np.linspace(0.8, 0.0, args.alternatives - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bcm.analysis.prior_sensitivity(model, "flat", scale=None, random_seed=0, **settings)
        start = time.perf_counter()
        sens = bcm.analysis.prior_sensitivity(model, "flat", scale=scale, random_seed=1,
                                              **settings)
        total = time.perf_counter() - start
    alt = sens.alternatives
    refits = alt.drop(index="baseline")["seconds"].tolist()
    assert set(alt["engine"]) == {"bayescm-kernel"}, alt["engine"]

    family, spec = family_of(model), spec_of(model)
    priors = family.prior_record(spec)
    options = {**spec.options, "identifiability": "ignore"}
    rebuild, fit, sampling, set_data = [], [], [], []
    lean = {"predictive": False, "prior": False, "log_likelihood": False, "metrics": []}
    for i in range(args.alternatives):
        start = time.perf_counter()
        m = family.rebuild(spec.data, priors, options)
        rebuild.append(time.perf_counter() - start)
        start = time.perf_counter()
        bcm.fit(m, random_seed=i, **settings, **lean)
        fit.append(time.perf_counter() - start)
        kernel = family.kernel(m, spec_of(m))
        start = time.perf_counter()
        engines.sample_kernel(kernel, seed=i, progressbar=False, target_accept=0.9,
                              **settings)
        sampling.append(time.perf_counter() - start)
        start = time.perf_counter()
        with m:
            pm.set_data({"sensitivity_alpha": np.array([2.0 + i, 1.0]),
                         "sensitivity_beta": np.array([1.0, 1.0])})
        set_data.append(time.perf_counter() - start)

    def med(x: list[float]) -> str:
        return f"{statistics.median(x):.3f} s"

    print(f"Hui-Walter, 2 classifiers x 2 populations, {args.chains} chains x {args.draws} "
          f"draws (+ {args.draws} tune)")
    print(f"prior_sensitivity, baseline + {len(refits)} alternatives: {total:.2f} s in all")
    print(f"  refit (rebuild + fit), median: {med(refits)}  "
          f"(range {min(refits):.3f}-{max(refits):.3f})")
    print(f"  rebuild (new pm.Model):        {med(rebuild)}")
    print(f"  fit of a rebuilt model:        {med(fit)}")
    print(f"    of which nutpie on the kernel: {med(sampling)}")
    print(f"  pm.set_data in place instead:  {med(set_data)}")


if __name__ == "__main__":
    main()
