"""lsh_frame: tabular entity resolution for pandas.

``import lsh_frame`` registers the ``df.lsh`` accessor. Text columns become
hashed shingles and MinHash signatures stored as Arrow columns.
"""

from __future__ import annotations

from lsh_frame import accessor as _accessor  # noqa: F401  (registers df.lsh)
from lsh_frame import datasets, plot
from lsh_frame._arrow import MinHashSignature, MinHashType
from lsh_frame.blocking import BlockingReport, Field, blocking_report, candidates
from lsh_frame.cluster import cluster
from lsh_frame.compare import pairs, score
from lsh_frame.config import MinHashConfig, ShingleConfig
from lsh_frame.errors import (
    ColumnError,
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    LshFrameError,
    MergeError,
    SignatureMismatchError,
    TooManyPairsError,
)
from lsh_frame.evaluate import Evaluation, evaluate
from lsh_frame.explain import Explanation, explain
from lsh_frame.index import Index
from lsh_frame.jobs import dedupe, drop_duplicates, duplicated, link, merge
from lsh_frame.lsh import LshPlan, plan, plan_for_budget
from lsh_frame.minhash import estimate_jaccard, minhash
from lsh_frame.shingle import normalize, shingles
from lsh_frame.simhash import (
    SimHashConfig,
    SimHashType,
    hamming_distance,
    hamming_nearest,
    hamming_pairs,
    simhash,
)
from lsh_frame.vectors import cosine_nearest

__version__ = "0.1.0.dev0"

__all__ = [
    "BlockingReport",
    "ColumnError",
    "ColumnTypeError",
    "ConfigError",
    "ConfigTypeError",
    "Evaluation",
    "Explanation",
    "Field",
    "Index",
    "LshFrameError",
    "LshPlan",
    "MergeError",
    "MinHashConfig",
    "MinHashSignature",
    "MinHashType",
    "ShingleConfig",
    "SignatureMismatchError",
    "SimHashConfig",
    "SimHashType",
    "TooManyPairsError",
    "__version__",
    "blocking_report",
    "candidates",
    "cluster",
    "cosine_nearest",
    "datasets",
    "dedupe",
    "drop_duplicates",
    "duplicated",
    "estimate_jaccard",
    "evaluate",
    "explain",
    "hamming_distance",
    "hamming_nearest",
    "hamming_pairs",
    "link",
    "merge",
    "minhash",
    "normalize",
    "pairs",
    "plan",
    "plan_for_budget",
    "plot",
    "score",
    "shingles",
    "simhash",
]
