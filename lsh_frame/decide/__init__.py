"""The match decision: which scored pairs are the same entity.

:mod:`.cut` finds a provisional cut in the combined scores; :mod:`.model` holds
the learned Fellegi-Sunter weights (built from :mod:`.tables`), :mod:`.learn`
and :mod:`.em` learn them without labels and :mod:`.model_dict` saves them as
JSON; :mod:`.matches` decides each pair and says what decided; :mod:`.score`
runs scoring and deciding as one call, :mod:`.pairs` blocking, scoring and
deciding. Special readings, each with the evidence that turns it on in its
docstring: :mod:`.matching` and :mod:`.links` (links of clean sources read as
a matching), :mod:`.one_to_one` (the one-to-one choice of the other links),
:mod:`.weak_keys` (pairs that only a weak key found), :mod:`.closing`
(matches that close a cluster) and :mod:`.through_matches` (pairs looked for
among records that match one same record).
"""
