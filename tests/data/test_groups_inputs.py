"""``groups=`` takes the shapes users hold their group columns in (issue 25): a pandas or
Dask DataFrame (one factor per column) and a list of named pandas or Dask Series, each
counted as the equivalent mapping ``{name: values}``.  Before, a Dask DataFrame raised
a raw TypeError ("Column assignment doesn't support type DataFrame") and a list of Dask
Series was read as one factor."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm

dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 300
    y = rng.integers(0, 2, n)
    return pd.DataFrame({"y": y, "p": np.where(rng.random(n) < 0.2, 1 - y, y),
                         "sex": rng.choice(["F", "M"], n),
                         "site": rng.choice(["a", "b", "c"], n)})


def test_every_shape_of_groups_counts_as_the_mapping(frame):
    lazy = dd.from_pandas(frame, npartitions=3)
    expected = bcm.ConfusionMatrix.from_predictions(
        frame["y"], frame["p"], groups={"sex": frame["sex"], "site": frame["site"]})
    shapes = {
        "pandas DataFrame": (frame["y"], frame["p"], frame[["sex", "site"]]),
        "pandas Series list": (frame["y"], frame["p"], [frame["sex"], frame["site"]]),
        "Dask DataFrame": (lazy["y"], lazy["p"], lazy[["sex", "site"]]),
        "Dask Series list": (lazy["y"], lazy["p"], [lazy["sex"], lazy["site"]]),
    }
    for what, (y, p, groups) in shapes.items():
        got = bcm.ConfusionMatrix.from_predictions(y, p, groups=groups)
        assert got.classifiers == expected.classifiers, what
        np.testing.assert_array_equal(got.counts, expected.counts, err_msg=what)
        pd.testing.assert_frame_equal(got.slices, expected.slices, check_dtype=False)


def test_unnamed_series_and_mixed_inputs_get_a_message(frame):
    with pytest.raises(bcm.CountsError, match="name them"):
        bcm.ConfusionMatrix.from_predictions(
            frame["y"], frame["p"], groups=[frame["sex"].rename(None), frame["site"]])
    lazy = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(bcm.CountsError, match="Dask"):
        bcm.ConfusionMatrix.from_predictions(frame["y"], frame["p"], groups=lazy[["sex"]])
