"""Run JAGS twins of bayescm models (independent cross-checks).

JAGS (Plummer, "JAGS: a program for analysis of Bayesian graphical models using
Gibbs sampling", 2003) is an optional engine: install Debian's ``jags`` package.
:func:`run` drives the ``jags`` command with a script, R-dump data and initial
values, and reads its CODA output back as arrays; :func:`fit_twin` runs a model
family's JAGS twin (:attr:`bayescm.models.Family.jags`, a script shipped inside
the package) on the data and priors of a bayescm model and returns an
``InferenceData`` with the same names and dims.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayescm import idata as idata_mod
from bayescm.family import family_of, spec_of
from bayescm.inference import draws as draws_mod

if TYPE_CHECKING:
    import arviz as az
    import pymc as pm

__all__ = ["JagsError", "available", "fit_hui_walter", "fit_twin", "run", "script_path"]


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


def script_path(name: str) -> Path:
    """Path of a JAGS script shipped in :mod:`bayescm.models` (works from a wheel)."""
    ref = resources.files("bayescm.models").joinpath(name)
    if not ref.is_file():
        raise JagsError(f"The JAGS script {name!r} is not in the installed package.")
    return Path(str(ref))


def fit_twin(
    model: pm.Model, *, chains: int = 4, draws: int = 5000, burn: int = 2000, thin: int = 1,
    seed: int = 1, log_likelihood: bool | None = None,
) -> az.InferenceData:
    """Fit the JAGS twin of a bayescm model (an independent engine for cross-checks).

    Returns an InferenceData whose posterior has the family's parameter names and
    dims, the ``observed_data`` and, for the families that add it to a fit by default
    (the latent-class models), the ``log_likelihood`` group of :func:`bayescm.fit`
    (so that ``az.loo`` and ``az.compare`` take JAGS fits too; ``log_likelihood``
    as in :func:`bayescm.fit`); ``attrs["wall_time"]`` is the JAGS process time.

    Raises
    ------
    ValueError
        When the model's family has no JAGS twin (or the model was built by hand).
    JagsError
        When JAGS is not installed or fails.
    """
    family, spec = family_of(model), spec_of(model)
    if family is None or family.jags is None:
        raise ValueError("This model's family has no JAGS twin (families with one: "
                         f"{_with_twin()}).")
    # a family whose models have several twins (dawid_skene's poolings) picks one per spec
    twin = family.jags_twin(spec) if hasattr(family, "jags_twin") else family.jags
    inits = twin.inits(np.random.default_rng(seed), spec, chains)
    raw, wall = run(script_path(twin.script), twin.data(model, spec), inits,
                    twin.monitors(spec), burn=burn, draws=draws, thin=thin, seed=seed)
    groups = {"posterior": twin.posterior(raw, model, spec)}
    observed = draws_mod.observed(model)
    if observed is not None:
        groups["observed_data"] = observed.to_dataset(name="counts")
        ll = draws_mod.log_likelihood(groups["posterior"], observed, family, spec,
                                      log_likelihood)
        if ll is not None:
            groups["log_likelihood"] = ll
    return idata_mod.make(groups, {"wall_time": wall, "engine": "jags", "model": spec.family})


def fit_hui_walter(model: pm.Model, **kwargs) -> az.InferenceData:
    """:func:`fit_twin` for a :func:`bayescm.models.hui_walter` model (kept name)."""
    return fit_twin(model, **kwargs)


def _with_twin() -> list[str]:
    from bayescm.family import families

    return sorted(name for name, f in families().items() if f.jags is not None)
