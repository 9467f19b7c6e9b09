"""Comparison: each candidate pair scored field by field.

:mod:`.plan` chooses a comparison per field from its values (:mod:`.auto`
for numbers and dates); :mod:`.text` scores text (shingle Jaccard and
rapidfuzz), :mod:`.tfidf` long text, :mod:`.numbers_dates` quantities (parsed
by :mod:`.typed_values`), :mod:`.vectors` vectors; :mod:`.fields` scores every
field of every pair and combines them; :mod:`.levels` reads a field score as
a level (exact, close, ...). The special readings that change how a field
scores sit in modules of their own: :mod:`.swaps` and :mod:`.crossed` (fields
that trade places), :mod:`.nicknames` (familiar given names),
:mod:`.placeholder_dates` (days that stand for an unknown day), :mod:`.codes`
(identifier codes read across a record's text fields), :mod:`.information`
(which fields can join two records on their own, for the fallback without a model);
:mod:`.table_checks` decides from the tables which of them apply.
"""
