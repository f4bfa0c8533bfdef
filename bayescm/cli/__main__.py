"""``python -m bayescm.cli``: the ``bayescm`` command."""

import sys

from bayescm.cli.main import main

sys.exit(main())
