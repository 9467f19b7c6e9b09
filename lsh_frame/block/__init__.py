"""Blocking: which pairs of records are worth comparing.

:mod:`.fields` says what a field is; :mod:`.defaults` decides from the data
which keys a table gets; :mod:`.keys` builds exact and LSH keys,
:mod:`.compound` keys on two columns together, :mod:`.neighbours` each
record's most similar records; :mod:`.candidates` turns keys into pairs;
:mod:`.report` says what every key costs before any pair is built.
:mod:`.identical` collapses large groups of identical rows, :mod:`.hamming`
and :mod:`.vectors` search fingerprints and vectors.
"""
