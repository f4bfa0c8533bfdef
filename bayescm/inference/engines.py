"""NUTS engines behind ``fit``: bayescm's compiled kernels on nutpie, nutpie, PyMC.

This is the one module that talks to nutpie and ``pm.sample``.

* :func:`sample_kernel` runs nutpie's NUTS on a family's compiled density
  (:class:`~bayescm.models.Kernel`).  nutpie has no public constructor for a model
  given as numba C callbacks, so this goes through its ``CompiledPyMCModel``
  dataclass, whose fields are checked first (:func:`kernel_supported`): with a
  nutpie whose fields differ, ``fit`` falls back to ``engine="nutpie"`` with a
  one-line notice instead of failing.
* :func:`sample_nutpie` lets nutpie compile the PyMC model itself (cached by model
  structure, so new counts or priors reuse the compiled model via ``with_data``).
* :func:`sample_pymc` is plain ``pm.sample``.

Each returns ``(draws, sample_stats)``: arrays ``(chain, draw, *shape)`` by name
and a Dataset of per-draw statistics with ``diverging``.  Each takes ``progress``, a
function of ``(done, total)`` called while it samples (draws of all chains, tuning
included) at most every :data:`PROGRESS_SECONDS`, and once at the end with
``done == total``: what a web page or a job queue shows instead of a progress bar.
nutpie reports its draws only through its background sampler, whose counts are read
from its public ``inspect()`` (the trace so far); a nutpie whose trace cannot be read
samples without reports between the start and the end.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.family import Kernel

__all__ = ["PROGRESS_SECONDS", "EngineNotice", "kernel_supported", "sample_kernel",
           "sample_nutpie", "sample_pymc"]

PROGRESS_SECONDS = 0.25  # at most four reports a second: a page polls at that rate
Progress = Callable[[int, int], None]

# The CompiledPyMCModel fields bayescm fills in (nutpie 0.15 and 0.16).
_KERNEL_FIELDS = frozenset({
    "dims", "compiled_logp_func", "compiled_expand_func", "initial_point_func", "shared_data",
    "user_data", "n_expanded", "shape_info", "logp_func", "expand_func", "_n_dim", "_shapes",
    "_coords",
})
_NUTPIE_CACHE: dict[Any, Any] = {}
_NUTPIE_BY_MODEL: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


class EngineNotice(UserWarning):
    """The requested engine could not be used; another one ran (said in one line)."""


def kernel_supported() -> bool:
    """True when the installed nutpie accepts bayescm's compiled kernels."""
    try:
        from nutpie.compile_pymc import CompiledPyMCModel
    except ImportError:
        return False
    if not dataclasses.is_dataclass(CompiledPyMCModel):
        return False
    fields = dataclasses.fields(CompiledPyMCModel)
    required = {f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return required == _KERNEL_FIELDS


def _nuts_kwargs(target_accept: float | None) -> dict[str, Any]:
    return {} if target_accept is None else {"target_accept": target_accept}


def sample_kernel(kernel: Kernel, *, draws: int, tune: int, chains: int, seed: int,
                  progressbar: bool, target_accept: float | None,
                  progress: Progress | None = None
                  ) -> tuple[dict[str, np.ndarray], xr.Dataset]:
    """nutpie's NUTS on a compiled density."""
    from nutpie.compile_pymc import CompiledPyMCModel

    user_data = np.ascontiguousarray(kernel.user_data, dtype=float)
    shapes = [tuple(s) for s in kernel.shapes]
    names = list(kernel.var_names)
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    slices = [slice(int(lo), int(hi)) for lo, hi in itertools.pairwise(sizes)]
    n_dim = int(kernel.n_dim)

    def initial_point(seed: Any) -> np.ndarray:
        # PyMC's default: jitter uniformly in (-1, 1) around 0 on the unconstrained scale.
        return np.random.default_rng(seed).uniform(-1.0, 1.0, n_dim)

    compiled = CompiledPyMCModel(
        compiled_logp_func=kernel.module.logp, compiled_expand_func=kernel.module.expand,
        initial_point_func=initial_point, shared_data={}, user_data=user_data,
        n_expanded=int(sizes[-1]), shape_info=(names, slices, shapes), logp_func=None,
        expand_func=None, _n_dim=n_dim, _shapes=dict(zip(names, shapes, strict=True)),
        _coords={}, dims={},
    )
    trace = _nutpie_sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed,
                           progressbar=progressbar, target_accept=target_accept,
                           progress=progress, low_rank=bool(kernel.low_rank_mass))
    posterior = idata_mod.group(trace, "posterior")
    out = {name: posterior[name].values.reshape(chains, draws, *shape)
           for name, shape in zip(names, shapes, strict=True)}
    return out, _stats(idata_mod.group(trace, "sample_stats"))


