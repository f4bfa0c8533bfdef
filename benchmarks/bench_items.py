"""Timing: 30 models x 5,000 items x 3 runs, one items fit (target: under a minute on
two cores).

    .venv/bin/python benchmarks/bench_items.py [--items 5000] [--models 30] [--runs 3]
        [--draws 1000] [--chains 4]

Prints the time to read the long table (450,000 rows), to build the model, and to
fit it (wall, and CPU seconds over two cores, which other processes' load does not
inflate) (NUTS on the compiled density, the default engine; tuning = draws), with
the mean number of leapfrog steps per draw and the convergence verdict.  The fit
runs with fit's defaults but ``prior=False`` (prior draws of 5,000 item effects are
not what this benchmark times); the family keeps no replicated item-level data (a new
set's accuracy is ``accuracy_new_set`` in the posterior).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=5000)
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    a = p.parse_args()
    df = simulate_items(a.items, np.linspace(0.5, 0.9, a.models), runs=a.runs, rng=1)
    t0 = time.perf_counter()
    res = bcm.ItemResults.from_frame(df, run="run")
    t1 = time.perf_counter()
    model = bcm.models.items(res)
    t2, c2 = time.perf_counter(), time.process_time()
    idata = bcm.fit(model, draws=a.draws, tune=a.draws, chains=a.chains, random_seed=1,
                    prior=False)
    t3, c3 = time.perf_counter(), time.process_time()
    steps = float(idata.sample_stats["n_steps"].mean())
    print(f"{a.models} models x {a.items} items x {a.runs} runs ({len(df):,} rows)")
    print(f"read {t1 - t0:.1f} s, build {t2 - t1:.1f} s, fit {t3 - t2:.1f} s "
          f"({a.chains} chains x {a.draws} tune + {a.draws} draws, {steps:.1f} steps/draw, "
          f"engine {idata.attrs['engine']})")
    # CPU seconds of all the fit's threads / 2 cores: the wall time on an idle two-core
    # machine (the wall time above includes waiting for other processes' load)
    print(f"fit CPU {c3 - c2:.1f} s = {(c3 - c2) / 2:.1f} s on two idle cores; load average "
          f"{os.getloadavg()[0]:.1f} (target: under 60 s)")
    print(idata.attrs["convergence"])


if __name__ == "__main__":
    main()
