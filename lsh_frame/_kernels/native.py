"""Which kernels run: the compiled ones, or their numpy twins.

The compiled kernels are one C extension, ``lsh_frame._kernels._native``
(sources in ``lsh_frame/_kernels/c``), built by ``pip install .`` when the
machine has a C compiler. Each takes arrays through the buffer protocol,
releases the GIL, and gives exactly what its numpy twin in this package gives;
the callers split the work over threads as before, so the same code runs under
Dask workers. The numpy kernels stay as the reference the tests compare
against, and as the fallback.

``LSH_FRAME_KERNELS`` chooses, read when lsh_frame is imported:

- ``auto`` (the default): the compiled kernels when they were built, else numpy,
  with one warning that says why;
- ``compiled``: the compiled kernels, or an ImportError that says why not;
- ``numpy``: the numpy kernels, silently.

The dispatching kernels read :data:`compiled` on every call; the functions here
put their arguments in the form the extension takes (C-contiguous, the dtypes it
names) and allocate what it fills.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame.errors import ConfigError

__all__ = [
    "ENVIRONMENT",
    "compiled",
    "forced",
    "kernels_in_use",
]

#: The environment variable that chooses the kernels.
ENVIRONMENT = "LSH_FRAME_KERNELS"
CHOICES = ("auto", "compiled", "numpy")

_extension: ModuleType | None
try:
    _extension = importlib.import_module("lsh_frame._kernels._native")
except ImportError as error:  # not built: no compiler when installed
    _extension = None
    _import_error = f"{type(error).__name__}: {error}"
else:
    _import_error = ""


def _decide(choice: str) -> tuple[ModuleType | None, str]:
    """Return the extension to use (None: numpy) and why."""
    if choice not in CHOICES:
        raise ConfigError(
            f"The environment variable {ENVIRONMENT} must be one of "
            f"{', '.join(CHOICES)}. Got {choice!r} instead."
        )
    if choice == "numpy":
        return None, f"{ENVIRONMENT}=numpy"
    if _extension is None:
        why = (
            f"the compiled kernels are not built ({_import_error}); reinstall "
            "lsh_frame on a machine with a C compiler (pip install .) for them"
        )
        if choice == "compiled":
            raise ImportError(f"{ENVIRONMENT}=compiled, but {why}.")
        return None, why
    return _extension, (
        f"{ENVIRONMENT}=compiled" if choice == "compiled" else "built and imported"
    )


_choice = os.environ.get(ENVIRONMENT, "").strip().lower() or "auto"
#: The extension module when the compiled kernels are in use, else None.
compiled, _reason = _decide(_choice)
if compiled is None and _choice == "auto":
    warnings.warn(
        f"lsh_frame runs on its numpy kernels, which are slower: {_reason}. "
        f"Set {ENVIRONMENT}=numpy to choose them and silence this warning.",
        RuntimeWarning,
        stacklevel=2,
    )


def kernels_in_use() -> dict[str, str]:
    """Which kernels run (``"compiled"`` or ``"numpy"``), why, and how built."""
    info = {
        "kernels": "numpy" if compiled is None else "compiled",
        "reason": _reason,
        "choice": f"{ENVIRONMENT}={_choice}",
    }
    if _extension is not None:
        build = _extension.build()
        info["build"] = f"{build['compiler']}; {build['vector']}"
    return info


@contextlib.contextmanager
def forced(choice: str) -> Iterator[None]:
    """Run the block on the ``"compiled"`` or ``"numpy"`` kernels (for tests).

    Not thread-safe: it swaps the module-wide choice for the block.
    """
    global compiled, _reason
    saved = compiled, _reason
    compiled, _reason = _decide(choice)
    try:
        yield
    finally:
        compiled, _reason = saved


def _contiguous(values: npt.ArrayLike, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    return np.ascontiguousarray(values, dtype=dtype)


def _units(values: npt.NDArray[Any]) -> npt.NDArray[Any] | None:
    """Code units as the extension reads them (uint8 or uint32), or None."""
    if values.dtype not in (np.uint8, np.uint32):
        return None
    return np.ascontiguousarray(values)


def _whole(units: npt.NDArray[Any], offsets: npt.NDArray[np.int64]) -> bool:
    """Whether the records cover the units exactly (what the kernels assume)."""
    return offsets.size > 0 and offsets[0] == 0 and offsets[-1] == units.size


def _extension_module() -> Any:
    assert compiled is not None, "the compiled kernels are not in use"
    return compiled


def char_shingles(
    codepoints: npt.NDArray[Any],
    offsets: npt.NDArray[np.int64],
    k: int,
    tag: np.uint64 | npt.NDArray[np.uint64],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]] | None:
    """Twin of :func:`lsh_frame._kernels.hashing.char_shingles` (None: not here)."""
    units = _units(codepoints)
    if units is None or not _whole(units, offsets):
        return None
    offsets = _contiguous(offsets, np.int64)
    counts = np.maximum(np.diff(offsets) - k + 1, 0)
    token_offsets = np.zeros(offsets.size, dtype=np.int64)
    np.cumsum(counts, out=token_offsets[1:])
    out = np.empty(int(token_offsets[-1]), dtype=np.uint64)
    if out.size:
        tags = _contiguous(np.atleast_1d(np.asarray(tag, dtype=np.uint64)), np.uint64)
        _extension_module().char_shingles(units, offsets, k, tags, out)
    return out, token_offsets


def word_hashes(
    units: npt.NDArray[Any],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64] | None:
    """Twin of :func:`lsh_frame._kernels.hashing.word_hashes` (None: not here)."""
    data = _units(units)
    if data is None:
        return None
    starts, ends = _contiguous(starts, np.int64), _contiguous(ends, np.int64)
    out = np.empty(starts.size, dtype=np.uint64)
    if out.size:
        _extension_module().word_hashes(data, starts, ends, out)
    return out


def sign(
    scheme: str,
    hashes: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    out: npt.NDArray[Any],
) -> None:
    """Sign token hashes into ``out`` with ``scheme``'s kernel.

    The twin of ``minhash(fold32(hashes), ...)`` (affine32),
    ``minhash(reduce_mersenne61(hashes), ...)`` (mersenne61) and
    ``sketch(fold32(hashes), ...)`` (fss32) of lsh_frame._kernels; rows of
    records without a token are left untouched. ``out`` must be C-contiguous
    (a slice of rows of a signature matrix is).
    """
    if not out.flags.c_contiguous:
        raise ValueError("The signature matrix must be C-contiguous.")
    kernel = {
        "affine32": "minhash_affine32",
        "mersenne61": "minhash_mersenne61",
        "fss32": "sketch_fss32",
    }[scheme]
    getattr(_extension_module(), kernel)(
        _contiguous(hashes, np.uint64),
        _contiguous(offsets, np.int64),
        np.ascontiguousarray(a),
        np.ascontiguousarray(b),
        out,
    )


def collapse_whitespace(
    codepoints: npt.NDArray[Any],
    offsets: npt.NDArray[np.int64],
    *,
    punctuation: bool = False,
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]] | None:
    """Twin of :func:`lsh_frame._kernels.text.collapse_whitespace` (None: not here)."""
    units = _units(codepoints)
    if units is None or not _whole(units, offsets):
        return None
    offsets = _contiguous(offsets, np.int64)
    out = np.empty(units.size, dtype=units.dtype)
    out_offsets = np.empty(offsets.size, dtype=np.int64)
    _extension_module().collapse_whitespace(
        units, offsets, punctuation, out, out_offsets
    )
    return out[: int(out_offsets[-1])], out_offsets


def word_spans(
    units: npt.NDArray[Any], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Twin of :func:`lsh_frame._kernels.hashing.word_spans` (None: not here)."""
    text = _units(units)
    if text is None:
        return None
    offsets = _contiguous(offsets, np.int64)
    module = _extension_module()
    count = module.word_spans(text, offsets, None, None, None)
    starts = np.empty(count, dtype=np.int64)
    ends = np.empty(count, dtype=np.int64)
    records = np.empty(count, dtype=np.int64)
    module.word_spans(text, offsets, starts, ends, records)
    return starts, ends, records


