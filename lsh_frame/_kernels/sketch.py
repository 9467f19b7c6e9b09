"""Fast similarity sketching over token sets stored as CSR (``tokens``, ``offsets``).

The sketch of Dahlgaard, Knudsen and Thorup (FOCS 2017), for ``t`` slots:

1. In round ``i = 0, 1, ..., t - 1`` every token ``x`` is thrown into one slot,
   ``bin_i(x)``, with the value ``(i, rank_i(x))``; a slot keeps the least value
   thrown into it. A value of an earlier round is less than any of a later
   one, so a slot is decided by the first round that reaches it. Once every
   slot holds a value no later round can change the sketch: a record stops
   there (about ``t ln t`` throws in all, not ``tokens × t``).
2. A slot ``j`` still empty after ``t`` rounds (a record of very few tokens)
   gets the least ``h_{t+j}(x)`` over the record's tokens: classic MinHash.

Two records agree on a slot with probability exactly their Jaccard similarity:
the first throw of their union into the slot is from a token they share with
that probability, and it is then the least value of both. Short sets are
sampled without replacement (a token rarely fills two slots in one round), so
the estimate has less variance than classic MinHash's ``tokens × t``
independent draws; long sets fill every slot in a round or two.

``h_i(x) = a_i x + b_i mod 2**32`` (odd ``a_i``) on the token's 32 folded hash
bits: its top 16 bits pick the slot (multiply-shift), its low bits rank the
tokens within the slot. A value is stored as the round in the top
``bit_length(t - 1)`` bits above those low bits, so the least stored value is
the least ``(round, rank)``; every throw of a round goes through one
``np.minimum.at``. Records are taken in groups of similar length (sorted by
token count) so that a group's records fill at about the same round.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.ranges import expand

#: A slot no token has reached yet; real values are kept below it.
EMPTY = np.uint32(0xFFFFFFFF)
#: Records per group: a group's ``(records, t)`` block of running values.
GROUP_RECORDS = 4096
#: Expected throws to fill ``t`` slots are ``t * H_t ≈ t (ln t + 0.58)``; a
#: group's first look at which records are full is at this share of that.
_FIRST_LOOK = 1.1
#: After that, a look every time the live records have thrown this share of
#: ``t`` tokens each, on average; the full records' tokens are dropped once they
#: are more than this share of the live records.
_LOOK_EVERY = 1.0
_DROP_SHARE = 0.2


def parameters(
    seed: int, num_perm: int
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """Odd multipliers ``a`` and offsets ``b`` of the ``2 * num_perm`` rounds.

    Rounds ``0 .. t - 1`` throw tokens into slots; round ``t + j`` is slot
    ``j``'s classic MinHash for records that never reach it.
    """
    rng = np.random.default_rng([seed, 0x5F55])
    a = rng.integers(0, 1 << 32, size=2 * num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 1 << 32, size=2 * num_perm, dtype=np.uint64)
    return a.astype(np.uint32), b.astype(np.uint32)


def sketch(
    tokens: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    a: npt.NDArray[np.uint32],
    b: npt.NDArray[np.uint32],
    out: npt.NDArray[np.uint32],
) -> None:
    """Write the sketch of every non-empty record into ``out``.

    Parameters
    ----------
    tokens : ndarray of uint32
        Well mixed token values of all records back to back.
    offsets : ndarray of int64
        ``n + 1`` offsets into ``tokens``.
    a, b : ndarray of uint32
        From :func:`parameters` (``2 * t`` each).
    out : ndarray of uint32, shape (n, t)
        Receives the sketches; rows of empty records are left untouched.
    """
    slots = out.shape[1]
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    order = order[lengths[order] > 0]
    for start in range(0, order.size, GROUP_RECORDS):
        rows = order[start : start + GROUP_RECORDS]
        out[rows] = _group(tokens, offsets[rows], lengths[rows], a, b, slots)


def _group(
    tokens: npt.NDArray[np.uint32],
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    a: npt.NDArray[np.uint32],
    b: npt.NDArray[np.uint32],
    slots: int,
) -> npt.NDArray[np.uint32]:
    """Sketches of some records sorted by length (their tokens start at ``starts``)."""
    size = lengths.size
    block = np.full((size, slots), EMPTY)
    flat = block.reshape(-1)
    owner, position = expand(starts, lengths)
    x = tokens[position]
    base = owner.astype(np.uint32) * np.uint32(slots)
    round_bits = (slots - 1).bit_length()
    rank_mask = np.uint32((1 << (32 - round_bits)) - 1)
    tags = np.arange(slots, dtype=np.uint64) << np.uint64(32 - round_bits)
    last_tag = (1 << round_bits) - 1
    throws = slots * (np.log(slots) + 0.58)
    # The longest records fill first: look when they are expected to be full.
    look = int(_FIRST_LOOK * throws / lengths[-1])
    live = np.arange(size)
    # The slot: the top bits when t is a power of two, else the top 16 bits
    # times t over 2**16 (t <= 2**16): the same slot either way.
    power = slots & (slots - 1) == 0
    top = np.uint32(32 - (slots.bit_length() - 1) if power else 16)
    value = np.empty_like(x)
    key = np.empty(x.size, dtype=np.uint32)
    for round_ in range(slots):
        np.multiply(x, a[round_], out=value)
        np.add(value, b[round_], out=value)
        np.right_shift(value, top, out=key)
        if not power:
            np.multiply(key, np.uint32(slots), out=key)
            np.right_shift(key, np.uint32(16), out=key)
        np.add(key, base, out=key)
        np.bitwise_and(value, rank_mask, out=value)
        np.bitwise_or(value, np.uint32(tags[round_]), out=value)
        if round_ == last_tag:  # all-ones tag: keep the value off EMPTY
            np.minimum(value, EMPTY - np.uint32(1), out=value)
        np.minimum.at(flat, key, value)
        if round_ < look:
            continue
        full = ~(block[live] == EMPTY).any(axis=1)
        if full.all():
            return block
        if full.mean() > _DROP_SHARE:
            live = live[~full]
            keep = np.zeros(size, dtype=bool)
            keep[live] = True
            keep = keep[owner]
            x, base, owner = x[keep], base[keep], owner[keep]
            value = np.empty_like(x)
            key = np.empty(x.size, dtype=np.uint32)
        per_record = x.size / live.size
        look = round_ + 1 + int(_LOOK_EVERY * slots / per_record)
    _classic_slots(block, live, x, owner, a[slots:], b[slots:])
    return block


def _classic_slots(
    block: npt.NDArray[np.uint32],
    live: npt.NDArray[np.intp],
    x: npt.NDArray[np.uint32],
    owner: npt.NDArray[np.int64],
    a: npt.NDArray[np.uint32],
    b: npt.NDArray[np.uint32],
) -> None:
    """Fill the slots no round reached with slot ``j``'s classic minimum."""
    rows, slots = np.nonzero(block[live] == EMPTY)
    if not rows.size:
        return
    rows = live[rows]
    # The records' tokens lie in ``x`` in record order: every (empty slot, token
    # of its record) pair, then the least value per slot.
    counts = np.bincount(owner, minlength=block.shape[0])
    pair, at = expand((np.cumsum(counts) - counts)[rows], counts[rows])
    token = x[at]
    slot = slots[pair]
    values = token * a[slot] + b[slot]
    least = np.full(rows.size, EMPTY)
    np.minimum.at(least, pair, values)
    block[rows, slots] = least
