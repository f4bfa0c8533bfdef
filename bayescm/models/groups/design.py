r"""The layout of the ``groups`` model: which effect each slice takes, in NumPy.

One :class:`Design` serves the PyMC model, the compiled kernel, the JAGS twin and the
completion of draws, so the four agree by construction.  For rate :math:`r` and
slice :math:`s`

.. math::

    \eta_{r s} = \mu_r + \sum_b \sigma_{r b}\, z_{r b}[\ell_b(s)]
                 + \tau_r \sum_{k=1}^{t(s)} e_{r k}

over the *blocks* b (one per grouping factor, plus the interaction of all factors
when asked; each block's :math:`z_{rb}` sums to zero over its levels, and a centred
block samples the effect :math:`a_{rb} = \sigma_{rb} z_{rb}` itself),
:math:`\ell_b(s)` the level (or level combination) of slice s in block b and
:math:`t(s) \in \{0, \dots, T-1\}` its time window: a Gaussian random walk pinned
at :math:`w_{r0} = 0` in the first window.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.slices import WINDOW, slice_label

RATES = ("prevalence", "tpr", "tnr")
INTERACTION = "interaction"


@dataclass(frozen=True)
class Block:
    """One random effect: variables ``sigma_<name>`` (rate) and ``z_<name>`` (rate, dim),
    or, centred, ``sigma_<name>`` and ``effect_<name>``."""

    name: str
    dim: str
    labels: list[Any]
    index: np.ndarray  # level of each slice, shape (S,)
    centred: bool = False

    @property
    def free(self) -> str:
        """The block's sampled sum-to-zero variable: the effect itself when centred."""
        return f"effect_{self.name}" if self.centred else f"z_{self.name}"


@dataclass(frozen=True)
class Design:
    """Blocks, windows and counts of a sliced matrix for the groups model."""

    unit: str
    units: list[str]
    counts: np.ndarray  # (S, 4)
    blocks: list[Block]
    windows: list[Any]  # window starts; a walk when there are two or more
    window: np.ndarray  # window index of each slice, (S,)

    @property
    def walk(self) -> bool:
        return len(self.windows) > 1

    def coords(self) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {self.unit: list(self.units), "rate": list(RATES)}
        for b in self.blocks:
            out[b.dim] = list(b.labels)
        if self.walk:
            out["window_level"] = list(self.windows)
            out["window_step"] = list(self.windows[1:])
        return out

    def free_names(self) -> list[str]:
        """Free variables in the order the model creates them."""
        names = ["mu"]
        for b in self.blocks:
            names += [f"sigma_{b.name}", b.free]
        return names + (["tau", "z_window"] if self.walk else [])

    def dims(self) -> dict[str, tuple[str, ...]]:
        out = {"mu": ("rate",)}
        for b in self.blocks:
            out[f"sigma_{b.name}"] = ("rate",)
            out[f"z_{b.name}"] = ("rate", b.dim)
            out[f"effect_{b.name}"] = ("rate", b.dim)
        if self.walk:
            out.update(tau=("rate",), z_window=("rate", "window_step"),
                       effect_window=("rate", "window_level"))
        return out

    def shapes(self) -> list[tuple[int, ...]]:
        shapes: list[tuple[int, ...]] = [(3,)]
        for b in self.blocks:
            shapes += [(3,), (3, len(b.labels))]
        return shapes + ([(3,), (3, len(self.windows) - 1)] if self.walk else [])

    def n_free(self) -> int:
        """Unconstrained coordinates: each sum-to-zero z of L levels has L - 1."""
        return 3 + sum(3 + 3 * (len(b.labels) - 1) for b in self.blocks) + (
            3 + 3 * (len(self.windows) - 1) if self.walk else 0)

    def eta(self, draws: dict[str, np.ndarray]) -> np.ndarray:
        """Log-odds of each rate, shape ``(*sample, 3, S)``, from free-variable draws."""
        eta = np.asarray(draws["mu"])[..., None]
        for b in self.blocks:
            eta = eta + self.effect(draws, b)[..., b.index]
        if self.walk:
            eta = eta + self.walk_effect(draws)[..., self.window]
        return eta

    @staticmethod
    def effect(draws: dict[str, np.ndarray], b: Block) -> np.ndarray:
        if b.centred:
            return np.asarray(draws[b.free])
        return np.asarray(draws[f"sigma_{b.name}"])[..., None] * np.asarray(draws[b.free])

    @staticmethod
    def standardised(draws: dict[str, np.ndarray], b: Block) -> np.ndarray:
        """:math:`z = a / \\sigma`, the standardised effects (of a centred block)."""
        return np.asarray(draws[b.free]) / np.asarray(draws[f"sigma_{b.name}"])[..., None]

    @staticmethod
    def walk_effect(draws: dict[str, np.ndarray]) -> np.ndarray:
        """:math:`w_{rt}`, shape ``(*sample, 3, T)``: 0, then the scaled cumulative steps."""
        steps = np.asarray(draws["tau"])[..., None] * np.cumsum(draws["z_window"], axis=-1)
        return np.concatenate([np.zeros((*steps.shape[:-1], 1)), steps], axis=-1)


