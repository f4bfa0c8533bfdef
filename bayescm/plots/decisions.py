r"""Pictures for decisions: who wins a leaderboard, and how large a test set must be.

* :func:`leaderboard`: rank probabilities of a probabilistic leaderboard as a heat map
  (Tötsch & Hoffmann, "Classifier uncertainty: evidence, potential impact, and
  probabilistic treatment", 2021, Fig. 6);
* :func:`sample_size_curve`: HDI width against test-set size, with the target width and
  the smallest size reaching it (Tötsch & Hoffmann 2021, Fig. 7).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bayescm.plots._common import new_axes, require

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from bayescm.analysis import Leaderboard, SampleSizePlan

__all__ = ["leaderboard", "sample_size_curve"]


def leaderboard(board: Leaderboard, *, top: int = 10, ax: Axes | None = None) -> Axes:
    r"""Heat map of the rank probabilities of the top submissions of a leaderboard.

    Cell :math:`(i, r)` is :math:`P(R_i = r)`, the share of joint posterior draws in
    which submission :math:`i` holds rank :math:`r` (Tötsch & Hoffmann 2021, Fig. 6),
    for the ``top`` submissions by posterior mean and ranks ``1..top``; cells of at
    least 0.01 are annotated.  With prizes, the expected prize of each submission is
    written in a column on the right.

    Parameters
    ----------
    board
        A :class:`bayescm.analysis.Leaderboard`.
    top
        Submissions and ranks shown (fewer when the board has fewer).
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        One image of shape ``(top, top)`` and a colour bar.

    Raises
    ------
    TypeError
        If ``board`` is not a Leaderboard.
    ValueError
        If ``top`` is not a whole number >= 1.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayescm as bcm
    >>> from bayescm import plots
    >>> cms = bcm.ConfusionMatrix(tp=[45, 40, 30], fn=[5, 10, 20], fp=[3, 4, 9],
    ...                           tn=[47, 46, 41], classifier=["a", "b", "c"])
    >>> board = bcm.analysis.leaderboard(cms, "ba", prizes=[100, 50], random_seed=1)
    >>> ax = plots.leaderboard(board)
    >>> ax.images[0].get_array().shape
    (3, 3)
    >>> plt.close("all")
    """
    require(board, ("rank_probabilities", "summary", "metric"),
            f"board must be a bayescm.analysis.Leaderboard (from bcm.analysis.leaderboard), "
            f"got {type(board).__name__}.")
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"top must be a whole number >= 1, got {top!r}.")
    probs = board.rank_probabilities.iloc[:top, :top]
    k, r = probs.shape
    ax = new_axes(ax, (1.6 + 0.55 * r, 1.4 + 0.42 * k))
    table = probs.to_numpy(float)
    vmax = max(float(table.max()), 1e-9)
    im = ax.imshow(table, cmap="Blues", vmin=0, vmax=vmax, aspect="auto")
    for (i, j), value in np.ndenumerate(table):
        if value >= 0.01:
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small",
                    color="white" if value > 0.6 * vmax else "black")
    ax.set_xticks(range(r), [str(c) for c in probs.columns])
    ax.set_yticks(range(k), [str(i) for i in probs.index])
    ax.set_xlabel("rank")
    ax.set_ylabel(str(probs.index.name or "submission"))
    ax.set_title(f"P(rank) by {board.label}", fontsize="medium")
    prizes = "prize_share" in board.summary
    if prizes:
        shares = board.summary["prize_share"].iloc[:k].to_numpy(float)
        right = ax.secondary_yaxis("right")
        right.set_yticks(range(k), [f"{v:,.0f}" if v >= 100 else f"{v:.3g}" for v in shares])
        right.set_ylabel("expected prize")
        right.tick_params(length=0)
    ax.figure.colorbar(im, ax=ax, label="P(rank)", pad=0.02, shrink=0.9)
    return ax


def sample_size_curve(plan: SampleSizePlan, *, ax: Axes | None = None) -> Axes:
    r"""HDI width against test-set size, with the target and the chosen :math:`N`.

    The solid line is the ``assurance`` quantile of the simulated HDI widths at each
    evaluated :math:`N` (a share ``assurance`` of studies is at least this precise),
    the thin one their median; the target width is a horizontal line and the smallest
    :math:`N` reaching it a star (Tötsch & Hoffmann 2021, Fig. 7).  For rates the
    normal rule of :func:`bayescm.analysis.sample_size_rule` at :math:`p = 1/2`
    (about :math:`4 / \mathrm{MU}^2`, converted to the whole test set for TPR and TNR)
    is drawn dotted for comparison: width :math:`\mu(N)` solving
    :math:`N = c / \mu^2` (:math:`c = z^2 \approx 3.84` for accuracy at 95%, divided
    by the class fraction for TPR and TNR).
    Composite metrics have no such rule.  Both axes are logarithmic.

    Parameters
    ----------
    plan
        A :class:`bayescm.analysis.SampleSizePlan` from
        :func:`bayescm.analysis.sample_size`.
    ax
        Axes to draw on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes
        Lines labelled ``"target ..."``, ``"rule ..."`` (rates) and ``"N = ..."``.

    Raises
    ------
    TypeError
        If ``plan`` is not a SampleSizePlan.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayescm import analysis, plots
    >>> plan = analysis.sample_size(0.1, random_seed=1)
    >>> ax = plots.sample_size_curve(plan)
    >>> ax.get_xscale()
    'log'
    >>> plt.close("all")
    """
    require(plan, ("curve", "assurance", "target_width", "n_rule", "n_required", "metric"),
            f"plan must be a bayescm.analysis.SampleSizePlan (from bcm.analysis.sample_size), "
            f"got {type(plan).__name__}.")
    curve = plan.curve
    n = curve.index.to_numpy(float)
    ax = new_axes(ax, (6.4, 4.4))
    q = f"{plan.assurance:.0%}"
    ax.plot(n, curve["width_quantile"], "-", color="C0", lw=2,
            label=f"{q} quantile of the {plan.hdi_prob:.0%} HDI width")
    ax.plot(n, curve["median_width"], "-", color="C0", lw=1, alpha=0.6,
            label="median HDI width")
    ax.axhline(plan.target_width, color="C3", ls="--", lw=1,
               label=f"target width {plan.target_width:g}")
    if plan.n_rule is not None:
        # the rule for the whole test set, N = c / width^2, through the plan's own point
        c = plan.n_rule * plan.target_width**2
        widths = np.geomspace(np.sqrt(c / n.max()), min(0.999, np.sqrt(c / n.min())), 200)
        rule_n = c / widths**2
        ax.plot(rule_n, widths, ":", color="0.3", lw=1.5,
                label=f"normal rule N = {c:.3g} / width$^2$ (N = {plan.n_rule:.0f} at the "
                      "target)")
    if plan.n_required is not None:
        w = float(curve.loc[plan.n_required, "width_quantile"])
        ax.axvline(plan.n_required, color="C2", lw=1, alpha=0.7, zorder=0)
        ax.plot(plan.n_required, w, "*", color="C2", ms=14, mec="white", ls="none", zorder=3,
                label=f"N = {plan.n_required} ({q} of studies reach the target)")
    else:
        ax.text(0.98, 0.98, f"target not reached up to N = {int(n.max())}",
                transform=ax.transAxes, ha="right", va="top", color="C3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [t * 10.0**e for e in range(-4, 1) for t in (1, 2, 5)]
    low, high = ax.get_ylim()
    ax.set_yticks([t for t in ticks if low <= t <= high])
    ax.set_yticks([], minor=True)
    ax.yaxis.set_major_formatter("{x:g}")
    ax.set_xlabel("test-set size N")
    ax.set_ylabel(f"{plan.hdi_prob:.0%} HDI width of {plan.metric}")
    ax.grid(which="major", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="lower left", fontsize="small")
    return ax
