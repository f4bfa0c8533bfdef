"""Pictures of comparisons across folds and data sets (issue 28): what is drawn is where the
results say, on results built by hand (the pictures read attributes, not types)."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayescm as bcm
from bayescm.plots.folds import _project


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_fold_difference_shades_the_rope_and_draws_the_t():
    rng = np.random.default_rng(0)
    res = SimpleNamespace(difference=0.02 + 0.01 * rng.standard_t(9, 4000), rope=0.015,
                          p_a_better=0.7, p_rope=0.25, p_b_better=0.05, names=("x", "y"),
                          metric="mcc", plug_in=True, df=9, loc=np.array([0.02]),
                          scale=np.array([0.01]))
    ax = bcm.plots.fold_difference(res)
    spans = [p for p in ax.patches if p.get_label().startswith("ROPE")]
    assert len(spans) == 1
    # the span in data x-coordinates (Rectangle in matplotlib >= 3.9, Polygon before)
    xs = spans[0].get_patch_transform().transform(spans[0].get_path().vertices)[:, 0]
    assert xs.min() == pytest.approx(-0.015) and xs.max() == pytest.approx(0.015)
    # the exact t density peaks at the location with height 1 / scale * t.pdf(0, 9)
    from scipy import stats

    line = ax.get_lines()[0]
    assert line.get_xdata()[np.argmax(line.get_ydata())] == pytest.approx(0.02, abs=2e-4)
    assert line.get_ydata().max() == pytest.approx(stats.t.pdf(0, 9) / 0.01, rel=1e-3)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "P(x better) = 0.700" in labels and "P(y better) = 0.050" in labels
    assert ax.get_xlabel() == "mcc: x − y"


def test_simplex_projects_corners_and_points_inside():
    corners = _project(np.eye(3))
    np.testing.assert_allclose(corners, [[0, 0], [0.5, np.sqrt(3) / 2], [1, 0]], atol=1e-12)
    pts = np.random.default_rng(1).dirichlet([1, 1, 1], 500)
    res = SimpleNamespace(predictive=pts, p_a_better=0.3, p_rope=0.4, p_b_better=0.3,
                          names=("a", "b"), metric="acc")
    ax = bcm.plots.datasets_simplex(res)
    xy = ax.collections[0].get_offsets()
    assert len(xy) == 500
    # inside the triangle: y >= 0, y <= sqrt(3) x, y <= sqrt(3) (1 - x)
    assert (xy[:, 1] >= -1e-12).all()
    assert (xy[:, 1] <= np.sqrt(3) * xy[:, 0] + 1e-12).all()
    assert (xy[:, 1] <= np.sqrt(3) * (1 - xy[:, 0]) + 1e-12).all()
    assert {t.get_text() for t in ax.texts} == {"P(a better) = 0.300", "P(rope) = 0.400",
                                                 "P(b better) = 0.300"}


def test_forest_rows_are_the_hdis():
    rng = np.random.default_rng(2)
    delta = rng.normal([0.01, 0.03], 0.005, (4000, 2))
    res = SimpleNamespace(delta=delta, delta_new=rng.normal(0.02, 0.02, 4000),
                          observed_mean=np.array([0.0, 0.04]), datasets=["iris", "wine"],
                          rope=0.01, names=("a", "b"), metric="acc")
    ax = bcm.plots.datasets_forest(res)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["iris", "wine", "new data set"]
    segments = next(c for c in ax.collections if c.get_label().startswith("posterior"))
    lows = [seg[0][0] for seg in segments.get_segments()]
    expected = bcm.stats.hdi(np.column_stack([delta, res.delta_new]), 0.95, axis=0)[0]
    np.testing.assert_allclose(lows, expected)
    with pytest.raises(TypeError, match="compare_datasets"):
        bcm.plots.datasets_forest(SimpleNamespace(delta=delta))
