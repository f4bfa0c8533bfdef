"""Measurements for ``bench_multiclass.py``, each in a fresh Python process.

``bench_multiclass.py`` runs ``bench_core.run_child(task, params, worker=...)``; this
module adds its tasks to ``_worker.TASKS`` and hands over to ``_worker.main``, which
prints one line ``BENCH_JSON {...}`` with the task's figures and the process's peak
resident memory.  Only the standard library and ``_worker`` are imported at module
level, so what a task measures starts after its own imports.
"""

from __future__ import annotations

import statistics
import time

import _worker
from _worker import _import_bayescm, _peak_mb

# pycm's statistics that have a confidence interval (``ConfusionMatrix.CI``) and the
# bayescm metric holding the same quantity.  pycm's per-class ``AUC`` of a confusion
# matrix is (TPR + TNR) / 2, the one-vs-rest balanced accuracy; ``PRE`` is prevalence.
PYCM_CLASS = {"TPR": "tpr", "TNR": "tnr", "PPV": "ppv", "NPV": "npv", "ACC": "acc_ovr",
              "PLR": "lr_pos", "NLR": "lr_neg", "FPR": "fpr", "FNR": "fnr", "AUC": "ba_ovr",
              "PRE": "prevalence"}
PYCM_OVERALL = {"Kappa": "kappa", "Overall ACC": "acc"}


