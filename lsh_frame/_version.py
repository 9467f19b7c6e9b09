"""The version of lsh_frame."""

__version__ = "0.1.0.dev0"
