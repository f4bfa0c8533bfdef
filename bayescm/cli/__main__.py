"""``python -m bayescm.cli``: the ``bayescm`` command."""

import sys

from bayescm.cli.commands import main

sys.exit(main())
