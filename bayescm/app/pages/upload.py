"""The Upload page: a CSV of predictions becomes the right analysis.

The logic is :mod:`bayescm.app.upload_logic`.  The page says what the columns were read
as, shows the analysis' tables (each downloadable) and, where another page carries the
analysis on (Compare, No labels), links to it with the data's sufficient statistics in
the link.  The file is not part of the URL; the column roles are.  Grouped cases
(one or more group columns) can also be pooled: *Pool the groups* fits the hierarchical
model in a :class:`~bayescm.app.nolabels_logic.FitJob`
(:mod:`bayescm.app.groups_logic`; progress and cancel as on the No-labels page).
"""

from __future__ import annotations

import html
from typing import Any

import panel as pn

import bayescm as bcm
from bayescm.app import groups_logic
from bayescm.app import upload_logic as logic
from bayescm.app.downloads import (
    csv_download,
    figure_downloads,
    figure_pane,
    netcdf_download,
    show_figure,
)
from bayescm.app.fitjob import check_sampler
from bayescm.app.layout import columns, section, soon
from bayescm.app.nolabels_logic import warm
from bayescm.app.pages._fields import clear_errors, field, keep_in_url, notes, show_error
from bayescm.app.pages._job import JobRunner, convergence_html, sampler_widgets
from bayescm.app.pages_common import InputError, frame_html
from bayescm.app.registry import Page
from bayescm.app.state import link_query

INTRO = (
    "Upload a CSV of predictions, one row per case: <code>y_true</code> or "
    "<code>truth</code> (the true label, if known), one column per classifier, "
    "optionally <code>group</code> (metrics per "
    "group, pooled on request; several group columns: <code>sex, site</code>) and "
    "<code>population</code> (unlabelled data from populations of different "
    "prevalence). Labelled cases of one classifier give its metrics, of several a paired "
    "comparison; without labels (or with some) you get the agreement table of the "
    "No-labels page. An empty cell is a missing result.")
OPTIONS = ("truth", "group", "population", "positive", "seed")
POOL_OPTIONS = ("pooled", "measure", "threshold", "draws", "tune", "chains")
SAMPLER_FIELDS = ("draws", "tune", "chains")  # the seed is also the analysis's: not cleared here
SUMMARY_OPTIONS = ("measure", "threshold")
"""Pool options that change what is read from a fit, not the fit: a shown fit is
summarised again (:func:`~bayescm.app.groups_logic.resummarise`), not sampled again."""
POOL_INTRO = (
    "Small groups give wide intervals. The partially pooled model "
    "(<code>bcm.models.groups</code>: each group's rates drawn around a common mean) "
    "borrows strength across groups; it is fitted with NUTS (seconds to minutes). The "
    "disparity across groups (<code>bcm.analysis.disparity</code>) reports "
    "P(measure &gt; threshold) for the measure you choose: a metric's largest gap "
    "between groups (<code>tpr</code>, <code>fpr</code>, <code>ppv</code>, "
    "<code>acc</code>, ...), <code>equalized_odds</code> (the larger of the TPR and FPR "
    "gaps) or <code>demographic_parity</code> (the gap of the predicted-positive rate). "
    "Changing the measure or the threshold reads the fit again; it does not refit.")


