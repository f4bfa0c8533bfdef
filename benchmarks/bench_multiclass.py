"""Multiclass benchmark: K = 100 exact, NUTS at K = 10, and pycm side by side, in one run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_multiclass.py            # everything (~5-10 min, 2 cores)
    .venv/bin/python benchmarks/bench_multiclass.py --only pycm

Every measurement runs in a fresh Python subprocess (``bench_core.run_child``; the
code is in ``benchmarks/_worker_multiclass.py``) that prints one JSON line with its
timings and its peak resident memory (``ru_maxrss`` of that child).  Nothing is
hard-coded: every figure below is measured in this run.

Matrices come from a simulated K-class classifier (``_worker_multiclass.simulate``,
fixed seeds): class prevalence ~ Dirichlet(2, ..., 2), recall per class uniform in
[0.6, 0.95], errors spread over a few other classes (Dirichlet(0.1, ...) shares), so
most off-diagonal cells are empty.

1. One K = 100 matrix, N = 20,000: ``fit(multiclass_rows | multiclass_cells,
   sampler="exact")`` (1000 draws x 4 chains) with every multiclass metric, then
   ``bcm.summary``; posterior only (``prior=False, predictive=False``) and the default
   fit with every group.  Wall time (build + fit + summary) and peak memory.
2. NUTS on the same K = 100 matrix (9,999 free parameters), ``multiclass_rows``,
   posterior only, fewer draws (``--k100-draws``, default 300 per chain after 300
   tuning steps, 2 chains) with two metrics: a feasibility figure, not a recommended
   use (the exact sampler gives the same posterior i.i.d.).  ``multiclass_cells`` has
   as many free parameters and runs on the same compiled density: not repeated.
3. NUTS at K = 10 (N = 2,000), both families, ``fit``'s defaults (1000 draws x 4
   chains after 1000 tuning steps, engine "auto": nutpie on bayescm's compiled
   density): first fit in a fresh process with empty numba/PyTensor caches (COLD:
   compile + sample) and with the user's caches (WARM), then 3 refits in that process
   on new counts of the same shape (a new model each; the compiled density is reused);
   largest R-hat, smallest bulk/tail ESS and divergences of each fit.
4. pycm 4.6 side by side on K = 10 matrices (the two of section 3 and 100 more with
   N in 200..5,000): pycm's ``ConfusionMatrix(matrix=...)`` (every statistic it has)
   plus ``CI(...)`` for each of its 13 statistics with an interval (11 per class,
   2 overall; normal approximation), one matrix at a time; against bayescm's exact
   posterior (``multiclass_rows``, 4,000 draws, posterior only) of the same 13
   statistics with ``summary`` (mean, sd, median, 95% HDI), the matrices as one
   batch; and of every multiclass metric.
5. A small-N matrix (K = 3, N = 20): pycm's 95% normal-approximation intervals next
   to bayescm's 95% HDIs (flat priors, ``multiclass_rows``) for per-class TPR and PPV
   and overall accuracy and kappa.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time

from bench_core import progress, run_child, s, section, table, versions

WORKER = "_worker_multiclass"
SEED = 20251123
K100, N100 = 100, 20_000
K10, N10 = 10, 2_000
REFITS, PYCM_BATCH = 3, 100
FAMILIES = ("multiclass_rows", "multiclass_cells")
SMALL = {"labels": ["cat", "dog", "bird"], "counts": [[9, 1, 0], [2, 3, 0], [0, 1, 4]],
         "class_stats": ["TPR", "PPV"], "overall_stats": ["Overall ACC", "Kappa"]}


def child(task: str, params: dict, cache_dir: str | None = None) -> dict:
    return run_child(task, params, cache_dir=cache_dir, worker=WORKER)


def bench_k100(args: argparse.Namespace) -> None:
    section(f"1. One K = {K100} matrix (N = {N100:,}): exact fit with every metric + summary")
    rows = []
    for family in FAMILIES:
        for groups in ("posterior", "all"):
            progress(f"K = {K100} exact, {family}, groups={groups}")
            r = child("k100", {"k": K100, "n": N100, "seed": SEED, "family": family,
                               "groups": groups})
            rows.append([family, "posterior only" if groups == "posterior" else "all (default)",
                         r["draws_total"], r["metrics"], s(r["build_s"]), s(r["fit_s"]),
                         s(r["summary_s"]), s(r["total_s"]), r["summary_rows"],
                         f"{r['peak_mb']:.0f}", f"{r['peak_mb'] - r['baseline_mb']:.0f}"])
    print(f"matrix: {K100} classes, N = {r['n']:,}, {r['zero_share']:.0%} of the "
          f"{K100 * K100:,} cells empty")
    print(table(["model", "groups", "draws", "metrics", "build s", "fit s", "summary s",
                 "total s", "summary rows", "peak MB", "incr MB"], rows))
    print("total = build + fit + summary (bcm.summary of every metric); incr MB = peak - "
          "peak after imports.\nall = the default fit: also prior, prior predictive and "
          "posterior predictive (K x K counts at the observed N) groups, with metrics.")


def bench_nuts_k100(args: argparse.Namespace) -> None:
    section(f"2. NUTS on the K = {K100} matrix ({K100 * K100 - 1:,} free parameters), "
            "posterior only")
    rows = []
    for family in FAMILIES[:1]:
        progress(f"NUTS K = {K100}, {family}")
        params = {"k": K100, "n": N100, "seed": SEED, "family": family, "lean": True,
                  "draws": args.k100_draws, "tune": args.k100_draws, "chains": 2,
                  "metrics": ["acc", "f1_macro"]}
        try:
            r = child("nuts", params)
        except (RuntimeError, OSError) as err:  # a timeout is the answer "not feasible"
            rows.append([family, "-", "-", "-", "-", "-", "-", f"failed: {str(err)[:60]}"])
            continue
        d = r["first"]
        rows.append([family, d["engine"], f"{r['chains']}x{r['draws']}", s(r["first_s"]),
                     f"{d['r_hat']:.3f}", f"{d['ess_bulk']:.0f}/{d['ess_tail']:.0f}",
                     d["divergences"], "yes" if d["ok"] else "NO", f"{r['peak_mb']:.0f}"])
        # fit's defaults: 4 chains of 1000 + 1000 steps; chains share the CPUs
        cpus = os.cpu_count() or 1
        steps_per_cpu = r["chains"] * 2 * r["draws"] / min(r["chains"], cpus)
        estimate = r["first_s"] * (4 * 2000 / min(4, cpus)) / steps_per_cpu
    print(table(["model", "engine", "chains x draws", "fit s", "max R-hat",
                 "min ESS bulk/tail", "div", "converged", "peak MB"], rows))
    print(f"tune = draws = {args.k100_draws} per chain; the diagnostics cover every parameter "
          "and theta cell.\nAt fit's defaults (4 chains x (1000 tune + 1000 draws)) this would "
          f"take about {estimate / 60:.0f} min on this machine (time scaled linearly in "
          "steps and chains per CPU),\nagainst seconds for the exact sampler (section 1).")


def bench_nuts_k10(args: argparse.Namespace) -> None:
    section(f"3. NUTS at K = {K10} (N = {N10:,}): first fit and refits on new counts")
    rows = []
    for family in FAMILIES:
        for state in ("cold", "warm"):
            progress(f"NUTS K = {K10}, {family}, {state}")
            params = {"k": K10, "n": N10, "seed": SEED, "family": family, "reps": REFITS}
            if state == "cold":
                with tempfile.TemporaryDirectory(prefix="bayescm-bench-") as tmp:
                    r = child("nuts", params, cache_dir=tmp)
            else:
                r = child("nuts", params)
            d = r["first"]
            worst_refit = max(x["r_hat"] for x in r["refit"])
            rows.append([family, state, d["engine"], f"{r['chains']}x{r['draws']}",
                         s(r["import_s"]), s(r["first_s"]), s(r["refit_median_s"]),
                         ", ".join(f"{t:.2f}" for t in r["refit_all_s"]),
                         f"{d['r_hat']:.4f}", f"{d['ess_bulk']:.0f}/{d['ess_tail']:.0f}",
                         d["divergences"], f"{worst_refit:.4f}",
                         sum(x["divergences"] for x in r["refit"]), f"{r['peak_mb']:.0f}"])
    print(table(["model", "cache", "engine", "chains x draws", "import s", "first fit s",
                 "refit s (median)", f"refits ({REFITS})", "max R-hat", "min ESS bulk/tail",
                 "div", "refits max R-hat", "refits div", "peak MB"], rows))
    print("first fit = build + fit (prior, posterior, predictive groups, every metric, the "
          "convergence check) after the imports;\ncold = empty NUMBA_CACHE_DIR and PyTensor "
          "compiledir (the compiled density is built), warm = the user's caches.\n"
          f"R-hat / ESS: worst over the {d['scalars']} scalars fit checks (parameters and "
          "theta).")


def bench_pycm(args: argparse.Namespace) -> None:
    section(f"4. pycm vs bayescm on the same K = {K10} matrices")
    progress("pycm side by side")
    r = child("pycm", {"k": K10, "n": N10, "seed": SEED, "batch": PYCM_BATCH})
    rows = []
    for label in (key for key in r if key.endswith(" matrices")):
        x = r[label]
        same, full = x["same"], x["all"]
        rows.append([x["matrices"], s(x["pycm_s"]), s(x["pycm_s"] / x["matrices"]),
                     s(same["fit_s"]), s(same["summary_s"]),
                     s(same["fit_s"] + same["summary_s"]), same["rows"],
                     s(full["fit_s"] + full["summary_s"]), full["rows"]])
    print(table(["matrices", "pycm s", "pycm s/matrix", "bayescm fit s", "summary s",
                 f"bayescm {r['statistics']} stats s", "rows", "bayescm every metric s",
                 "rows"], rows))
    print(f"pycm: ConfusionMatrix(matrix=...) computes its {r['pycm_class_stats']} class and "
          f"{r['pycm_overall_stats']} overall statistics; then CI() for the "
          f"{r['statistics']} with an interval (TPR, TNR, PPV, NPV, ACC, PLR, NLR, FPR, FNR, "
          "AUC, PRE per class; Kappa, Overall ACC).\nbayescm: fit(multiclass_rows(batch), "
          f"sampler='exact', prior=False, predictive=False) with the same {r['statistics']} "
          f"statistics (or every metric), {x['same']['draws']:,} draws, then bcm.summary; "
          f"peak {r['peak_mb']:.0f} MB.")


def bench_small_n(args: argparse.Namespace) -> None:
    section("5. Small counts: pycm's normal approximation vs bayescm's HDI (95%)")
    progress("small-N intervals")
    r = child("small_n", SMALL)
    print(f"matrix (rows actual, columns predicted; {', '.join(SMALL['labels'])}): "
          f"{SMALL['counts']}, N = {r['n']}")
    rows = []
    for x in r["rows"]:
        lo, hi = x["pycm"]
        flags = [w for w, bad in (("below 0", lo < 0), ("above 1", hi > 1),
                                  ("zero width", hi - lo == 0)) if bad]
        rows.append([x["stat"], x["key"], f"{x['value']:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                     ", ".join(flags) or "-", f"[{x['hdi'][0]:.3f}, {x['hdi'][1]:.3f}]",
                     f"{x['mean']:.3f}"])
    print(table(["pycm statistic", "bayescm", "point", "pycm 95% CI", "pycm CI problem",
                 "bayescm 95% HDI", "post. mean"], rows))
    print(f"bayescm: multiclass_rows, exact posterior, 4,000 draws, priors {r['priors']}")


SECTIONS = {"k100": bench_k100, "nuts_k100": bench_nuts_k100, "nuts_k10": bench_nuts_k10,
            "pycm": bench_pycm, "small_n": bench_small_n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=list(SECTIONS), action="append",
                        help="run only these sections (repeatable); default: all")
    parser.add_argument("--k100-draws", type=int, default=300,
                        help="NUTS draws and tuning steps per chain at K = 100 (section 2)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    start = time.perf_counter()
    print("bayescm multiclass benchmark")
    print(f"{dt.datetime.now().isoformat(timespec='seconds')}  python "
          f"{platform.python_version()}  {platform.machine()}  {os.cpu_count()} CPUs  "
          f"load average {os.getloadavg()[0]:.1f} (other work on the machine slows every "
          "figure)")
    print(versions())
    for name in args.only or SECTIONS:
        SECTIONS[name](args)
    print(f"\nbenchmark wall time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
