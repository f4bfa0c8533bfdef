"""The One-classifier page's logic, without a browser: its numbers are the library's.

Every comparison is against an independent call of the public API with the same input
and seed (``bcm.fit(..., sampler="exact")``, ``bcm.summary``, ``bcm.analysis``,
``bcm.exact``, ``bcm.priors``): the page draws the same exact posterior, so the
numbers agree exactly, not within Monte Carlo error.  The K-class priors are also
checked against the conjugate Dirichlet posterior's closed-form means, within the
Monte Carlo error of the page's draws.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayescm as bcm
import bayescm.family
from bayescm.app import one_classifier_logic as logic
from bayescm.app.pages.one_classifier import OneClassifier

CM = bcm.ConfusionMatrix(**logic.EXAMPLE, classifier=logic.CLASSIFIER)


def _fit(data, priors=None, seed=1):
    builder = (bcm.models.multiclass_rows if isinstance(data, bcm.MulticlassConfusionMatrix)
               else bcm.models.three_beta)
    model = builder(data, priors=priors) if priors else builder(data)
    return bcm.fit(model, sampler="exact", draws=logic.DRAWS, chains=4, random_seed=seed)


def test_the_example_is_the_cocaine_classifier_of_the_datasets():
    cocaine = bcm.datasets.cocaine()
    assert [int(cocaine.cell(c)[0]) for c in bcm.CELLS] == [logic.EXAMPLE[c] for c in bcm.CELLS]


@pytest.mark.parametrize("text", [
    "cat,dog,bird; 50,3,2; 4,40,6; 1,2,30",                    # the CLI's --matrix
    "cat\tdog\tbird\n50\t3\t2\n4\t40\t6\n1\t2\t30\n",           # pasted from a spreadsheet
    "cat, dog, bird\n50, 3, 2\n4, 40, 6\n1, 2, 30",
])
def test_k_class_matrices_typed_or_pasted(text):
    mc = logic.matrix("multiclass", text=text)
    assert list(mc.labels) == ["cat", "dog", "bird"]
    np.testing.assert_array_equal(mc.counts[0], [[50, 3, 2], [4, 40, 6], [1, 2, 30]])


def test_bad_matrices_get_the_library_messages():
    with pytest.raises(ValueError, match="not square: row 2"):
        logic.matrix("multiclass", text="a,b; 5,1; 2")
    with pytest.raises(bcm.CountsError) as err:
        logic.matrix("multiclass", text="a,b; 5,1; 2,-7")
    with pytest.raises(bcm.CountsError) as lib:
        bcm.MulticlassConfusionMatrix([[5, 1], [2, -7]], labels=["a", "b"],
                                      classifier=logic.CLASSIFIER)
    assert str(err.value) == str(lib.value)


def test_priors_from_text_are_the_elicitation_helpers():
    assert logic.parse_prior("elicit:0.9,0.8,0.95", "tpr") == bcm.priors.elicit_beta(
        mode=0.9, lower=0.8, prob=0.95)
    assert logic.parse_prior("elicit_upper:0.1,0.3,0.9", "tpr") == bcm.priors.elicit_beta(
        mode=0.1, upper=0.3, prob=0.9)
    assert logic.parse_prior("pert:0,0.7,1", "tnr") == bcm.priors.beta_pert(0, 0.7, 1)
    assert logic.parse_prior(" Beta: 20, 4 ", "tnr") == bcm.priors.coerce((20, 4))
    with pytest.raises(bcm.PriorError, match="write beta:a,b"):
        logic.parse_prior("normal:0,1", "tpr")
    with pytest.raises(bcm.PriorError) as err:
        logic.parse_prior("elicit:0.9,0.95,0.9", "tpr")
    with pytest.raises(bcm.PriorError) as lib:
        bcm.priors.elicit_beta(mode=0.9, lower=0.95, prob=0.9)
    assert str(err.value) == str(lib.value)


def test_analysis_is_the_library_fit_binary_with_priors_and_k_class():
    priors = {"tpr": bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95),
              "tnr": bcm.priors.coerce((2, 2))}
    metrics = ["tpr", "tnr", "bm", "f1"]
    got = logic.analyse(CM, priors=priors, metrics=metrics, hdi_prob=0.9, seed=3)
    idata = _fit(CM, priors, seed=3)
    pd.testing.assert_frame_equal(got.table, bcm.summary(idata, metrics=metrics, hdi_prob=0.9))
    pd.testing.assert_frame_equal(got.deception, bcm.analysis.deception(idata))
    mc = logic.matrix("multiclass", text=logic.EXAMPLE_MATRIX)
    got = logic.analyse(mc, metrics=["kappa", "tpr", "f1_macro"])
    pd.testing.assert_frame_equal(
        got.table, bcm.summary(_fit(mc), metrics=["kappa", "tpr", "f1_macro"]))
    # the NetCDF download is bcm.fit itself, the same draws
    full = got.fit()
    np.testing.assert_array_equal(full.posterior["theta"].values,
                                  _fit(mc).posterior["theta"].values)


def test_predictive_pmf_is_the_exact_one_with_the_page_priors():
    priors = {"prevalence": bcm.priors.coerce((3, 3)), "tnr": bcm.priors.coerce((5, 2))}
    got = logic.predictive(CM, "ba", 20, 30, priors=priors)
    want = bcm.exact.metric_pmf(CM, "ba", 20, 30, priors={"tnr": priors["tnr"]})
    pd.testing.assert_frame_equal(got, want.loc[logic.CLASSIFIER])
    with pytest.raises(ValueError, match="binary"):
        logic.predictive(logic.matrix("multiclass", text="a,b;1,2;3,4"), "acc", 5, 5)


def _numbers(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-testid="([^"]+)">([^<]+)<', html))


def test_the_page_object_updates_shows_errors_and_plans():
    page = OneClassifier()
    shown = _numbers(page.results.object)
    table = bcm.summary(_fit(CM), metrics=list(logic.DEFAULT_METRICS))
    for metric in logic.DEFAULT_METRICS:
        row = table.loc[(logic.CLASSIFIER, metric)]
        assert shown[f"{metric}-hdi-lower"] == f"{row.hdi_lower:.3f}"
        assert shown[f"{metric}-hdi-width"] == f"{row.hdi_width:.3f}"
    worse = bcm.analysis.deception(_fit(CM)).loc[logic.CLASSIFIER, "r_deceptive"]
    assert _numbers(page.deception.object)["p-worse"] == f"{worse:.3f}"

    page.state.tn = 20
    cm20 = bcm.ConfusionMatrix(**{**logic.EXAMPLE, "tn": 20}, classifier=logic.CLASSIFIER)
    want = bcm.summary(_fit(cm20), metrics=["tnr"]).loc[(logic.CLASSIFIER, "tnr"), "mean"]
    assert _numbers(page.results.object)["tnr-mean"] == f"{want:.3f}"
    pmf = bcm.exact.metric_pmf(cm20, "acc", 26, 8).loc[logic.CLASSIFIER]
    mode = pmf.loc[pmf["probability"].idxmax(), "value"]
    assert _numbers(page.pmf_text.object)["pmf-mode"] == f"{mode:.3f}"

    page.state.prior_tnr = "beta:-1,2"  # not a Beta: the library refuses it
    with pytest.raises(bcm.PriorError) as err:
        bcm.priors.coerce("beta:-1,2", kind="beta", name="tnr")
    assert page.notes["priors"].text == str(err.value)
    assert page.analysis is None and "No results" in page.results.object
    page.state.prior_tnr = "beta:1,1"
    assert page.notes["priors"].text == "" and page.analysis is not None

    page.state.hdi = 1.5  # the library's own check, next to the metrics
    with pytest.raises(ValueError) as err:
        bcm.summary(_fit(cm20), metrics=["tnr"], hdi_prob=1.5)
    assert page.notes["metrics"].text == str(err.value)
    page.state.hdi = 0.95

    page.state.ss_width = 0.3
    page.plan()
    plan = bcm.analysis.sample_size(0.3, metric="tnr", pilot=cm20, random_seed=1)
    assert _numbers(page.plan_text.object)["n-required"] == str(plan.n_required)
    pd.testing.assert_frame_equal(page.plan_frame, plan.to_frame())


def test_the_density_is_the_library_plot_and_a_bad_metric_says_so():
    from bayescm.app.errors import message

    page = OneClassifier()
    assert "(tnr)" in page.figures["density"].axes[0].get_xlabel()
    assert 'data-testid="density-plot"' in page.density.object
    page.state.density = "f1"  # not among the table's metrics: computed for the plot
    assert "f1" not in page.state.metrics and page.notes["density"].text == ""
    assert "(f1)" in page.figures["density"].axes[0].get_xlabel()
    page.state.density = "foo"
    with pytest.raises(KeyError) as err:
        bcm.plots.metric_posterior(page.analysis.idata, "foo")
    assert page.notes["density"].text == message(err.value)
    assert page.density.object == ""


# -- K-class priors ----------------------------------------------------------------------
MC = logic.matrix("multiclass", text=logic.EXAMPLE_MATRIX)  # cat, dog, bird; 55, 50, 33 cases
K_TEXTS = {"prevalence": "mean:0.5,0.3,0.2;weight:20", "rows": "diagonal:8,1"}


def _library_error(call):
    with pytest.raises(bcm.PriorError) as err:
        call()
    return str(err.value)


def test_k_class_priors_from_text_are_the_library_priors():
    D = bcm.priors.Dirichlet
    family = bayescm.family.default_family("multiclass")
    assert set(logic.K_PRIORS) == set(family.default_priors)  # the family's own names
    read = {t: logic.parse_k_prior(t, "rows", 3) for t in (
        "dirichlet:2", "Dirichlet: 1, 2, 3", "dirichlet:5,1,1;1,5,1;1,1,5", "flat", "jeffreys",
        "perks", "mean:0.6,0.3,0.1;weight:10", "mean:0.8,0.1,0.1;0.1,0.8,0.1;0.2,0.2,0.6;weight:5",
        "diagonal:8,1")}
    assert list(read.values()) == [
        D((2, 2, 2)), bcm.priors.coerce("dirichlet:1,2,3"), D([[5, 1, 1], [1, 5, 1], [1, 1, 5]]),
        D.flat(3), D.jeffreys(3), D.perks(3),
        bcm.priors.dirichlet_from_mean([0.6, 0.3, 0.1], 10),
        bcm.priors.dirichlet_from_mean([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], 5),
        D.diagonal(3, correct=8, wrong=1)]
    assert read["mean:0.6,0.3,0.1;weight:10"].elicited.startswith("dirichlet_from_mean")
    # the library's messages: the elicitation helper, the family's resolution and its
    # propriety check, the Dirichlet itself
    assert _library_error(lambda: logic.k_prior("mean:0.5,0.3,0.3;weight:9", "rows", MC)) == \
        _library_error(lambda: bcm.priors.dirichlet_from_mean([0.5, 0.3, 0.3], 9))
    for name, text, prior in [("prevalence", "dirichlet:1,2", (1, 2)),
                              ("prevalence", "diagonal:8,1", D.diagonal(3, correct=8, wrong=1)),
                              ("rows", "dirichlet:1,1;1,1", [[1, 1], [1, 1]])]:
        assert _library_error(lambda n=name, t=text: logic.k_prior(t, n, MC)) == _library_error(
            lambda n=name, p=prior: bcm.models.multiclass_rows(MC, priors={n: p}))
    empty = logic.matrix("multiclass", text="a,b; 0,0; 3,4")
    assert _library_error(lambda: logic.k_prior("dirichlet:0", "prevalence", empty)) == \
        _library_error(lambda: bcm.models.multiclass_rows(empty, priors={"prevalence": (0, 0)}))
    assert _library_error(lambda: logic.k_prior("dirichlet:-1", "rows", MC)) == \
        _library_error(lambda: D((-1, -1, -1)))
    with pytest.raises(bcm.PriorError, match="write dirichlet:c"):
        logic.k_prior("mean:0.5,0.5", "prevalence", empty)  # no weight
    with pytest.raises(bcm.PriorError, match="Cannot read the numbers"):
        logic.k_prior("dirichlet:1,x", "prevalence", empty)


_NUMBER = st.sampled_from(["0", "1", "0.5", "0.2", "0.3", "8", "-2", "1e400", "nan", " 2 "])
_ROWS = st.lists(st.lists(_NUMBER, min_size=1, max_size=4).map(",".join), max_size=4).map(";".join)


@settings(max_examples=150, derandomize=True, deadline=None, database=None)
@given(head=st.sampled_from(["dirichlet", "mean", "diagonal", "flat", "jeffreys", "perks",
                             "Dirichlet", "beta", ""]),
       rows=_ROWS, weight=st.sampled_from(["", ";weight:10", ";weight:0", ";weight:1,2"]),
       noise=st.sampled_from(["", "", "", "x", ":", ";;", "\t"]),
       name=st.sampled_from(logic.K_PRIORS))
def test_any_typed_k_class_prior_is_a_prior_or_the_library_error(head, rows, weight, noise,
                                                                 name):
    """Whatever is typed, the field gets a Dirichlet the family accepts or a PriorError
    (a user's message), never another exception (which the page would show as a bug)."""
    text = f"{head}:{rows}{weight}{noise}"
    try:
        prior = logic.k_prior(text, name, MC)
    except bcm.PriorError:
        return
    assert isinstance(prior, bcm.priors.Dirichlet) and prior.shape[-1] == MC.n_classes


def test_k_class_analysis_with_priors_is_the_library_fit_and_the_closed_form():
    priors = {r: logic.k_prior(t, r, MC) for r, t in K_TEXTS.items()}
    metrics = ["prevalence", "tpr", "f1_macro", "kappa"]
    got = logic.analyse(MC, priors=priors, metrics=metrics, seed=2)
    # the library's own fit of multiclass_rows(data, priors=...) with the same seed draws
    # the same exact posterior: equal tables, not merely close
    idata = bcm.fit(bcm.models.multiclass_rows(MC, priors=priors), sampler="exact",
                    draws=logic.DRAWS, chains=4, random_seed=2)
    pd.testing.assert_frame_equal(got.table, bcm.summary(idata, metrics=metrics))
    pd.testing.assert_frame_equal(got.deception, bcm.analysis.deception(idata))
    # and the conjugate closed form: recall_a ~ Beta(b_aa + n_aa, sum_{j != a} b_aj + n_aj),
    # mean (b_aa + n_aa) / (sum_j b_aj + n_a) with diagonal b = 8, off it 1; prevalence_a
    # ~ Beta(alpha_a + n_a, ...), mean (alpha_a + n_a) / (sum alpha + N), alpha = 20 * mean.
    # The page's mean of 4 x 5,000 i.i.d. draws has sd sqrt(m (1 - m) / (s + 1)) / sqrt(20000)
    # for a Beta of mean m and total s; 5 such sd bound the error (p ~ 6e-7).
    counts = MC.counts[0]
    alpha = np.array([10.0, 6.0, 4.0])
    n_draws = 4 * logic.DRAWS
    for a, label in enumerate(MC.labels):
        for metric, m, s in [("tpr", (8 + counts[a, a]) / (10 + counts[a].sum()),
                              10 + counts[a].sum()),
                             ("prevalence", (alpha[a] + counts[a].sum()) / (20 + counts.sum()),
                              20 + counts.sum())]:
            sd = np.sqrt(m * (1 - m) / (s + 1) / n_draws)
            shown = got.table.loc[(logic.CLASSIFIER, label, metric), "mean"]
            assert abs(shown - m) < 5 * sd, (label, metric, shown, m)
    # the prior matters here: the flat prior's recall of dog, 41/53, is 0.026 (over 70 sd)
    # from this one's 48/60
    assert abs(got.table.loc[(logic.CLASSIFIER, "dog", "tpr"), "mean"] - 41 / 53) > 0.02
    # the NetCDF download fits multiclass_rows with the same priors: the same draws
    np.testing.assert_array_equal(got.fit().posterior["rows"].values,
                                  idata.posterior["rows"].values)


def test_the_page_takes_k_class_priors_and_shows_their_errors():
    from urllib.parse import parse_qs, urlencode

    from bayescm.app import state
    from bayescm.app.pages.one_classifier import State

    page = OneClassifier()
    assert page.binary_priors.visible and not page.k_priors.visible
    page.state.param.update(kind="multiclass", metrics=["tpr", "acc"],
                            **{f"kprior_{r}": t for r, t in K_TEXTS.items()})
    assert page.k_priors.visible and not page.binary_priors.visible
    priors = {r: logic.k_prior(t, r, MC) for r, t in K_TEXTS.items()}
    idata = bcm.fit(bcm.models.multiclass_rows(MC, priors=priors), sampler="exact",
                    draws=logic.DRAWS, chains=4, random_seed=1)
    table = bcm.summary(idata, metrics=["tpr", "acc"])
    shown = _numbers(page.results.object)
    for label in MC.labels:
        want = table.loc[(logic.CLASSIFIER, label, "tpr"), "mean"]
        assert shown[f"tpr-{label}-mean"] == f"{want:.3f}"
    assert "dirichlet_from_mean" in page.prior_text.object

    page.state.kprior_rows = "dirichlet:1,2"  # two concentrations for three classes
    want = _library_error(lambda: bcm.models.multiclass_rows(MC, priors={"rows": (1, 2)}))
    assert page.notes["kprior-rows"].text == want and page.notes["kprior-prevalence"].text == ""
    assert page.analysis is None and "No results" in page.results.object
    page.state.kind = "binary"  # the K-class note goes with its fields
    assert page.notes["kprior-rows"].text == "" and page.analysis is not None

    # the fields are page state: a link's query string restores them
    query = urlencode({f"kprior_{r}": t for r, t in K_TEXTS.items()}, safe=",;")
    restored = State()
    parsed = {k: v[-1] for k, v in parse_qs(query).items()}
    assert state.restore(restored, parsed, list(parsed)) == []
    assert {r: getattr(restored, f"kprior_{r}") for r in logic.K_PRIORS} == K_TEXTS


def test_labels_from_a_link_cannot_leave_their_attribute():
    """A K-class label is the reader's text (or a shared link's): in the results and
    in the test ids it stays text (escaped), never markup."""
    from html.parser import HTMLParser

    page = OneClassifier()
    page.state.kind = "multiclass"
    page.state.matrix = 'x"><img src=x onerror=alert(1)>, b\n5, 1\n2, 7'
    assert page.analysis is not None
    tags: list[tuple[str, list]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append((tag, attrs))

    Tags().feed(page.results.object)
    assert {t for t, _ in tags} <= {"table", "tr", "th", "td", "span", "div", "style", "b",
                                    "small", "p", "i"}
    assert not any(name.startswith("on") for _, attrs in tags for name, _ in attrs)
    ids = [v for _, attrs in tags for name, v in attrs if name == "data-testid"]
    assert any(i.startswith('tpr-x"><img-src=x-onerror=alert(1)>-') for i in ids), ids


def test_an_oversized_future_test_set_is_refused_before_any_work():
    page = OneClassifier()
    page.state.pmf_pos, page.state.pmf_neg = 20_000, 20_000
    assert "400,040,001 possible confusion matrices" in page.notes["pmf"].text
    assert page.pmf_frame is None and page.analysis is not None
    page.state.pmf_pos, page.state.pmf_neg = 26, 8
    assert page.notes["pmf"].text == "" and page.pmf_frame is not None


def test_a_plan_is_withdrawn_when_the_matrix_changes():
    page = OneClassifier()
    page.state.ss_width = 0.3
    page.plan()
    assert "n-required" in page.plan_text.object and page.plan_frame is not None
    page.state.tn = 60  # the plan was for tn = 6: it no longer describes this matrix
    assert page.plan_text.object == "" and page.plan_frame is None


def test_download_buttons_with_nothing_to_serve_are_disabled():
    page = OneClassifier()  # outside a server, figures are drawn at once (layout.soon)
    by_name = {b.filename: b for b in page.downloads}
    assert by_name["sample_size.csv"].disabled  # no plan yet
    assert not any(b.disabled for n, b in by_name.items() if n != "sample_size.csv")
    page.state.ss_width = 0.3
    page.plan()
    assert not by_name["sample_size.csv"].disabled
    assert by_name["sample_size.csv"].callback().getvalue() == page.plan_frame.to_csv()
    page.state.tn = -1  # no result: nothing to download anywhere
    assert page.analysis is None and all(b.disabled for b in page.downloads)
    page.state.tn = 6
    assert not by_name["summary.csv"].disabled and by_name["sample_size.csv"].disabled


def test_the_page_shows_the_exact_cocaine_rates_as_the_cli_and_the_readme(capsys):
    """Prevalence, TPR and TNR are shown from their Beta posteriors: the same numbers as
    `bayescm summarize --json` (to the page's three decimals, whatever the draws or the
    seed) and the README's "TPR 89–100%, TNR 43–95%"."""
    import json
    import pathlib

    from bayescm import cli

    page = OneClassifier()
    shown = _numbers(page.results.object)
    assert cli.main(["summarize", *(f"--{c}={v}" for c, v in logic.EXAMPLE.items()), "--json",
                     "--metrics", "tpr,tnr", "--seed", "9"]) == 0
    out = json.loads(capsys.readouterr().out)["metrics"]
    for metric in ("tpr", "tnr"):
        for end in ("lower", "upper"):
            assert shown[f"{metric}-hdi-{end}"] == f"{out[metric][f'hdi_{end}']:.3f}"
    assert (shown["tnr-hdi-lower"], shown["tnr-hdi-upper"]) == ("0.432", "0.946")
    rows = logic.table_rows(page.analysis.table)
    assert rows.loc["tnr", "exact"] and not rows.loc["bm", "exact"]
    assert rows.loc["bm", "mcse_hdi_lower"] > 0
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    said = ", ".join(f"{m.upper()} {100 * out[m]['hdi_lower']:.0f}–"
                     f"{100 * out[m]['hdi_upper']:.0f}%" for m in ("tpr", "tnr"))
    assert said == "TPR 89–100%, TNR 43–95%" and said in readme
