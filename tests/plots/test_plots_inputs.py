"""Plots take what users pass (issue 25): K-class averaged metrics in
``metric_posterior``, several ROC curves on one Axes with one legend entry each, and
names with ``$`` (drawn as written, not as TeX: two of them used to crash the drawing)."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import bayescm as bcm
from bayescm import plots


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def draw(ax) -> None:
    ax.figure.savefig(io.BytesIO(), format="png")  # renders every text: mathtext parses here


def test_metric_posterior_takes_multiclass_averages():
    mc = bcm.MulticlassConfusionMatrix(
        [[[50, 3, 2], [4, 40, 6], [1, 2, 30]], [[45, 8, 2], [6, 38, 6], [3, 2, 28]]],
        labels=["cat", "dog", "bird"], classifier=["a", "b"])
    idata = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", draws=300,
                    random_seed=1)
    ax = plots.metric_posterior(idata, "f1_macro")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert "f1_macro" in ax.get_xlabel() and "macro" in ax.get_xlabel()
    (mark,) = [line for line in ax.get_lines() if line.get_label() == "plug-in"]
    plug = bcm.metrics.registry_for(mc).compute(mc.to_xarray(), ["f1_macro"])["f1_macro"]
    np.testing.assert_allclose(mark.get_xdata(), plug.values)
    ax = plots.metric_posterior(idata, "tpr", kind="ridge")  # per class: a row per class
    assert len(ax.get_yticklabels()) == 6
    draw(ax)


def test_three_roc_curves_on_one_axes_have_one_legend_entry_each():
    rng = np.random.default_rng(0)
    y = np.repeat([1, 0], 60)
    curves = {name: bcm.curves.roc(rng.normal(shift * y, 1.0), y, draws=200, random_seed=1)
              for name, shift in (("strong", 1.5), ("fair", 0.8), ("weak", 0.2))}
    ax = plots.curve_bands(curves)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [t.split(":")[0] for t in texts[:3]] == ["strong", "fair", "weak"]
    assert len(texts) == 5  # the three curves, the chance line, the bands' key: not 12
    assert sum("AUC" in t for t in texts) == 3


def test_a_dollar_in_a_name_is_drawn_as_written():
    cm = bcm.ConfusionMatrix(tp=[26, 5], fn=[0, 3], fp=[2, 1], tn=[6, 9],
                             classifier=["cost $5 or $6", "a_$^$"])
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=200, random_seed=1)
    ax = plots.metric_posterior(idata, "tpr")
    draw(ax)
    shown = [t.get_text() for t in ax.get_yticklabels()]
    assert [s.replace("\\$", "$") for s in shown] == ["cost $5 or $6", "a_$^$"]
    rng = np.random.default_rng(1)
    y = np.repeat([1, 0], 30)
    curve = bcm.curves.roc(rng.normal(y, 1.0), y, draws=100, random_seed=1)
    ax = plots.curve_bands({"$x$ and $": curve})
    draw(ax)
