"""``python -m lsh_frame`` runs the command line."""

import sys

from lsh_frame.cli import main

sys.exit(main())
