"""The ``lsh-frame`` command line: one module per subcommand.

:mod:`.main` parses the command line and runs a subcommand: :mod:`.dedupe`,
:mod:`.link`, :mod:`.index`, :mod:`.label` (the answer loop), :mod:`.demo`
(``demo`` and ``plan``); :mod:`.io` reads and writes tables, :mod:`.options`
turns options into parameters.
"""

from lsh_frame.cli.main import main

__all__ = ["main"]
