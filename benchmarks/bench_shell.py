"""Latent-class answers from the shell: ``bayescm unlabeled`` against a JAGS script (issue 29).

Prints, in one run, the whole-process wall time (median over ``--runs`` fresh processes,
interleaved so that a busy machine slows all alike) and peak resident memory (GNU
``time -f %M``) of

* ``bayescm unlabeled --counts ...`` -- two classifiers on two populations, 4 chains x
  1,000 draws: by default (a complete table, no dependent pairs) Gibbs sampling in NumPy
  (``bayescm.models.hui_walter.gibbs``: 1,000 sweeps discarded, then every 5th of 5,000),
  which imports neither PyMC, PyTensor, nutpie, ArviZ nor numba;
* ``bayescm unlabeled --sampler nuts``: the family's compiled density made from the
  counts and priors, 1,000 tuning steps and 1,000 draws by nutpie, no PyMC model
  (``bayescm.inference.fit_kernel``; nutpie imports ArviZ);
* the same command where Dask is not installed (the default install: Dask comes with
  the ``[dask]`` extra): with Dask there, xarray imports ``dask.array`` and ``dask.base``
  when it wraps its first array, to ask whether it is a Dask array -- about 0.3 s;
* the same analysis the way the command ran before (``bcm.fit(bcm.models.hui_walter(tab))``,
  then the summary and the predictive check): builds the PyMC model;
* the same model as a ``jags`` script (``bayescm/models/hui_walter/hui_walter.jags``,
  4 chains, 1,000 adaptation + 1,000 burn-in + 1,000 monitored iterations: more than
  NUTS's 1,000 tuning steps), the files written beforehand, the ``jags`` process alone;
* the imports the command pays for: the scientific-Python floor (``numpy, scipy.stats,
  pandas, xarray``), ``import bayescm``, ``import nutpie`` (nutpie imports ArviZ,
  pandas and pyarrow at its top), ``import arviz``, ``import numba``;

WARM (numba's cache and the file cache primed) and COLD (``NUMBA_CACHE_DIR`` an empty
temporary directory: the Gibbs path compiles nothing; with ``--sampler nuts`` numba
compiles the Hui–Walter kernel -- its ``logp`` and ``expand`` C callbacks and the
functions they call -- and nutpie nothing).
Target (issue 29): the command within 5x the JAGS script's time.

    .venv/bin/python benchmarks/bench_shell.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
COUNTS = "s1:++=89,+-=43,-+=55,--=413;s2:++=260,+-=76,-+=52,--=212"
TABLE = ('{"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413}, '
         '"s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}}')
BEFORE = (
    "import bayescm as bcm, warnings\n"
    f"tab = bcm.AgreementTable.from_counts({TABLE})\n"
    "with warnings.catch_warnings():\n"
    "    warnings.simplefilter('ignore')\n"
    "    idata = bcm.fit(bcm.models.hui_walter(tab), random_seed=1)\n"
    "bcm.summary(idata, metrics=['tpr', 'tnr', 'prevalence', 'acc', 'ppv', 'npv', 'f1', 'mcc'])\n"
    "bcm.posterior_predictive_check(idata); print(bcm.check_convergence(idata).message())\n"
)
TARGET = 5.0
NO_DASK = "bayescm unlabeled, without Dask installed"


def jags_dir(root: Path) -> Path:
    """The JAGS run's files (script, data, initial values, commands), written once."""
    import numpy as np

    import bayescm as bcm
    from bayescm.inference import jags
    from bayescm.models import get_family, spec_of

    tab = bcm.AgreementTable.from_counts({"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
                                          "s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    model = bcm.models.hui_walter(tab)
    spec, twin = spec_of(model), get_family("hui_walter").jags
    d = root / "jags"
    d.mkdir()
    shutil.copy(jags.script_path(twin.script), d / "model.jags")
    (d / "data.R").write_text(jags._r_dump(twin.data(model, spec)))
    lines = ['model in "model.jags"', 'data in "data.R"', "compile, nchains(4)"]
    for c, init in enumerate(twin.inits(np.random.default_rng(1), spec, 4), start=1):
        text = jags._r_dump(init) + f'".RNG.name" <- "base::Mersenne-Twister"\n".RNG.seed" <- {c}\n'
        (d / f"inits{c}.R").write_text(text)
        lines.append(f'parameters in "inits{c}.R", chain({c})')
    lines += ["initialize", "adapt 1000", "update 1000",
              *(f"monitor {m}" for m in twin.monitors(spec)),
              "update 1000", 'coda *, stem("out")', "exit"]
    (d / "run.cmd").write_text("\n".join(lines) + "\n")
    return d


def timed(cmd: list[str], cwd: Path = REPO, env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one fresh process, by GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", *cmd], cwd=cwd, env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{out.stderr[-3000:]}")
    line = [ln for ln in out.stderr.splitlines() if ln.startswith("TIME ")][-1]
    _, wall, kb = line.split()
    return float(wall), float(kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="bench_shell_"))
    try:
        jdir = jags_dir(root) if shutil.which("jags") else None
        unlabeled = [PY, "-m", "bayescm.cli", "unlabeled", "--counts", COUNTS, "--seed", "1"]
        nuts = [*unlabeled, "--sampler", "nuts"]
        # the same command where Dask is not installed (pip install bayescm, no [dask]
        # extra): sys.modules["dask"] = None makes every import of it fail, as there
        no_dask = [PY, "-c", "import sys; sys.modules['dask'] = None; "
                   "from bayescm.cli import main; "
                   f"sys.argv = ['bayescm', *{unlabeled[3:]!r}]; raise SystemExit(main())"]
        cases = {
            "bayescm unlabeled (Gibbs in NumPy, the default)": (unlabeled, REPO),
            NO_DASK: (no_dask, REPO),
            "bayescm unlabeled --sampler nuts (kernel, nutpie)": (nuts, REPO),
            "before: bcm.fit(hui_walter(tab)) + summary + check": ([PY, "-c", BEFORE], REPO),
            "import numpy": ([PY, "-c", "import numpy"], REPO),
            "import numpy, scipy.stats, pandas, xarray":
                ([PY, "-c", "import numpy, scipy.stats, pandas, xarray"], REPO),
            "import bayescm": ([PY, "-c", "import bayescm"], REPO),
            "import nutpie (imports arviz, pyarrow)": ([PY, "-c", "import nutpie"], REPO),
            "import arviz": ([PY, "-c", "import arviz"], REPO),
            "import numba": ([PY, "-c", "import numba"], REPO),
        }
        if jdir is not None:
            cases["jags script (same model, 4 chains)"] = (["jags", "run.cmd"], jdir)
        for cmd, cwd in cases.values():  # warm: numba's cache, .pyc files, the file cache
            timed(cmd, cwd)
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        cold: list[tuple[float, float]] = []
        cold_nuts: list[tuple[float, float]] = []
        for _ in range(runs):
            for name, (cmd, cwd) in cases.items():
                results[name].append(timed(cmd, cwd))
            cache = tempfile.mkdtemp(dir=root)  # cold: an empty numba cache
            cold.append(timed(unlabeled, REPO, env={**os.environ, "NUMBA_CACHE_DIR": cache}))
            cache = tempfile.mkdtemp(dir=root)  # cold: numba compiles the kernel again
            cold_nuts.append(timed(nuts, REPO, env={**os.environ, "NUMBA_CACHE_DIR": cache}))
        results["bayescm unlabeled, COLD (compiles nothing)"] = cold
        results["bayescm unlabeled --sampler nuts, COLD (compiles the kernel)"] = cold_nuts
        jags_name = "jags script (same model, 4 chains)"
        ref = statistics.median(w for w, _ in results[jags_name]) if jdir else float("nan")
        print(f"whole-process wall time, median of {runs} fresh processes (interleaved); "
              f"peak RSS; {sys.version.split()[0]}, {os.cpu_count()} cores")
        print(f"{'case':<54} {'median s':>9} {'min s':>7} {'peak MB':>8} {'x jags':>8}")
        for name, values in results.items():
            med = statistics.median(w for w, _ in values)
            mb = max(m for _, m in values)
            print(f"{name:<54} {med:9.3f} {min(w for w, _ in values):7.3f} {mb:8.0f} "
                  f"{med / ref:8.1f}")
        for name in (next(iter(cases)), NO_DASK):
            ours = statistics.median(w for w, _ in results[name])
            verdict = "ok" if ours / ref <= TARGET else "MISSED"
            print(f"target: {name} <= {TARGET:g}x the JAGS script: {ours / ref:.2f}x "
                  f"({verdict}).")
        print("With Dask installed xarray imports dask.array and dask.base on its first "
              "array (about 0.3 s).  This machine is shared: compare ratios, not seconds.")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
