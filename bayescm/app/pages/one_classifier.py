"""The One-classifier page: a confusion matrix in, honest uncertainty out.

Opens with Tötsch & Hoffmann's cocaine-purity classifier filled in (tp=26, fn=0,
fp=2, tn=6): its TNR, reported as 75%, has a 95% HDI of about 0.43-0.95.  Every edit
recomputes the exact posterior (:mod:`bayescm.app.one_classifier_logic`); the
sample-size plan, a simulation of about a second, runs when asked.

Priors are typed as text, each field's errors under it: for a binary matrix the
three Betas of the three-Beta model (``beta:a,b``, ``elicit:...``, ``pert:...``); for
a K-class matrix the class-prevalence Dirichlet and the row Dirichlet of
``multiclass_rows`` (``dirichlet:1``, ``dirichlet:a1,...,aK``, ``flat``/``jeffreys``/
``perks``, ``mean:m1,...,mK;weight:w``, and for the rows a K×K ``dirichlet:row1;...``
or ``diagonal:correct,wrong``).  Only the fields of the matrix's kind are shown; all
are kept in the URL.
"""

from __future__ import annotations

import html
from typing import Any

import panel as pn
import param

from bayescm import metrics as registry
from bayescm.app import one_classifier_logic as logic
from bayescm.app.downloads import (
    csv_download,
    figure_downloads,
    figure_pane,
    netcdf_download,
    new_figure,
    refresh_downloads,
    show_figure,
)
from bayescm.app.errors import ErrorNote
from bayescm.app.layout import columns, section, soon
from bayescm.app.pages._fields import url_note
from bayescm.app.pages_common import data_testid
from bayescm.app.registry import Page
from bayescm.app.state import sync_url
from bayescm.priors.elicitation import describe

BINARY_METRICS = registry.registry_for(logic.matrix("binary", **logic.EXAMPLE)).names()
MULTI_METRICS = registry.registry_for(logic.matrix("multiclass", text=logic.EXAMPLE_MATRIX)
                                      ).names()
PRIOR_HELP = ("Three-Beta model (Tötsch): beta:a,b &middot; elicit:mode,lower,prob "
              "(P(rate &gt; lower) = prob) &middot; elicit_upper:mode,upper,prob &middot; "
              "pert:min,mode,max")
K_PRIOR_HELP = (
    "multiclass_rows: class prevalence ~ Dirichlet; each actual class's row of "
    "predicted-class probabilities ~ Dirichlet (numbers in the matrix's class order). "
    "Blank: the default, Dirichlet(2/K) per cell (two pseudo-cases, as Beta(1, 1)) "
    "&middot; dirichlet:c (all c; 1 is flat) &middot; dirichlet:a1,...,aK &middot; flat, jeffreys, "
    "perks &middot; mean:m1,...,mK;weight:w (expected proportions worth w cases). Rows "
    "also: dirichlet:row1;...;rowK &middot; mean:row1;...;rowK;weight:w &middot; "
    "diagonal:correct,wrong (each recall a priori Beta(correct, (K−1)·wrong))")
K_PRIOR_LABELS = {"prevalence": "class prevalence prior (Dirichlet)",
                  "rows": "row prior (predicted class | actual class)"}


class State(param.Parameterized):
    """Everything a reader can change; all of it is kept in the URL."""

    kind = param.Selector(default="binary", objects=["binary", "multiclass"])
    tp = param.Integer(logic.EXAMPLE["tp"])
    fn = param.Integer(logic.EXAMPLE["fn"])
    fp = param.Integer(logic.EXAMPLE["fp"])
    tn = param.Integer(logic.EXAMPLE["tn"])
    matrix = param.String(logic.EXAMPLE_MATRIX)
    metrics = param.List(list(logic.DEFAULT_METRICS))
    hdi = param.Number(0.95)  # no bounds here: the library checks it and says why
    density = param.String("tnr")
    prior_prevalence = param.String("beta:1,1")
    prior_tpr = param.String("beta:1,1")
    prior_tnr = param.String("beta:1,1")
    kprior_prevalence = param.String("")  # blank: the family's default, Dirichlet(2/K)
    kprior_rows = param.String("")
    pmf_metric = param.String("acc")
    pmf_pos = param.Integer(logic.EXAMPLE["tp"] + logic.EXAMPLE["fn"])
    pmf_neg = param.Integer(logic.EXAMPLE["fp"] + logic.EXAMPLE["tn"])
    ss_metric = param.String("tnr")
    ss_width = param.Number(0.2)
    seed = param.Integer(1, bounds=(0, 2**32 - 1))  # NumPy's seeds; a link's -1 is refused


