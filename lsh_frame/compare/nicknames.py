"""Given names and their familiar forms: ``will`` and ``bill`` are ``william``.

A field holds *given names* when at least ``NAME_SHARE`` of its present values
(rows, over every record of the tables) are names of :data:`GROUPS` — a
statistic of the data, never of a column's name. In such a field two different
values of one group (``edward`` and ``ned``) are read by the decision as nearly
agreeing; the match model learns from the plain scores.

A bare initial (``r`` or ``r.``) against a name it begins (``richard``) is
read as agreeing at the lowest level that still counts as agreeing: it is
consistent with the name, and says less than the name would.

Two names are equivalent when they share a group: ``al`` is ``albert`` and
``alan``, but ``albert`` is not ``alan``. The list is written for this package,
apart from the nicknames :mod:`lsh_frame.datasets` writes (see
:mod:`lsh_frame.datasets.wordlists`): English-language given names, common and
historical diminutives.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.compare.text import _encode, _ValuePairs
from lsh_frame.config import ShingleConfig
from lsh_frame.text.shingle import normalize

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.compare.text import _Encoded

#: A field holds given names when at least this share of its present values
#: are names of the groups: 30-66% for the given-name columns of the
#: development sets (FEBRL, fake_1000, historical_50k, make_customers), at most
#: 7% for surnames and places, 0-0.3% for every other column but one.
NAME_SHARE = 0.25
#: ... and at least this many different ones: a column of codes can hold one
#: that is also a familiar form (FEBRL's state ``vic``, a quarter of its rows).
MIN_NAMES = 10

# fmt: off
#: Each group: a name and its familiar forms (lower case).
GROUPS: tuple[tuple[str, ...], ...] = (
    ("william", "will", "willie", "willy", "bill", "billy", "billie", "liam", "wm"),
    ("robert", "rob", "robbie", "bob", "bobby", "bert", "robin", "robt"),
    ("richard", "rick", "ricky", "dick", "dickie", "rich", "richie", "ritchie"),
    ("edward", "ed", "eddie", "eddy", "ted", "teddy", "ned", "neddy", "edw"),
    ("edmund", "ed", "eddie", "ted", "ned"),
    ("edwin", "ed", "eddie", "ned"),
    ("john", "jack", "johnny", "jon", "jock", "jno"),
    ("james", "jim", "jimmy", "jimmie", "jamie", "jas", "jem"),
    ("thomas", "tom", "tommy", "thos"),
    ("charles", "charlie", "chas", "chuck", "chaz", "chas."),
    ("henry", "harry", "hal", "hank", "hen"),
    ("harold", "harry", "hal"),
    ("joseph", "joe", "joey", "jos", "jo"),
    ("samuel", "sam", "sammy", "saml"),
    ("samson", "sam"),
    ("benjamin", "ben", "benny", "benjy", "benj"),
    ("daniel", "dan", "danny"),
    ("david", "dave", "davy", "davie"),
    ("michael", "mike", "mick", "micky", "mickey", "mikey"),
    ("peter", "pete"),
    ("patrick", "pat", "paddy", "patsy"),
    ("anthony", "tony", "ant", "anton"),
    ("andrew", "andy", "drew"),
    ("alexander", "alex", "alec", "sandy", "sasha", "xander"),
    ("frederick", "fred", "freddie", "freddy", "fritz", "fredk"),
    ("alfred", "alf", "alfie", "fred", "freddie"),
    ("wilfred", "wilf", "fred"),
    ("albert", "al", "bert", "bertie"),
    ("alan", "al"),
    ("allan", "al"),
    ("allen", "al"),
    ("herbert", "herb", "bert", "bertie"),
    ("gilbert", "gil", "bert"),
    ("arthur", "art", "artie", "arty"),
    ("george", "geo", "georgie"),
    ("francis", "frank", "frankie", "fran"),
    ("lawrence", "larry", "laurie", "lawrie"),
    ("laurence", "larry", "laurie"),
    ("leonard", "len", "lenny", "leo"),
    ("nicholas", "nick", "nicky", "nico", "nic"),
    ("christopher", "chris", "kit", "kris", "christy"),
    ("stephen", "steve", "stevie"),
    ("steven", "steve", "stevie"),
    ("matthew", "matt", "matty"),
    ("timothy", "tim", "timmy"),
    ("nathaniel", "nat", "nate"),
    ("nathan", "nate", "nat"),
    ("jonathan", "jon", "jonny", "johnny"),
    ("gregory", "greg"),
    ("gerald", "gerry", "jerry"),
    ("jeremiah", "jerry", "jem"),
    ("jeremy", "jerry", "jem"),
    ("geoffrey", "geoff", "jeff"),
    ("jeffrey", "jeff"),
    ("kenneth", "ken", "kenny"),
    ("donald", "don", "donny", "donnie"),
    ("ronald", "ron", "ronnie", "ronny"),
    ("raymond", "ray"),
    ("walter", "walt", "wally", "wat"),
    ("isaac", "ike", "zac"),
    ("jacob", "jake", "jack"),
    ("joshua", "josh"),
    ("zachary", "zach", "zack", "zac"),
    ("abraham", "abe", "bram"),
    ("augustus", "gus", "gussie"),
    ("augustine", "gus", "austin"),
    ("bartholomew", "bart", "barty"),
    ("ebenezer", "eben"),
    ("ezekiel", "zeke"),
    ("lewis", "lew", "lou"),
    ("louis", "lou", "lew"),
    ("montague", "monty"),
    ("oliver", "ollie", "olly", "noll"),
    ("percival", "percy"),
    ("reginald", "reg", "reggie"),
    ("sebastian", "seb"),
    ("sidney", "sid"),
    ("sydney", "sid"),
    ("solomon", "sol"),
    ("stanley", "stan"),
    ("theodore", "theo", "ted", "teddy"),
    ("theophilus", "theo"),
    ("victor", "vic"),
    ("vincent", "vince", "vinny"),
    ("clarence", "clarrie"),
    ("cyril", "cy"),
    ("douglas", "doug", "dougie"),
    ("eugene", "gene"),
    ("ernest", "ernie"),
    ("maxwell", "max"),
    ("maximilian", "max"),
    ("mortimer", "mort"),
    ("philip", "phil", "pip"),
    ("phillip", "phil", "pip"),
    ("randolph", "randy"),
    ("rodney", "rod"),
    ("simon", "si"),
    ("terence", "terry"),
    ("tobias", "toby"),
    ("valentine", "val"),
    ("hugh", "hughie"),
    ("archibald", "archie", "archy"),
    ("cuthbert", "bert"),
    ("elizabeth", "liz", "lizzie", "lizzy", "beth", "betty", "bess", "bessie",
     "betsy", "eliza", "libby", "elsie", "lisa", "eliz"),
    ("margaret", "maggie", "meg", "peggy", "madge", "marge", "margie", "greta",
     "rita", "daisy", "margt"),
    ("mary", "molly", "polly", "mae", "mamie", "minnie", "may"),
    ("catherine", "kate", "katie", "kathy", "kitty", "cathy", "kat", "kay"),
    ("katherine", "kate", "katie", "kathy", "kitty", "kat", "kay"),
    ("kathleen", "kath", "kathy", "kate"),
    ("anne", "annie", "nan", "nancy", "nanny", "ann"),
    ("anna", "annie", "nan", "ann"),
    ("hannah", "annie", "nan"),
    ("sarah", "sally", "sadie", "sara"),
    ("susan", "sue", "susie", "suzy", "sukey"),
    ("susanna", "sue", "susie", "sukey"),
    ("rebecca", "becky", "becca"),
    ("deborah", "deb", "debbie", "debby"),
    ("dorothy", "dot", "dottie", "dolly", "dora", "dorothea"),
    ("eleanor", "ellie", "nell", "nellie", "nora", "elinor"),
    ("ellen", "ellie", "nell", "nellie"),
    ("helen", "nell", "nellie", "lena"),
    ("frances", "fran", "fanny", "frankie"),
    ("florence", "flo", "flossie", "florrie"),
    ("jane", "jenny", "jennie", "janey"),
    ("janet", "jan", "jenny", "netty"),
    ("jennifer", "jen", "jenny"),
    ("joan", "joanie", "jo"),
    ("judith", "judy", "jude"),
    ("martha", "marty", "patty", "mattie"),
    ("matilda", "tilly", "tillie", "maud", "matty"),
    ("patricia", "pat", "patty", "trish", "tricia"),
    ("victoria", "vicky", "tori", "vic"),
    ("virginia", "ginny", "ginger"),
    ("wilhelmina", "mina", "minnie", "billie"),
    ("winifred", "winnie", "freda"),
    ("christine", "chris", "chrissy", "tina"),
    ("christina", "chris", "chrissy", "tina", "kirsty"),
    ("caroline", "carol", "carrie", "caro"),
    ("carolyn", "carol", "carrie"),
    ("charlotte", "lottie", "charlie", "lotty"),
    ("cecilia", "cissy", "celia"),
    ("isabella", "bella", "izzy", "isa", "belle", "isabel"),
    ("isabel", "bella", "izzy", "isa", "belle"),
    ("jessica", "jess", "jessie"),
    ("josephine", "jo", "josie"),
    ("louisa", "lou", "lulu"),
    ("louise", "lou", "lulu"),
    ("penelope", "penny"),
    ("priscilla", "cilla"),
    ("sophia", "sophie"),
    ("theresa", "tess", "tessa", "terri", "tessie"),
    ("teresa", "tess", "tessa", "terri"),
    ("veronica", "ronnie"),
    ("amelia", "millie", "amy"),
    ("emily", "em", "emmy", "millie"),
    ("emma", "em"),
    ("abigail", "abby", "abbie"),
    ("alexandra", "alex", "sandra", "sandy", "lexi"),
    ("alice", "ally", "allie"),
    ("barbara", "barb", "babs"),
    ("bridget", "bridie", "biddy"),
    ("harriet", "hattie", "hatty"),
    ("henrietta", "etta", "hetty", "hettie"),
    ("esther", "hetty", "essie"),
    ("hester", "hetty"),
    ("mildred", "millie", "milly"),
    ("pamela", "pam"),
    ("samantha", "sam", "sammy"),
    ("stephanie", "steph"),
    ("gertrude", "gertie", "trudy"),
    ("agnes", "aggie", "nessie"),
    ("augusta", "gussie"),
    ("constance", "connie"),
    ("georgina", "georgie", "gina"),
    ("gwendolen", "gwen"),
    ("jacqueline", "jackie"),
    ("madeleine", "maddie"),
    ("marjorie", "marge", "margie"),
    ("melissa", "mel", "missy"),
    ("nicola", "nicky"),
    ("phyllis", "phyl"),
    ("rosemary", "rosie", "rose"),
    ("rosalind", "rosie", "roz"),
    ("kimberly", "kim"),
    ("sylvia", "syl"),
    ("lydia", "liddy"),
    ("olivia", "liv", "livvy"),
    ("amanda", "mandy"),
    ("miriam", "mimi"),
    ("euphemia", "effie", "phemie"),
    ("clementina", "clemmie"),
)
# fmt: on


@functools.lru_cache(maxsize=8)
def _table(config: ShingleConfig) -> tuple[pa.Array, npt.NDArray[np.bool_]]:
    """Return the names, normalised as a field is, and which are one name's forms.

    ``equal[i, j]``: names ``i`` and ``j`` (positions in the first array) are
    different and share a group.
    """
    names = sorted({name for group in GROUPS for name in group})
    encoded = normalize(pa.array(names, pa.large_string()), config).dictionary_encode()
    position = dict(zip(names, encoded.indices.to_pylist(), strict=True))
    size = len(encoded.dictionary)
    equal = np.zeros((size, size), dtype=bool)
    for group in GROUPS:
        members = sorted({position[name] for name in group})
        equal[np.ix_(members, members)] = True
    np.fill_diagonal(equal, False)
    return encoded.dictionary, equal


@dataclass(frozen=True)
class NameCheck:
    """How many of a field's present values are known given names."""

    label: str
    known: int
    present: int
    #: Different known names among them.
    names: int

    @property
    def given_names(self) -> bool:
        """Whether the field holds given names."""
        return (
            self.present > 0
            and self.known >= NAME_SHARE * self.present
            and self.names >= MIN_NAMES
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the counts, for ``attrs["lsh_frame"]["nicknames"]``."""
        return {
            "field": self.label,
            "known_rows": self.known,
            "present_rows": self.present,
            "known_names": self.names,
            "given_names": self.given_names,
        }


#: Counts of one table or partition: known rows, present rows, known names seen.
Counts = tuple[int, int, pa.Array]


def count_names(values: pa.Array, config: ShingleConfig) -> Counts:
    """Known names and present values among a field's normalised values."""
    present = int(pc.sum(pc.is_valid(values)).as_py() or 0)
    known = pc.is_in(values, value_set=_table(config)[0])
    rows = int(pc.sum(known).as_py() or 0)
    return rows, present, pc.unique(pc.filter(values, known))


def check(label: str, parts: list[Counts]) -> NameCheck:
    """Add up the counts of a field over tables or partitions."""
    names = pc.unique(pa.concat_arrays([part[2] for part in parts])) if parts else []
    return NameCheck(
        label,
        sum(part[0] for part in parts),
        sum(part[1] for part in parts),
        len(names),
    )


def equivalent(
    dictionary: pa.Array,
    low: npt.NDArray[np.int64],
    high: npt.NDArray[np.int64],
    config: ShingleConfig,
) -> npt.NDArray[np.bool_]:
    """Whether each pair of dictionary codes holds two names of one group.

    Each entry is looked up by its text, so a dictionary that holds one text
    under several codes (raw values that normalise alike) reads them alike.
    """
    names, equal = _table(config)
    at = (
        pc.fill_null(pc.index_in(dictionary, value_set=names), -1)
        .to_numpy()
        .astype(np.int64)
    )
    one, other = at[low], at[high]
    known = (one >= 0) & (other >= 0)
    result = np.zeros(low.size, dtype=bool)
    result[known] = equal[one[known], other[known]]
    return result


def initial_of(
    dictionary: pa.Array,
    low: npt.NDArray[np.int64],
    high: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Whether one value of each pair of codes is an initial the other begins.

    An initial is one letter, alone or followed by a full stop (``r``,
    ``R.``); the other value must be longer and begin with that letter, in
    any case.
    """
    bare = pc.utf8_rtrim(dictionary, characters=".")
    initial = pc.fill_null(
        pc.and_(pc.equal(pc.utf8_length(bare), 1), pc.utf8_is_alpha(bare)), False
    ).to_numpy(zero_copy_only=False)
    first = pc.utf8_lower(pc.utf8_slice_codeunits(bare, 0, 1))
    longer = pc.fill_null(pc.greater(pc.utf8_length(bare), 1), False).to_numpy(
        zero_copy_only=False
    )
    # Codes of the first letters, so pairs compare numbers.
    letter = (
        pc.fill_null(first.dictionary_encode().indices, -1).to_numpy().astype(np.int64)
    )
    same = (letter[low] == letter[high]) & (letter[low] >= 0)
    return same & ((initial[low] & longer[high]) | (initial[high] & longer[low]))


def _read_nicknames(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    crossed: dict[str, npt.NDArray[np.bool_]],
    shared: dict[str, _Encoded],
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
) -> tuple[dict[str, npt.NDArray[np.bool_]], dict[str, npt.NDArray[np.float64]]]:
    """Read familiar forms of one given name, and initials, as agreeing.

    In each field of given names, a pair whose two values are names of one
    group (``edward``, ``ned``) and score below the field's "nearly agrees"
    level gets that level's lowest score; a pair whose one value is an initial
    the other begins (``r``, ``richard``) and scores below the lowest level
    that agrees gets that level's score. A pair scored crossed (``crossed``,
    by column) keeps its crossed score. Updates ``scored``; returns the
    ``<field>_nickname`` and ``<field>_initial`` columns and the straight
    scores replaced.
    """
    by_label = {spec.label: spec for spec in plan.specs}
    marks: dict[str, npt.NDArray[np.bool_]] = {}
    straight: dict[str, npt.NDArray[np.float64]] = {}
    for label in plan.nicknames:
        spec = by_label[label]
        column = f"{label}_score"
        score = scored[label][column]
        cuts = sorted(plan.field_cuts[label], reverse=True)
        floor = cuts[1] if len(cuts) > 1 else cuts[0]
        lowest = cuts[-1]
        below = np.zeros(score.size, dtype=bool)
        with np.errstate(invalid="ignore"):
            below[score < floor] = True
        for first, second in plan.swaps:
            if label in (first, second):
                below &= ~crossed[f"{first}_{second}_swapped"]
        rows = np.flatnonzero(below)
        marks[f"{label}_nickname"] = hit = np.zeros(score.size, dtype=bool)
        marks[f"{label}_initial"] = initial = np.zeros(score.size, dtype=bool)
        if not rows.size:
            continue
        encoded = shared.get(label) or _encode(spec, left, right, owner)
        pairs = _ValuePairs.of(
            encoded.left[left_positions[rows]],
            encoded.right[right_positions[rows]],
            len(encoded.dictionary),
        )
        familiar = np.zeros(rows.size, dtype=bool)
        familiar[pairs.differ] = equivalent(
            encoded.dictionary, pairs.low, pairs.high, spec.shingle_config
        )[pairs.inverse]
        hit[rows] = familiar
        begun = np.zeros(rows.size, dtype=bool)
        begun[pairs.differ] = initial_of(encoded.dictionary, pairs.low, pairs.high)[
            pairs.inverse
        ]
        with np.errstate(invalid="ignore"):
            initial[rows] = begun & ~familiar & (score[rows] < lowest)
        straight.setdefault(column, score)
        scored[label][column] = np.where(hit, floor, np.where(initial, lowest, score))
    return marks, straight
