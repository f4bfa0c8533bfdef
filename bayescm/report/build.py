"""``bcm.report``: an HTML or Markdown report of a fit, with STARD-BLCM's items.

For a latent-class analysis (classifiers evaluated without a reference standard) the
report follows the reporting guideline of Kostoulas, Nielsen, Branscum, Johnson,
Dendukuri, Dhand, Toft & Gardner, "STARD-BLCM: Standards for the Reporting of
Diagnostic accuracy studies that use Bayesian Latent Class Models" (Preventive
Veterinary Medicine, 2017), as far as a program can fill it from the fit:

1. the model and its assumptions (conditional independence or the dependent pairs,
   Se + Sp > 1, results missing at random, verified cases);
2. the priors, each with its mean and 95% interval, the statement it was elicited
   from and its rationale;
3. prior sensitivity (from :func:`bayescm.analysis.prior_sensitivity`);
4. identifiability (degrees of freedom against parameters) and convergence (R-hat,
   bulk and tail ESS, divergences);
5. the cross-tables of results by population;
6. the posterior estimates with their highest-density intervals;
7. the posterior predictive check;
8. the software versions and the random seed;

followed by the checklist items only the authors can report (study design, target
condition, test procedures, rationale for the dependence structure, ...).  Every item
the fit does not hold is listed as missing ("not recorded in the fit: the authors must
report ..."), never invented.  Any other bayescm fit (labelled confusion matrices) gets
the same report without the latent-class items; a fit of a sliced matrix (subgroups, time
windows) speaks of slices, lists their levels and counts and flags the empty ones
(:mod:`bayescm.report.slices`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bayescm import idata as idata_mod
from bayescm.report.render import Missing, Section, Text, render_html, render_markdown
from bayescm.stats import check_hdi_prob

if TYPE_CHECKING:
    import arviz as az

__all__ = ["FORMATS", "Report", "report"]

FORMATS = ("html", "markdown")


class Report:
    """A fit's report: sections in order, rendered as HTML or Markdown on demand.

    Attributes
    ----------
    title
        The report's title.
    sections
        ``[(id, title, status), ...]`` in order; ``status`` is ``"missing"`` when the fit
        holds nothing for the section, else ``"filled"``.  The ids are the HTML anchors
        (``#priors``).
    missing
        ``[(section id, text), ...]``: every item the fit could not fill, including
        those inside a filled section (a prior's rationale, the random seed).
    """

    def __init__(self, title: str, parts: Sequence[Section], *, notes: str | None = None,
                 ) -> None:
        self.title = title
        self._parts = list(parts)
        self._intro = [Text(notes)] if notes else []

    @property
    def sections(self) -> list[tuple[str, str, str]]:
        return [(s.id, s.title, s.status) for s in self._parts]

    @property
    def missing(self) -> list[tuple[str, str]]:
        return [(s.id, b.text) for s in self._parts for b in s.blocks if isinstance(b, Missing)]

    def html(self) -> str:
        """One self-contained HTML document (inline CSS and images, no external URL)."""
        return render_html(self.title, self._intro, self._parts)

    def markdown(self) -> str:
        """The report as Markdown (figures as inline data URIs)."""
        return render_markdown(self.title, self._intro, self._parts)

    def save(self, path: str | Path, *, format: str | None = None) -> Path:
        """Write the report; ``format`` defaults from the suffix (``.md``: Markdown)."""
        path = Path(path)
        fmt = _format(path, format)
        path.write_text(self.html() if fmt == "html" else self.markdown(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return render_html(self.title, self._intro, self._parts, document=False)

    def __repr__(self) -> str:
        lines = [f"Report({self.title!r})"]
        lines += [f"  {i}. {t} [{st}]" for i, (_, t, st) in enumerate(self.sections, 1)]
        return "\n".join(lines)


SUFFIXES = {"html": (".html", ".htm"), "markdown": (".md", ".markdown")}
"""The suffixes of each format; a path without a suffix or ending in ``.txt`` takes
either, any other suffix (``.pdf``, ``.docx``, ...) is refused, not written as text."""


def _format(path: Path | None, format: str | None) -> str:
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS} (or None: from the file's suffix, "
                         f".md for Markdown), got {format!r}.")
    suffix = "" if path is None else path.suffix.lower()
    found = next((f for f, ends in SUFFIXES.items() if suffix in ends), None)
    if suffix not in ("", ".txt") and (found is None or format not in (None, found)):
        what = f"a {format} report" if format else "a report"
        raise ValueError(
            f"Cannot write {what} to {str(path)!r}: bcm.report writes HTML (.html, .htm) or "
            f"Markdown (.md, .markdown), and a {suffix} file would hold text its readers "
            "cannot open. Save it as .html (a browser prints it to PDF) or .md.")
    return format or found or "html"


def report(
    idata: az.InferenceData,
    path: str | Path | None = None,
    *,
    format: str | None = None,
    sensitivity: Any = None,
    title: str | None = None,
    notes: str | None = None,
    hdi_prob: float = 0.95,
) -> Report:
    """Report a fit: model, priors, sensitivity, identifiability, convergence, data,
    estimates, predictive check and software, following STARD-BLCM for latent classes.

    Estimates are ``bcm.summary``'s: posterior mean, sd, median and the highest-density
    interval :math:`[l, u]` of mass ``hdi_prob``, the narrowest interval with
    :math:`\\Pr(l \\le x \\le u \\mid y) = ` ``hdi_prob``.  The predictive check is
    :func:`bayescm.posterior_predictive_check`'s Bayesian p-value
    :math:`\\Pr(D(y^{rep}) \\ge D(y) \\mid y)`.  Items a fit does not hold are listed
    as missing, never invented (see the module notes).

    Parameters
    ----------
    idata
        A result of :func:`bayescm.fit` (or :func:`bayescm.load`).
    path
        Where to write the report (``.html``/``.htm``, ``.md``/``.markdown``, ``.txt``
        or no suffix; another suffix such as ``.pdf`` is an error, not HTML in a PDF);
        None returns it without writing.
    format
        ``"html"`` or ``"markdown"``; default from the suffix of ``path`` (``.md``,
        ``.markdown``: Markdown; else HTML).
    sensitivity
        The result of :func:`bayescm.analysis.prior_sensitivity` (anything with
        ``to_frame()``) or a DataFrame; without it the section is listed as missing.
    title
        Default: "Analysis report: <model> model".
    notes
        A paragraph shown under the title (e.g. the study it belongs to).
    hdi_prob
        Mass of the credible intervals (default 0.95).

    Returns
    -------
    Report
        ``.html()``, ``.markdown()``, ``.sections`` (id, title, status), ``.missing``,
        ``.save(path)``; shows itself in Jupyter.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> rep = bcm.report(idata)
    >>> [s for s, _, status in rep.sections if status == "missing"]
    ['prior-sensitivity']
    """
    # the sections read fits with SciPy and ArviZ: imported when a report is made, so
    # that ``import bayescm`` (which imports this module) stays light
    from bayescm.report import sections

    idata_mod.require(idata, "idata")
    check_hdi_prob(hdi_prob)
    fmt = _format(None if path is None else Path(path), format)
    if sensitivity is not None and not (hasattr(sensitivity, "to_frame")
                                        or hasattr(sensitivity, "columns")):
        raise TypeError("sensitivity must be the result of bcm.analysis.prior_sensitivity "
                        f"(or a DataFrame), got {type(sensitivity).__name__}.")
    ctx = sections.Context(idata, hdi_prob=hdi_prob)
    parts = [sections.model(ctx), sections.priors(ctx),
             sections.sensitivity(ctx, sensitivity)]
    if ctx.latent:
        parts.append(sections.identifiability(ctx))
    parts += [sections.convergence(ctx), sections.data(ctx), sections.estimates(ctx),
              sections.predictive(ctx), sections.software(ctx)]
    if ctx.latent:
        parts.append(sections.authors(ctx))
    name = ctx.attrs.get("model")
    out = Report(title or (f"Analysis report: {name} model" if name else "Analysis report"),
                 parts, notes=notes)
    if path is not None:
        out.save(path, format=fmt)
    return out