def _fmt(x: float) -> str:
    return "–" if x != x else f"{x:.3f}"  # NaN: undefined


def results_html(rows: Any, hdi_prob: float) -> str:
    """The summary table as HTML; each number has ``data-testid="<metric>-<column>"``."""
    head = ("<tr><th>metric</th><th>mean</th>"
            f"<th>{hdi_prob:.0%} HDI</th><th title='metric uncertainty: the HDI width'>"
            "width</th><th class='obs' title='plug-in value of the observed counts'>"
            "observed</th></tr>")
    body = []
    for key, r in rows.iterrows():
        def cell(col: str, r=r, key=key) -> str:
            return f'<span data-testid="{data_testid(key, col)}">{_fmt(r[col])}</span>'

        body.append(
            f'<tr><td title="{html.escape(r["label"])}">{html.escape(key)}</td>'
            f'<td>{cell("mean")}</td><td>{cell("hdi_lower")} – {cell("hdi_upper")}</td>'
            f'<td>{cell("hdi_width")}</td><td class="obs">{cell("plug_in")}</td></tr>')
    # on a phone the observed (plug-in) column gives way: the rest fits in 390 px
    style = ("<style>.bcm-table{border-collapse:collapse;font-family:system-ui,sans-serif;"
             "width:100%;font-size:0.92em}.bcm-table td,.bcm-table th{padding:3px 4px;"
             "border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
             ".bcm-table td:first-child,.bcm-table th:first-child{text-align:left;"
             "white-space:normal}@media (max-width:480px){.bcm-table .obs{display:none}}"
             "</style>")
    return f'{style}<table class="bcm-table">{head}{"".join(body)}</table>'


