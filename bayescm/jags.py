"""Run JAGS twins of bayescm models (independent cross-checks).

JAGS (Plummer, "JAGS: a program for analysis of Bayesian graphical models using
Gibbs sampling", 2003) is an optional engine: install Debian's ``jags`` package.
:func:`run` drives the ``jags`` command with a script, R-dump data and initial
values, and reads its CODA output back as arrays; :func:`fit_hui_walter` runs
``models/hui_walter/model.jags`` on the data and priors of a bayescm Hui–Walter
model and returns an ``InferenceData`` with the same names and dims.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import arviz as az
import numpy as np
import pymc as pm
import xarray as xr

from bayescm.agreement import pattern_matrix
from bayescm.models._spec import spec_of

HUI_WALTER_JAGS = Path(__file__).resolve().parents[1] / "models" / "hui_walter" / "model.jags"


class JagsError(RuntimeError):
    """JAGS is missing or failed; the message has its output."""


def available() -> bool:
    return shutil.which("jags") is not None


def _r_value(value: object) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(float(arr)) if arr.dtype.kind == "f" else str(arr.item())
    flat = ", ".join(str(x) for x in arr.ravel(order="F"))  # R is column-major
    if arr.ndim == 1:
        return f"c({flat})"
    return f"structure(c({flat}), .Dim = c({', '.join(map(str, arr.shape))}))"


def _r_dump(values: Mapping[str, object]) -> str:
    return "".join(f'"{k}" <- {_r_value(v)}\n' for k, v in values.items())


def run(
    model_file: str | Path,
    data: Mapping[str, object],
    inits: Sequence[Mapping[str, object]],
    monitors: Sequence[str],
    *,
    adapt: int = 1000,
    burn: int = 2000,
    draws: int = 5000,
    thin: int = 1,
    seed: int = 1,
) -> tuple[dict[str, np.ndarray], float]:
    """Run a JAGS model; return ``{node[index]: (chains, draws // thin)}`` and the wall time.

    The wall time is that of the ``jags`` process, compilation included.
    """
    if not available():
        raise JagsError("The jags command is not installed (Debian: apt-get install jags).")
    chains = len(inits)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        shutil.copy(model_file, d / "model.jags")
        (d / "data.R").write_text(_r_dump(data))
        lines = ['model in "model.jags"', 'data in "data.R"', f"compile, nchains({chains})"]
        for c, init in enumerate(inits, start=1):
            values = {**init, ".RNG.name": '"base::Mersenne-Twister"', ".RNG.seed": seed + c}
            text = "".join(
                f'"{k}" <- {v}\n' if k.startswith(".RNG") else f'"{k}" <- {_r_value(v)}\n'
                for k, v in values.items()
            )
            (d / f"inits{c}.R").write_text(text)
            lines.append(f'parameters in "inits{c}.R", chain({c})')
        lines += ["initialize", f"adapt {adapt}", f"update {burn}"]
        lines += [f"monitor {m}, thin({thin})" for m in monitors]
        lines += [f"update {draws}", 'coda *, stem("out")', "exit"]
        (d / "run.cmd").write_text("\n".join(lines) + "\n")
        start = time.perf_counter()
        res = subprocess.run(["jags", "run.cmd"], cwd=d, capture_output=True, text=True,
                             timeout=600)
        wall = time.perf_counter() - start
        if res.returncode != 0 or not (d / "outindex.txt").exists():
            raise JagsError(f"JAGS failed:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
        index = [line.split() for line in (d / "outindex.txt").read_text().splitlines()]
        out = {}
        values = [np.loadtxt(d / f"outchain{c}.txt", usecols=1) for c in range(1, chains + 1)]
        for name, first, last in index:
            lo, hi = int(first) - 1, int(last)
            out[name] = np.stack([v[lo:hi] for v in values])
    return out, wall


def fit_hui_walter(
    model: pm.Model, *, chains: int = 4, draws: int = 5000, burn: int = 2000, thin: int = 1,
    seed: int = 1,
) -> az.InferenceData:
    """Fit the JAGS twin of a :func:`bayescm.models.hui_walter` model.

    Returns an InferenceData whose posterior has ``sensitivity``, ``specificity``
    (dim ``classifier``), ``prevalence`` (dim ``population``) and, with conditional
    dependence, ``cov_se``, ``cov_sp`` (dim ``pair``); ``attrs["wall_time"]`` is the
    JAGS process time.
    """
    spec = spec_of(model)
    if spec is None or spec.family != "hui_walter":
        raise ValueError("fit_hui_walter needs a model from bayescm.models.hui_walter.")
    tab = spec.data
    t, p = len(tab.classifiers), len(tab.populations)
    patt = pattern_matrix(t)
    pairs = list(spec.extra["pairs"]) or [(0, 1)]
    k = len(pairs)
    rest = np.ones((k, t), dtype=int)
    for q, (i, j) in enumerate(pairs):
        rest[q, [i, j]] = 0
    sgn = np.array([[1 if patt[r, i] == patt[r, j] else -1 for i, j in pairs]
                    for r in range(len(patt))])

    def prior(name: str, part: str) -> np.ndarray:
        return np.asarray(model[f"{name}_{part}"].get_value(), dtype=float)

    counts = np.asarray(model["counts_data"].get_value())
    data = {
        "T": t, "P": p, "R": 2**t, "K": k, "dep": int(bool(spec.extra["pairs"])),
        "counts": counts, "n": counts.sum(axis=1), "patt": patt,
        "pair_i": np.array([i + 1 for i, _ in pairs]),
        "pair_j": np.array([j + 1 for _, j in pairs]),
        "rest": rest, "sgn": sgn, "ok": np.ones(t, dtype=int),
        "se_a": prior("sensitivity", "alpha"), "se_b": prior("sensitivity", "beta"),
        "sp_a": prior("specificity", "alpha"), "sp_b": prior("specificity", "beta"),
        "prev_a": prior("prevalence", "alpha"), "prev_b": prior("prevalence", "beta"),
    }
    rng = np.random.default_rng(seed)
    inits = [{"se": rng.uniform(0.7, 0.95, t), "sp": rng.uniform(0.7, 0.95, t),
              "prev": rng.uniform(0.2, 0.8, p)} for _ in range(chains)]
    monitors = ["se", "sp", "prev"] + (["cov_se", "cov_sp"] if spec.extra["pairs"] else [])
    raw, wall = run(HUI_WALTER_JAGS, data, inits, monitors, burn=burn, draws=draws, thin=thin,
                    seed=seed)

    def stack(node: str, size: int) -> np.ndarray:
        # CODA names a node of length one without an index
        names = [node] if size == 1 and node in raw else [f"{node}[{i + 1}]" for i in range(size)]
        return np.stack([raw[n] for n in names], axis=-1)

    post = {
        "sensitivity": (("chain", "draw", "classifier"), stack("se", t)),
        "specificity": (("chain", "draw", "classifier"), stack("sp", t)),
        "prevalence": (("chain", "draw", "population"), stack("prev", p)),
    }
    coords = {"classifier": list(tab.classifiers), "population": list(tab.populations)}
    if spec.extra["pairs"]:
        post["cov_se"] = (("chain", "draw", "pair"), stack("cov_se", k))
        post["cov_sp"] = (("chain", "draw", "pair"), stack("cov_sp", k))
        coords["pair"] = list(model.coords["pair"])
    idata = az.InferenceData(posterior=xr.Dataset(post, coords=coords))
    idata.attrs["wall_time"] = wall
    idata.attrs["engine"] = "jags"
    return idata
