"""Measurements that run inside a fresh Python process, for ``bench_core.py``.

``bench_core.py`` starts ``python -c "...; _worker.main(task, params_json)"`` in a
subprocess; the task prints one line ``BENCH_JSON {...}`` with its timings and the
process's peak resident memory (``ru_maxrss`` of that process).  Only the standard
library is imported at module level, so the import of bayescm can be timed.
"""

from __future__ import annotations

import json
import logging
import resource
import statistics
import sys
import time
import warnings

MARKER = "BENCH_JSON "


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    for name in ("pymc", "pytensor", "arviz", "numba", "nutpie"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _peak_mb() -> float:
    """High-water mark of this process's resident memory, in MB (10^6 bytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # Linux: KiB


def _import_bayescm() -> tuple[object, float]:
    """Import bayescm and the stack a model fit uses.

    ``import bayescm`` alone no longer imports PyMC, PyTensor, nutpie or ArviZ (they
    load when a model is built or fitted); importing them here keeps "import s" the
    cost a fitting user pays up front and the build/fit figures comparable with runs
    before the light import.  ``benchmarks/bench_import.py`` times the light paths.
    """
    t0 = time.perf_counter()
    import arviz  # noqa: F401
    import nutpie  # noqa: F401
    import pymc  # noqa: F401

    import bayescm

    _quiet()  # again: importing pymc & co. may have reset logger levels
    return bayescm, time.perf_counter() - t0


def _cocaine(bcm):
    return bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)


def task_exact(params: dict) -> dict:
    """Exact sampler + summary on 1 or many matrices; time and peak memory."""
    bcm, t_import = _import_bayescm()
    baseline = _peak_mb()
    n = int(params["n_matrices"])
    cm = _cocaine(bcm) if n == 1 else _random_matrices(bcm, n, int(params["seed"]))
    draws, chains = int(params["draws"]), int(params["chains"])
    t0 = time.perf_counter()
    model = bcm.models.three_beta(cm)
    t1 = time.perf_counter()
    lean = params.get("groups") == "posterior"
    idata = bcm.fit(model, sampler="exact", draws=draws, chains=chains, random_seed=1,
                    prior=not lean, predictive=not lean)
    t2 = time.perf_counter()
    table = bcm.summary(idata)
    t3 = time.perf_counter()
    return {
        "import_s": t_import, "build_s": t1 - t0, "fit_s": t2 - t1, "summary_s": t3 - t2,
        "total_s": t3 - t0, "peak_mb": _peak_mb(), "baseline_mb": baseline,
        "matrices": len(cm), "draws_total": chains * draws, "summary_rows": len(table),
        "metrics": int(table.index.get_level_values("metric").nunique()),
        "converged": int(idata.attrs.get("converged", -1)),
    }


def task_first_fit(params: dict) -> dict:
    """First NUTS fit of the three-Beta model on the cocaine matrix in this process."""
    bcm, t_import = _import_bayescm()
    engine = params["engine"]
    t0 = time.perf_counter()
    model = bcm.models.three_beta(_cocaine(bcm))
    if engine == "pm.sample":
        import pymc as pm

        with model:
            idata = pm.sample(random_seed=1, progressbar=False)
        used = "pm.sample"
    else:
        idata = bcm.fit(model, random_seed=1, engine=engine)
        used = str(idata.attrs.get("engine"))
    fit_s = time.perf_counter() - t0
    post = idata.posterior
    div = int(idata.sample_stats["diverging"].sum()) if "diverging" in idata.sample_stats else -1
    return {
        "import_s": t_import, "fit_s": fit_s, "peak_mb": _peak_mb(), "engine_used": used,
        "chains": int(post.sizes["chain"]), "draws": int(post.sizes["draw"]),
        "divergences": div, "tpr_mean": float(post["tpr"].mean()),
    }


def _timed(fn, reps: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for i in range(reps):
        t0 = time.perf_counter()
        out = fn(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def task_in_process(params: dict) -> dict:
    """Refits after a first fit, and batch versus single matrix, in one process."""
    bcm, t_import = _import_bayescm()
    from bayescm.data import datasets

    reps_refit, reps_batch = int(params["reps_refit"]), int(params["reps_batch"])
    cocaine = _cocaine(bcm)
    new_counts = bcm.ConfusionMatrix(tp=10, fn=5, fp=3, tn=20)
    new_priors = {
        "three_beta": {"tpr": bcm.priors.Beta(20, 4)},
        "dirichlet_multinomial": {"theta": bcm.priors.Dirichlet((20, 4, 4, 20))},
    }
    refit = {}
    for family in ("three_beta", "dirichlet_multinomial"):
        build = getattr(bcm.models, family)
        t0 = time.perf_counter()
        first = bcm.fit(build(cocaine), random_seed=1)
        first_s = time.perf_counter() - t0
        med_c, all_c, id_c = _timed(
            lambda i, build=build: bcm.fit(build(new_counts), random_seed=100 + i), reps_refit)
        med_p, all_p, id_p = _timed(
            lambda i, build=build, family=family: bcm.fit(
                build(cocaine, priors=new_priors[family]), random_seed=200 + i), reps_refit)
        refit[family] = {
            "first_s": first_s, "counts_median_s": med_c, "counts_all_s": all_c,
            "priors_median_s": med_p, "priors_all_s": all_p,
            "engine": str(first.attrs.get("engine")),
            "engines": sorted({str(first.attrs.get("engine")), str(id_c.attrs.get("engine")),
                               str(id_p.attrs.get("engine"))}),
            "prior_label": repr(next(iter(new_priors[family].values()))),
            "converged": int(all(x.attrs.get("converged") for x in (first, id_c, id_p))),
        }
    literature = datasets.totsch_literature()
    batch = {}
    for label, cm in (("single", cocaine), ("batch", literature)):
        bcm.fit(bcm.models.three_beta(cm), random_seed=1)  # warm-up, not timed
        med, runs, idata = _timed(
            lambda i, cm=cm: bcm.fit(bcm.models.three_beta(cm), random_seed=300 + i), reps_batch)
        batch[label] = {"median_s": med, "all_s": runs, "matrices": len(cm),
                        "engine": str(idata.attrs.get("engine")),
                        "converged": int(idata.attrs.get("converged", -1))}
    # the alternative a batch replaces: one fit per matrix
    t0 = time.perf_counter()
    for i, one in enumerate(literature):
        bcm.fit(bcm.models.three_beta(one), random_seed=400 + i)
    batch["sequential_s"] = time.perf_counter() - t0
    return {"import_s": t_import, "refit": refit, "batch": batch, "peak_mb": _peak_mb()}


def _random_matrices(bcm, n: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    totals = rng.integers(20, 501, size=n)  # N in [20, 500]
    counts = rng.multinomial(totals, rng.dirichlet(np.ones(4), size=n))  # zeros allowed
    return bcm.ConfusionMatrix(tp=counts[:, 0], fn=counts[:, 1], fp=counts[:, 2],
                               tn=counts[:, 3])


def _check_costs(bcm, idata, fit_s: float) -> dict:
    """Time ``check_convergence`` on a fitted InferenceData, as ``fit`` runs it and forced.

    ``fit_s`` is the fit's wall time, which includes the check ``fit`` ran (its default
    backend); a forced backend's share is its time over the fit with that check instead.
    """
    params = idata.attrs["parameters"].split(",")
    said = idata.attrs["convergence"]
    out: dict = {"fit_s": fit_s, "sampler": str(idata.attrs.get("sampler")),
                 "engine": str(idata.attrs.get("engine")),
                 "fit_said_independent": "independent by construction" in said}
    t0 = time.perf_counter()
    report = bcm.check_convergence(idata, var_names=params)
    auto_s = time.perf_counter() - t0
    out.update(scalars=len(report.table), check_s=auto_s, computed_by=report.computed_by,
               share=auto_s / fit_s, ok=int(report.ok), independent=int(report.independent))
    if not report.independent:
        for backend in ("arviz", "vectorised"):
            t0 = time.perf_counter()
            bcm.check_convergence(idata, var_names=params, backend=backend)
            t = time.perf_counter() - t0
            out[f"{backend}_s"] = t
            out[f"{backend}_share"] = t / (fit_s - auto_s + t)
    return out


def task_convergence(params: dict) -> dict:
    """Cost of the convergence check as a share of the fit: NUTS 1 / 24 / n matrices, exact."""
    bcm, t_import = _import_bayescm()
    from bayescm.data import datasets

    reps, n, seed = int(params["reps"]), int(params["n_matrices"]), int(params["seed"])
    cocaine = _cocaine(bcm)
    bcm.check_convergence(bcm.fit(bcm.models.three_beta(cocaine), random_seed=1))  # warm-up
    cases = [("nuts", "1 matrix (cocaine)", cocaine, reps, {}),
             ("nuts", "24 matrices (Totsch literature)", datasets.totsch_literature(), reps, {}),
             ("nuts", f"{n} random matrices, posterior only", _random_matrices(bcm, n, seed), 1,
              {"prior": False, "predictive": False}),
             ("exact", f"{n} random matrices, posterior only", _random_matrices(bcm, n, seed), 1,
              {"prior": False, "predictive": False})]
    rows = []
    for sampler, label, cm, k, kwargs in cases:
        runs = []
        for i in range(k):
            t0 = time.perf_counter()
            idata = bcm.fit(bcm.models.three_beta(cm), sampler=sampler, random_seed=500 + i,
                            **kwargs)
            runs.append(_check_costs(bcm, idata, time.perf_counter() - t0))
        mid = sorted(runs, key=lambda r: r["fit_s"])[len(runs) // 2]  # the median fit
        rows.append({"label": label, "matrices": len(cm), "runs": len(runs), **mid})
        if label.startswith("24"):
            entry = _arviz_entry_points(idata.posterior[idata.attrs["parameters"].split(",")])
    return {"import_s": t_import, "rows": rows, "entry_points": entry, "peak_mb": _peak_mb()}


def _arviz_entry_points(post) -> dict:
    """ArviZ's own routes to R-hat, bulk/tail ESS and MCSE: one az.summary or five calls."""
    import arviz as az

    t0 = time.perf_counter()
    az.summary(post, kind="diagnostics", round_to="none")
    summary_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    az.rhat(post)
    az.ess(post, method="bulk")
    az.ess(post, method="tail")
    az.mcse(post, method="mean")
    numba = az.Numba.numba_flag
    az.Numba.disable_numba()  # az.mcse(method="sd") fails on the numba path, NumPy >= 2.4
    try:
        az.mcse(post, method="sd")
    finally:
        if numba:
            az.Numba.enable_numba()
    return {"summary_s": summary_s, "separate_s": time.perf_counter() - t0,
            "scalars": sum(int(v.size // (v.sizes["chain"] * v.sizes["draw"]))
                           for v in post.data_vars.values())}


def _multiclass_matrices(bcm, k: int, m: int, seed: int):
    """``m`` random K-class matrices: N in 200..2,000, class prevalence ~ Dirichlet(5, ...),
    row a ~ Dirichlet(8 at a, 0.5 elsewhere): mostly right, zero cells occur."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = rng.integers(200, 2001, size=m)
    prevalence = rng.dirichlet(np.full(k, 5.0), size=m)
    g = rng.standard_gamma(np.where(np.eye(k, dtype=bool), 8.0, 0.5), size=(m, k, k))
    rows = g / g.sum(axis=-1, keepdims=True)
    sizes = np.stack([rng.multinomial(n[i], prevalence[i]) for i in range(m)])
    counts = np.stack([[rng.multinomial(sizes[i, a], rows[i, a]) for a in range(k)]
                       for i in range(m)])
    return bcm.MulticlassConfusionMatrix(counts, labels=[f"c{j}" for j in range(k)],
                                         classifier=[f"m{i:04d}" for i in range(m)])


def task_multiclass_exact(params: dict) -> dict:
    """Every multiclass metric summarised for K-class matrices: streamed or materialised."""
    bcm, t_import = _import_bayescm()
    import bayescm.summary_stream  # noqa: F401  (its import is not part of the timing)

    mc = _multiclass_matrices(bcm, int(params["k"]), int(params["classifiers"]),
                              int(params["seed"]))
    draws, chains = int(params["draws"]), int(params["chains"])
    baseline = _peak_mb()
    t0 = time.perf_counter()
    model = getattr(bcm.models, params["builder"])(mc)
    if params["path"] == "stream":
        table = bcm.summary_exact(model, draws=draws, chains=chains, random_seed=1)
    else:
        idata = bcm.fit(model, sampler="exact", draws=draws, chains=chains, random_seed=1,
                        prior=False, predictive=False)
        table = bcm.summary(idata)
    return {"import_s": t_import, "total_s": time.perf_counter() - t0, "peak_mb": _peak_mb(),
            "baseline_mb": baseline, "rows": len(table),
            "metrics": int(table.index.get_level_values("metric").nunique()),
            "zero_cells": int((mc.counts == 0).sum())}


TASKS = {"exact": task_exact, "first_fit": task_first_fit, "in_process": task_in_process,
         "convergence": task_convergence, "multiclass_exact": task_multiclass_exact}


def main(task: str, params_json: str) -> None:
    _quiet()
    result = TASKS[task](json.loads(params_json))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