class Upload:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(("file", *OPTIONS, *POOL_OPTIONS))
        self.state = keep_in_url(logic.UploadState(), self.notes)
        s = self.state.param
        self.file = pn.widgets.FileInput(accept=".csv,.tsv,.txt", multiple=False,
                                         css_classes=["bcm-file"])
        self.w = {
            "truth": pn.widgets.TextInput.from_param(s.truth, label="True-label column",
                                                     css_classes=["bcm-truth"]),
            "group": pn.widgets.TextInput.from_param(s.group, label="Group column",
                                                     css_classes=["bcm-group"]),
            "population": pn.widgets.TextInput.from_param(
                s.population, label="Population column", css_classes=["bcm-population"]),
            "positive": pn.widgets.TextInput.from_param(
                s.positive, label="Positive label (if not 0/1)", css_classes=["bcm-positive"]),
            "seed": pn.widgets.IntInput.from_param(s.seed, label="Seed",
                                                   css_classes=["bcm-seed"]),
            "pooled": pn.widgets.TextInput.from_param(
                s.pooled, label="Classifier to pool (default: the first)",
                css_classes=["bcm-pooled"]),
            "measure": pn.widgets.TextInput.from_param(
                s.measure, label="Disparity measure", css_classes=["bcm-measure"],
                placeholder="tpr, fpr, ..., equalized_odds, demographic_parity"),
            "threshold": pn.widgets.FloatInput.from_param(
                s.threshold, label="Gap that matters", step=0.01,
                css_classes=["bcm-threshold"]),
            **sampler_widgets(self.state),
        }
        self.found = pn.pane.HTML("<p>Choose a file.</p>", sizing_mode="stretch_width")
        self.results = pn.Column(sizing_mode="stretch_width")
        self.result: logic.UploadResult | None = None
        self.pooled: groups_logic.PooledResult | None = None
        self.pool_cm: bcm.ConfusionMatrix | None = None  # the matrix of the fit shown
        self.runner = JobRunner(self.make_job, self.show_pooled, name="pool",
                                label="Pool the groups (hierarchical model, NUTS)", width=330,
                                summarising="summarising the pooled fit and the disparity")
        self.pool_convergence = pn.pane.HTML("", sizing_mode="stretch_width")
        self.pool_heading = pn.pane.HTML("", sizing_mode="stretch_width")
        self.pool_table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.disparity_table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.pool_plot = figure_pane(name="disparity-plot")
        self.pool_figure: Any = None
        self.pool_outputs = self.pool_results()
        self.pool_section = self.pool_inputs()
        self.pool_section.visible = False  # shown for grouped cases
        # one call for both (param batches them); a new empty file changes only the name
        self.file.param.watch(self.update, ["value", "filename"])
        self.state.param.watch(self.update, list(OPTIONS))
        self.state.param.watch(self.pool_edited, [n for n in POOL_OPTIONS
                                                  if n not in SUMMARY_OPTIONS])
        self.state.param.watch(self.summary_edited, list(SUMMARY_OPTIONS))
        self.check_measure()  # a link's measure: its message before any click

    def update(self, *_events: Any) -> None:
        data = self.file.value
        if data is None:
            if not self.file.filename:
                return
            data = b""  # the browser sends an empty file as no value: say it is empty
        self.pool_edited()
        try:
            self.result = logic.analyse(logic.read_csv(data),
                                        logic.UploadState.from_params(self.state))
        except InputError as err:
            self.result = None
            show_error(self.notes, err)
            self.found.object = "<p><i>No analysis: correct the input above.</i></p>"
            self.results.objects = []
            self.pool_section.visible = False
            return
        clear_errors(self.notes)
        self.show(self.result)

    def show(self, res: logic.UploadResult) -> None:
        parts = [f'<p data-testid="upload-kind" data-kind="{res.kind}"><b>'
                 f"{html.escape(res.description)}</b></p>"]
        if res.kind == "compare":
            comp = res.detail.comparison
            parts.append(
                f"<h3>P({html.escape(res.detail.a)} better than {html.escape(res.detail.b)} "
                f'in {html.escape(comp.metric)}) = <span data-testid="p-better">'
                f"{comp.probability:.3f}</span></h3>")
        if res.kind == "agreement":
            parts.append(f'<p><b>Identifiability.</b> <span data-testid="identifiability">'
                         f"{html.escape(res.detail.identifiability)}</span></p>")
        if res.page is not None:
            query = link_query(res.query or {})  # the page reads it with state.restore
            if query is not None:
                parts.append(f'<p><a data-testid="open-page" href="./{res.page}?'
                             f'{html.escape(query)}">Open this analysis in its page</a> '
                             "(the link holds the data; share it).</p>")
            else:
                parts.append("<p>The data are too large to travel in a link; this page "
                             "shows the analysis.</p>")
        self.found.object = "".join(parts)
        items: list[Any] = []
        for name, frame in res.tables.items():
            items.append(section(name.capitalize(), pn.pane.HTML(
                frame_html(frame, name), sizing_mode="stretch_width"),
                csv_download(lambda f=frame: f, f"{name}.csv", name=name)))
        self.results.objects = items
        self.pool_section.visible = bool(res.sliced)
        if res.sliced:
            warm()  # the forkserver imports PyMC while the reader looks at the tables

    # -- pooling the groups ----------------------------------------------------------------
    def pool_edited(self, *_events: Any) -> None:
        """A pooled fit shown or running no longer matches the inputs."""
        self.runner.close()
        self.runner.progress.object = ""
        self.pooled = None
        self.pool_outputs.visible = False
        self.check_measure()

    def check_measure(self) -> None:
        """The measure's name and the sampler's options are checked as they are typed
        (the rest, which needs the data, when pooling starts)."""
        for fields, check in ((("measure",), lambda: groups_logic.measure(self.state.measure)),
                              (SAMPLER_FIELDS, lambda: check_sampler(self.state))):
            for name in fields:
                self.notes[name].clear()
            try:
                check()
            except InputError as err:
                self.notes[err.field].show(err.message)

    def summary_edited(self, *_events: Any) -> None:
        """Another measure or threshold: the fit shown is read again (no sampling); a
        fit still running is stopped (it would be summarised for the old values)."""
        if self.pooled is None or self.pool_cm is None:
            self.pool_edited()
            return
        try:
            result = groups_logic.resummarise(self.pooled, self.pool_cm,
                                              logic.UploadState.from_params(self.state))
        except InputError as err:
            show_error(self.notes, err)
            self.pool_outputs.visible = False  # the fit stays: a corrected value shows it
            return
        clear_errors(self.notes)
        self.show_pooled(result)

    def make_job(self) -> Any:
        res = self.result
        if res is None or not res.sliced:
            return None
        state = logic.UploadState.from_params(self.state)
        name = state.pooled or next(iter(res.sliced))
        try:
            if name not in res.sliced:
                raise InputError("pooled", f"No classifier {name!r} in the file: choose one "
                                           f"of {', '.join(res.sliced)}.")
            job = groups_logic.job(res.sliced[name], state)
        except InputError as err:
            show_error(self.notes, err)
            return None
        clear_errors(self.notes)
        # the runner deletes the shown fit's file when this job starts
        self.pooled, self.pool_cm = None, res.sliced[name]
        self.pool_outputs.visible = False
        return job

    def show_pooled(self, result: groups_logic.PooledResult) -> None:
        self.pooled = result
        self.pool_convergence.object = convergence_html(result.convergence, result.converged,
                                                        testid="pool-convergence")
        self.pool_heading.object = (
            f'<p data-testid="pool-measure" data-measure="{html.escape(result.measure)}">'
            f"<b>{html.escape(result.measure)}</b> involves "
            f"{html.escape(', '.join(result.pooled.index.unique('metric')))}: per group, "
            "pooled (hierarchical model) and exact (each group alone); posterior means and "
            "95% HDIs.</p>")
        self.pool_table.object = frame_html(result.pooled, "pooled")
        self.disparity_table.object = frame_html(result.disparity, "disparity", digits=3)
        self.pool_outputs.visible = True
        soon(self.draw_pooled)  # the tables reach the browser first, the figure after

    def draw_pooled(self) -> None:
        result = self.pooled
        self.pool_figure = None if result is None else groups_logic.figure(result)
        show_figure(self.pool_plot, self.pool_figure, name="disparity-plot")

    def pool_inputs(self) -> Any:
        return section("Pool the groups", pn.pane.HTML(f"<p>{POOL_INTRO}</p>",
                                                       sizing_mode="stretch_width"),
                       columns(*(self.field(n) for n in POOL_OPTIONS), min_width=130),
                       self.runner.view(), self.pool_outputs)

    def pool_results(self) -> Any:
        def get(attr: str) -> Any:
            return lambda: None if self.pooled is None else getattr(self.pooled, attr)

        return pn.Column(
            self.pool_convergence,
            self.pool_heading,
            self.pool_table,
            pn.pane.HTML("<p>Disparity: p_exceeds is P(measure &gt; threshold) (per "
                         "group: P(|difference from the rest| &gt; threshold)).</p>",
                         sizing_mode="stretch_width"),
            self.disparity_table,
            self.pool_plot,
            pn.FlexBox(*figure_downloads(lambda: self.pool_figure, "disparity",
                                         name="disparity-plot")),
            pn.FlexBox(csv_download(get("pooled"), "pooled.csv", name="pooled"),
                       csv_download(get("disparity"), "disparity.csv", name="disparity"),
                       netcdf_download(lambda: None if self.pooled is None
                                       else bcm.load(self.pooled.path), "pooled-fit.nc",
                                       name="pooled-fit")),
            sizing_mode="stretch_width", visible=False)

    def field(self, name: str) -> Any:
        return field(self.w, self.notes, name)

    def view(self) -> Any:
        inputs = section("File", self.notes["url"], self.file, self.notes["file"],
                         columns(*(self.field(n) for n in OPTIONS), min_width=150))
        return pn.Column(pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width"), inputs,
                         self.found, self.results, self.pool_section,
                         sizing_mode="stretch_width")


def build() -> Any:
    page = Upload()
    return page.view()


PAGE = Page(slug="upload", title="Upload", order=40, build=build,
            description="A CSV of predictions becomes the right analysis.")
