"""``bcm.report`` (issue 13 item 7): STARD-BLCM sections of a latent-class fit, the report of
a labelled fit, Markdown and HTML, and the HTML rendered by headless Chromium.

Numbers shown are compared with independent computations at the report's printed
precision (four significant digits, ``report_render.number``): posterior means and
HDIs with the draws themselves and ArviZ's ``az.hdi``, prior means and intervals with
SciPy's Beta, p-values with ``bcm.posterior_predictive_check``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import subprocess
import warnings
from html.parser import HTMLParser

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescm as bcm
from bayescm import idata as idata_mod
from bayescm.inference import persist
from bayescm.models import spec_of
from bayescm.report import sections as report_sections

COUNTS = {"pop1": {"++": 40, "+-": 3, "-+": 7, "--": 100},
          "pop2": {"++": 90, "+-": 8, "-+": 5, "--": 40}}
RATIONALE = "Se of A in an earlier labelled study of 200 cases"
LATENT_IDS = ["model", "priors", "prior-sensitivity", "identifiability", "convergence", "data",
              "estimates", "predictive-check", "software", "authors-items"]


@functools.cache
def latent_fit():
    se_a = dataclasses.replace(bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95),
                               rationale=RATIONALE)
    model = bcm.models.hui_walter(bcm.AgreementTable.from_counts(COUNTS),
                                  priors={"sensitivity": {"A": se_a}})
    return bcm.fit(model, draws=1000, chains=2, random_seed=3)


@functools.cache
def latent_report():
    return bcm.report(latent_fit())


@functools.cache
def dependent_fit():
    # 2 classifiers, 2 populations and one dependent pair: 6 degrees of freedom for 8
    # parameters, identified through two informative priors (status "priors")
    model = bcm.models.hui_walter(bcm.AgreementTable.from_counts(COUNTS),
                                  priors={"sensitivity": bcm.priors.Beta(60, 6)},
                                  conditional_dependence=True)
    return bcm.fit(model, draws=500, chains=2, random_seed=4)


@functools.cache
def labelled_fit():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    return bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)


def md_table(text: str, caption: str) -> pd.DataFrame:
    """The Markdown table under ``**caption**`` as strings."""
    lines = text.split(f"**{caption}**", 1)[1].strip().splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("\\|", "|") for c in line.strip("|").split(" | ")])
    return pd.DataFrame(rows[2:], columns=rows[0])


class _Tables(HTMLParser):
    """Every <table> of an HTML page: caption and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._rows, self._name = [], ""
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self._name, self._caption = "".join(self._caption).strip(), None
        elif tag == "table":
            self.tables[self._name or f"table{len(self.tables)}"] = self._rows
            self._rows = None

    def handle_data(self, data):
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)


def html_table(text: str, caption: str) -> pd.DataFrame:
    parser = _Tables()
    parser.feed(text)
    rows = parser.tables[caption]
    return pd.DataFrame(rows[1:], columns=rows[0])


def close(shown: str, value: float) -> bool:
    """``shown`` is ``value`` at four significant digits (half a unit of the last digit)."""
    return abs(float(shown) - value) <= 5e-4 * abs(value) + 1e-12


def test_latent_class_report_has_every_stard_blcm_section():
    rep = latent_report()
    assert [s[0] for s in rep.sections] == LATENT_IDS
    status = {i: st for i, _, st in rep.sections}
    assert status == {**dict.fromkeys(LATENT_IDS, "filled"), "prior-sensitivity": "missing",
                      "authors-items": "missing"}
    missing = dict(rep.missing)
    # one prior has a rationale; the five others are listed, and nothing is invented
    assert "sensitivity[A]" not in missing["priors"]
    assert "sensitivity[B], specificity[A], specificity[B], prevalence[pop1]" in missing["priors"]
    assert "bcm.analysis.prior_sensitivity" in missing["prior-sensitivity"]
    assert sum(i == "authors-items" for i, _ in rep.missing) == len(
        report_sections.STARD_BLCM_ITEMS)
    md = rep.markdown()
    assert "conditionally independent given the true class" in md
    assert "Se_t + Sp_t > 1" in md and "missing at random" not in md


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_latent_estimates_are_the_posterior_and_arviz_hdi(fmt):
    idata = latent_fit()
    rep = latent_report()
    caption = "Estimates with 95% HDI"
    shown = (md_table(rep.markdown(), caption) if fmt == "markdown"
             else html_table(rep.html(), caption))
    post = idata.posterior
    expected = {("sensitivity", c): post["sensitivity"].sel(classifier=c) for c in "AB"}
    expected |= {("specificity", c): post["specificity"].sel(classifier=c) for c in "AB"}
    expected |= {("prevalence", p): post["prevalence"].sel(population=p) for p in COUNTS}
    assert len(shown) == len(expected)
    table = bcm.summary(idata, metrics=["tpr", "tnr", "prevalence"])
    for _, row in shown.iterrows():
        draws = expected[(row["parameter"], row["unit"])]
        lo, hi = az.hdi(draws, hdi_prob=0.95)[draws.name].values
        assert close(row["mean"], float(draws.mean()))
        assert close(row["median"], float(draws.median()))
        assert close(row["hdi_lower"], lo) and close(row["hdi_upper"], hi)
        metric = {"sensitivity": "tpr", "specificity": "tnr"}.get(row["parameter"],
                                                                  "prevalence")
        key = (("pop1", row["unit"], metric) if metric != "prevalence"
               else (row["unit"], "A", metric))
        assert close(row["sd"], table.loc[key, "sd"])


