"""Which fields can tell two people apart on their own: the fallback's fields.

Where no match model can be learned (too few pairs), ``min_score="auto"``
falls back to a cut on ``score``. Over every field, that cut lets columns that
many records share by chance — a tier, a city of a small table, a balance, a
postcode — add up to a match between two different people. The fallback
therefore also asks the pair to reach the cut on the *identifying* fields
alone: a low-information field can keep a pair apart, never join it.

A field identifies when, read from the rows ``"auto"`` samples:

- it is not compared as a number (amounts and counts lie close by chance);
- its values are not short codes of digits (at least :data:`SHORT_CODE_SHARE`
  of them digits only, with a median under :data:`DIGITS_MIN` digits:
  postcodes, street numbers, years, amounts written as text);
- two of its values drawn at random agree at most :data:`MAX_CHANCE` of the
  time (``Σ c(c − 1) / n(n − 1)`` over each value's count ``c`` among the
  ``n`` non-blank values: a tier of three values agrees a third of the time),
  rows that read the same on every field counted once (copies of a record
  share their name by being copies, not by chance).

Names, e-mails, addresses, phone numbers, ids and dates of birth identify.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.block.keys import _field_text

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field

__all__ = ["FieldInformation", "field_information"]

#: A field whose values two random records share more often than this says
#: too little to join two records on its own.
MAX_CHANCE = 0.1

#: Share of digit-only values above which a field is read as codes of digits.
SHORT_CODE_SHARE = 0.9

#: Codes of digits with a median under this many digits are short codes
#: (postcodes, street numbers, years, amounts), shared by many people. The
#: same length as ``compare="auto"`` reads phone numbers and ids at.
DIGITS_MIN = 7

#: Comparisons that read values as quantities, which lie close by chance.
_QUANTITIES = frozenset({"number"})


@dataclass(frozen=True)
class FieldInformation:
    """How much a field says on its own, as read for the fallback."""

    label: str
    #: Whether the field can join two records on its own (see the module).
    identifying: bool
    #: How often two random non-blank values agree exactly (NaN: fewer than 2).
    chance: float
    #: Why it cannot, when it cannot ("" when it identifies).
    reason: str

    def to_dict(self) -> dict[str, object]:
        """Return the reading as plain values for ``attrs``."""
        return {
            "field": self.label,
            "identifying": self.identifying,
            "chance_agreement": None
            if np.isnan(self.chance)
            else round(self.chance, 4),
            **({"reason": self.reason} if self.reason else {}),
        }


def chance_agreement(text: pa.Array) -> float:
    """How often two random non-blank values of ``text`` are the same value.

    Values are compared after trimming and casefolding.

    Examples
    --------
    >>> round(chance_agreement(pa.array(["gold", "Gold", "silver", "gold "])), 3)
    0.5
    >>> chance_agreement(pa.array(["a", "b", None, ""]))
    0.0
    """
    values = pc.utf8_lower(pc.utf8_trim_whitespace(text.cast(pa.large_string())))
    values = pc.filter(values, pc.fill_null(pc.not_equal(values, ""), False))
    total = len(values)
    if total < 2:
        return float("nan")
    counts = pc.value_counts(values).field("counts").to_numpy().astype(np.float64)
    return float(np.sum(counts * (counts - 1)) / (total * (total - 1)))


def _short_digit_codes(text: pa.Array) -> bool:
    """Whether most values are digits only, with a median under DIGITS_MIN.

    Examples
    --------
    >>> _short_digit_codes(pa.array(["4870", "800", "2606", None]))
    True
    >>> _short_digit_codes(pa.array(["774674346", "418709430"]))
    False
    """
    values = pc.utf8_trim_whitespace(text.cast(pa.large_string()))
    present = pc.filter(values, pc.fill_null(pc.not_equal(values, ""), False))
    if not len(present):
        return False
    digits = pc.filter(present, pc.match_substring_regex(present, r"^[0-9]+$"))
    if len(digits) < SHORT_CODE_SHARE * len(present):
        return False
    lengths = pc.utf8_length(digits).to_numpy(zero_copy_only=False)
    return bool(np.median(lengths) < DIGITS_MIN)


def field_information(
    specs: list[Field],
    comparisons: dict[str, str],
    samples: list[pd.DataFrame],
    owner: str,
) -> list[FieldInformation]:
    """Read whether each field identifies, from the rows ``"auto"`` samples.

    Rows whose fields all read the same are counted once: copies of one record
    share their name, and say nothing of how often two people do.
    """
    if not specs:
        return []
    texts = {
        spec.label: pa.concat_arrays(
            [_field_text(sample, spec, owner=owner) for sample in samples]
        )
        for spec in specs
    }
    rows = pd.DataFrame({label: text.to_pandas() for label, text in texts.items()})
    distinct = pa.array(~rows.duplicated().to_numpy())
    readings = []
    for spec in specs:
        text = texts[spec.label].filter(distinct)
        chance = chance_agreement(text)
        reason = ""
        if comparisons[spec.label] in _QUANTITIES:
            reason = "compared as a number"
        elif _short_digit_codes(text):
            reason = "short codes of digits"
        elif chance > MAX_CHANCE:
            reason = f"two records share a value {chance:.0%} of the time"
        readings.append(FieldInformation(spec.label, not reason, chance, reason))
    return readings
