"""Two-population Hui-Walter model: bayescm against JAGS and plain pm.sample, one run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_hui_walter.py            # full (about 2 minutes)
    .venv/bin/python benchmarks/bench_hui_walter.py --quick    # skips the cold runs

The model: two classifiers, two populations, flat priors (Hui & Walter's design),
4 chains.  Every fresh-process figure comes from a child ``python -c`` process that
prints one JSON line.  Reported for each engine: total wall time (compilation
included), minimum bulk ESS over the parameters (Se, Sp of both classifiers, both
prevalences; ArviZ), and ESS per second of total wall time.

* JAGS: the ``jags`` command in a fresh process running ``bayescm/models/hui_walter.jags``
  (2,000 burn-in + 5,000 draws per chain); its wall time includes parsing and
  compiling the model.
* bayescm first fit in a fresh process: time from just after ``import bayescm`` to the
  InferenceData (model build, compilation, sampling, predictive draws, diagnostics).
  COLD: empty PyTensor and numba caches (``PYTENSOR_FLAGS=compiledir=<tmp>``,
  ``NUMBA_CACHE_DIR=<tmp>``); WARM: a second fresh process reusing them.
* bayescm refit with new counts in the same session (median of 5).
* plain ``pm.sample()`` with default settings on the same PyMC model, fresh process,
  cold and warm as above.

* the convergence check (issue 16): ``check_convergence`` as ``fit`` runs it, as a
  share of the fit's wall time (which includes it), for the two-population model
  (median of 5 refits, 6 checked scalars: ArviZ) and for 24 simulated populations
  (28 scalars; ``convergence.ARVIZ_MAX_SHARE`` decides by a timed probe), with the share ArviZ
  (``backend="arviz"``) and the vectorised twin would have.

Targets (issue text): the same-session refit at least matches JAGS's ESS per second of
wall time; a first fit in a fresh process at most 1/3 of plain pm.sample's time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETUP = textwrap.dedent("""
    import json, time, warnings, logging
    warnings.simplefilter("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    # bayescm imports PyMC and nutpie lazily: import them here, as before the light import
    import numpy as np, arviz as az, pymc, nutpie, bayescm as bcm
    t_import = time.perf_counter() - t0
    COUNTS = np.array([[89, 43, 55, 413], [260, 76, 52, 212]])
    PARAMS = ["sensitivity", "specificity", "prevalence"]
    def model(counts=COUNTS):
        tab = bcm.AgreementTable(counts, populations=["p0", "p1"])
        return bcm.models.hui_walter(tab)
    def min_ess(idata):
        return float(min(az.ess(idata.posterior[v]).to_array().min() for v in PARAMS))
""")

FIRST_FIT = SETUP + textwrap.dedent("""
    t0 = time.perf_counter()
    idata = bcm.fit(model(), random_seed=1)
    wall = time.perf_counter() - t0
    print("BENCH" + json.dumps({"import_s": t_import, "wall_s": wall, "ess": min_ess(idata),
                               "divergences": int(idata.sample_stats.diverging.sum()),
                               "engine": idata.attrs["engine"]}))
""")

PM_SAMPLE = SETUP + textwrap.dedent("""
    import pymc as pm
    t0 = time.perf_counter()
    with model():
        idata = pm.sample(random_seed=1, progressbar=False)
    wall = time.perf_counter() - t0
    print("BENCH" + json.dumps({"import_s": t_import, "wall_s": wall, "ess": min_ess(idata),
                               "divergences": int(idata.sample_stats.diverging.sum()),
                               "engine": "pm.sample", "chains": idata.posterior.sizes["chain"]}))
""")

SESSION = SETUP + textwrap.dedent("""
    from bayescm.inference import jags
    bcm.fit(model(), random_seed=1)                       # first fit: compiles
    rng = np.random.default_rng(7)
    times, ess = [], []
    for i in range(5):
        new = np.array([rng.multinomial(600, [0.1, 0.05, 0.02, 0.83]),
                        rng.multinomial(600, [0.5, 0.1, 0.02, 0.38])])
        t0 = time.perf_counter()
        idata = bcm.fit(model(new), random_seed=i)
        times.append(time.perf_counter() - t0)
        ess.append(min_ess(idata))
    twin = jags.fit_hui_walter(model(), draws=5000, burn=2000)
    print("BENCH" + json.dumps({"refit_s": times, "refit_ess": ess,
                               "jags_wall_s": twin.attrs["wall_time"],
                               "jags_ess": min_ess(twin)}))
""")


CHECK = SETUP + textwrap.dedent("""
    def costs(idata, fit_s):
        params = idata.attrs["parameters"].split(",")
        t0 = time.perf_counter()
        rep = bcm.check_convergence(idata, var_names=params)
        auto = time.perf_counter() - t0
        out = {"fit_s": fit_s, "check_s": auto, "scalars": len(rep.table),
               "computed_by": rep.computed_by}
        for backend in ("arviz", "vectorised"):
            t0 = time.perf_counter()
            bcm.check_convergence(idata, var_names=params, backend=backend)
            t = time.perf_counter() - t0
            out[backend + "_share"] = t / (fit_s - auto + t)
        return out
    def timed(m, seed):
        t0 = time.perf_counter()
        idata = bcm.fit(m, random_seed=seed)
        return costs(idata, time.perf_counter() - t0)
    bcm.fit(model(), random_seed=1)                       # warm-up: compiles
    runs = sorted((timed(model(), i) for i in range(5)), key=lambda r: r["fit_s"])
    rows = [dict(runs[2], case="2 classifiers x 2 populations (median of 5)")]
    rng = np.random.default_rng(11)
    prev = np.linspace(0.1, 0.9, 24)
    se, sp = np.array([0.9, 0.8]), np.array([0.95, 0.9])
    pos = [se[0] * se[1], se[0] * (1 - se[1]), (1 - se[0]) * se[1], (1 - se[0]) * (1 - se[1])]
    neg = [(1 - sp[0]) * (1 - sp[1]), (1 - sp[0]) * sp[1], sp[0] * (1 - sp[1]), sp[0] * sp[1]]
    counts = np.array([rng.multinomial(300, p * np.array(pos) + (1 - p) * np.array(neg))
                       for p in prev])
    many = bcm.AgreementTable(counts, populations=[f"p{i}" for i in range(24)])
    bcm.fit(bcm.models.hui_walter(many), random_seed=1)   # warm-up: new shapes
    rows.append(dict(timed(bcm.models.hui_walter(many), 2),
                     case="2 classifiers x 24 populations"))
    print("BENCH" + json.dumps(rows))
""")


def child(code: str, cache: str | None = None) -> dict | list:
    env = dict(os.environ)
    if cache is not None:
        env["PYTENSOR_FLAGS"] = f"compiledir={cache}/pytensor"
        env["NUMBA_CACHE_DIR"] = f"{cache}/numba"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=900)
    for line in res.stdout.splitlines():
        if line.startswith("BENCH"):
            return json.loads(line[5:])
    raise RuntimeError(f"child failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the cold-cache runs")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("Hui-Walter benchmark: 2 classifiers x 2 populations, flat priors, 4 chains")
    rows = []
    first = {}
    pm_runs = {}
    for state in (["warm"] if args.quick else ["cold", "warm"]):
        with tempfile.TemporaryDirectory() as tmp:
            cache = None if args.quick else tmp
            if state == "warm" and not args.quick:
                child(FIRST_FIT, cache)  # populate this cache directory
                child(PM_SAMPLE, cache)
            if args.quick:
                child(FIRST_FIT)  # prime the user's own caches
                child(PM_SAMPLE)
            first[state] = child(FIRST_FIT, cache)
            pm_runs[state] = child(PM_SAMPLE, cache)
    session = child(SESSION)
    jw, je = session["jags_wall_s"], session["jags_ess"]
    rows.append(("JAGS (jags command, fresh process)", jw, je))
    for state, r in first.items():
        rows.append((f"bayescm first fit, fresh process, {state} cache", r["wall_s"], r["ess"]))
    refit = sorted(session["refit_s"])[len(session["refit_s"]) // 2]
    refit_ess = sorted(session["refit_ess"])[len(session["refit_ess"]) // 2]
    rows.append(("bayescm refit, new counts, same session (median of 5)", refit, refit_ess))
    for state, r in pm_runs.items():
        rows.append((f"plain pm.sample(), fresh process, {state} cache ({r['chains']} chains)",
                     r["wall_s"], r["ess"]))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'engine':<{width}}  {'wall s':>8}  {'min ESS':>8}  {'ESS/s':>9}")
    for name, wall, ess in rows:
        print(f"{name:<{width}}  {wall:8.2f}  {ess:8.0f}  {ess / wall:9.0f}")
    print(f"\nbayescm engine: {first['warm']['engine']}; divergences in first fits: "
          f"{', '.join(str(r['divergences']) for r in first.values())}; "
          f"import of bayescm in a child: {first['warm']['import_s']:.2f} s (not included)")
    checks = child(CHECK)
    print("\nConvergence check as a share of the fit (warm session)")
    print(f"{'case':<45}  {'scalars':>7}  {'fit s':>6}  {'check s':>7}  {'share':>6}  "
          f"{'ArviZ':>6}  {'vectorised':>10}  computed by")
    for r in checks:
        print(f"{r['case']:<45}  {r['scalars']:7d}  {r['fit_s']:6.2f}  {r['check_s']:7.3f}  "
              f"{r['check_s'] / r['fit_s']:6.1%}  {r['arviz_share']:6.1%}  "
              f"{r['vectorised_share']:10.1%}  {r['computed_by'][:40]}")
    print("share = check as fit runs it / fit wall time (which includes it); ArviZ and "
          "vectorised = that backend's time / (fit - check + that time)")
    print("\nTargets")
    verdicts = [("refit ESS/s >= JAGS ESS/s", refit_ess / refit >= je / jw,
                 f"{refit_ess / refit:.0f} vs {je / jw:.0f}")]
    for state in first:
        ratio = first[state]["wall_s"] / pm_runs[state]["wall_s"]
        verdicts.append((f"first fit {state}: bayescm / pm.sample <= 1/3", ratio <= 1 / 3,
                         f"{ratio:.3f} = {first[state]['wall_s']:.2f} s / "
                         f"{pm_runs[state]['wall_s']:.2f} s"))
    for r in checks:
        arviz = r["computed_by"].startswith("ArviZ")
        verdicts.append((f"{r['scalars']} scalars: {'ArviZ' if arviz else 'twin'} by 20% rule",
                         (r["arviz_share"] <= 0.20) == arviz,
                         f"ArviZ would be {r['arviz_share']:.1%} of the fit"))
    for name, ok, detail in verdicts:
        print(f"{'PASS' if ok else 'MISS'}  {name:<45}  {detail}")
    print(f"\nbenchmark wall time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
