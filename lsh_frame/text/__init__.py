"""Text: normalise, cut into hashed shingles, typed values as text.

The first stage. Every later stage sees a column through :mod:`.typed` (numbers,
dates, booleans and categoricals as canonical text) and :mod:`.shingle`
(normalised text and its hashed shingles); :mod:`.labels` gives records stable
hashes that depend neither on their positions nor on their labels' type.
"""
