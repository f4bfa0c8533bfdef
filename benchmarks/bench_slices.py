"""Counting predictions into slices: pandas in memory versus Dask by partitions.

Each path runs in a fresh process (its peak resident memory is its own):

- pandas: the cases are generated as NumPy arrays (int8 labels, int16 group codes),
  then ``ConfusionMatrix.from_predictions(..., groups=...)``;
- Dask: the same cases, generated partition by partition inside the graph
  (``dd.from_map``), counted by ``from_predictions`` on Dask's threaded scheduler
  with two workers: only a few partitions exist at a time, so the peak memory is
  bounded by the partition size, not by the number of rows.

Both give the same counts (checked).  Usage::

    .venv/bin/python benchmarks/bench_slices.py --rows 1e7 --slices 1e4
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

PARTITION = 2_000_000


def _cases(n: int, n_side: int, seed: int):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n, dtype=np.int8)
    p = np.where(rng.random(n, dtype=np.float32) < 0.85, y, 1 - y).astype(np.int8)
    return pd.DataFrame({"y": y, "p": p, "a": rng.integers(0, n_side, n, dtype=np.int16),
                         "b": rng.integers(0, n_side, n, dtype=np.int16)})


def _run(path: str, rows: int, n_side: int) -> dict:
    import numpy as np

    import bayescm as bcm

    start = time.perf_counter()
    if path == "pandas":
        parts = [_cases(min(PARTITION, rows - s), n_side, i)
                 for i, s in enumerate(range(0, rows, PARTITION))]
        import pandas as pd

        df = pd.concat(parts, ignore_index=True)
        del parts
        made = time.perf_counter()
        cm = bcm.ConfusionMatrix.from_predictions(df["y"], df["p"],
                                                  groups={"a": df["a"], "b": df["b"]})
    else:
        import dask
        import dask.dataframe as dd

        sizes = [min(PARTITION, rows - s) for s in range(0, rows, PARTITION)]
        ddf = dd.from_map(lambda job: _cases(job[0], n_side, job[1]),
                          [(s, i) for i, s in enumerate(sizes)])
        made = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=2):
            cm = bcm.ConfusionMatrix.from_predictions(ddf["y"], ddf["p"],
                                                      groups={"a": ddf["a"], "b": ddf["b"]})
    end = time.perf_counter()
    return {"path": path, "rows": rows, "slices": len(cm), "count_s": round(end - made, 2),
            "total_s": round(end - start, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "checksum": int(np.sum(cm.counts * np.arange(1, 5))),
            "empty": int(cm.empty.sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--slices", type=float, default=1e4)
    parser.add_argument("--worker", choices=["pandas", "dask"])
    args = parser.parse_args()
    rows, n_side = int(args.rows), max(1, round(args.slices ** 0.5))
    if args.worker:
        print(json.dumps(_run(args.worker, rows, n_side)))
        return
    results = []
    for path in ("pandas", "dask"):
        out = subprocess.run([sys.executable, __file__, "--rows", str(rows), "--slices",
                              str(args.slices), "--worker", path], capture_output=True,
                             text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert results[0]["checksum"] == results[1]["checksum"], results
    print(f"counting {rows:,} predictions into {results[0]['slices']:,} slices "
          f"(partitions of {PARTITION:,} rows for Dask)")
    for r in results:
        print(f"  {r['path']:6s}  count {r['count_s']:7.2f} s  total {r['total_s']:7.2f} s  "
              f"peak memory {r['peak_mb']:6,d} MB")


if __name__ == "__main__":
    main()
