"""NUTS on the hierarchical groups model: time, ESS per second and divergences.

Slices are the cells of a ``k x k`` grid of two factors (``a`` and ``b``); true
log-odds are a global mean plus a normal effect per level of each factor (sd 0.4),
slice sizes are drawn between 5 and 500 cases.  The model is fitted with bayescm's
compiled density on nutpie (``fit``'s default engine); the numba kernel is compiled
and cached on disk by a first, untimed run.  Usage::

    .venv/bin/python benchmarks/bench_groups.py --side 10      # 100 slices
    .venv/bin/python benchmarks/bench_groups.py --side 32      # 1,024 slices
    .venv/bin/python benchmarks/bench_groups.py --side 32 --centered false   # or true
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd


def simulate(side: int, seed: int):
    import bayescm as bcm
    from bayescm.data.slices import slice_label

    rng = np.random.default_rng(seed)
    a, b = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    a, b = a.ravel(), b.ravel()
    mu = np.array([-0.8, 1.4, 2.0])  # prevalence, tpr, tnr
    eff_a, eff_b = rng.normal(0, 0.4, (3, side)), rng.normal(0, 0.4, (3, side))
    rate = 1 / (1 + np.exp(-(mu[:, None] + eff_a[:, a] + eff_b[:, b])))
    n = rng.integers(5, 501, a.size)
    pos = rng.binomial(n, rate[0])
    tp, tn = rng.binomial(pos, rate[1]), rng.binomial(n - pos, rate[2])
    frame = pd.DataFrame({"a": [f"a{i:02d}" for i in a], "b": [f"b{i:02d}" for i in b]})
    frame.index = pd.Index([slice_label(r) for r in frame.to_dict("records")],
                           name="slice")
    counts = np.stack([tp, pos - tp, n - pos - tn, tn], -1)
    return bcm.ConfusionMatrix.from_slices(counts, frame)


def main() -> None:
    import arviz as az

    import bayescm as bcm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=10, help="levels per factor")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--centered", choices=("auto", "true", "false"), default="auto",
                        help="groups(centered=...): 'auto' (the default) chooses per factor")
    args = parser.parse_args()
    cm = simulate(args.side, args.seed)
    warnings.simplefilter("ignore")
    centered = {"auto": "auto", "true": True, "false": False}[args.centered]
    model = bcm.models.groups(cm, centered=centered)
    from bayescm.family import spec_of
    from bayescm.models.groups.design import spec_design

    chosen = {b.name: b.centred for b in spec_design(spec_of(model)).blocks}
    bcm.fit(model, draws=20, tune=20, chains=1, random_seed=0, progressbar=False,
            predictive=False, prior=False)  # compile/cache the kernel
    start = time.perf_counter()
    idata = bcm.fit(model, draws=args.draws, random_seed=args.seed, progressbar=False,
                    predictive=False, prior=False)
    seconds = time.perf_counter() - start
    names = ["mu", "sigma_a", "sigma_b", "tpr"]
    ess = az.ess(idata, var_names=names)
    low = min(float(ess[v].min()) for v in ess.data_vars)
    rhat = float(az.rhat(idata, var_names=names).to_array().max())
    print(f"slices={len(cm)} centered={args.centered} {chosen} engine={idata.attrs['engine']} "
          f"chains=4 draws={args.draws} "
          f"fit_s={seconds:.1f} min_bulk_ess={low:.0f} ess_per_s={low / seconds:.1f} "
          f"divergences={int(idata.sample_stats['diverging'].sum())} max_rhat={rhat:.3f} "
          f"converged={idata.attrs['converged']}")


if __name__ == "__main__":
    main()
