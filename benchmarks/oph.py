"""One-permutation hashing with densification, measured beside lsh_frame's schemes.

Issue 18 asks for both sketch families to be measured: fast similarity sketching
(shipped as ``scheme="fss32"``) and one-permutation hashing with a densification
that does not hurt short sets. This script measures the second, as numpy
prototypes (not part of the package), on the same token hashes as the shipped
kernels:

- ``oph B``: the ``num_perm`` slots split into ``num_perm / B`` repetitions of
  ``B`` bins; in each repetition every token is hashed once (affine on its 32
  folded bits, the top bits pick the bin, the value is kept) and a bin keeps
  its least value; an empty bin takes the value of the first non-empty bin of
  its repetition in a fixed random order of the repetition's bins ("optimal
  densification", Shrivastava 2017). Slots are interleaved so a band's rows
  come from different repetitions. ``B = num_perm`` is plain one-permutation
  hashing.
- ``fss R``: fast similarity sketching cut at ``R`` rounds (every token thrown
  into one slot per round, earlier rounds win), then the same densification
  over all slots.
- ``classic`` (the default ``affine32``) and ``fss32``: lsh_frame's own kernels.

Both prototypes give a pair equal values in a slot with probability exactly
their Jaccard similarity (the first bin or round their union reaches decides).
The table gives each kernel's time on one thread (tokens already hashed) and
the mean absolute error (MAE) of the Jaccard estimate against the exact Jaccard
of the token sets, on 1,000 true-duplicate and 1,000 random pairs.

Run::

    python benchmarks/oph.py                 # 1M make_customers records (~1 minute)
    python benchmarks/oph.py --n 100000      # quicker

No data files are needed (``lf.datasets.make_customers``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import _common
import numpy as np
import numpy.typing as npt

import lsh_frame as lf
from lsh_frame._kernels import minhash as kernels
from lsh_frame._kernels import sketch
from lsh_frame.text.shingle import text_array, tokenize

EMPTY = np.uint32(0xFFFFFFFF)
NUM_PERM = 128
SEED = 1
#: Records per group: a group's (records, num_perm) block of running values.
GROUP = 4096

Kernel = Callable[[npt.NDArray[np.uint32], npt.NDArray[np.int64], npt.NDArray], None]


def _densify(
    block: npt.NDArray[np.uint32],
    lengths: npt.NDArray[np.int64],
    probes: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint32]:
    """Fill each empty slot from the first filled slot in its probe order."""
    rows, slots = np.nonzero(block == EMPTY)
    keep = lengths[rows] > 0
    rows, slots = rows[keep], slots[keep]
    filled = block.copy()
    for step in range(probes.shape[1]):
        if not rows.size:
            break
        found = block[rows, probes[slots, step]]
        ok = found != EMPTY
        filled[rows[ok], slots[ok]] = found[ok]
        rows, slots = rows[~ok], slots[~ok]
    return filled


def _probe_orders(
    rng: np.random.Generator, groups: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """For every slot, the other slots of its group in a random order."""
    slots = groups.size
    width = max(int(np.bincount(groups).max()) - 1, 1)
    probes = np.empty((slots, width), dtype=np.int64)
    for slot in range(slots):
        others = np.flatnonzero((groups == groups[slot]) & (np.arange(slots) != slot))
        row = np.full(width, slot)
        row[: others.size] = rng.permutation(others)
        probes[slot] = row
    return probes


#: ``throw(x, base, block)``: lower the slots of one group of records (``block``,
#: flat) with the values of their tokens ``x`` (``base`` is each token's record
#: offset in ``block``).
Throw = Callable[[npt.NDArray[np.uint32], npt.NDArray[np.int64], npt.NDArray], None]


def _grouped(throw: Throw, probes: npt.NDArray[np.int64]) -> Kernel:
    """A kernel that throws each group's tokens, then densifies the empty slots."""

    def sign(
        tokens: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64], out: npt.NDArray
    ) -> None:
        for start in range(0, offsets.size - 1, GROUP):
            stop = min(start + GROUP, offsets.size - 1)
            lengths = np.diff(offsets[start : stop + 1])
            block = np.full((stop - start) * NUM_PERM, EMPTY)
            throw(
                tokens[offsets[start] : offsets[stop]],
                np.repeat(np.arange(stop - start, dtype=np.int64) * NUM_PERM, lengths),
                block,
            )
            filled = _densify(block.reshape(stop - start, NUM_PERM), lengths, probes)
            out[start:stop][lengths > 0] = filled[lengths > 0]

    return sign


