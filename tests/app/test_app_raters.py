"""The No-labels page's ratings mode (bayescm.app.raters_logic), without a browser.

The table read from the page's text is checked against the library's own
:class:`~bayescm.RatingsTable` of the same data; the fit job against an in-process
``bcm.fit`` of the same model and seed (reproducible, so the numbers agree to float
precision).
"""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.app import nolabels_logic as nl
from bayescm.app import raters_logic as rl
from bayescm.app.pages_common import InputError

LONG = """item, rater, rating, gold
1, A, x, x
1, B, x, x
2, A, y,
2, B, x,
2, C, y,
3, C, x,"""


def test_wide_text_is_the_library_table_of_the_same_frame() -> None:
    table = rl.parse_ratings(rl.DEFAULT_RATINGS)
    frame = pd.read_csv(pd.io.common.StringIO(rl.DEFAULT_RATINGS), skipinitialspace=True)
    direct = bcm.RatingsTable.from_wide(frame, item="item", raters=["A", "B", "C", "D"],
                                        gold="gold")
    assert table.raters == direct.raters and table.labels == direct.labels
    np.testing.assert_array_equal(table.counts, direct.counts)
    assert table.gold.to_dict() == direct.gold.to_dict() == {1: "cat", 5: "dog", 7: "fox"}
    assert table.n_ratings == 4 * 20 - 2  # two empty cells (items 15 and 18, rater D)


def test_long_text_with_gold_is_the_library_table() -> None:
    table = rl.parse_ratings(LONG)
    assert (table.n_items, table.raters, table.labels) == (3, ("A", "B", "C"), ("x", "y"))
    assert table.n_ratings == 6 and table.gold.to_dict() == {1: "x"}


@pytest.mark.parametrize(("text", "words"), [
    ("A, B\nx, y", "'item' column"),
    ("item, A\n1, x\n2, x", "at least two classes"),
    ("item", "header line"),
    ("item, " + ", ".join(f"r{i}" for i in range(31)) + "\n1, " + ", ".join(["x"] * 30)
     + ", y", "at most 5,000 items, 30 raters"),
])
def test_bad_ratings_get_a_message_under_their_field(text, words) -> None:
    with pytest.raises(InputError) as err:
        rl.parse_ratings(text)
    assert err.value.field == "ratings" and words in err.value.message


def test_priors_use_the_one_grammar_and_reach_the_model() -> None:
    state = nl.NoLabelsState(mode="ratings", priors="prevalence: dirichlet:3\n"
                                                   "confusion A: diagonal:20,1")
    built = rl.build_ratings(state)
    priors = bcm.models.spec_of(built.model).priors  # one prior per unit, in order
    assert priors["prevalence"] == [bcm.priors.Dirichlet([3, 3, 3])]
    assert priors["confusion"][0] == bcm.priors.Dirichlet.diagonal(3, correct=20, wrong=1)
    # the other raters keep the default rows: two pseudo-ratings on the diagonal, one off
    assert priors["confusion"][1] == bcm.priors.Dirichlet.diagonal(3, correct=2, wrong=1)
    with pytest.raises(InputError) as err:
        rl.build_ratings(nl.NoLabelsState(mode="ratings", priors="sensitivity: beta:2,1"))
    assert err.value.field == "priors"
    with pytest.raises(InputError) as err:
        rl.build_ratings(nl.NoLabelsState(mode="ratings", priors="confusion: beta:zz"))
    assert err.value.field == "priors"


def test_identifiability_verdict_is_the_library_message() -> None:
    two = "item, A, B\n" + "\n".join(f"{i}, x, {'x' if i % 3 else 'y'}" for i in range(30))
    built = rl.build_ratings(nl.NoLabelsState(mode="ratings", ratings=two))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.models.dawid_skene(rl.parse_ratings(two))
    said = [str(w.message) for w in caught
            if issubclass(w.category, bcm.models.IdentifiabilityWarning)]
    assert built.identified != "data" and said
    assert built.identifiability.split(":")[0] in said[0]


def test_job_gives_the_fit_of_the_same_seed(tmp_path) -> None:
    state = nl.NoLabelsState(mode="ratings", draws=150, tune=150, chains=2, seed=4)
    job = rl.fit_job(state, directory=tmp_path).start()
    while (p := job.poll()).state == "running":
        time.sleep(0.05)
    assert p.state == "done", p.error
    result = job.result()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(rl.build_ratings(state).model, draws=150, tune=150, chains=2,
                        random_seed=4)
    acc = bcm.summary(idata, metrics="acc")["mean"]
    shown = result.summary.xs("acc", level="metric")["mean"]
    np.testing.assert_allclose(shown.to_numpy(), acc.to_numpy(), rtol=1e-9)
    prevalence = idata.posterior["prevalence"].mean(("chain", "draw")).to_numpy()
    np.testing.assert_allclose(result.prevalence["mean"], prevalence, rtol=1e-9)
    # gold items keep their class with probability 1
    for item, label in {1: "cat", 5: "dog", 7: "fox"}.items():
        assert result.items.loc[item, "class"] == label
        assert result.items.loc[item, "probability"] == pytest.approx(1.0)
    # the same verdict and numbers; which of two equal estimators computed them may differ
    def verdict(text: str) -> str:
        return re.sub(r" \(computed by [^)]*\)", "", text)

    again = bcm.check_convergence(bcm.load(result.path)).message()
    assert verdict(result.convergence) == verdict(again)
    job.discard()


def test_state_with_ratings_round_trips_through_the_url() -> None:
    state = nl.NoLabelsState(mode="ratings", ratings=LONG, priors="prevalence: dirichlet:2")
    assert nl.NoLabelsState.from_query(state.to_query()) == state