def _compiled_nutpie(model: Any, key: Any) -> Any:
    """nutpie's compilation of ``model``, reusing one of the same structure."""
    import nutpie

    compiled = _NUTPIE_CACHE.get(key) if key is not None else _NUTPIE_BY_MODEL.get(model)
    if compiled is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = nutpie.compile_pymc_model(model)
        if key is not None:
            _NUTPIE_CACHE[key] = compiled
        else:
            _NUTPIE_BY_MODEL[model] = compiled
        return compiled
    # counts and prior parameters are data of the compiled model: no recompilation
    return compiled.with_data(**{v.name: np.asarray(v.get_value()) for v in model.data_vars})


def sample_nutpie(model: Any, *, structure: Any, draws: int, tune: int, chains: int,
                  seed: int, progressbar: bool, target_accept: float | None,
                  progress: Progress | None = None
                  ) -> tuple[dict[str, np.ndarray], xr.Dataset]:
    """nutpie's own compilation of the PyMC model (cached by ``structure`` when given)."""
    compiled = _compiled_nutpie(model, structure)
    trace = _nutpie_sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed,
                           progressbar=progressbar, target_accept=target_accept,
                           progress=progress)
    return (_arrays(idata_mod.group(trace, "posterior")),
            _stats(idata_mod.group(trace, "sample_stats")))


def sample_pymc(model: Any, *, draws: int, tune: int, chains: int, seed: int,
                progressbar: bool, target_accept: float | None,
                progress: Progress | None = None
                ) -> tuple[dict[str, np.ndarray], xr.Dataset]:
    """Plain ``pm.sample`` (its own convergence checks off: fit runs bayescm's)."""
    import pymc as pm

    report = _Reporter(progress, chains * (draws + tune)) if progress is not None else None
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, module="pymc")
        trace = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False,
                          callback=None if report is None else report.draw,
                          **_nuts_kwargs(target_accept))
    if report is not None:
        report.end()
    return (_arrays(idata_mod.group(trace, "posterior")),
            _stats(idata_mod.group(trace, "sample_stats")))


class _Reporter:
    """Counts ``pm.sample``'s draws (its callback runs once per draw of every chain)
    and passes them on at most every :data:`PROGRESS_SECONDS`."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress, self.total, self.done, self.last = progress, total, 0, 0.0

    def draw(self, **_: Any) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            self.progress(self.done, self.total)

    def end(self) -> None:
        self.progress(self.total, self.total)


def _nutpie_sample(compiled: Any, *, draws: int, tune: int, chains: int, seed: int,
                   progressbar: bool, target_accept: float | None,
                   progress: Progress | None, low_rank: bool = False) -> Any:
    """``nutpie.sample``; with ``progress``, in the background, reporting its draws."""
    import nutpie

    # The warm-up draws are read by the progress count alone; unsaved, they are not
    # turned into xarray groups (a fifth of a small fit's conversion), and the
    # posterior is the same draw for draw.
    kwargs = {"draws": draws, "tune": tune, "chains": chains, "seed": seed,
              "save_warmup": progress is not None, **_nuts_kwargs(target_accept)}
    if low_rank:
        kwargs["low_rank_modified_mass_matrix"] = True
    if progress is None:
        return nutpie.sample(compiled, progress_bar=progressbar, **kwargs)
    total = chains * (draws + tune)
    sampler = nutpie.sample(compiled, progress_bar=False, blocking=False, **kwargs)
    try:
        last = time.monotonic()
        # nutpie's public background sampler: is_finished, inspect(), wait(), cancel()
        while not _finished(sampler):
            time.sleep(min(PROGRESS_SECONDS, _POLL_SECONDS))
            if time.monotonic() - last >= PROGRESS_SECONDS:
                last = time.monotonic()
                done = _nutpie_draws(sampler)
                if done is not None:
                    progress(min(done, total), total)
    except BaseException:
        sampler.cancel()
        raise
    trace = sampler.wait()
    progress(total, total)
    return trace


_POLL_SECONDS = 0.02  # how soon the end of sampling is noticed


def _finished(sampler: Any) -> bool:
    try:
        return bool(sampler.is_finished)
    except TimeoutError:  # nutpie 0.16 raises it while its chains still run
        return False


def _nutpie_draws(sampler: Any) -> int | None:
    """Draws of all chains so far, tuning included, from nutpie's public ``inspect()``
    (None if that trace cannot be read)."""
    try:
        with warnings.catch_warnings():  # ArviZ on a trace with no posterior draws yet
            warnings.simplefilter("ignore")
            trace = sampler.inspect()
        return int(sum(int(np.isfinite(group["diverging"].values).sum())
                       for name in ("warmup_sample_stats", "sample_stats")
                       if (group := getattr(trace, name, None)) is not None
                       and "diverging" in group))
    except Exception:  # a nutpie whose trace reads differently: no count, same draws
        return None


def _arrays(posterior: xr.Dataset) -> dict[str, np.ndarray]:
    return {k: v.values for k, v in posterior.data_vars.items()}


def _stats(stats: xr.Dataset) -> xr.Dataset:
    stats = stats.copy()
    if "diverging" not in stats and "divergences" in stats:
        stats = stats.rename({"divergences": "diverging"})
    return stats.drop_vars([v for v in stats.data_vars if stats[v].ndim > 2])
