"""A saved index of resolved records: new records matched in milliseconds.

:mod:`.index` is the :class:`~lsh_frame.Index` itself, :mod:`.tables` the
arrays it holds, :mod:`.store` how it is written to and read from a folder.
"""
