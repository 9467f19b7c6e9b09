"""The everyday jobs in one call each: dedupe, drop duplicates, link, fuzzy merge.

Each job is the pipeline of the stages (:func:`~lsh_frame.candidates`,
:func:`~lsh_frame.score`, :func:`~lsh_frame.cluster`) with their defaults, shaped
like its pandas namesake: :mod:`.dedupe` (``dedupe``, ``drop_duplicates``,
``duplicated``), :mod:`.link` and :mod:`.merge`; :mod:`.common` holds what they
share.
"""
