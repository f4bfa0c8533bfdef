"""Where a NUTS batch's time goes: the 24-matrix literature batch against one matrix (issue 29).

``benchmarks/bench_core.py`` section 4 prints the headline ratio (target: the batch within
2x the single matrix).  This script breaks both fits down by stage, in one warm process,
the two fits interleaved (median of ``--runs`` each): model build, the memory estimate,
NUTS (nutpie on the compiled kernel, the trace's conversion included), the draws'
completion, the posterior metrics, the predictive and prior groups, and the convergence
check.  Each stage is timed by wrapping the function ``fit`` calls for it; the column
``+batch`` is what the 23 extra matrices add, i.e. the batch's per-matrix costs.

    .venv/bin/python benchmarks/bench_batch.py [--runs 5]
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import sys
import time
import warnings

STAGES = {  # (module, function) -> label
    ("bayescm.inference.budget", "check_fit"): "memory estimate",
    ("bayescm.inference.engines", "sample_kernel"): "NUTS (nutpie + trace)",
    ("bayescm.inference.draws", "complete"): "complete draws",
    ("bayescm.inference.draws", "with_metrics"): "posterior metrics",
    ("bayescm.inference.draws", "predictive"): "predictive groups",
    ("bayescm.inference.draws", "prior_draws"): "prior draws",
    ("bayescm.inference.fit", "check_convergence"): "convergence check",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    import bayescm as bcm
    from bayescm.data import datasets

    spent: collections.Counter[str] = collections.Counter()
    depth = [0]  # a stage called inside another (complete inside the estimate) is not counted
    for (module, name), label in STAGES.items():
        mod = sys.modules.get(module) or __import__(module, fromlist=[name])
        real = getattr(mod, name)

        @functools.wraps(real)
        def timed(*args, _real=real, _label=label, **kwargs):
            start = time.perf_counter()
            depth[0] += 1
            try:
                return _real(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[_label] += time.perf_counter() - start

        setattr(mod, name, timed)

    cases = {"single (cocaine)": bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6),
             "batch (24 literature matrices)": datasets.totsch_literature()}

    def one(cm, seed: int) -> dict[str, float]:
        spent.clear()
        start = time.perf_counter()
        model = bcm.models.three_beta(cm)
        built = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idata = bcm.fit(model, random_seed=seed)
        out = {"build": built - start, **spent, "total": time.perf_counter() - start}
        out["other"] = out["total"] - sum(v for k, v in out.items() if k != "total")
        one.computed_by = idata.attrs["convergence"].rsplit("(computed by ", 1)[-1].rstrip(").")
        return out

    for cm in cases.values():  # warm-up: numba's cache, ArviZ's probe, imports
        one(cm, 1)
    results: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
    by: dict[str, str] = {}
    for i in range(runs):
        for label, cm in cases.items():
            results[label].append(one(cm, 300 + i))
            by[label] = one.computed_by
    med = {label: {k: statistics.median(r.get(k, 0.0) for r in rs) for k in rs[-1]}
           for label, rs in results.items()}
    single, batch = med.values()
    print(f"three_beta NUTS fit (4 chains x 1,000 draws), median of {runs} (interleaved), s")
    print(f"{'stage':<26} {'single':>8} {'batch':>8} {'+batch':>8}")
    for key in ["build", *STAGES.values(), "other", "total"]:
        s, b = single.get(key, 0.0), batch.get(key, 0.0)
        print(f"{key:<26} {s:8.3f} {b:8.3f} {b - s:+8.3f}")
    print(f"batch / single: {batch['total'] / single['total']:.2f}x (target <= 2x); "
          f"convergence computed by: single {by[next(iter(cases))]}, batch "
          f"{by[list(cases)[1]]}")


if __name__ == "__main__":
    main()
