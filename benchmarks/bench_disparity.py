"""Exact posteriors and disparity summaries for 10^4 slices, figures measured in one run.

A 100 x 100 grid of slices (two factors, 50 to 500 cases each, one slice's TPR lower).
Each variant runs in a subprocess of its own (so each peak is its own; glibc told to
mmap every array of 1 MB or more, so that freed arrays leave the resident set),
timing and sampling the process's resident memory every 5 ms during each step:

- ``in-memory``: ``fit(sampler="exact")`` (NumPy draws), then ``disparity(fit, "tpr")``
  (every slice against the rest, largest gaps, equalized odds, demographic parity)
  with its table, ``disparity(..., by="a")`` (100 levels, the other factor pooled),
  and ``summary``;
- ``dask``: ``exact_posterior(cm, chunk=...)`` (xarray on Dask: nothing drawn) and
  the same two disparities with ``scheduler="dask"`` (a local cluster of threads in
  the same process, so its memory is counted): the draws are never held whole;
- ``before`` (with ``--before PATH``, a checkout of an earlier bayescm, e.g. ``git
  worktree add /tmp/before <commit>``): the in-memory variant run on that code, and
  the largest difference of its disparity tables from this code's.

Usage::

    .venv/bin/python benchmarks/bench_disparity.py --side 100 --draws 1000 --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def sliced(side: int, seed: int = 0) -> Any:
    import bayescm as bcm
    from bayescm.data.slices import slice_label

    rng = np.random.default_rng(seed)
    levels = pd.MultiIndex.from_product([range(side), range(side)], names=["a", "b"])
    n = rng.integers(50, 501, len(levels))
    pos = rng.binomial(n, 0.3)
    tpr = np.full(len(levels), 0.85)
    tpr[0] = 0.6  # one slice clearly worse
    tp = rng.binomial(pos, tpr)
    fp = rng.binomial(n - pos, 0.1)
    counts = np.stack([tp, pos - tp, fp, n - pos - fp], axis=1)
    slices = levels.to_frame(index=False).astype(str)
    slices.index = [slice_label(row) for row in slices.to_dict("records")]
    return bcm.ConfusionMatrix.from_slices(counts, slices)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@contextmanager
def _watch(steps: list[dict], name: str) -> Iterator[None]:
    """Time a step and sample its peak resident memory every 5 ms."""
    start, peak, stop = _rss_mb(), [_rss_mb()], threading.Event()

    def sample() -> None:
        while not stop.wait(0.005):
            peak[0] = max(peak[0], _rss_mb())

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        secs = time.perf_counter() - t0
        stop.set()
        thread.join()
        peak[0] = max(peak[0], _rss_mb())
        steps.append({"step": name, "seconds": secs, "rss_before_mb": start,
                      "peak_rss_mb": peak[0], "added_mb": peak[0] - start})


def worker(variant: str, side: int, draws: int, chunk: int, out: str) -> None:
    import bayescm as bcm

    cm = sliced(side)
    steps: list[dict] = []
    run: Callable[..., Any] = bcm.analysis.disparity
    opts: dict[str, Any] = {}
    if variant == "dask":
        with _watch(steps, f"exact_posterior(chunk={chunk}) (lazy)"):
            fit = bcm.exact_posterior(cm, draws=draws, metrics=["tpr"], random_seed=1,
                                      chunk=chunk)
        opts = {"scheduler": "dask"}
    else:
        with _watch(steps, "exact fit (three_beta, posterior only)"):
            # the posterior only: the prior and predictive groups would triple the memory
            fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=draws,
                          random_seed=1, metrics=["tpr", "tnr"], prior=False,
                          predictive=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _watch(steps, "disparity, every slice vs the rest, with its table"):
            every = run(fit, "tpr", threshold=0.05, **opts)
            table = every.to_frame()
        with _watch(steps, f"disparity by factor a ({side} levels), with its table"):
            by_a = run(fit, "tpr", threshold=0.05, by="a", **opts).to_frame()
        if variant != "dask":
            with _watch(steps, "summary, tpr and tnr per slice"):
                bcm.summary(fit, metrics=["tpr", "tnr"])
    versus = table.xs("tpr vs rest", level="measure")
    low = versus.loc[cm.classifiers[0]]
    note = (f"the simulated low slice {cm.classifiers[0]} (TPR 0.60 vs 0.85): "
            f"{low['mean']:+.3f} vs the rest, P(worse by > 0.05) = {low['p_worse']:.3f}, "
            f"rank {int((versus['mean'] < low['mean']).sum()) + 1} of {len(versus)}; "
            f"P(largest TPR gap > 0.05) = {every.probability('gap'):.3f}")
    with open(out, "wb") as f:
        pickle.dump({"steps": steps, "note": note, "tables": (table, by_a),
                     "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024},
                    f)


def _spawn(variant: str, path: Path, args: argparse.Namespace, tmp: str) -> dict:
    out = os.path.join(tmp, f"{variant}.pkl")
    # large arrays always mmap-ed, so a freed array leaves the resident set at once
    # (glibc's adaptive threshold would keep arrays under 32 MB in its heaps, per thread)
    env = {**os.environ, "PYTHONPATH": str(path), "MALLOC_MMAP_THRESHOLD_": str(2**20)}
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
            f"import bench_disparity as b; b.worker({variant!r}, {args.side}, {args.draws}, "
            f"{args.chunk}, {out!r})")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp)
    with open(out, "rb") as f:
        return pickle.load(f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=100)
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain (4 chains)")
    parser.add_argument("--chunk", type=int, default=500, help="slices per Dask block")
    parser.add_argument("--before", type=Path, help="checkout of the code to compare with")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--variants", default="in-memory,dask",
                        help="which of this code's variants to run (comma-separated)")
    args = parser.parse_args()
    print(f"{args.side**2} slices, {4 * args.draws} exact draws per slice "
          f"(theta: {args.side**2 * 4 * args.draws * 4 * 8 / 1e9:.2f} GB per float64 copy)")
    variants = [("before", args.before)] if args.before else []
    variants += [(name, ROOT) for name in args.variants.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in variants:
            results[name] = _spawn("dask" if name == "dask" else "eager", path, args, tmp)
            print(f"\n{name} ({path}): peak resident memory "
                  f"{results[name]['max_rss_mb']:,.0f} MB")
            for s in results[name]["steps"]:
                print(f"  {s['step']:<58} {s['seconds']:7.2f} s  peak {s['peak_rss_mb']:7,.0f}"
                      f" MB (+{s['added_mb']:,.0f} MB over its start)")
            print(f"  {results[name]['note']}")
    if {"before", "in-memory"} <= set(results):
        for i, label in enumerate(("every slice", "by a")):
            old, new = (results[k]["tables"][i] for k in ("before", "in-memory"))
            diff = (new[old.columns] - old).abs().to_numpy(dtype=float)
            print(f"largest |difference| of the {label} tables, this code vs before: "
                  f"{np.nanmax(diff):.2e} ({old.shape[0]} rows)")
    if args.json:
        args.json.write_text(json.dumps({k: {"steps": v["steps"], "max_rss_mb": v["max_rss_mb"]}
                                         for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
