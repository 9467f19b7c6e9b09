"""Sketches: MinHash signatures, SimHash fingerprints, vectors' bits, banding.

:mod:`.minhash` signs token sets, :mod:`.simhash` fingerprints them,
:mod:`.vectors` turns vectors into bits, :mod:`.banding` plans bands × rows
(the S-curve). :mod:`.minhash_arrow` and :mod:`.simhash_arrow` are the Arrow
extension types that carry a sketch's configuration with its values.
"""