def test_dependent_pairs_covariances_and_identifiability_through_priors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # identified through priors: said below
        idata = dependent_fit()
    rep = bcm.report(idata)
    md = rep.markdown()
    assert "Conditional dependence between A and B" in md
    frame = report_sections.estimate_frame(report_sections.Context(idata, hdi_prob=0.9))
    for name in ("cov_se", "cov_sp"):
        draws = idata.posterior[name].sel(pair="A~B")
        lo, hi = az.hdi(draws, hdi_prob=0.9)[name].values
        row = frame.loc[(name, "A~B")]
        assert row["mean"] == pytest.approx(float(draws.mean()), rel=1e-12)
        assert (row["hdi_lower"], row["hdi_upper"]) == pytest.approx((lo, hi), rel=1e-12)
    assert "| 6 | 8 | priors: identified only through informative priors |" in md


def test_priors_table_shows_the_stated_and_the_truncated_prior():
    idata = latent_fit()
    shown = md_table(latent_report().markdown(), "Priors used (mean and central 95% interval "
                     "of each distribution as stated; the prior draws show it as the model "
                     "used it, e.g. after a truncation)").set_index(["parameter", "unit"])
    se_a = shown.loc[("sensitivity", "A")]
    assert se_a["elicited from"] == "elicit_beta(mode=0.9, lower=0.8, prob=0.95)"
    assert se_a["rationale"] == RATIONALE
    a, b = (float(x) for x in re.findall(r"[\d.]+", se_a["prior"]))
    assert close(se_a["mean"], a / (a + b))
    lo, hi = re.findall(r"[\d.]+", se_a["95% interval"])
    assert close(lo, stats.beta(a, b).ppf(0.025)) and close(hi, stats.beta(a, b).ppf(0.975))
    # flat Se and Sp truncated to Se + Sp > 1: the marginal density of Se is 2 Se
    # (Sp ranges over an interval of length Se), Beta(2, 1) with mean 2/3 and sd
    # 1/sqrt(18); the prior draws are i.i.d., so 4 standard errors bound their mean
    n = idata.prior.sizes["chain"] * idata.prior.sizes["draw"]
    mean_b = float(shown.loc[("sensitivity", "B"), "prior draws: mean [95%]"].split()[0])
    assert abs(mean_b - 2 / 3) < 4 / np.sqrt(18 * n)
    assert shown.loc[("prevalence", "pop1"), "rationale"] == "not recorded"


def test_data_tables_and_predictive_check_are_the_fits():
    idata = latent_fit()
    md = latent_report().markdown()
    counts = md_table(md, "All results present").set_index("population")
    for pop, cells in COUNTS.items():
        assert [int(counts.loc[pop, p]) for p in cells] == list(cells.values())
        assert int(counts.loc[pop, "n"]) == sum(cells.values())
    ppc = md_table(md, "Posterior predictive check").set_index("population")
    check = bcm.posterior_predictive_check(idata)
    for unit in ("pop1", "pop2", "all"):
        assert close(ppc.loc[unit, "p_value"], check.loc[unit, "p_value"])
    assert "saturated" in md  # 6 parameters for 6 degrees of freedom
    assert "? no result" not in md and "|D+" not in md  # neither occurs in these data


