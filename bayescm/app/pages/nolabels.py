"""The No-labels page: Se, Sp and prevalence from how classifiers agree, or (ratings
mode) each rater's confusion matrix and each item's class from many raters' K-class
labels.

The logic is :mod:`bayescm.app.nolabels_logic` (agreement tables, Hui–Walter) and
:mod:`bayescm.app.raters_logic` (ratings, Dawid–Skene).  Every edit re-reads the inputs and
re-judges identifiability at once (no sampling); *Fit* starts a
:class:`~bayescm.app.nolabels_logic.FitJob` whose stage is polled four times a second,
and *Cancel* stops it (:class:`~bayescm.app.pages._job.JobRunner`).  A link to a
fitted page (``fitted=1`` in the URL) fits again when opened.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import panel as pn

import bayescm as bcm
from bayescm.app import nolabels_logic as logic
from bayescm.app import raters_logic
from bayescm.app.downloads import (
    csv_download,
    figure_downloads,
    figure_pane,
    netcdf_download,
    show_figure,
)
from bayescm.app.layout import columns, section, soon
from bayescm.app.pages._fields import (
    MAX_TEXT,
    clear_errors,
    field,
    keep_in_url,
    notes,
    show_error,
)
from bayescm.app.pages._job import JobRunner, convergence_html, sampler_widgets
from bayescm.app.pages_common import InputError, frame_html
from bayescm.app.registry import Page

INTRO = (
    "How good are classifiers when nobody knows the truth? From how two or more "
    "classifiers agree in one or more populations, the Hui–Walter latent-class model "
    "estimates each one's sensitivity and specificity and each population's prevalence. "
    "Cells: <code>++</code>, <code>+-</code>, ... (first classifier first); <code>?</code> "
    "for a missing result (<code>+?</code>); <code>|D+</code> / <code>|D-</code> for a "
    "case whose class is known (<code>+-|D+</code>).")
PRIOR_HELP = ("One per line: <code>sensitivity A: beta(20, 4)</code>, "
              "<code>specificity: beta(2, 1)</code> (all classifiers), "
              "<code>prevalence site1: beta(1, 3)</code>; or elicited: "
              "<code>elicit:mode,lower,prob</code> (P(X &gt; lower) = prob), "
              "<code>pert:min,mode,max</code>. Default Beta(1, 1).")
RATINGS_INTRO = (
    "Many raters, K classes: one row per item and one column per rater "
    "(<code>item, A, B, C</code>; an empty cell where a rater gave no rating), or one row "
    "per rating (<code>item, rater, rating</code>); an optional <code>gold</code> column "
    "holds an item's known class. The Dawid–Skene model estimates each rater's confusion "
    "matrix (accuracy, recall and precision per class), the class prevalence and each "
    "item's class.")
RATINGS_PRIOR_HELP = ("One per line: <code>prevalence: dirichlet:3</code>, "
                      "<code>confusion: diagonal:8,1</code> (every rater's rows: 8 on the "
                      "diagonal, 1 off it), <code>confusion A: diagonal:20,1</code> (rater "
                      "A's). Default: Dirichlet(2/K) prevalence, rows 2 on the diagonal, 1 "
                      "off it.")
MODES = {"Agreement table (binary)": "agreement", "Ratings (K classes)": "ratings"}
INPUTS = ("mode", "table", "ratings", "priors", "dependence", "draws", "tune", "chains", "seed",
          "hdi_prob")
VERDICT_COLORS = {"data": "#1a7f37", "priors": "#9a6700", "none": "#cf222e"}


class NoLabels:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(INPUTS)
        self.state = keep_in_url(logic.NoLabelsState(), self.notes,
                                 choices={"mode": tuple(MODES.values())})
        self.built: logic.Built | raters_logic.Built | None = None
        self.result: logic.NoLabelsResult | raters_logic.RatersResult | None = None
        self.figure: Any = None
        s = self.state.param
        self.w = {
            "mode": pn.widgets.RadioButtonGroup.from_param(
                s.mode, options=MODES, css_classes=["bcm-mode"], sizing_mode="fixed",
                width=380),
            "ratings": pn.widgets.TextAreaInput.from_param(
                s.ratings, label="Ratings: item, then one column per rater (or item, rater, "
                "rating), optionally gold", height=160, css_classes=["bcm-ratings"],
                max_length=MAX_TEXT),
            "table": pn.widgets.TextAreaInput.from_param(
                s.table, label="Agreement table: population, then one column per cell",
                height=110, css_classes=["bcm-table"], max_length=MAX_TEXT),
            "priors": pn.widgets.TextAreaInput.from_param(
                s.priors, label="Priors", height=80, css_classes=["bcm-priors"],
                placeholder="sensitivity A: beta(20, 4)"),
            "dependence": pn.widgets.TextInput.from_param(
                s.dependence, label="Conditionally dependent pairs", placeholder="A~B (or all)",
                css_classes=["bcm-dependence"]),
            **sampler_widgets(self.state),
            "seed": pn.widgets.IntInput.from_param(s.seed, label="Seed",
                                                   css_classes=["bcm-seed"]),
            "hdi_prob": pn.widgets.FloatInput.from_param(s.hdi_prob, label="HDI mass",
                                                         step=0.01, css_classes=["bcm-hdi"]),
        }
        self.verdict = pn.pane.HTML("", sizing_mode="stretch_width")
        self.runner = JobRunner(self.make_job, self.show_result,
                                summarising="checking convergence and the predictive check")
        self.convergence = pn.pane.HTML("", sizing_mode="stretch_width")
        self.table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.check = pn.pane.HTML("", sizing_mode="stretch_width")
        self.plot = figure_pane(name="posterior-plot")
        self.prevalence = pn.pane.HTML("", sizing_mode="stretch_width")
        self.raters = pn.pane.HTML("", sizing_mode="stretch_width")
        self.items = pn.pane.HTML("", sizing_mode="stretch_width")
        self.ratings_plot = figure_pane(name="raters-plot")
        self.state.param.watch(self.edited, list(INPUTS))

    # -- before sampling -------------------------------------------------------------------
    def edited(self, *_events: Any) -> None:
        """Re-read and re-judge; a previous fit no longer matches the inputs."""
        self.runner.cancel()
        self.runner.progress.object = ""
        self.result = None
        self.outputs.visible = False
        self.state.fitted = False
        self.show_mode()
        state = logic.NoLabelsState.from_params(self.state)
        try:
            self.built = (raters_logic.build_ratings(state) if state.mode == "ratings"
                          else logic.build(state))
        except InputError as err:
            self.built = None
            show_error(self.notes, err)
            self.verdict.object = ""
            self.runner.set_ready(False)
            return
        clear_errors(self.notes)
        b = self.built
        self.verdict.object = (
            f'<p style="color:{VERDICT_COLORS[b.identified]}"><b>Identifiability '
            f'(<span data-testid="identified">{b.identified}</span>).</b> '
            f'<span data-testid="identifiability">{html.escape(b.identifiability)}</span></p>'
            # priors mostly where Se + Sp < 1 are cut: said as plainly as the verdict
            + "".join(f'<p style="color:{VERDICT_COLORS["priors"]}"><b>Priors cut.</b> '
                      f'<span data-testid="prior-truncation">{html.escape(note)}</span></p>'
                      for note in getattr(b, "truncation", ())))
        self.runner.set_ready(True)

    # -- sampling ----------------------------------------------------------------------------
    def show_mode(self) -> None:
        """The agreement table's fields or the ratings', as the mode asks."""
        ratings = self.state.mode == "ratings"
        for name in ("table", "dependence"):
            self.w[name].visible = not ratings
        self.w["ratings"].visible = ratings
        self.w["priors"].placeholder = ("confusion: diagonal:8,1" if ratings
                                        else "sensitivity A: beta(20, 4)")
        if hasattr(self, "help"):
            self.help.object = (f"<p>{RATINGS_INTRO}</p>" if ratings else f"<p>{INTRO}</p>")
            self.prior_help.object = (f"<small>{RATINGS_PRIOR_HELP}</small>" if ratings
                                      else f"<small>{PRIOR_HELP}</small>")

    def make_job(self) -> Any:
        if self.built is None:
            return None
        state = logic.NoLabelsState.from_params(self.state)
        if state.mode == "ratings":
            return raters_logic.fit_job(state)
        return logic.FitJob(state)

    def show_result(self, result: Any) -> None:
        self.result = result
        self.show()
        self.state.fitted = True

    # -- results -------------------------------------------------------------------------------
    def show(self) -> None:
        res = self.result
        if res is None:
            return
        self.convergence.object = convergence_html(res.convergence, res.converged)
        rated = isinstance(res, raters_logic.RatersResult)
        self.agreement_out.visible, self.ratings_out.visible = not rated, rated
        if rated:
            self.prevalence.object = frame_html(res.prevalence, "prevalence")
            self.raters.object = frame_html(res.summary, "raters")
            self.items.object = frame_html(res.items, "items", digits=3)
        else:
            self.table.object = frame_html(res.summary.set_index(["parameter", "unit"]),
                                           "posterior")
            self.check.object = frame_html(res.check, "check", digits=3)
        self.outputs.visible = True
        self.figure = res.figure()
        pane, name = ((self.ratings_plot, "raters-plot") if rated
                      else (self.plot, "posterior-plot"))
        soon(lambda: show_figure(pane, self.figure, name=name))

    def view(self) -> Any:
        def get(attr: str) -> Any:
            return lambda: None if self.result is None else getattr(self.result, attr)

        def fit_file() -> Any:
            return None if self.result is None else bcm.load(self.result.path)

        self.ratings_out = pn.Column(
            section("Class prevalence", self.prevalence,
                    csv_download(get("prevalence"), "prevalence.csv", name="prevalence")),
            section("Each rater's accuracy, recall and precision", self.raters,
                    self.ratings_plot,
                    pn.FlexBox(csv_download(get("summary"), "raters.csv", name="raters"),
                               *figure_downloads(lambda: self.figure if self.result else None,
                                                 "raters", name="raters-plot"))),
            section("Each item's most probable class", self.items,
                    csv_download(get("items"), "items.csv", name="items"),
                    netcdf_download(fit_file, "fit.nc", name="ratings-fit")),
            sizing_mode="stretch_width", visible=False)
        self.agreement_out = pn.Column(
            section("Sensitivity, specificity and prevalence", self.table, self.plot,
                    pn.FlexBox(csv_download(get("summary"), "posterior.csv", name="posterior"),
                           *figure_downloads(lambda: self.figure if self.result else None,
                                            "posterior", name="posterior-plot"),
                           netcdf_download(fit_file, "fit.nc", name="fit"))),
            section("Posterior predictive check", pn.pane.HTML(
                "<p>Bayesian p-values of the chi-square discrepancy: near 0 the model cannot "
                "reproduce the table (e.g. a dependence left out); a saturated model always "
                "fits.</p>", sizing_mode="stretch_width"), self.check,
                csv_download(get("check"), "check.csv", name="check")),
            sizing_mode="stretch_width")
        self.outputs = pn.Column(
            section("Convergence", self.convergence), self.agreement_out, self.ratings_out,
            sizing_mode="stretch_width", visible=False)

        f = functools.partial(field, self.w, self.notes)
        self.help = pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width")
        self.prior_help = pn.pane.HTML(f"<small>{PRIOR_HELP}</small>",
                                       sizing_mode="stretch_width")
        self.show_mode()
        inputs = section(
            "Data", self.notes["url"], f("mode"), f("table"), f("ratings"),
            self.prior_help, f("priors"), f("dependence"),
            columns(*(f(n) for n in ("draws", "tune", "chains")), min_width=120),
            columns(f("seed"), f("hdi_prob"), min_width=160))
        return pn.Column(self.help, inputs,
                         self.verdict, self.runner.view(), self.outputs,
                         sizing_mode="stretch_width")


def build() -> Any:
    logic.warm()
    page = NoLabels()
    linked = page.state.fitted  # opened from a link to a fitted page: fit again
    layout = page.view()
    page.edited()
    if linked and page.built is not None:
        pn.state.onload(page.runner.start)
    return layout


PAGE = Page(slug="nolabels", title="No labels", order=30, build=build,
            description="Sensitivity, specificity and prevalence from agreement, without "
                        "labels (Hui–Walter).")
