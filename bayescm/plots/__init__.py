r"""Pictures of classifier uncertainty, for people who would rather look than read.

Every function draws into a matplotlib ``Axes`` (a new figure's when ``ax=None``) and
returns it, so figures compose with ArviZ plots and with each other.  One module per
kind of picture:

* :mod:`~bayescm.plots.posteriors` -- :func:`metric_posterior`: a metric's posterior per
  classifier, as a forest of HDIs or a ridge of densities, with the plug-in value marked
  (Tötsch & Hoffmann, "Classifier uncertainty: evidence, potential impact, and
  probabilistic treatment", 2021, Figs. 3-5);
* :mod:`~bayescm.plots.pmf` -- :func:`roc_space_pmf` and :func:`metric_pmf`: the exact
  predictive distribution of a future confusion matrix in ROC space and of a metric of
  it (Lovell, Miller, Capra & Bradley, "Never mind the metrics -- what about the
  uncertainty? Visualising binary confusion matrix metric distributions to put
  performance in perspective", 2022, Figs. 4-5 and 8);
* :mod:`~bayescm.plots.decisions` -- :func:`leaderboard`: rank probabilities of a
  probabilistic leaderboard as a heat map (Tötsch & Hoffmann 2021, Fig. 6), and
  :func:`sample_size_curve`: HDI width against test-set size (Fig. 7);
* :mod:`~bayescm.plots.curves` -- :func:`coverage` and :func:`curve_bands`: interval
  coverage and ROC/PR curves with credible bands (Morais, "A Bayesian approach to
  machine learning model comparison", 2023, Figs. 5, 7-8);
* :mod:`~bayescm.plots.sensitivity` -- :func:`prior_sensitivity`: each alternative
  prior's posterior interval next to the baseline's, per parameter (a forest);
* :mod:`~bayescm.plots.fairness` -- :func:`disparity`: each slice's metric against the
  rest (a forest), and :func:`alert_timeline`: a monitored metric per time window with
  its threshold and first alert;
* :mod:`~bayescm.plots.folds` -- :func:`fold_difference`: the posterior of a mean
  difference across cross-validation folds with the ROPE shaded, and for a comparison
  across data sets :func:`datasets_simplex` (the predictive for a new data set in a
  triangle) and :func:`datasets_forest` (each data set's shrunk difference).
"""

from bayescm.plots.curves import coverage, curve_bands
from bayescm.plots.decisions import leaderboard, sample_size_curve
from bayescm.plots.fairness import alert_timeline, disparity
from bayescm.plots.folds import datasets_forest, datasets_simplex, fold_difference
from bayescm.plots.pmf import metric_pmf, roc_space_pmf
from bayescm.plots.posteriors import NO_SKILL, metric_posterior
from bayescm.plots.sensitivity import prior_sensitivity

__all__ = [
    "NO_SKILL",
    "alert_timeline",
    "coverage",
    "curve_bands",
    "datasets_forest",
    "datasets_simplex",
    "disparity",
    "fold_difference",
    "leaderboard",
    "metric_pmf",
    "metric_posterior",
    "prior_sensitivity",
    "roc_space_pmf",
    "sample_size_curve",
]