def test_missing_results_and_verified_cases_are_grouped():
    # a real fit of a table with missing results and verified cases
    names = ["++", "+-", "-+", "--", "+?", "-?", "?+", "?-", "++|D+", "+-|D+", "-+|D+",
             "--|D+", "++|D-", "+-|D-", "-+|D-", "--|D-"]
    values = np.array([[40, 3, 7, 100, 5, 0, 0, 2, 9, 0, 0, 0, 0, 0, 0, 11],
                       [90, 8, 5, 40, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 3]])
    tab = bcm.AgreementTable(values, patterns=names, populations=["pop1", "pop2"])
    idata = bcm.fit(bcm.models.hui_walter(tab), draws=1000, chains=2, random_seed=3)
    ctx = report_sections.Context(idata, hdi_prob=0.95)
    assert ctx.patterns == {"complete": names[:4], "missing": names[4:8],
                            "verified": names[8:]}
    section = report_sections.data(ctx)
    tables = {b.caption: b.frame for b in section.blocks if hasattr(b, "frame")}
    assert list(tables["With missing results"]["n"]) == ["7", "1"]
    assert list(tables["Verified cases (true class known)"]["n"]) == ["20", "7"]
    text = " ".join(b.text for b in report_sections.model(ctx).blocks)
    assert "missing at random" in text and "partial verification" in text
    legend = section.blocks[0].text
    assert "? no result" in legend and "'|D+' / '|D-'" in legend


def test_what_a_fit_does_not_hold_is_listed_never_invented():
    # draws and data only, as from another program: no model record, no replicated
    # data, no versions, no seed
    fit = latent_fit()
    bare = idata_mod.make({"posterior": fit.posterior[["sensitivity", "specificity",
                                                       "prevalence", "pattern_prob"]],
                           "observed_data": fit.observed_data})
    rep = bcm.report(bare)
    status = {i: st for i, _, st in rep.sections}
    assert status == {"model": "missing", "priors": "missing", "prior-sensitivity": "missing",
                      "identifiability": "missing", "convergence": "filled", "data": "filled",
                      "estimates": "filled", "predictive-check": "missing",
                      "software": "missing", "authors-items": "missing"}
    missing = dict(rep.missing)
    assert missing["software"].startswith("Not recorded in the fit: the authors must report")
    assert any("random seed" in text for _, text in rep.missing)
    md = rep.markdown()
    assert "Random seed:" not in md and "Hui–Walter" not in md


def test_prior_sensitivity_from_a_result_or_a_frame():
    index = pd.MultiIndex.from_tuples([("flat", "sensitivity", "A"), ("flat", "prevalence",
                                                                     "pop1")],
                                      names=["alternative", "parameter", "unit"])
    frame = pd.DataFrame({"mean": [0.91, 0.3], "sd": [0.03, 0.04], "hdi_low": [0.85, 0.22],
                          "hdi_high": [0.96, 0.38], "shift": [-0.7, 0.1],
                          "width_ratio": [1.4, 1.01]}, index=index)

    class Result:
        def to_frame(self):
            return frame

    for given in (frame, Result()):
        rep = bcm.report(latent_fit(), sensitivity=given)
        assert dict((i, st) for i, _, st in rep.sections)["prior-sensitivity"] == "filled"
        shown = md_table(rep.markdown(), "Posterior under alternative priors")
        assert list(shown["shift"]) == ["-0.7", "0.1"]
        assert "Largest shift: -0.7 (flat, sensitivity, A)." in rep.markdown()
    with pytest.raises(TypeError, match="prior_sensitivity"):
        bcm.report(latent_fit(), sensitivity=[1, 2])


def test_prior_sensitivity_result_of_the_analysis():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    model = bcm.models.three_beta(cm, priors={"tpr": bcm.priors.Beta(20, 4)})
    result = bcm.analysis.prior_sensitivity(model, sampler="exact", random_seed=1)
    rep = bcm.report(result.fits["baseline"], sensitivity=result)
    md = rep.markdown()
    shown = md_table(md, "Posterior under alternative priors").set_index(
        ["alternative", "parameter", "unit"])
    table = result.to_frame()
    assert len(shown) == len(table)
    for key, row in table.iterrows():
        for col in ("mean", "hdi_lower", "hdi_upper", "shift", "width_ratio"):
            assert close(shown.loc[key, col], row[col]), (key, col)
        assert shown.loc[key, "prior"] == row["prior"]
    assert list(md_table(md, "Alternatives")["alternative"]) == list(result.alternatives.index)
    assert "Posterior mean and HDI under each alternative" in md  # the result's own plot


