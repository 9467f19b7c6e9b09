"""The exception tree of lsh_frame.

Every error raised on purpose by the package derives from :class:`LshFrameError`
and from the builtin exception a caller would expect, so ``except KeyError``
still catches a missing column and ``except ValueError`` a bad parameter.
"""

from __future__ import annotations

import pandas as pd

__all__ = [
    "ColumnError",
    "ColumnTypeError",
    "ConfigError",
    "ConfigTypeError",
    "DamagedIndexError",
    "FolderExistsError",
    "LshFrameError",
    "MergeError",
    "SignatureMismatchError",
    "TooManyPairsError",
]


class LshFrameError(Exception):
    """Base class of every error lsh_frame raises on purpose."""


class ConfigError(LshFrameError, ValueError):
    """A parameter has a value outside what is allowed."""


class ConfigTypeError(ConfigError, TypeError):
    """A parameter has the wrong type (for example a float seed)."""


class DamagedIndexError(ConfigError):
    """A saved index's folder cannot be read: a file is damaged, missing or foreign.

    The message names the folder and the file. Also a :class:`ConfigError`
    (a ValueError), as an index of another format version raises.
    """


class FolderExistsError(LshFrameError, FileExistsError):
    """A save would replace a folder it may not (it exists, or is no index)."""


class ColumnError(LshFrameError, KeyError):
    """A column named by the caller is not in the frame."""

    def __str__(self) -> str:
        # KeyError quotes its message with repr(); keep the sentence readable.
        return str(self.args[0]) if self.args else ""


class ColumnTypeError(LshFrameError, TypeError):
    """A column has a dtype the operation cannot use (for example numbers as text)."""


class MergeError(LshFrameError, pd.errors.MergeError):
    """A merge's matches break its ``validate=`` rule (one-to-one, ...).

    Also a :class:`pandas.errors.MergeError` (a ValueError), as pandas raises.
    """


class SignatureMismatchError(LshFrameError, ValueError):
    """Two signature columns were built with incompatible parameters."""


class TooManyPairsError(LshFrameError, RuntimeError):
    """Blocking would produce more candidate pairs than ``max_pairs`` allows."""
