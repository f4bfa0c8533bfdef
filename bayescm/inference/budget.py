r"""Bounded work: what a call would hold in memory, checked before it allocates.

Every input that sizes work -- ``draws``, ``tune``, ``chains``, the batch of matrices,
K, the lattice of an exact pmf, the sizes a saved file declares -- is turned into an
estimate of the bytes the call would hold at once, and compared with
:func:`memory_limit` before anything is allocated.  A call over the bound raises
:class:`SizeError` at once (no allocation, well under a second) with what to use
instead (``bcm.summary_exact``, chunks, fewer draws, ...), rather than growing until
the operating system or NumPy stops it minutes later with a raw ``MemoryError``.

The bound
---------
.. math::

    \text{limit} = \min(\texttt{MEMORY\_CAP},\ \texttt{MEMORY\_SHARE} \times
    \text{memory available now})

with :data:`MEMORY_CAP` = 8 GiB and :data:`MEMORY_SHARE` = 1/2: half of what the
machine (or the container's cgroup) can still give, so the call, the copies a
reader makes of its result and the rest of the session fit; and never more than
8 GiB, a result no laptop handles comfortably and the size past which bayescm's
chunked paths (:func:`bayescm.summary_exact`, ``chunk=``) are the right tool.  Where
the available memory cannot be read, the cap alone applies.  On a large machine
raise the cap for the session::

    import bayescm.inference.budget as budget
    budget.MEMORY_CAP = 64 * 2**30

Estimates count float64 values (8 bytes) of every group :func:`bayescm.fit` keeps,
the sampler's own trace (NUTS keeps its tuning draws until it returns) and a
margin for temporaries (:data:`HEADROOM`).  Measured against the peak a fit really
reaches, they are 1.1 to 1.4 times it (exact fits of 1 and 500 matrices, K = 20,
NUTS of three-Beta and Hui–Walter models; ``tests/inference/test_budget.py`` keeps
them between the traced peak and 2.5 times it).

Time is not bounded here: a long NUTS run is the user's to start (and to follow with
``progress=``).  The web app, whose fits share one server, bounds their steps
(:mod:`bayescm.app.fitjob`) and a page's work per edit on top of this bound.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm._errors import SizeError  # defined at the floor: the models raise it too

if TYPE_CHECKING:
    import pymc as pm

    from bayescm.family import ClosedForm, Conjugate, Family, ModelSpec

__all__ = [
    "HEADROOM",
    "MEMORY_CAP",
    "MEMORY_SHARE",
    "SizeError",
    "available_memory",
    "check_fit",
    "check_memory",
    "check_steps",
    "fit_bytes",
    "format_bytes",
    "memory_limit",
    "per_draw_values",
]

MEMORY_CAP = 8 * 2**30
"""The most one call may plan to hold (bytes), whatever the machine has."""
MEMORY_SHARE = 0.5
"""The share of the memory available now that one call may plan to hold."""
HEADROOM = 1.5
"""Temporaries on top of a result's stored values (metric formulas, copies)."""
STATS_PER_STEP = 20
"""Sampler statistics per NUTS step (step size, tree depth, energy, ...), in values."""
CHAIN_BYTES = 2**20
"""Fixed cost of one chain (its sampler state and trace buffers), bytes."""


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room() -> int | None:
    """What the process's cgroup still allows (v2, then v1), if it sets a limit."""
    for limit_path, usage_path in (
            ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
             "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None and limit < 2**60:
            return max(limit - usage, 0)
    return None


def available_memory() -> int | None:
    """Bytes the system can still give this process (None when it cannot be read).

    Linux: ``MemAvailable`` of ``/proc/meminfo``, within the cgroup's limit; elsewhere
    ``os.sysconf`` (free physical pages).
    """
    found = [v for v in (_meminfo_available(), _cgroup_room()) if v is not None]
    if not found:
        try:
            found = [os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")]
        except (ValueError, OSError, AttributeError):
            return None
    return min(found)


def memory_limit() -> int:
    """The bytes one call may plan to hold: ``min(MEMORY_CAP, MEMORY_SHARE * available)``.

    >>> 0 < memory_limit() <= MEMORY_CAP
    True
    """
    available = available_memory()
    cap = int(MEMORY_CAP)
    return cap if available is None else max(min(cap, int(MEMORY_SHARE * available)), 1)


def format_bytes(n: float) -> str:
    """``n`` bytes in words: ``format_bytes(80e9)`` is ``'74.5 GiB'``.

    >>> format_bytes(80e9), format_bytes(2.5e6), format_bytes(1e20)
    ('74.5 GiB', '2.4 MiB', '9.3e+10 GiB')
    """
    n = float(n)
    if n >= 1e15 or not math.isfinite(n):
        return f"{n / 2**30:.2g} GiB"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} bytes"


def check_memory(nbytes: float, what: str, instead: str, *, limit: float | None = None,
                 bound: str | None = None) -> None:
    """Raise :class:`SizeError` when ``nbytes`` exceeds ``limit`` (default
    :func:`memory_limit`).

    Parameters
    ----------
    nbytes
        The estimate.
    what
        What would take it ("This fit (10,000 classifiers x 4,000 draws)").
    instead
        What to do instead (one or two sentences).
    limit, bound
        Another limit (a web server's bound per request) and its words.

    Examples
    --------
    >>> check_memory(80e9, "The lattice", "Use fewer cases.")
    Traceback (most recent call last):
    ...
    bayescm.SizeError: The lattice would need about 74.5 GiB of memory, ...
    """
    if limit is None:
        limit = memory_limit()
        bound = bound or (f"the {format_bytes(limit)} bayescm lets one call use (half the "
                          f"memory available now, at most {format_bytes(MEMORY_CAP)}: "
                          "bayescm.inference.budget.MEMORY_CAP)")
    if nbytes > limit:
        raise SizeError(f"{what} would need about {format_bytes(nbytes)} of memory, more "
                        f"than {bound or format_bytes(limit)}. {instead}")


# -- the size of a fit ----------------------------------------------------------------
def _size(model: pm.Model, var: Any) -> int:
    """Values of one draw of a model variable: its dims' lengths, else its static shape."""
    dims = model.named_vars_to_dims.get(var.name)
    if dims:
        return int(np.prod([len(model.coords.get(d) or ()) for d in dims]))
    shape = getattr(var.type, "shape", ())
    return int(np.prod([1 if s is None else s for s in shape]))


def per_draw_values(model: pm.Model | None, family: Family | None, spec: ModelSpec | None,
                    conj: Conjugate | None, keys: Sequence[str], *, sampler: str,
                    closed: ClosedForm | None = None) -> tuple[int, int, int]:
    """``(posterior, metrics, sampled)``: values of one posterior draw as :func:`fit`
    stores it, of which metrics, and those the sampler itself returns.

    One draw is made as :func:`fit` makes it -- the conjugate posterior's draw, or
    zeros of the model's shapes for NUTS -- and completed with the family's derived
    quantities and the metrics: the exact count, at the cost of one draw.
    """
    import warnings

    from bayescm.inference import draws as draws_mod

    if closed is not None:
        conj = closed.conjugate
    if sampler == "exact" and conj is not None:
        values = conj.draw(np.random.default_rng(0), (1, 1))
    else:
        values = {}
        for v in [*model.free_RVs, *model.deterministics]:
            dims = model.named_vars_to_dims.get(v.name) or ()
            shape = tuple(len(model.coords.get(d) or ()) for d in dims) or (_size(model, v),)
            values[v.name] = np.zeros((1, 1, *shape))
    sampled = int(sum(np.size(v) for v in values.values()))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ds = draws_mod.complete(values, model, family, spec, conj, closed=closed)
            plain = _values(ds)
            # the metrics of the first unit, times the units: the same count, at once
            theta = ds["theta"] if "theta" in ds else None
            units = 1
            if theta is not None and theta.ndim > 3:
                units = ds.sizes[theta.dims[2]]
                ds = ds.isel({theta.dims[2]: slice(0, 1)})
            metrics = (_values(draws_mod.with_metrics(ds, keys)) - _values(ds)) * units
    except Exception:  # a hand-built model the family hooks do not fit: its values alone
        return sampled, 0, sampled
    return plain + metrics, metrics, sampled


def _values(ds: Any) -> int:
    return int(sum(v.size for v in ds.data_vars.values()))


def fit_bytes(per_draw: tuple[int, int, int], *, draws: int, tune: int, chains: int,
              sampler: str, observed: int, predictive: bool, predictions: bool,
              prior: bool, log_likelihood: int = 0) -> float:
    """Bytes a fit holds at its peak, from :func:`per_draw_values`.

    ``observed``: values of the observed counts (each predictive draw has as many,
    plus the metrics); ``log_likelihood``: values of that group per draw (0 without).
    """
    posterior, metrics, sampled = per_draw
    per = posterior + 1  # + sample_stats
    if predictive and observed:
        per += (observed + metrics) * (2 if predictions else 1)
    if prior:
        per += posterior - metrics + (observed if predictive else 0)
    per += log_likelihood
    total = 8.0 * float(chains) * float(draws) * per * HEADROOM + chains * CHAIN_BYTES
    if sampler != "exact":  # the sampler's trace, tuning included, until it returns
        total += 8.0 * chains * (float(draws) + float(tune)) * (sampled + STATS_PER_STEP)
    return total


def check_fit(model: pm.Model | None, family: Family | None, spec: ModelSpec | None,
              conj: Conjugate | None, keys: Sequence[str], observed: Any, *, draws: int,
              tune: int, chains: int, sampler: str, predictive: bool = True,
              predictions: bool = False, prior: bool = True,
              log_likelihood: bool | None = None, closed: ClosedForm | None = None,
              limit: float | None = None, bound: str | None = None) -> float:
    """Raise :class:`SizeError` when a fit would exceed the memory bound; else return
    its estimate (bytes).  What :func:`bayescm.fit` and
    :func:`~bayescm.inference.fit_closed_form` check before they draw."""
    from bayescm.inference.draws import LOG_LIKELIHOOD_MAX_VALUES

    per_draw = per_draw_values(model, family, spec, conj, keys, sampler=sampler,
                               closed=closed)
    predictive = predictive and (family is None or family.replicates_data)
    n_obs = int(np.size(observed)) if observed is not None else 0
    cases = 0
    if family is not None and observed is not None and (
            log_likelihood or (log_likelihood is None and family.log_likelihood_by_default)):
        cases = int(np.asarray(observed, dtype=float).sum())
        if log_likelihood is None and cases * float(draws) * chains > LOG_LIKELIHOOD_MAX_VALUES:
            cases = 0  # fit leaves the group out (LogLikelihoodNotice)
    nbytes = fit_bytes(per_draw, draws=draws, tune=tune, chains=chains, sampler=sampler,
                       observed=n_obs, predictive=predictive, predictions=predictions,
                       prior=prior, log_likelihood=cases)
    units, unit = (int(np.shape(observed)[0]), str(observed.dims[0])) if getattr(
        observed, "ndim", 0) else (1, "unit")
    steps = f"{draws:,} draws" + (f" after {tune:,} tuning steps" if sampler != "exact" else "")
    check_memory(nbytes, f"This fit ({units:,} {unit}{'s' if units != 1 else ''}, {chains:,} "
                         f"chains x {steps}, {per_draw[0]:,} values per draw, and the groups "
                         "kept with them)", fit_advice(units, sampler), limit=limit,
                 bound=bound)
    return nbytes


def fit_advice(units: int, sampler: str) -> str:
    """What to do instead of a fit too large for memory."""
    out = []
    if units > 1 and sampler == "exact":
        out.append("For the summary table of many matrices use bcm.summary_exact(data): it "
                   "draws and summarises a chunk of classifiers at a time in a few hundred "
                   "MB. Or fit the matrices in chunks.")
    out.append("Use fewer draws, tuning steps or chains (a few thousand draws in all give "
               "summaries to about three digits), or pass predictive=False and prior=False: "
               "each of those groups costs as much as the posterior.")
    return " ".join(out)


def check_steps(draws: int, tune: int, chains: int, sampler: str = "nuts") -> None:
    """Raise :class:`SizeError` when even one value per step of every chain (NUTS keeps
    its tuning steps) and each chain's fixed cost exceed the bound: what
    :func:`~bayescm.inference.fit.check_sizes` adds to its checks of the integers."""
    steps = float(draws) + (float(tune) if sampler != "exact" else 0.0)
    check_memory(8.0 * float(chains) * steps + float(chains) * CHAIN_BYTES,
                 f"{chains:,} chains x {steps:,.0f} steps",
                 "Use fewer draws, tuning steps or chains: a few thousand draws in all give "
                 "summaries to about three digits.")
