"""Core performance benchmark of bayescm: every figure and ratio from one run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_core.py            # full run (~2-3 min on 2 cores)
    .venv/bin/python benchmarks/bench_core.py --quick    # skips the cold pm.sample runs
    .venv/bin/python benchmarks/bench_core.py --only convergence   # section 5 alone

Every measurement runs in a fresh Python subprocess (``python -c``, code in
``benchmarks/_worker.py``) that prints one JSON line with its timings and its peak
resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that child).
Nothing is hard-coded: the tables, ratios and the PASS/MISS verdicts at the end come
from the figures measured in this run.

1. Exact path.  ``fit(three_beta(cm), sampler="exact", draws=1000, chains=4)`` then
   ``bcm.summary(idata)`` (every registry metric: mean, sd, median, HDI) on one matrix
   (cocaine, tp=26 fn=0 fp=2 tn=6) and on 1,000 random matrices (fixed seed; N drawn
   uniformly from 20..500, cell probabilities from Dirichlet(1, 1, 1, 1), so empty cells
   occur).  Wall time of build + fit + summary; peak RSS of the child, total and minus
   its baseline right after the imports.  The 1,000-matrix case runs twice: posterior
   only (``prior=False, predictive=False``: the target) and the default fit, which
   also draws the prior and predictive groups (for information).
   Target: 1,000 matrices x 4,000 draws in < 5 s and < 2 GB peak (GB = 10^9 bytes).
2. First NUTS fit in a fresh process: three-Beta model on the cocaine matrix, time from
   just after ``import bayescm`` to the InferenceData returned (model build included;
   import time reported separately).  Engines: ``bcm.fit`` (engine="auto": nutpie on
   bayescm's cached numba kernels), plain ``pm.sample(random_seed=1, progressbar=False)``
   with default settings on the same PyMC model, and ``bcm.fit(engine="nutpie")`` (nutpie
   compiling the PyMC model; for information).  COLD: the child gets empty temporary
   directories through ``PYTENSOR_FLAGS=compiledir=<tmp>`` and ``NUMBA_CACHE_DIR=<tmp>``;
   WARM: a second fresh child reusing the directories the cold child populated.
   Target: bayescm / pm.sample fit-time ratio <= 1/3, cold and warm.  With ``--quick``
   the cold pm.sample run is skipped and its warm figure uses the user's own caches,
   primed by an untimed run.
3. Refit in one process, after a first fit: new counts (tp=10 fn=5 fp=3 tn=20, new model)
   and new prior parameters (three_beta: tpr ~ Beta(20, 4); dirichlet_multinomial:
   theta ~ Dirichlet(20, 4, 4, 20)), median of 5 builds + fits each.  Target: < 2 s.
4. Batch: NUTS fit of the 24-matrix literature batch vs the single cocaine matrix, both
   warm, same process, median of 3.  Target: batch time < 2x single time.  Also the
   24 matrices fitted one at a time, the alternative a batch replaces.
5. Convergence check as a share of the fit (issue 16), one warm process: NUTS on the
   cocaine matrix and on the 24 literature matrices (default fit, median of 3 fits),
   NUTS on the 1,000 random matrices of (1) (posterior only, one fit), and the exact
   sampler on the same 1,000 matrices.  For each fit: ``check_convergence`` as ``fit``
   runs it (``backend="auto"``), its share of the fit's wall time (which includes that
   check), and the share ArviZ (``backend="arviz"``) and the vectorised twin would
   have.  Target: independent exact draws cost ~nothing to check (< 2% of the fit);
   the rule behind ``convergence.ARVIZ_MAX_SHARE``: ArviZ wherever its share is at
   most 20%.

numpyro is not installed in the project environment; its absence is reported and it is
skipped.  Timings are wall-clock (``time.perf_counter``); run on an otherwise idle
machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
MARKER = "BENCH_JSON "
CHILD_TIMEOUT_S = 900

EXACT_DRAWS, EXACT_CHAINS, EXACT_MATRICES, EXACT_SEED = 1000, 4, 1000, 20240601
TARGET_EXACT_S, TARGET_EXACT_GB = 5.0, 2.0
TARGET_RATIO = 1 / 3
TARGET_REFIT_S = 2.0
TARGET_BATCH_RATIO = 2.0
REPS_REFIT, REPS_BATCH = 5, 3


# -- running children -------------------------------------------------------------------
def run_child(task: str, params: dict, cache_dir: str | None = None,
              worker: str = "_worker") -> dict:
    """Run ``<worker>.main(task, params)`` in a fresh interpreter; return its JSON result.

    With ``cache_dir``, PyTensor's compiledir and numba's cache dir point there.
    ``worker`` is the module in ``benchmarks/`` holding the task (``_worker`` or a
    module adding its own tasks to it).
    """
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = "ignore"
    if cache_dir is not None:
        flags = env.get("PYTENSOR_FLAGS", "")
        env["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, f"compiledir={cache_dir}") if f)
        env["NUMBA_CACHE_DIR"] = cache_dir
    code = (
        f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import {worker} as w; "
        f"w.main({task!r}, {json.dumps(params)!r})"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"child {task} {params} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    return json.loads(lines[-1][len(MARKER):])


def progress(msg: str) -> None:
    print(f"  ... {msg}", file=sys.stderr, flush=True)


# -- formatting -------------------------------------------------------------------------
def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if i else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths, strict=True)))

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in cells)])


def s(x: float) -> str:
    return f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def section(title: str) -> None:
    print(f"\n{title}\n{'=' * len(title)}")


# -- the four measurements ----------------------------------------------------------------
def bench_exact(verdicts: list, quick: bool = False) -> None:
    section("1. Exact path: three_beta + fit(sampler='exact') + summary, fresh process")
    rows, results = [], {}
    cases = [(1, "all"), (EXACT_MATRICES, "posterior"), (EXACT_MATRICES, "all")]
    for n, groups in cases:
        progress(f"exact path, {n} matrices, groups={groups}")
        r = run_child("exact", {"n_matrices": n, "seed": EXACT_SEED, "draws": EXACT_DRAWS,
                                "chains": EXACT_CHAINS, "groups": groups})
        results[n, groups] = r
        rows.append([
            f"{r['matrices']} matrix" if n == 1 else f"{r['matrices']} random",
            "posterior only" if groups == "posterior" else "all (default)",
            f"{EXACT_CHAINS}x{EXACT_DRAWS}", s(r["import_s"]), s(r["build_s"]), s(r["fit_s"]),
            s(r["summary_s"]), s(r["total_s"]), f"{r['summary_rows']} ({r['metrics']} metrics)",
            f"{r['peak_mb']:.0f}", f"{r['baseline_mb']:.0f}",
            f"{r['peak_mb'] - r['baseline_mb']:.0f}",
        ])
    print(table(["matrices", "groups", "chains x draws", "import s", "build s", "fit s",
                 "summary s", "total s", "summary rows", "peak MB", "base MB", "incr MB"], rows))
    print("total s = build + fit + summary (import excluded); peak MB = ru_maxrss of the "
          "child; base MB = after imports; incr = peak - base.\n"
          "posterior only = fit(..., prior=False, predictive=False): draws, every metric's "
          "posterior, the convergence check, summary.\nall = the default fit, which also "
          "draws the prior, prior predictive and posterior predictive groups (with metrics).")
    r1, rn = results[1, "all"], results[EXACT_MATRICES, "posterior"]
    print(f"scaling 1 -> {EXACT_MATRICES} matrices: time x{rn['total_s'] / r1['total_s']:.0f}, "
          f"memory increment {(rn['peak_mb'] - rn['baseline_mb']) / EXACT_MATRICES:.2f} MB "
          f"per matrix (posterior only)")
    verdicts.append((f"exact: {EXACT_MATRICES} matrices x {EXACT_CHAINS * EXACT_DRAWS} draws "
                     f"< {TARGET_EXACT_S:g} s", rn["total_s"] < TARGET_EXACT_S,
                     f"{rn['total_s']:.2f} s (posterior only; default fit with all groups "
                     f"{results[EXACT_MATRICES, 'all']['total_s']:.2f} s)"))
    verdicts.append((f"exact: {EXACT_MATRICES} matrices peak memory < {TARGET_EXACT_GB:g} GB",
                     rn["peak_mb"] / 1000 < TARGET_EXACT_GB,
                     f"{rn['peak_mb'] / 1000:.2f} GB total peak "
                     f"({(rn['peak_mb'] - rn['baseline_mb']) / 1000:.2f} GB increment; "
                     f"all groups {results[EXACT_MATRICES, 'all']['peak_mb'] / 1000:.2f} GB)"))


def bench_first_fit(verdicts: list, quick: bool) -> None:
    section("2. First NUTS fit in a fresh process (three_beta, cocaine matrix)")
    engines = [("auto", "bcm.fit (auto)"), ("pm.sample", "pm.sample()"),
               ("nutpie", "bcm.fit(engine='nutpie')")]
    res: dict[tuple[str, str], dict] = {}
    for engine, label in engines:
        with tempfile.TemporaryDirectory(prefix="bayescm-bench-") as tmp:
            if engine == "pm.sample" and quick:
                progress(f"{label}: priming the user's default caches (untimed)")
                run_child("first_fit", {"engine": engine})
                progress(f"{label}: warm (user caches)")
                res[engine, "warm"] = run_child("first_fit", {"engine": engine})
                res[engine, "warm"]["note"] = "user caches (--quick)"
                continue
            for state in ("cold", "warm"):
                progress(f"{label}: {state}")
                res[engine, state] = run_child("first_fit", {"engine": engine}, cache_dir=tmp)
    rows = []
    for engine, label in engines:
        for state in ("cold", "warm"):
            r = res.get((engine, state))
            if r is None:
                rows.append([label, state, "-", "-", "-", "-", "-", "-", "skipped (--quick)"])
                continue
            rows.append([label, state, r["engine_used"], f"{r['chains']}x{r['draws']}",
                         s(r["import_s"]), s(r["fit_s"]), s(r["import_s"] + r["fit_s"]),
                         f"{r['peak_mb']:.0f}", r.get("note", f"{r['divergences']} div")])
    print(table(["engine", "cache", "engine used", "chains x draws", "import s", "fit s",
                 "import+fit s", "peak MB", "note"], rows))
    print("fit s = from just after `import bayescm` to the InferenceData returned (model build "
          "included).\npm.sample() runs its defaults: chains = max(2, cores), so on this "
          f"{os.cpu_count()}-CPU machine it may run fewer chains than bcm.fit's 4.\n"
          "peak MB is the parent child process only (pm.sample's chain workers not included).")
    if importlib.util.find_spec("numpyro") is None:
        print("numpyro: not installed in this environment -> skipped.")
    else:
        print("numpyro: installed, but not benchmarked by this script -> skipped.")
    print()
    ratio_rows = []
    for state in ("cold", "warm"):
        ours, ref = res.get(("auto", state)), res.get(("pm.sample", state))
        nut = res.get(("nutpie", state))
        if ref is None:
            ratio_rows.append([state, "-", "-", "-", "skipped (--quick)"])
            verdicts.append((f"first fit {state}: bayescm / pm.sample <= 1/3", None,
                             "skipped (--quick)"))
            continue
        ratio = ours["fit_s"] / ref["fit_s"]
        ratio_rows.append([
            state, f"{ratio:.3f} (1/{1 / ratio:.1f})",
            f"{(ours['import_s'] + ours['fit_s']) / (ref['import_s'] + ref['fit_s']):.3f}",
            f"{nut['fit_s'] / ref['fit_s']:.2f}" if nut else "-",
            ref.get("note", ""),
        ])
        verdicts.append((f"first fit {state}: bayescm / pm.sample <= 1/3", ratio <= TARGET_RATIO,
                         f"{ratio:.3f} = {s(ours['fit_s'])} s / {s(ref['fit_s'])} s"))
    print(table(["cache", "bayescm/pm.sample (fit)", "incl. import", "nutpie/pm.sample (fit)",
                 "note"], ratio_rows))


def bench_in_process(verdicts: list, quick: bool = False) -> None:
    section("3. Refit in the same process (after a first fit), NUTS engine='auto'")
    progress("refits and batch (one process)")
    r = run_child("in_process", {"reps_refit": REPS_REFIT, "reps_batch": REPS_BATCH})
    rows = []
    for family, x in r["refit"].items():
        rows.append([family, ",".join(x["engines"]), s(x["first_s"]), s(x["counts_median_s"]),
                     f"{min(x['counts_all_s']):.2f}-{max(x['counts_all_s']):.2f}",
                     s(x["priors_median_s"]),
                     f"{min(x['priors_all_s']):.2f}-{max(x['priors_all_s']):.2f}",
                     x["prior_label"], "yes" if x["converged"] else "NO"])
        for kind in ("counts", "priors"):
            med = x[f"{kind}_median_s"]
            verdicts.append((f"refit new {kind} ({family}) < {TARGET_REFIT_S:g} s",
                             med < TARGET_REFIT_S, f"{med:.2f} s median of {REPS_REFIT}"))
    print(table(["model", "engine", "first fit s", "new counts s", "range", "new priors s",
                 "range", "new prior", "converged"], rows))
    print(f"new counts: tp=10 fn=5 fp=3 tn=20; each refit = build a new model + fit; "
          f"median of {REPS_REFIT}. (process import: {s(r['import_s'])} s)")

    section("4. Batch vs single matrix, NUTS, warm, same process")
    b = r["batch"]
    rows = [[label, b[label]["matrices"], b[label]["engine"], s(b[label]["median_s"]),
             ", ".join(f"{t:.2f}" for t in b[label]["all_s"]),
             "yes" if b[label]["converged"] else "NO"] for label in ("single", "batch")]
    print(table(["case", "matrices", "engine", "median s", f"runs ({REPS_BATCH})", "converged"],
                rows))
    ratio = b["batch"]["median_s"] / b["single"]["median_s"]
    print(f"batch / single = {ratio:.2f}  (literature batch: datasets.totsch_literature(); "
          f"single: cocaine matrix; peak RSS of this process {r['peak_mb']:.0f} MB)")
    print(f"the same {b['batch']['matrices']} matrices fitted one at a time: "
          f"{b['sequential_s']:.2f} s, i.e. the batch is "
          f"{b['sequential_s'] / b['batch']['median_s']:.1f}x faster than separate fits")
    verdicts.append((f"batch of {b['batch']['matrices']} < {TARGET_BATCH_RATIO:g}x single",
                     ratio < TARGET_BATCH_RATIO, f"{ratio:.2f}x"))


def bench_convergence(verdicts: list, quick: bool) -> None:
    section("5. Convergence check as a share of the fit (check_convergence), warm process")
    progress(f"convergence check costs (NUTS 1, 24, {EXACT_MATRICES} matrices; exact)")
    r = run_child("convergence", {"reps": 1 if quick else REPS_BATCH,
                                  "n_matrices": EXACT_MATRICES, "seed": EXACT_SEED})
    rows = []
    for x in r["rows"]:
        forced = [f"{s(x[f'{b}_s'])} ({x[f'{b}_share']:.1%})" if f"{b}_s" in x else "-"
                  for b in ("arviz", "vectorised")]
        rows.append([x["sampler"], x["label"], x["scalars"], x["runs"], s(x["fit_s"]),
                     s(x["check_s"]), f"{x['share']:.1%}", *forced, x["computed_by"][:36]])
    print(table(["sampler", "case", "scalars", "fits", "fit s", "check s", "check/fit",
                 "ArviZ s (share)", "vectorised s (share)", "computed by"], rows))
    print("fit s = bcm.fit wall time (median fit where fits > 1), which includes the check it "
          "runs; check s = check_convergence(idata) as fit runs it (backend='auto');\n"
          "ArviZ / vectorised share = that backend's time / (fit - check + that backend's "
          "time). ArviZ = az.summary(kind='diagnostics').")
    e = r["entry_points"]
    print(f"ArviZ's entry points on the 24-matrix posterior ({e['scalars']} scalars): "
          f"az.summary(kind='diagnostics') {s(e['summary_s'])} s; az.rhat + az.ess(bulk) + "
          f"az.ess(tail) + az.mcse(mean) + az.mcse(sd) {s(e['separate_s'])} s")
    exact = next(x for x in r["rows"] if x["sampler"] == "exact")
    if not exact["fit_said_independent"]:
        print("note: this fit's own check did not yet know the draws are independent "
              "(fit set idata.attrs['sampler'] after its check), so its fit s includes an "
              "MCMC check; check s is the cost once it does.")
    verdicts.append((f"exact, {exact['matrices']} matrices: convergence check < 2% of fit",
                     exact["check_s"] / exact["fit_s"] < 0.02,
                     f"{s(exact['check_s'])} s of {s(exact['fit_s'])} s "
                     f"({exact['check_s'] / exact['fit_s']:.1%})"))
    for x in r["rows"]:
        if "arviz_share" in x:
            arviz = x["computed_by"].startswith("ArviZ")
            verdicts.append((f"NUTS, {x['scalars']} scalars: "
                             f"{'ArviZ' if arviz else 'vectorised twin'} chosen by the 20% rule",
                             (x["arviz_share"] <= 0.20) == arviz,
                             f"ArviZ would be {x['arviz_share']:.1%} of the fit"))


SECTIONS = {"exact": bench_exact, "first_fit": bench_first_fit, "in_process": bench_in_process,
            "convergence": bench_convergence}


def versions() -> str:
    code = ("import importlib.metadata as m; print(', '.join(f'{p} {m.version(p)}' for p in "
            "('bayescm', 'pymc', 'pytensor', 'arviz', 'nutpie', 'numba', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    git = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                         capture_output=True, text=True, check=False).stdout.strip()
    return (out.stdout.strip() or out.stderr.strip()[-200:]) + f"; git {git or 'n/a'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="skip the cold pm.sample runs (warm pm.sample uses user caches)")
    parser.add_argument("--only", choices=list(SECTIONS), action="append",
                        help="run only these sections (repeatable); default: all")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # keep tables and progress lines in order
    start = time.perf_counter()
    mode = "quick" if args.quick else "full"
    print("bayescm core benchmark")
    print(f"{dt.datetime.now().isoformat(timespec='seconds')}  python {platform.python_version()}"
          f"  {platform.machine()}  {os.cpu_count()} CPUs  mode={mode}")
    print(versions())
    verdicts: list[tuple[str, bool | None, str]] = []
    for name in args.only or SECTIONS:
        SECTIONS[name](verdicts, args.quick)

    section("Targets")
    width = max(len(name) for name, _, _ in verdicts)
    for name, ok, detail in verdicts:
        tag = "SKIP" if ok is None else ("PASS" if ok else "MISS")
        print(f"{tag}  {name.ljust(width)}  {detail}")
    print(f"\nbenchmark wall time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