def utf8_to_codepoints(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Twin of :func:`lsh_frame._kernels.text.utf8_to_codepoints` (its UTF-8 branch).

    ``offsets`` start at 0 and end at ``data.size``.
    """
    data = _contiguous(data, np.uint8)
    offsets = _contiguous(offsets, np.int64)
    out = np.empty(data.size, dtype=np.uint32)
    out_offsets = np.empty(offsets.size, dtype=np.int64)
    _extension_module().utf8_codepoints(data, offsets, out, out_offsets)
    return out[: int(out_offsets[-1])] if offsets.size else out[:0], out_offsets


class _Scratch(threading.local):
    """Each thread's accumulator, for the index whose norms it holds.

    A record's running sum (zero between look-ups, which leave it so) beside
    its norm.
    """

    values: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
    norms: npt.NDArray[np.float64] | None = None


_scratch = _Scratch()


def top_neighbours(
    query_records: npt.NDArray[np.int64],
    query_tokens: npt.NDArray[np.int64],
    posting_records: npt.NDArray[np.int64],
    posting_starts: npt.NDArray[np.int64],
    posting_counts: npt.NDArray[np.int64],
    weights: npt.NDArray[np.uint64],
    query_norms: npt.NDArray[np.float64],
    index_norms: npt.NDArray[np.float64],
    *,
    first: int,
    stop: int,
    n_index: int,
    same_table: bool,
    budget: tuple[float, float, int, int, int],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Twin of :func:`lsh_frame._kernels.neighbours.top_neighbours`."""
    lo, hi = np.searchsorted(query_records, [first, stop])
    records = _contiguous(query_records[lo:hi], np.int64)
    tokens = _contiguous(query_tokens[lo:hi], np.int64)
    counts = _contiguous(posting_counts, np.int64)
    relative, floor, factor, least, most = budget
    # A kept neighbour was met through at least one posting (tokens out of
    # range are refused by the kernel).
    work = int(counts.take(tokens, mode="clip").sum()) if tokens.size else 0
    room = min((stop - first) * max(min(most, n_index), 0), work)
    query = np.empty(room, dtype=np.int64)
    neighbour = np.empty(room, dtype=np.int64)
    cosine = np.empty(room, dtype=np.float64)
    index_norms = _contiguous(index_norms, np.float64)
    fill = _scratch.norms is not index_norms or _scratch.values.size < 2 * n_index
    if fill:
        _scratch.values = np.empty(2 * n_index, dtype=np.uint64)
        _scratch.norms = index_norms
    written = _extension_module().top_neighbours(
        records,
        tokens,
        _contiguous(posting_records, np.int64),
        _contiguous(posting_starts, np.int64),
        counts,
        _contiguous(weights, np.uint64),
        _contiguous(query_norms, np.float64),
        index_norms,
        first,
        stop,
        n_index,
        same_table,
        float(relative),
        float(floor),
        int(factor),
        int(least),
        int(most),
        _scratch.values,
        fill,
        query,
        neighbour,
        cosine,
    )
    return query[:written], neighbour[:written], cosine[:written]


def value_tokens(
    points: npt.NDArray[Any],
    offsets: npt.NDArray[np.int64],
    salts: npt.NDArray[np.uint64],
    n: int,
    *,
    record_bits: int,
    first_record: int,
    long_words: int | None,
    word_tag: np.uint64,
    char_tag: np.uint64,
) -> npt.NDArray[np.uint64] | None:
    """Twin of :func:`lsh_frame._kernels.neighbours.value_tokens` (None: not here)."""
    units = _units(points)
    if units is None or not _whole(units, offsets):
        return None
    offsets = _contiguous(offsets, np.int64)
    lengths = np.diff(offsets)
    out = np.empty(int((lengths // 2 + 1 + lengths + 1).sum()), dtype=np.uint64)
    written = _extension_module().value_tokens(
        units,
        offsets,
        _contiguous(salts, np.uint64),
        n,
        record_bits,
        first_record,
        -1 if long_words is None else long_words,
        int(word_tag),
        int(char_tag),
        out,
    )
    return out[:written]


def sorted_sets(
    hashes: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Each set's hashes sorted and distinct (CSR), for :func:`intersection_sizes`."""
    hashes = _contiguous(hashes, np.uint64)
    offsets = _contiguous(offsets, np.int64)
    out = np.empty(hashes.size, dtype=np.uint64)
    out_offsets = np.empty(offsets.size, dtype=np.int64)
    _extension_module().sorted_sets(hashes, offsets, out, out_offsets)
    return out[: int(out_offsets[-1])], out_offsets


def intersection_sizes(
    values: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """``|set[first[p]] ∩ set[second[p]]|`` of sets from :func:`sorted_sets`."""
    first = _contiguous(first, np.int64)
    second = _contiguous(second, np.int64)
    out = np.empty(first.size, dtype=np.int64)
    _extension_module().intersection_sizes(values, offsets, first, second, out)
    return out


def sparse_dots(
    ids: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Return the dot products :func:`lsh_frame._kernels.tfidf.cosines` adds up."""
    out = np.empty(first.size, dtype=np.float64)
    _extension_module().sparse_dots(
        _contiguous(ids, np.int64),
        _contiguous(weights, np.float64),
        _contiguous(offsets, np.int64),
        _contiguous(first, np.int64),
        _contiguous(second, np.int64),
        out,
    )
    return out


def emit_pairs(
    members: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    left_sizes: npt.NDArray[np.int64] | None,
    total: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Twin of :func:`lsh_frame._kernels.pairs.emit_pairs` (``total`` pairs)."""
    left = np.empty(total, dtype=np.int64)
    right = np.empty(total, dtype=np.int64)
    link = left_sizes is not None
    _extension_module().emit_pairs(
        _contiguous(members, np.int64),
        _contiguous(starts, np.int64),
        _contiguous(sizes, np.int64),
        _contiguous(np.empty(0) if left_sizes is None else left_sizes, np.int64),
        link,
        left,
        right,
    )
    return left, right


def components(
    nodes: int, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Twin of :func:`lsh_frame._kernels.components.components`."""
    parent = np.empty(nodes, dtype=np.int64)
    _extension_module().components(
        _contiguous(first, np.int64), _contiguous(second, np.int64), parent
    )
    return parent


def token_runs(
    packed: npt.NDArray[np.uint64], bits: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Distinct sorted tokens turned into records, their ids, each id's count.

    ``packed`` (sorted, C-contiguous) is compacted and masked in place; returns
    the records (a view of it), the ids and the counts.
    """
    ids = np.empty(packed.size, dtype=np.int64)
    lengths = np.empty(packed.size, dtype=np.int64)
    kept, count = _extension_module().token_runs(packed, bits, ids, lengths)
    return packed[:kept].view(np.int64), ids[:kept], lengths[:count]


def hash_text(
    offsets: npt.NDArray[np.int64], data: npt.NDArray[np.uint8], key: str
) -> npt.NDArray[np.uint64]:
    """``pandas.util.hash_array`` of UTF-8 values (CSR bytes), ``categorize=False``.

    SipHash-2-4 of each value's bytes with the 16-character ``key``, then the
    splitmix64 finaliser (what pandas computes from Python strings).
    """
    offsets = _contiguous(offsets, np.int64)
    out = np.empty(max(offsets.size - 1, 0), dtype=np.uint64)
    _extension_module().hash_text(
        offsets, _contiguous(data, np.uint8), key.encode("utf-8"), out
    )
    return out
