"""lsh_frame: tabular entity resolution for pandas.

``import lsh_frame`` registers the ``df.lsh`` accessor. Text columns become
hashed shingles and MinHash signatures stored as Arrow columns.
"""

from lsh_frame import accessor as _accessor  # noqa: F401  (registers df.lsh)
from lsh_frame import datasets, plot
from lsh_frame._version import __version__, show_versions
from lsh_frame.block.candidates import candidates
from lsh_frame.block.fields import Field
from lsh_frame.block.hamming import hamming_nearest, hamming_pairs
from lsh_frame.block.report import BlockingReport, blocking_report
from lsh_frame.block.vectors import cosine_nearest
from lsh_frame.config import MinHashConfig, ShingleConfig, SimHashConfig
from lsh_frame.decide.pairs import pairs
from lsh_frame.decide.score import score
from lsh_frame.decide.uncertain import uncertain_pairs
from lsh_frame.errors import (
    ColumnError,
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    DamagedIndexError,
    FolderExistsError,
    LshFrameError,
    MergeError,
    SignatureMismatchError,
    TooManyPairsError,
)
from lsh_frame.evaluate import Evaluation, evaluate
from lsh_frame.explain import Explanation, explain
from lsh_frame.index.index import Index
from lsh_frame.jobs.dedupe import dedupe, drop_duplicates, duplicated
from lsh_frame.jobs.link import link
from lsh_frame.jobs.merge import merge
from lsh_frame.resolve.cluster import cluster
from lsh_frame.review import review
from lsh_frame.review.label import label_pairs
from lsh_frame.review.notebook import LabelSession
from lsh_frame.sketch.banding import LshPlan, plan, plan_for_budget
from lsh_frame.sketch.minhash import estimate_jaccard, minhash
from lsh_frame.sketch.minhash_arrow import MinHashSignature, MinHashType
from lsh_frame.sketch.simhash import hamming_distance, simhash
from lsh_frame.sketch.simhash_arrow import SimHashType
from lsh_frame.text.shingle import normalize, shingles

__all__ = [
    "BlockingReport",
    "ColumnError",
    "ColumnTypeError",
    "ConfigError",
    "ConfigTypeError",
    "DamagedIndexError",
    "Evaluation",
    "Explanation",
    "Field",
    "FolderExistsError",
    "Index",
    "LabelSession",
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
    "label_pairs",
    "link",
    "merge",
    "minhash",
    "normalize",
    "pairs",
    "plan",
    "plan_for_budget",
    "plot",
    "review",
    "score",
    "shingles",
    "show_versions",
    "simhash",
    "uncertain_pairs",
]
