"""``bcm.report``: a fit written up as HTML or Markdown (STARD-BLCM for latent class).

* :mod:`bayescm.report.build` -- :func:`report` and :class:`Report`;
* :mod:`bayescm.report.sections` -- what each section says, read from the fit;
* :mod:`bayescm.report.slices` -- the slices of a sliced fit (levels, counts, empty ones);
* :mod:`bayescm.report.render` -- sections to HTML or Markdown, escaped.
"""

from bayescm.report.build import FORMATS, Report, report

__all__ = ["FORMATS", "Report", "report"]