def test_labelled_fit_reports_summary_without_latent_class_items(tmp_path):
    idata = labelled_fit()
    rep = bcm.report(idata, tmp_path / "r.md", title="Cocaine test", notes="Pilot study.")
    ids = [s[0] for s in rep.sections]
    assert ids == ["model", "priors", "prior-sensitivity", "convergence", "data", "estimates",
                   "predictive-check", "software"]
    text = (tmp_path / "r.md").read_text()
    assert text.startswith("# Cocaine test\n\nPilot study.")
    shown = md_table(text, "Estimates with 95% HDI").set_index(["classifier", "metric"])
    table = bcm.summary(idata)
    assert len(shown) == len(table)
    for key, row in table.iterrows():
        for col in ("mean", "hdi_lower", "hdi_upper", "plug_in"):
            if np.isfinite(row[col]):
                assert close(shown.loc[key, col], row[col]), (key, col)
    # tpr | 26 of 26 positives, flat prior: Beta(27, 1) exactly (mean 27/28); 4,000 i.i.d.
    # draws, sd 0.035: the posterior mean is within 4 standard errors (0.0022)
    assert abs(float(shown.loc[("cm", "tpr"), "mean"]) - 27 / 28) < 4 * 0.035 / np.sqrt(4000)
    assert "Random seed: 1." in text
    assert "θ_tp = TPR φ" in text and "prevalence φ ~ Beta" in text


def test_multiclass_fit_reports_its_tables_and_what_the_check_does_not_cover():
    counts = [[5, 1, 0], [2, 7, 1], [0, 3, 9]]
    mc = bcm.MulticlassConfusionMatrix(counts, labels=["cat", "dog", "bird"])
    rep = bcm.report(bcm.fit(bcm.models.multiclass_cells(mc), sampler="exact",
                             random_seed=1))
    status = {i: st for i, _, st in rep.sections}
    assert status["data"] == status["estimates"] == "filled"
    assert status["predictive-check"] == "missing"
    assert "one table of cells per unit" in dict(rep.missing)["predictive-check"]
    shown = md_table(rep.markdown(), "classifier cm: rows actual, columns predicted")
    assert shown.drop(columns="actual").astype(int).values.tolist() == counts


def test_formats_files_and_self_contained_html(tmp_path):
    idata = labelled_fit()
    assert not list(tmp_path.iterdir()) and bcm.report(idata) is not None
    assert not list(tmp_path.iterdir())  # path=None writes nothing
    html_text = bcm.report(idata, tmp_path / "r.html").html()
    assert (tmp_path / "r.html").read_text() == html_text
    assert bcm.report(idata, tmp_path / "r.txt", format="markdown").markdown() == (
        tmp_path / "r.txt").read_text()
    assert html_text.startswith("<!DOCTYPE html>") and "name='viewport'" in html_text
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", html_text)
    assert "http://" not in html_text and "https://" not in html_text
    assert html_text.count("src='data:image/png;base64,") == 2
    fragment = bcm.report(idata)._repr_html_()
    assert fragment.startswith("<div class='bcm-report'>") and "<html" not in fragment
    with pytest.raises(ValueError, match="format must be one of"):
        bcm.report(idata, format="pdf")


def test_rationale_round_trips_through_save_and_load(tmp_path):
    prior = bcm.priors.Beta(20, 4, rationale="earlier study")
    assert prior == bcm.priors.Beta(20, 4) and "rationale" not in repr(prior)
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    idata = bcm.fit(bcm.models.three_beta(cm, priors={"tpr": prior}), sampler="exact",
                    draws=2000, random_seed=1)
    back = bcm.load(bcm.save(idata, tmp_path / "fit.nc"))
    _, _, priors = persist.read_spec(back)
    assert priors["tpr"]["cm"].rationale == "earlier study"
    assert priors["tnr"]["cm"].rationale is None
    assert "rationale" not in json.loads(back.attrs["model_spec"])["priors"]["tnr"]["cm"]
    # the report of a loaded fit shows the rationale and the versions saved with the fit
    md = bcm.report(back).markdown()
    assert "| tpr | cm | Beta(20, 4) |" in md and "| earlier study |" in md
    assert f"| arviz | {az.__version__} | recorded in the fit |" in md
    rebuilt = spec_of(bcm.rebuild(back)).priors["tpr"][0]
    assert rebuilt == prior and rebuilt.rationale == "earlier study"
    # a K×K row prior is matched to the data's labels: a new object, same rationale
    diagonal = dataclasses.replace(bcm.priors.Dirichlet.diagonal(["b", "a"], correct=4, wrong=1),
                                   rationale="pilot study")
    mc = bcm.MulticlassConfusionMatrix([[5, 1], [2, 7]], labels=["a", "b"])
    used = spec_of(bcm.models.multiclass_rows(mc, priors={"rows": diagonal})).priors["rows"]
    assert [p.rationale for p in used] == ["pilot study"]
    rows = bcm.priors.Dirichlet((2, 1, 1, 1), rationale="pilot")
    dm = bcm.fit(bcm.models.dirichlet_multinomial(cm, priors={"theta": rows}),
                 sampler="exact", draws=2000, random_seed=1)
    _, _, priors = persist.read_spec(bcm.load(bcm.save(dm, tmp_path / "dm.nc")))
    assert priors["theta"]["cm"].rationale == "pilot"


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