class OneClassifier:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.state = State()
        self.analysis: logic.Analysis | None = None
        self.rows: Any = None
        self.pmf_frame: Any = None
        self.figures: dict[str, Any] = {}
        self.url_note = ErrorNote("url")
        sync_url(self.state, **url_note(self.url_note))
        self.notes = {n: ErrorNote(n) for n in (
            "matrix", "metrics", "priors", *(f"kprior-{r}" for r in logic.K_PRIORS), "pmf",
            "density", "sample-size")}
        self._widgets()
        self.panel_outputs = self.outputs()
        self.state.param.watch(self.update, ["kind", "tp", "fn", "fp", "tn", "matrix",
                                             "metrics", "hdi", "prior_prevalence",
                                             "prior_tpr", "prior_tnr", "seed", "density",
                                             *(f"kprior_{r}" for r in logic.K_PRIORS)])
        self.state.param.watch(self.update_pmf, ["pmf_metric", "pmf_pos", "pmf_neg"])
        self.state.param.watch(self.update_rule, ["ss_metric", "ss_width"])
        self._drawing = 0  # the newest scheduled redraw (older ones are skipped)
        self.update()

    # -- inputs --------------------------------------------------------------------------
    def _widgets(self) -> None:
        s = self.state
        self.kind = pn.widgets.RadioButtonGroup.from_param(
            s.param.kind, options={"Binary": "binary", "K classes": "multiclass"},
            css_classes=["bcm-kind"])
        cells = {c: pn.widgets.IntInput.from_param(s.param[c], label=c, css_classes=[f"bcm-{c}"],
                                                   sizing_mode="stretch_width")
                 for c in ("tp", "fn", "fp", "tn")}
        label = {"tp": "actual + / predicted +", "fn": "actual + / predicted −",
                 "fp": "actual − / predicted +", "tn": "actual − / predicted −"}
        for c, w in cells.items():
            w.label = f"{c} ({label[c]})"
        self.binary = pn.GridBox(*cells.values(), ncols=2, sizing_mode="stretch_width")
        self.text = pn.widgets.TextAreaInput.from_param(
            s.param.matrix, label="K-class matrix: labels, then one row per actual class "
            "(paste from a spreadsheet, or ';' between rows)", css_classes=["bcm-matrix"],
            height=110, sizing_mode="stretch_width")
        self.metric_box = pn.widgets.MultiChoice.from_param(
            s.param.metrics, label="Metrics", options=list(BINARY_METRICS),
            css_classes=["bcm-metrics"], sizing_mode="stretch_width")
        self.hdi = pn.widgets.FloatInput.from_param(s.param.hdi, label="HDI mass", step=0.01,
                                                    css_classes=["bcm-hdi"], width=120)
        self.priors = [pn.widgets.TextInput.from_param(s.param[f"prior_{r}"], label=f"{r} prior",
                                                       css_classes=[f"bcm-prior-{r}"],
                                                       sizing_mode="stretch_width")
                       for r in logic.RATES]
        self.kpriors = {r: pn.widgets.TextInput.from_param(
            s.param[f"kprior_{r}"], label=K_PRIOR_LABELS[r], css_classes=[f"bcm-kprior-{r}"],
            sizing_mode="stretch_width") for r in logic.K_PRIORS}
        self.prior_help = pn.pane.HTML("", sizing_mode="stretch_width")
        self.binary_priors = pn.FlexBox(*[pn.Column(p, styles={"flex": "1 1 160px"})
                                          for p in self.priors])
        # each K-class field with its own note right under it
        self.k_priors = pn.FlexBox(*[pn.Column(w, self.notes[f"kprior-{r}"],
                                               styles={"flex": "1 1 220px"})
                                     for r, w in self.kpriors.items()])
        self.prior_text = pn.pane.HTML("", sizing_mode="stretch_width")

    def inputs(self) -> Any:
        priors = pn.Column(self.prior_help, self.binary_priors, self.k_priors,
                           self.prior_text, self.notes["priors"], sizing_mode="stretch_width")
        matrix = pn.Column(self.kind, self.binary, self.text, self.notes["matrix"],
                           sizing_mode="stretch_width")
        intro = pn.pane.HTML(
            "<p style='margin:4px 0'>How good is this classifier, really? Filled in: "
            "Tötsch &amp; Hoffmann's cocaine-purity classifier (Rodrigues et al. 2013), "
            "reported as TPR 100%, TNR 75% from 34 cases. Type your own counts, or paste a "
            "K-class matrix; the link in the address bar restores this page.</p>",
            sizing_mode="stretch_width")
        return pn.Column(
            intro, self.url_note,
            section("Confusion matrix", matrix),
            section("Metrics", pn.Row(self.metric_box, self.hdi, sizing_mode="stretch_width"),
                    self.notes["metrics"]),
            section("Priors", priors),
            sizing_mode="stretch_width")

    # -- results -------------------------------------------------------------------------
    def update(self, *_events: Any) -> None:
        with pn.io.hold():  # one message to the browser for all the changes below
            self._update()

    def _update(self) -> None:
        s = self.state
        binary = s.kind == "binary"
        self.binary.visible, self.text.visible = binary, not binary
        self.metric_box.options = list(BINARY_METRICS if binary else MULTI_METRICS)
        self.binary_priors.visible, self.k_priors.visible = binary, not binary
        self.prior_help.object = f"<small>{PRIOR_HELP if binary else K_PRIOR_HELP}</small>"
        data = self.notes["matrix"].run(lambda: logic.matrix(
            s.kind, tp=s.tp, fn=s.fn, fp=s.fp, tn=s.tn, text=s.matrix))
        priors = self._priors(data)
        self.prior_text.object = ("" if priors is None else "<small>" + ", ".join(
            f"{r} ~ {html.escape(describe(p))}" for r, p in priors.items()) + "</small>")
        self.analysis, self.prior_values = None, priors
        if data is not None and priors is not None:
            self.analysis = self.notes["metrics"].run(lambda: logic.analyse(
                data, priors=priors, metrics=s.metrics, hdi_prob=s.hdi, seed=s.seed,
                draws=logic.DRAWS,
                # the plotted metric, when it is one of the matrix's (else the plot says why)
                also=[s.density] if s.density in self.metric_box.options else []))
        self.show_results()
        self.update_pmf()
        self.update_rule()
        # a plan made for other inputs would be read as this one's
        self.plan_text.object, self.plan_frame = "", None
        self.redraw()  # the numbers reach the browser first, the figures right after

    def _priors(self, data: Any) -> dict[str, Any] | None:
        """The priors of the matrix's kind, read from their fields (None on an error,
        shown under its field); the other kind's notes are cleared."""
        s = self.state
        knotes = [self.notes[f"kprior-{r}"] for r in logic.K_PRIORS]
        if s.kind == "binary":
            for note in knotes:
                note.clear()
            return self.notes["priors"].run(lambda: logic.priors_of(
                {r: getattr(s, f"prior_{r}") for r in logic.RATES}))
        self.notes["priors"].clear()
        if data is None:  # K is unknown: nothing to check the priors with
            for note in knotes:
                note.clear()
            return None
        read = {r: note.run(lambda r=r: logic.k_prior(getattr(s, f"kprior_{r}"), r, data))
                for r, note in zip(logic.K_PRIORS, knotes, strict=True)}
        return None if any(p is None for p in read.values()) else read

    def show_results(self) -> None:
        a = self.analysis
        self.rows = None if a is None else logic.table_rows(a.table)
        if a is None:
            self.results.object = "<p><i>No results: correct the input above.</i></p>"
            self.deception.object = ""
            return
        self.results.object = results_html(self.rows, a.hdi_prob)
        d = a.deception.iloc[0]
        self.deception.object = (
            "<small>width: the HDI's width, Tötsch &amp; Hoffmann's <i>metric "
            "uncertainty</i>; observed: the metric of the counts themselves.</small>"
            '<p>Probability of being <b>worse than guessing</b> (informedness &lt; 0): '
            f'<span data-testid="p-worse">{d["r_deceptive"]:.3f}</span>; better than '
            f'guessing: <span data-testid="p-better">{d["r_informative"]:.3f}</span>.</p>')

    def update_pmf(self, *_events: Any) -> None:
        s, a = self.state, self.analysis
        self.pmf_frame = None
        self.pmf_text.object = "<i>For a binary matrix.</i>" if s.kind != "binary" else ""
        if a is not None and s.kind == "binary":
            self.pmf_frame = self.notes["pmf"].run(lambda: logic.predictive(
                a.data, s.pmf_metric, s.pmf_pos, s.pmf_neg, priors=self.prior_values))
        if self.pmf_frame is not None:
            mode = self.pmf_frame.loc[self.pmf_frame["probability"].idxmax()]
            self.pmf_text.object = (
                f"<small>Most likely {html.escape(s.pmf_metric)} = "
                f'<span data-testid="pmf-mode">{mode["value"]:.3f}</span> '
                f"(probability {mode['probability']:.3f}).</small>")
        if _events:  # an edit of the pmf's own inputs: redraw it (update() draws otherwise)
            self.redraw()

    def redraw(self, *_events: Any) -> None:
        """Draw the figures soon, unless another edit comes first: fast typing queues
        one redraw per edit, and only the newest is worth its three figures."""
        self._drawing += 1
        ticket = self._drawing
        soon(lambda: self.draw() if ticket == self._drawing else None)

    def draw(self) -> None:
        """The figures of the current results (drawn after the numbers are sent)."""
        with pn.io.hold():
            self.figures.update(posterior=None, pmf=None, density=None)
            if self.rows is not None:
                longest = max(len(k) for k in self.rows.index)
                fig, ax = new_figure(6.0, 0.9 + 0.3 * len(self.rows),
                                     left=0.25 + 0.075 * longest, bottom=0.5, top=0.35)
                logic.forest(self.rows, ax, hdi_prob=self.analysis.hdi_prob)
                self.figures["posterior"] = fig
            if self.pmf_frame is not None:
                fig, ax = new_figure(6.0, 2.8)
                logic.pmf_plot(self.pmf_frame, self.state.pmf_metric, ax)
                self.figures["pmf"] = fig
            if self.analysis is not None:
                self.figures["density"] = self.notes["density"].run(self._density)
            show_figure(self.forest, self.figures["posterior"], name="posterior-plot")
            show_figure(self.density, self.figures["density"], name="density-plot")
            show_figure(self.pmf_plot, self.figures["pmf"], name="pmf-plot")
            refresh_downloads(self.downloads)  # grey out what has nothing to download

    def _density(self) -> Any:
        """The library's posterior plot (density, HDI, mean, plug-in) of one metric."""
        from bayescm import plots

        rows = 1 if self.state.kind == "binary" else len(self.analysis.data.labels)
        fig, ax = new_figure(6.0, 1.3 + 0.45 * rows, left=1.6, bottom=0.5, top=0.6)
        plots.metric_posterior(self.analysis.idata, self.state.density, kind="ridge",
                               hdi_prob=self.analysis.hdi_prob, ax=ax)
        return fig

    def update_rule(self, *_events: Any) -> None:
        from bayescm.analysis import sample_size_rule

        w = self.state.ss_width
        try:
            n = sample_size_rule(w)
        except ValueError:
            self.rule.object = ""
            return
        self.rule.object = (f"<small>Normal rule (worst case, a rate at 1/2): about "
                            f"{int(-(-n // 1))} cases of the rate's class for a {w:g} "
                            "HDI width.</small>")

    def plan(self, _event: Any = None) -> None:
        s, a = self.state, self.analysis
        self.plan_text.object = ""
        if a is None:
            self.notes["sample-size"].show("Correct the confusion matrix first.")
            return
        result = self.notes["sample-size"].run(
            lambda: logic.sample_size(a.data, s.ss_metric, s.ss_width, seed=s.seed))
        if result is not None:
            self.plan_text.object = (
                f'<p>Test-set size needed: <b data-testid="n-required">{result.n_required}'
                f"</b> cases, for a {s.ss_width:g} wide {s.ss_metric} HDI in 95% of "
                "studies like this one.</p><p><small>Kruschke's protocol as in "
                "Tötsch &amp; Hoffmann (2021): the studies are drawn from this matrix's "
                "posterior under flat priors, and each is analysed with flat priors (the "
                "priors above are not used here).</small></p>")
            self.plan_frame = result.to_frame()
        refresh_downloads(self.downloads)

    def outputs(self) -> Any:
        s = self.state
        self.results = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["bcm-results"])
        self.deception = pn.pane.HTML("", sizing_mode="stretch_width")
        self.forest = figure_pane(name="posterior-plot")
        self.pmf_plot = figure_pane(name="pmf-plot")
        self.density = figure_pane(name="density-plot")
        self.pmf_text = pn.pane.HTML("", sizing_mode="stretch_width")
        self.rule = pn.pane.HTML("", sizing_mode="stretch_width")
        self.plan_text = pn.pane.HTML("", sizing_mode="stretch_width")
        self.plan_frame = None
        get = lambda name: (lambda: self.figures.get(name))  # noqa: E731
        table = lambda: None if self.analysis is None else self.analysis.table  # noqa: E731
        idata = lambda: None if self.analysis is None else self.analysis.fit()  # noqa: E731
        # the buttons stay in view: refresh_downloads disables those with nothing to serve
        self.downloads = [
            csv_download(table, "summary.csv", name="summary"),
            *figure_downloads(get("posterior"), "posterior", name="posterior"),
            netcdf_download(idata, "fit.nc", available=lambda: self.analysis is not None),
            *figure_downloads(get("density"), "posterior_density", name="density"),
            csv_download(lambda: self.pmf_frame, "predictive_pmf.csv", name="pmf"),
            *figure_downloads(get("pmf"), "predictive_pmf", name="pmf"),
            csv_download(lambda: self.plan_frame, "sample_size.csv", name="sample-size")]
        d = self.downloads
        posterior = section(
            "Posterior", self.results, self.deception, self.forest, pn.FlexBox(*d[:4]),
            pn.widgets.TextInput.from_param(s.param.density, label="posterior density of",
                                            css_classes=["bcm-density"], width=160),
            self.notes["density"], self.density,
            pn.FlexBox(*d[4:6]))
        pmf_inputs = pn.FlexBox(
            pn.widgets.TextInput.from_param(s.param.pmf_metric, label="metric",
                                            css_classes=["bcm-pmf-metric"], width=110),
            pn.widgets.IntInput.from_param(s.param.pmf_pos, label="positives",
                                           css_classes=["bcm-pmf-pos"], width=110),
            pn.widgets.IntInput.from_param(s.param.pmf_neg, label="negatives",
                                           css_classes=["bcm-pmf-neg"], width=110))
        predictive = section(
            "What a future test set would observe (exact predictive pmf)", pmf_inputs,
            self.notes["pmf"], self.pmf_text, self.pmf_plot,
            pn.FlexBox(*d[6:9]))
        button = pn.widgets.Button(label="Plan", color="primary", css_classes=["bcm-plan"],
                                   width=90)
        button.on_click(self.plan)
        planning = section(
            "Sample size for a target uncertainty", pn.FlexBox(
                pn.widgets.TextInput.from_param(s.param.ss_metric, label="metric",
                                                css_classes=["bcm-ss-metric"], width=110),
                pn.widgets.FloatInput.from_param(s.param.ss_width, label="HDI width",
                                                 step=0.01, css_classes=["bcm-ss-width"],
                                                 width=110), button),
            self.notes["sample-size"], self.rule, self.plan_text, d[9])
        return pn.Column(posterior, predictive, planning, sizing_mode="stretch_width")

    def view(self) -> Any:
        return columns(self.inputs(), self.panel_outputs)


def build() -> Any:
    """The page for one session."""
    return OneClassifier().view()


PAGE = Page(slug="one", title="One classifier", order=10, build=build,
            description="Posterior metrics of one confusion matrix, priors, predictive pmf "
                        "and sample size")
