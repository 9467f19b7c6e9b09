"""A saved index of resolved records: new records matched in milliseconds.

:mod:`.index` is the :class:`~lsh_frame.Index` itself; :mod:`.query` matches
new records against it, :mod:`.update` adds, removes and resolves records,
:mod:`.store` writes it to a folder and reads it back, :mod:`.tables` holds
the arrays it keeps.
"""
