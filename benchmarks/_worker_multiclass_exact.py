"""Measurements for ``bench_multiclass_exact.py``, each in a fresh Python process.

Task ``summary_exact_path``: ``summary_exact`` of K-class matrices by the current
path (``"after"``) or by the frozen path before the fused chunks (``"before"``,
``_summary_exact_before``), with the wall and CPU time of the call, the process's peak
resident memory and a digest of the table (equal digests: equal tables, bit for bit).
Only the standard library and ``_worker`` are imported at module level.
"""

from __future__ import annotations

import os
import time

import _worker
from _worker import _import_bayescm, _multiclass_matrices, _peak_mb


def _digest(table) -> str:
    """A hash of every value and index label of the table."""
    import hashlib

    import pandas as pd

    h = hashlib.sha256(pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes())
    return h.hexdigest()[:16]


def task_summary_exact_path(params: dict) -> dict:
    bcm, t_import = _import_bayescm()
    import sys

    import bayescm.summary_stream  # noqa: F401  (imports are not part of the timing)

    if params["path"] == "before":
        import _summary_exact_before as impl

        sys.modules["bayescm.summary"].COMPILED_FROM = float("inf")  # NumPy statistics
        sys.modules["bayescm.inference.marginals"].aligned = impl.aligned  # as it was
        run = impl.summary_exact
    else:
        run = bcm.summary_exact
    mc = _multiclass_matrices(bcm, int(params["k"]), int(params["classifiers"]),
                              int(params["seed"]))
    baseline = _peak_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    # model build + draws + metrics + table, as in _worker.task_multiclass_exact;
    # input "matrix": the matrix itself (its default model, no PyMC model built)
    model = (mc if params.get("input") == "matrix"
             else getattr(bcm.models, params["builder"])(mc))
    table = run(model, draws=int(params["draws"]), chains=int(params["chains"]),
                random_seed=1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    cache = os.environ.get("NUMBA_CACHE_DIR")
    # numba's cache index files name what was compiled (module.function-line)
    compiled = sorted({f.rsplit(".", 2)[0] for _, _, files in os.walk(cache or "/nonexistent")
                       for f in files if f.endswith(".nbi")})
    return {"import_s": t_import, "total_s": wall, "cpu_s": cpu, "peak_mb": _peak_mb(),
            "baseline_mb": baseline, "rows": len(table), "digest": _digest(table),
            "compiled": compiled,
            "compiled_module_loaded": "bayescm.inference.order_stats" in sys.modules,
            "load": os.getloadavg()[0]}


def main(task: str, params_json: str) -> None:
    _worker.TASKS["summary_exact_path"] = task_summary_exact_path
    _worker.main(task, params_json)
