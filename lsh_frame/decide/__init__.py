"""The match decision: which scored pairs are the same entity.

:mod:`.cut` finds a provisional cut in the combined scores, :mod:`.levels`
turns field scores into levels, :mod:`.model` holds the learned Fellegi-Sunter
weights and :mod:`.learn` learns them; :mod:`.matches` decides each pair and
says what decided; :mod:`.score` runs scoring and deciding as one call.
Special readings, each with the evidence that turns it on in its docstring:
:mod:`.one_to_one` (links of clean sources are an assignment),
:mod:`.weak_keys` (pairs that only a weak key found), :mod:`.closing`
(matches that close a cluster) and :mod:`.through_matches` (pairs looked for
among records that match one same record).
"""
