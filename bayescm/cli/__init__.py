"""The ``bayescm`` command: ``summarize``, ``unlabeled``, ``demo``, ``app``.

* :mod:`bayescm.cli.commands` -- the parser and the subcommands (:func:`main`);
* :mod:`bayescm.cli.input` -- the confusion matrix ``summarize``'s options describe;
* :mod:`bayescm.cli.slices` -- one classifier's predictions sliced by groups and windows.

The command sits on top of everything: nothing in bayescm imports it.
"""

from bayescm.cli.commands import main
from bayescm.data.text import parse_matrix

__all__ = ["main", "parse_matrix"]