def _affine(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Odd multipliers and offsets of ``count`` affine hashes of 32 bits."""
    a = rng.integers(0, 1 << 32, size=count, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 1 << 32, size=count, dtype=np.uint64)
    return a.astype(np.uint32), b.astype(np.uint32)


def oph_kernel(bins: int) -> Kernel:
    """One-permutation hashing in repetitions of ``bins`` bins, densified."""
    reps = -(-NUM_PERM // bins)
    rng = np.random.default_rng([SEED, 0x0F11])
    a, b = _affine(rng, reps)
    slot_rep = np.arange(NUM_PERM) % reps
    per_rep = np.bincount(slot_rep, minlength=reps)

    def throw(x: np.ndarray, base: np.ndarray, block: np.ndarray) -> None:
        for rep in range(reps):
            value = x * a[rep] + b[rep]
            slot = (value.astype(np.uint64) * np.uint64(per_rep[rep])) >> np.uint64(32)
            index = slot.astype(np.int64) * reps + rep + base
            np.minimum.at(block, index, np.minimum(value, EMPTY - np.uint32(1)))

    return _grouped(throw, _probe_orders(rng, slot_rep))


def fss_cut_kernel(rounds: int) -> Kernel:
    """Fast similarity sketching stopped after ``rounds`` rounds, densified."""
    rng = np.random.default_rng([SEED, 0x0F12])
    a, b = _affine(rng, rounds)
    tag_bits = max(1, (rounds - 1).bit_length())
    rank_mask = np.uint32((1 << (32 - tag_bits)) - 1)

    def throw(x: np.ndarray, base: np.ndarray, block: np.ndarray) -> None:
        for round_ in range(rounds):
            value = x * a[round_] + b[round_]
            slot = (value.astype(np.uint64) * np.uint64(NUM_PERM)) >> np.uint64(32)
            ranked = (value & rank_mask) | np.uint32(round_ << (32 - tag_bits))
            np.minimum.at(
                block,
                slot.astype(np.int64) + base,
                np.minimum(ranked, EMPTY - np.uint32(1)),
            )

    return _grouped(throw, _probe_orders(rng, np.zeros(NUM_PERM, dtype=np.int64)))


def shipped_kernel(scheme: str) -> Kernel:
    """lsh_frame's own kernel for ``scheme`` on the folded token bits."""
    if scheme == "fss32":
        a, b = sketch.parameters(SEED, NUM_PERM)
        return lambda tokens, offsets, out: sketch.sketch(tokens, offsets, a, b, out)
    permute = kernels.affine32_permute(*kernels.affine32_parameters(SEED, NUM_PERM))
    return lambda tokens, offsets, out: kernels.minhash(tokens, offsets, permute, out)


def mean_abs_error(
    signatures: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], exact: np.ndarray
) -> float:
    """Mean absolute error of the share of equal slots against the exact Jaccard."""
    estimate = (signatures[pairs[0]] == signatures[pairs[1]]).mean(axis=1)
    return float(np.abs(estimate - exact).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    log = _common.log_to_stderr("oph")
    frame = lf.datasets.make_customers(arguments.n, seed=1)
    text = frame["given_name"].str.cat(
        frame[["surname", "street_address", "city"]], sep=" ", na_rep=""
    )
    config = lf.ShingleConfig(k=3)
    rows = 16_384  # sign_array's chunks: the shipped kernels' working size
    chunks = [
        tokenize(text_array(text.iloc[start : start + rows], owner="oph"), config)
        for start in range(0, len(text), rows)
    ]
    folded = [(kernels.fold32(chunk.hashes), chunk.offsets) for chunk in chunks]
    tokens = sum(chunk.hashes.size for chunk in chunks)
    rng = np.random.default_rng(5)
    truth = lf.datasets.true_pairs(frame["entity_id"])
    chosen = rng.choice(len(truth), min(1000, len(truth)), replace=False)
    duplicates = (truth["left"].to_numpy()[chosen], truth["right"].to_numpy()[chosen])
    left, right = rng.integers(0, len(frame), (2, 1000))
    random_pairs = (left[left != right], right[left != right])
    chunk_of = np.concatenate(
        [np.full(len(c.offsets) - 1, i) for i, c in enumerate(chunks)]
    )
    row_in = np.arange(len(frame)) - np.repeat(
        np.arange(0, len(frame), rows), [len(c.offsets) - 1 for c in chunks]
    )

    def token_set(row: int) -> set[int]:
        chunk = chunks[chunk_of[row]]
        at = row_in[row]
        return set(chunk.hashes[chunk.offsets[at] : chunk.offsets[at + 1]].tolist())

    def exact(pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        values = []
        for one, other in zip(*pairs, strict=True):
            first, second = token_set(int(one)), token_set(int(other))
            values.append(len(first & second) / len(first | second))
        return np.array(values)

    exact_duplicates, exact_random = exact(duplicates), exact(random_pairs)
    methods: dict[str, Kernel] = {
        "classic (affine32, default)": shipped_kernel("affine32"),
        "fss32 (shipped)": shipped_kernel("fss32"),
        **{
            f"oph, {bins} bins per repetition": oph_kernel(bins)
            for bins in (8, 16, 32, 128)
        },
        **{
            f"fss cut at {r} rounds + densification": fss_cut_kernel(r)
            for r in (8, 12, 16)
        },
    }
    table = []
    for name, kernel in methods.items():
        log(name)
        out = np.zeros((len(frame), NUM_PERM), dtype=np.uint32)
        times = []
        for _ in range(arguments.repeat):
            started = time.perf_counter()
            row = 0
            for hashes, offsets in folded:
                count = offsets.size - 1
                kernel(hashes, offsets, out[row : row + count])
                row += count
            times.append(time.perf_counter() - started)

        dup = mean_abs_error(out, duplicates, exact_duplicates)
        rand = mean_abs_error(out, random_pairs, exact_random)
        table.append(
            [
                name,
                f"{min(times):.2f}",
                f"{tokens * NUM_PERM / min(times) / 1e9:.2f}"
                if "classic" in name
                else "",
                f"{dup:.4f}",
                f"{rand:.4f}",
                f"{(dup + rand) / 2:.4f}",
            ]
        )
    print(
        _common.report_header("One-permutation hashing beside the shipped schemes", [])
    )
    print(
        f"{arguments.n:,} records, {tokens:,} tokens ({tokens / arguments.n:.1f} per "
        f"record), num_perm {NUM_PERM}, one thread, best of {arguments.repeat}\n"
    )
    print(
        _common.markdown_table(
            ["kernel", "time (s)", "G hash-min/s", "MAE dup", "MAE random", "MAE all"],
            table,
        )
    )


if __name__ == "__main__":
    main()