@pytest.mark.engine("chromium")
def test_report_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    rep = latent_report()
    page = rep.save(tmp_path / "report.html")
    shot = tmp_path / "report.png"
    base = ["chromium", *CHROMIUM_FLAGS]
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=60)
    out = run([*base, f"--user-data-dir={tmp_path / 'profile1'}", f"--screenshot={shot}",
               "--window-size=1200,4000", page.resolve().as_uri()])
    assert out.returncode == 0, out.stderr[-2000:]
    with Image.open(shot) as im:
        assert im.size == (1200, 4000)
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 100  # text, tables and plots, not blank
    dom = run([*base, f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom",
               page.resolve().as_uri()])
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section_id, title, _ in rep.sections:
        assert re.search(rf"<h2 id=\"{section_id}\">\d+\. {re.escape(title)}", dom.stdout)
    assert dom.stdout.count("<img src=\"data:image/png;base64,") == 2


# -- sliced fits (issue 14): slices, not classifiers ---------------------------------------
def sliced_matrix(classifier=None):
    """Two factors whose combination (M, b) has no case: an empty slice, kept."""
    rng = np.random.default_rng(5)
    n = 240
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    sex = rng.choice(["F", "M"], n)
    site = np.where(sex == "M", "a", rng.choice(["a", "b"], n))
    return bcm.ConfusionMatrix.from_predictions(y, p, groups={"sex": sex, "site": site},
                                                classifier=classifier)


def _slice_rows(shown, cm):
    """The report's slice table against the matrix itself (levels, counts, empty flags)."""
    levels = cm.slices
    assert list(shown.columns) == [*levels.columns, "tp", "fn", "fp", "tn", "n", "empty"]
    assert shown[list(levels.columns)].values.tolist() == levels.astype(str).values.tolist()
    assert shown[["tp", "fn", "fp", "tn"]].astype(int).values.tolist() == cm.counts.tolist()
    assert shown["n"].astype(int).tolist() == cm.n.tolist()
    assert shown["empty"].tolist() == ["yes" if e else "no" for e in cm.empty]


def test_sliced_report_shows_the_slices_their_levels_and_the_empty_one():
    cm = sliced_matrix("model A")
    assert cm.empty.tolist() == [False, False, False, True]  # (M, b) has no case
    rep = bcm.report(bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=2))
    md, page = rep.markdown(), rep.html()
    caption = "Slices: levels, observed counts, cases and empty slices"
    _slice_rows(md_table(md, caption), cm)
    _slice_rows(html_table(page, caption), cm)
    assert "by sex × site" in md and "classifier 'model A'" in md
    assert "1 slice(s) have no cases and are kept, flagged 'empty' below: sex=M|site=b" in md
    assert "Units: 4 slices of classifier 'model A' (dim 'slice'; 1 empty)" in md
    # every other mention of a classifier would call a slice one
    assert md.count("classifier") == md.count("classifier 'model A'")
    # the estimates are bcm.summary's, per slice
    shown = md_table(md, "Estimates with 95% HDI")
    assert list(shown.columns[:2]) == ["slice", "metric"]
    assert set(shown["slice"]) == set(cm.classifiers)


def test_sliced_groups_report_speaks_of_slices_only():
    cm = sliced_matrix()
    with warnings.catch_warnings():
        # a short run (the report's wording is tested here, not the sampler's convergence)
        warnings.simplefilter("ignore", bcm.ConvergenceWarning)
        idata = bcm.fit(bcm.models.groups(cm), draws=200, tune=300, chains=2, random_seed=3)
    rep = bcm.report(idata)
    md = rep.markdown()
    assert "classifier" not in md.lower() and "classifier" not in rep.html().lower()
    _slice_rows(md_table(md, "Slices: levels, observed counts, cases and empty slices"), cm)
    assert "Empty slices (sex=M|site=b) have no cases" in md
    # the predictive check's table is per slice, the empty one included
    assert list(md_table(md, "Posterior predictive check")["slice"])[:4] == list(cm.classifiers)
