"""Exact posteriors, summaries and a leaderboard of 10^4 slices: in memory versus Dask.

Each path runs in a fresh process (its peak resident memory is its own), on the
same sliced ConfusionMatrix (100 x 100 groups, 20 to 2,000 cases per slice):

- ``summary``: ``bcm.summary_exact(cm)``, all binary metrics, 4 x 1,000 draws per
  slice; in memory (chunks in a loop) or ``scheduler="dask"`` (an embedded local
  cluster of two one-thread workers; one task per chunk);
- ``posterior``: ``bcm.exact_posterior(cm, metrics=...)`` and, per slice, the
  posterior mean of MCC and P(TPR < 0.8); in memory (``chunk=None``: every draw
  held at once) or lazily (``chunk=500``: xarray on Dask, computed on a local
  cluster; only the blocks in flight are held);
- ``leaderboard``: ``bcm.analysis.leaderboard(cm, "ba")`` with 1,000 joint draws;
  in memory (two threads) or ``scheduler="dask"`` (draw chunks on the cluster).

The Dask results equal the in-memory ones bit for bit (checked by checksums).
Measured on this machine (two shared cores, 24 November 2026), 10^4 slices::

    summary     memory    36.20 s  peak memory    428 MB
    summary     dask      37.20 s  peak memory    801 MB  (two 256 MB chunks in flight)
    posterior   memory    17.85 s  peak memory  6,119 MB
    posterior   dask      14.42 s  peak memory    818 MB  (blocks of 500 slices)
    leaderboard memory     3.97 s  peak memory    526 MB
    leaderboard dask       5.11 s  peak memory    512 MB

Usage::

    .venv/bin/python benchmarks/bench_dask_exact.py --slices 1e4
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

METRICS = ["tpr", "tnr", "ppv", "f1", "mcc"]


def _matrix(n_side: int):
    import numpy as np
    import pandas as pd

    import bayescm as bcm

    rng = np.random.default_rng(1)
    n = n_side * n_side
    cases = rng.integers(20, 2001, n)
    pos = rng.binomial(cases, 0.3)
    tpr, tnr = rng.beta(17, 3, n), rng.beta(18, 2, n)
    tp, tn = rng.binomial(pos, tpr), rng.binomial(cases - pos, tnr)
    frame = pd.DataFrame({"a": np.repeat(np.arange(n_side), n_side),
                          "b": np.tile(np.arange(n_side), n_side),
                          "tp": tp, "fn": pos - tp, "fp": cases - pos - tn, "tn": tn})
    return bcm.ConfusionMatrix.from_frame(frame, groups=["a", "b"])


def _run(task: str, path: str, n_side: int) -> dict:
    import numpy as np

    import bayescm as bcm

    cm = _matrix(n_side)
    start = time.perf_counter()
    scheduler = None if path == "memory" else "dask"
    if task == "summary":
        table = bcm.summary_exact(cm, draws=1000, chains=4, random_seed=1, scheduler=scheduler)
        checksum = float(table[["mean", "sd", "hdi_lower", "hdi_upper"]].to_numpy().sum())
        rows = len(table)
    elif task == "posterior":
        post = bcm.exact_posterior(cm, draws=1000, chains=4, metrics=METRICS, random_seed=1,
                                   chunk=None if path == "memory" else 500).posterior
        mean_mcc = post["mcc"].mean(("chain", "draw"))
        p_low = (post["tpr"] < 0.8).mean(("chain", "draw"))
        if path == "memory":
            answers = (mean_mcc.values, p_low.values)
        else:
            import dask
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                answers = dask.compute(mean_mcc.data, p_low.data, scheduler=client)
        checksum = float(sum(np.sum(a) for a in answers))
        rows = answers[0].size
    else:
        board = bcm.analysis.leaderboard(cm, "ba", draws=1000, random_seed=1,
                                         scheduler=scheduler)
        checksum = float(board.summary.to_numpy().sum())
        rows = len(board.summary)
    seconds = time.perf_counter() - start
    return {"task": task, "path": path, "slices": len(cm), "rows": rows,
            "seconds": round(seconds, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "checksum": checksum}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=float, default=1e4)
    parser.add_argument("--worker", nargs=2, metavar=("TASK", "PATH"))
    args = parser.parse_args()
    n_side = max(2, round(args.slices ** 0.5))
    if args.worker:
        print(json.dumps(_run(*args.worker, n_side)))
        return
    print(f"{n_side * n_side:,} slices, two cores; each line a fresh process")
    for task in ("summary", "posterior", "leaderboard"):
        results = []
        for path in ("memory", "dask"):
            out = subprocess.run([sys.executable, __file__, "--slices", str(args.slices),
                                  "--worker", task, path], capture_output=True, text=True,
                                 check=True)
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        assert results[0]["checksum"] == results[1]["checksum"], results  # bit for bit
        for r in results:
            print(f"  {task:11s} {r['path']:6s}  {r['seconds']:7.2f} s  peak memory "
                  f"{r['peak_mb']:6,d} MB  ({r['rows']:,} rows)")


if __name__ == "__main__":
    main()