def simulate(k: int, n: int, seed: int):
    """Counts of a simulated K-class classifier on ``n`` cases (rows actual).

    Class prevalence ~ Dirichlet(2, ..., 2); recall of each class uniform in
    [0.6, 0.95]; a class's errors go to a few other classes (their shares
    ~ Dirichlet(0.1, ...)), so most off-diagonal cells are empty, as in real
    confusion matrices with many classes.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    prevalence = rng.dirichlet(np.full(k, 2.0))
    recall = rng.uniform(0.6, 0.95, size=k)
    errors = rng.dirichlet(np.full(k - 1, 0.1), size=k)
    rows = np.empty((k, k))
    for i in range(k):
        rows[i, i] = recall[i]
        rows[i, np.arange(k) != i] = (1 - recall[i]) * errors[i]
    sizes = rng.multinomial(n, prevalence)
    return np.stack([rng.multinomial(sizes[i], rows[i]) for i in range(k)])


def _summarise(bcm, idata, keys=None) -> tuple[float, int]:
    """Time ``bcm.summary`` of every metric (or of ``keys``): seconds and rows."""
    t0 = time.perf_counter()
    rows = len(bcm.summary(idata, metrics=keys))
    return time.perf_counter() - t0, rows


def task_k100(params: dict) -> dict:
    """Exact fit of one K x K matrix with every metric, then summary; time and memory."""
    bcm, t_import = _import_bayescm()
    counts = simulate(int(params["k"]), int(params["n"]), int(params["seed"]))
    mc = bcm.MulticlassConfusionMatrix(counts)
    baseline = _peak_mb()
    lean = params["groups"] == "posterior"
    t0 = time.perf_counter()
    model = getattr(bcm.models, params["family"])(mc)
    t1 = time.perf_counter()
    idata = bcm.fit(model, sampler="exact", random_seed=1, prior=not lean, predictive=not lean)
    t2 = time.perf_counter()
    summary_s, rows = _summarise(bcm, idata)
    post = idata.posterior
    metrics = [k for k in post.data_vars if k in bcm.metrics.registry_for(post).names()]
    return {"import_s": t_import, "build_s": t1 - t0, "fit_s": t2 - t1, "summary_s": summary_s,
            "summary_rows": rows, "total_s": t2 - t0 + summary_s,
            "peak_mb": _peak_mb(), "baseline_mb": baseline, "metrics": len(metrics),
            "draws_total": int(post.sizes["chain"] * post.sizes["draw"]),
            "groups": sorted(idata.groups()), "n": int(counts.sum()),
            "zero_share": float((counts == 0).mean())}


def _diagnostics(bcm, idata) -> dict:
    report = bcm.check_convergence(idata)
    worst = report.worst
    return {"r_hat": worst["r_hat"], "ess_bulk": worst["ess_bulk"],
            "ess_tail": worst["ess_tail"], "divergences": int(report.divergences),
            "scalars": len(report.table), "ok": int(report.ok),
            "engine": str(idata.attrs.get("engine"))}


def task_nuts(params: dict) -> dict:
    """NUTS: first fit in this process, then refits on new counts of the same shape.

    Each fit builds a new model and calls ``bcm.fit`` (engine="auto"), as a user
    would; the compiled density (numba, cached on disk) is shared by every shape, so
    a refit compiles nothing.  ``draws``/``tune``/``chains`` default to ``fit``'s.
    """
    bcm, t_import = _import_bayescm()

    k, n, reps = int(params["k"]), int(params["n"]), int(params.get("reps", 0))
    options = {key: int(params[key]) for key in ("draws", "tune", "chains") if key in params}
    options.update(prior=not params.get("lean"), predictive=not params.get("lean"))
    if params.get("metrics"):
        options["metrics"] = params["metrics"]
    build = getattr(bcm.models, params["family"])
    first_counts = bcm.MulticlassConfusionMatrix(simulate(k, n, int(params["seed"])))
    t0 = time.perf_counter()
    idata = bcm.fit(build(first_counts), random_seed=1, **options)
    first_s = time.perf_counter() - t0
    out = {"import_s": t_import, "first_s": first_s, "first": _diagnostics(bcm, idata),
           "chains": int(idata.posterior.sizes["chain"]),
           "draws": int(idata.posterior.sizes["draw"]),
           "free_parameters": k * k - 1, "refit_all_s": [], "refit": []}
    for i in range(reps):
        new = bcm.MulticlassConfusionMatrix(simulate(k, n, int(params["seed"]) + 1 + i))
        t0 = time.perf_counter()
        again = bcm.fit(build(new), random_seed=2 + i, **options)
        out["refit_all_s"].append(time.perf_counter() - t0)
        out["refit"].append(_diagnostics(bcm, again))
    if reps:
        out["refit_median_s"] = statistics.median(out["refit_all_s"])
    out["peak_mb"] = _peak_mb()
    return out


def _pycm_matrix(counts) -> dict:
    k = len(counts)
    return {i: {j: int(counts[i, j]) for j in range(k)} for i in range(k)}


def _pycm_all(pycm, counts) -> float:
    """pycm: every statistic of one matrix, then every interval it offers; seconds."""
    t0 = time.perf_counter()
    cm = pycm.ConfusionMatrix(matrix=_pycm_matrix(counts))
    for stat in (*PYCM_CLASS, *PYCM_OVERALL):
        cm.CI(stat)
    return time.perf_counter() - t0


def task_pycm(params: dict) -> dict:
    """pycm's statistics and normal-approximation intervals vs bayescm's exact posterior.

    The same K = 10 matrices for both: the two of the NUTS section (seeds ``seed`` and
    ``seed + 1``) and a batch of ``batch`` more.  pycm runs matrix by matrix (its only
    way); bayescm fits the batch as one model.
    """
    bcm, t_import = _import_bayescm()
    import numpy as np
    import pycm

    k, n, seed, batch = (int(params[x]) for x in ("k", "n", "seed", "batch"))
    matrices = [simulate(k, n, seed), simulate(k, n, seed + 1)]
    rng = np.random.default_rng(seed + 10)
    sizes = rng.integers(200, 5001, size=batch)
    matrices += [simulate(k, int(m), seed + 100 + i) for i, m in enumerate(sizes)]
    _pycm_all(pycm, matrices[0])  # warm-up (pycm's first call imports its tables)
    keys = [*PYCM_CLASS.values(), *PYCM_OVERALL.values()]
    out: dict = {"import_s": t_import, "statistics": len(PYCM_CLASS) + len(PYCM_OVERALL),
                 "pycm_class_stats": len(pycm.ConfusionMatrix(
                     matrix=_pycm_matrix(matrices[0])).class_stat),
                 "pycm_overall_stats": len(pycm.ConfusionMatrix(
                     matrix=_pycm_matrix(matrices[0])).overall_stat)}
    for label, chosen in (("2 matrices", matrices[:2]), (f"{len(matrices)} matrices", matrices)):
        pycm_s = sum(_pycm_all(pycm, c) for c in chosen)
        mc = bcm.MulticlassConfusionMatrix(np.stack(chosen))
        row = {"matrices": len(chosen), "pycm_s": pycm_s}
        for what, metrics in (("same", keys), ("all", None)):
            t0 = time.perf_counter()
            idata = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", random_seed=1,
                            prior=False, predictive=False, metrics=metrics)
            fit_s = time.perf_counter() - t0
            summary_s, rows = _summarise(bcm, idata, metrics)
            row[what] = {"fit_s": fit_s, "summary_s": summary_s, "rows": rows,
                         "draws": int(idata.posterior.sizes["chain"]
                                      * idata.posterior.sizes["draw"])}
        out[label] = row
    out["peak_mb"] = _peak_mb()
    return out


def task_small_n(params: dict) -> dict:
    """pycm's normal-approximation intervals next to bayescm's 95% HDIs, small counts."""
    bcm, t_import = _import_bayescm()
    import numpy as np
    import pycm

    from bayescm.stats import hdi

    counts = np.asarray(params["counts"])
    labels = list(params["labels"])
    cm = pycm.ConfusionMatrix(matrix={a: {p: int(counts[i, j]) for j, p in enumerate(labels)}
                                      for i, a in enumerate(labels)})
    mc = bcm.MulticlassConfusionMatrix(counts, labels=labels)
    idata = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", random_seed=1,
                    prior=False, predictive=False)
    post = idata.posterior.sel(classifier="cm")
    rows = []
    for stat in params["class_stats"]:
        ci = cm.CI(stat)
        draws = post[PYCM_CLASS[stat]]
        dim = "class" if "class" in draws.dims else "actual"  # a parameter: on dim actual
        for label in labels:
            values = draws.sel({dim: label}).values.ravel()
            lo, hi = hdi(values[None, :], 0.95)
            rows.append({"stat": f"{stat} {label}", "key": f"{PYCM_CLASS[stat]}[{label}]",
                         "value": float(cm.class_stat[stat][label]),
                         "pycm": [float(x) for x in ci[label][1]],
                         "hdi": [float(lo[0]), float(hi[0])], "mean": float(values.mean())})
    for stat in params["overall_stats"]:
        _, (lo_ci, hi_ci) = cm.CI(stat)
        values = post[PYCM_OVERALL[stat]].values.ravel()
        lo, hi = hdi(values[None, :], 0.95)
        rows.append({"stat": stat, "key": PYCM_OVERALL[stat],
                     "value": float(cm.overall_stat[stat]), "pycm": [lo_ci, hi_ci],
                     "hdi": [float(lo[0]), float(hi[0])], "mean": float(values.mean())})
    return {"import_s": t_import, "rows": rows, "n": int(counts.sum()),
            "priors": idata.attrs["priors"], "peak_mb": _peak_mb()}


TASKS = {"k100": task_k100, "nuts": task_nuts, "pycm": task_pycm, "small_n": task_small_n}


def main(task: str, params_json: str) -> None:
    _worker.TASKS.update(TASKS)
    _worker.main(task, params_json)
