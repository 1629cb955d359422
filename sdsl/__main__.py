"""``python -m sdsl``: the ``sdsl`` command line (:func:`sdsl.cli.main`)."""

import sys

from sdsl.cli import main

sys.exit(main())