def factors_of(cm: Any, factors: Sequence[str] | None) -> list[str]:
    """The grouping factors to model: every level column but ``window`` by default."""
    frame = cm.slices if cm.slices is not None else pd.DataFrame(index=list(cm.classifiers))
    have = [str(c) for c in frame.columns if c != WINDOW]
    if factors is None:
        return have
    if isinstance(factors, str):
        factors = [factors]
    unknown = [f for f in factors if f not in have]
    if unknown:
        raise ValueError(f"groups: factor(s) {unknown} are not levels of the slices "
                         f"({have}); pick factors among them (the window is modelled "
                         "automatically).")
    if len(set(factors)) != len(factors):
        raise ValueError(f"groups: factors {list(factors)} repeat a factor; name each once.")
    return list(factors)


# centered="auto" samples a block's effects directly when the data pin every one of
# them (each level's plug-in log-odds has a standard error of at most PINNED; 0.25 is
# about 100 cases of each class at a rate of 0.8) AND the levels clearly differ (the
# moment estimate of their spread is at least SPREAD times that error) for all three
# rates.  Then the likelihood, not the population prior, shapes each effect, and the
# non-centred sigma * z is a curved ridge; with a spread near zero the centred form
# is a funnel instead (Betancourt & Girolami, "Hamiltonian Monte Carlo for
# hierarchical models", 2015).
PINNED = 0.25
SPREAD = 1.5


def design(cm: Any, factors: Sequence[str], interactions: bool,
           centred: bool | str = False) -> Design:
    """The :class:`Design` of ``cm`` for these factors.

    ``centred``: True or False for every block, or ``"auto"``: a block is centred
    when its levels are data-rich and clearly different (:func:`pinned_and_spread`).
    """
    frame = cm.slices if cm.slices is not None else pd.DataFrame(index=list(cm.classifiers))
    blocks, codes = [], []
    for f in factors:
        labels = list(pd.unique(frame[f].to_numpy()))
        index = pd.Index(labels, dtype=object).get_indexer(frame[f].to_numpy(dtype=object))
        codes.append(index)
        index = index.astype(np.int64)
        blocks.append(Block(f, f"{f}_level", labels, index,
                            _centre(centred, cm.counts, index, len(labels))))
    if interactions:
        if len(factors) < 2:
            raise ValueError("groups: interactions=True needs two or more factors (the "
                             f"interaction of {list(factors)} is the factor itself).")
        sizes = tuple(len(b.labels) for b in blocks)
        combos = [slice_label(dict(zip(factors, (b.labels[i] for b, i in
                                                 zip(blocks, c, strict=True)), strict=True)))
                  for c in itertools.product(*(range(n) for n in sizes))]
        index = np.ravel_multi_index(codes, sizes).astype(np.int64)
        blocks.append(Block(INTERACTION, "combination", combos, index,
                            _centre(centred, cm.counts, index, len(combos))))
    if WINDOW in frame.columns:
        # Timestamps: datetime64[ns] coords, which survive a netCDF round trip as saved
        windows = list(pd.Index(pd.unique(frame[WINDOW].to_numpy())))
        window = pd.Index(windows).get_indexer(frame[WINDOW].to_numpy())
    else:
        windows, window = [None], np.zeros(len(frame), dtype=np.int64)
    return Design(cm.unit, list(cm.classifiers), np.asarray(cm.counts, dtype=float), blocks,
                  windows, np.asarray(window, dtype=np.int64))


def pinned_and_spread(counts: Any, index: np.ndarray, n_levels: int) -> bool:
    r"""Whether the data pin every level's effect and the levels clearly differ.

    Per rate (prevalence: positives among cases; TPR: tp among positives; TNR: tn
    among negatives) and level :math:`\ell`, the plug-in log-odds
    :math:`\hat\eta_\ell = \log\frac{x + 1/2}{m - x + 1/2}` has standard error
    :math:`s_\ell = (1/(x + 1/2) + 1/(m - x + 1/2))^{1/2}`.  True when, for all three
    rates, :math:`\max_\ell s_\ell \le` ``PINNED`` and the moment estimate of the
    spread, :math:`\hat\sigma^2 = \mathrm{var}(\hat\eta) - \overline{s^2}`, is at least
    ``SPREAD`` :math:`\max_\ell s_\ell` (two or more levels).
    """
    if n_levels < 2:
        return False
    c = np.asarray(counts, dtype=float)
    level = {k: np.bincount(index, c[:, j], minlength=n_levels) for j, k in
             enumerate(("tp", "fn", "fp", "tn"))}
    pos, neg = level["tp"] + level["fn"], level["fp"] + level["tn"]
    for x, m in ((pos, pos + neg), (level["tp"], pos), (level["tn"], neg)):
        eta = np.log((x + 0.5) / (m - x + 0.5))
        se2 = 1.0 / (x + 0.5) + 1.0 / (m - x + 0.5)
        worst = float(np.sqrt(se2.max()))
        spread2 = float(eta.var(ddof=1) - se2.mean())
        if worst > PINNED or spread2 < (SPREAD * worst) ** 2:
            return False
    return True


def _centre(option: bool | str, counts: Any, index: np.ndarray, n_levels: int) -> bool:
    if option == "auto":
        return pinned_and_spread(counts, index, n_levels)
    return bool(option)


def spec_design(spec: Any) -> Design:
    """A built model's design (kept in ``spec.extra``), or rebuilt from its data and
    options (a spec read from disk has no ``extra``)."""
    d = spec.extra.get("design") if spec.extra else None
    if d is None:
        # a fit saved before the option existed was non-centred
        d = design(spec.data, list(spec.options["factors"]), bool(spec.options["interactions"]),
                   spec.options.get("centered", False))
    return d
