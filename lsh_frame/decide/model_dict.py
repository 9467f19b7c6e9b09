"""A match model as plain JSON: :meth:`MatchModel.to_dict` and ``from_dict``.

The dict is what ``attrs["lsh_frame"]["model"]`` holds and what ``--save-model``
writes; ``from_dict`` checks every part of it, so a model edited or saved by an
older version gives a clear error, not a wrong decision.
"""

from __future__ import annotations

import datetime
import numbers
import re
from typing import TYPE_CHECKING, Any, get_args

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import _CLASSIC_CUTS, level_names
from lsh_frame.config import NEIGHBOURS_KEY, Comparison
from lsh_frame.decide.em import _field_pairs_from, _together_from
from lsh_frame.decide.matching import Matching
from lsh_frame.decide.taught import Taught
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.decide.model import MatchModel


def from_dict(
    cls: type[MatchModel],
    learned: Any,
    owner: str = "MatchModel",
    argument: str = "min_score",
) -> MatchModel:
    """Rebuild a model from ``attrs["lsh_frame"]["model"]`` (or pass one through).

    So a model learned on a full run (a table, or two linked tables) can
    decide later batches — new records against a saved table — where too
    few candidates would make a poor model of their own. ``owner`` and
    ``argument`` name the function and parameter in error messages.
    """
    if isinstance(learned, cls):
        return learned
    try:
        prior = float(learned["prior"])
        fields = learned["fields"]
        m = {label: np.asarray(f["m"], dtype=np.float64) for label, f in fields.items()}
        u = {label: np.asarray(f["u"], dtype=np.float64) for label, f in fields.items()}
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(
            f"{owner} got a dict for {argument} that is not a learned model: "
            "pass scored.attrs['lsh_frame']['model'] from an earlier score() "
            f"with min_score='auto' ({type(error).__name__}: {error})."
        ) from None
    cuts = learned.get("cuts", list(_CLASSIC_CUTS))
    field_cuts = learned.get("field_cuts", {})
    if not isinstance(field_cuts, dict) or not all(label in m for label in field_cuts):
        raise ConfigError(
            f"{owner} got a learned model whose 'field_cuts' is not a mapping of "
            f"its fields to cuts. Got {field_cuts!r}."
        )
    for given in [cuts, *field_cuts.values()]:
        if (
            not isinstance(given, (list, tuple))
            or not given
            or not all(
                isinstance(cut, numbers.Real) and not isinstance(cut, bool)
                for cut in given
            )
            or list(given) != sorted(given, reverse=True)
            or len(set(given)) != len(given)
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'cuts' are not a falling list "
                f"of score cuts. Got {given!r}."
            )
    size = len(cuts) + 1
    valid = 0 < prior < 1 and all(
        table[label].shape == (len(field_cuts.get(label, cuts)) + 1,)
        and np.all(table[label] > 0)
        and abs(table[label].sum() - 1) < 1e-3
        for table in (m, u)
        for label in table
    )
    if not valid or not m:
        raise ConfigError(
            f"{owner} got a learned model with invalid numbers: the prior must be "
            f"in (0, 1) and each field's m and u {size} positive shares summing "
            "to 1."
        )
    compare = learned.get("compare", {})
    allowed = set(get_args(Comparison)) - {"auto"}
    codes_label = learned.get("codes")
    if not isinstance(compare, dict) or not all(
        label in m and (value in allowed or (value == "codes" and label == codes_label))
        for label, value in compare.items()
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'compare' is not a mapping of its "
            f"fields to comparisons ({', '.join(sorted(allowed))}). Got "
            f"{compare!r}."
        )
    no_values = learned.get("no_values", [])
    if not isinstance(no_values, (list, tuple)) or not all(
        isinstance(label, str) and label not in m for label in no_values
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'no_values' is not a list of "
            f"field names other than its fields ({', '.join(sorted(m))}). Got "
            f"{no_values!r}."
        )
    alone_prior = learned.get("alone_prior")
    if alone_prior is not None and not (
        isinstance(alone_prior, numbers.Real)
        and not isinstance(alone_prior, bool)
        and 0 < float(alone_prior) < 1
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'alone_prior' is not a share in "
            f"(0, 1). Got {alone_prior!r}."
        )
    match_cut = learned.get("match_cut", 0.5)
    if not (
        isinstance(match_cut, numbers.Real)
        and not isinstance(match_cut, bool)
        and 0 < float(match_cut) <= 0.5
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'match_cut' is not a probability "
            f"in (0, 0.5]. Got {match_cut!r}."
        )
    alone_keys = learned.get("alone_keys", [NEIGHBOURS_KEY])
    if not isinstance(alone_keys, (list, tuple)) or not all(
        isinstance(label, str) for label in alone_keys
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'alone_keys' is not a list of "
            f"key names. Got {alone_keys!r}."
        )
    together = _together_from(learned.get("together", []), m, owner)
    swaps, shifts = (
        _field_pairs_from(learned, name, m, owner) for name in ("swaps", "shifts")
    )
    nicknames = learned.get("nicknames", [])
    if not isinstance(nicknames, (list, tuple)) or not all(
        isinstance(label, str) and label in m for label in nicknames
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'nicknames' is not a list of its "
            f"fields ({', '.join(sorted(m))}). Got {nicknames!r}."
        )
    placeholders = read_placeholders(learned.get("placeholders", {}), m, owner)
    matching = _matching_from(learned.get("matching"), owner)
    taught = _taught_from(learned.get("taught"), m, owner)
    codes = learned.get("codes")
    if codes is not None and not (
        isinstance(codes, str) and (codes in m or codes in no_values)
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'codes' is not one of its fields "
            f"({', '.join(sorted(m))}). Got {codes!r}."
        )
    return cls(
        prior=prior,
        m=m,
        u=u,
        together=together,
        compare=dict(compare),
        no_values=tuple(no_values),
        alone_prior=None if alone_prior is None else float(alone_prior),
        alone_keys=tuple(alone_keys),
        swaps=swaps,
        shifts=shifts,
        nicknames=tuple(nicknames),
        placeholders=placeholders,
        match_cut=float(match_cut),
        matching=matching,
        codes=codes,
        taught=taught,
        cuts=tuple(float(cut) for cut in cuts),
        field_cuts={
            label: tuple(float(cut) for cut in given)
            for label, given in field_cuts.items()
        },
    )


def to_dict(self: MatchModel) -> dict[str, Any]:
    """Return the learned numbers: prior, and m, u and weight (bits) per level.

    A taught model's weights are those that decide: the learned ones plus the
    answers' shifts (``taught_shift``, in bits, per level).
    """

    def shift_bits(label: str) -> npt.NDArray[np.float64] | float:
        if self.taught is None or label not in self.taught.shifts:
            return 0.0
        return self.taught.shifts[label] / np.log(2)

    return {
        "prior": self.prior,
        "levels": level_names(self.cuts),
        "cuts": list(self.cuts),
        "field_cuts": {label: list(cuts) for label, cuts in self.field_cuts.items()},
        "fields": {
            label: {
                "m": self.m[label].tolist(),
                "u": self.u[label].tolist(),
                "weight": (np.log2(self.m[label] / self.u[label]) + shift_bits(label))
                .round(3)
                .tolist(),
                **(
                    {
                        "taught_shift": (self.taught.shifts[label] / np.log(2))
                        .round(3)
                        .tolist()
                    }
                    if self.taught is not None and label in self.taught.shifts
                    else {}
                ),
            }
            for label in self.m
        },
        "no_values": list(self.no_values),
        **({} if self.alone_prior is None else {"alone_prior": self.alone_prior}),
        "alone_keys": list(self.alone_keys),
        **(
            {"together": [group.to_dict() for group in self.together]}
            if self.together
            else {}
        ),
        **({"swaps": [list(pair) for pair in self.swaps]} if self.swaps else {}),
        **({"shifts": [list(pair) for pair in self.shifts]} if self.shifts else {}),
        **({"nicknames": list(self.nicknames)} if self.nicknames else {}),
        **(
            {"placeholders": placeholders_dict(self.placeholders)}
            if self.placeholders
            else {}
        ),
        "match_cut": self.match_cut,
        **({} if self.taught is None else {"taught": self.taught.to_dict()}),
        **({} if self.matching is None else {"matching": self.matching.to_dict()}),
        **({} if self.codes is None else {"codes": self.codes}),
    }


def _taught_from(
    spec: Any, m: dict[str, npt.NDArray[np.float64]], owner: str
) -> Taught | None:
    """Read what a saved model's answers taught it (absent: nothing)."""
    if spec is None:
        return None
    try:
        taught = Taught.from_dict(spec)
    except (TypeError, KeyError, ValueError, AttributeError):
        taught = None
    if (
        taught is None
        or not all(
            label in m
            and values.shape == m[label].shape
            and bool(np.isfinite(values).all())
            for label, values in taught.shifts.items()
        )
        or not np.isfinite(taught.prior_shift)
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'taught' is not {{'shifts': {{field: "
            "one number per level}, 'prior_shift': number, 'answers': count, "
            f"'matches': count, 'date': day}} over its fields. Got {spec!r}."
        )
    return taught


def _matching_from(spec: Any, owner: str) -> Matching | None:
    """Read a saved model's matching reading (absent: pairs decided one by one)."""
    if spec is None:
        return None
    sides = spec.get("exclusive") if isinstance(spec, dict) else None
    rho = spec.get("rho") if isinstance(spec, dict) else None
    if (
        not isinstance(sides, list)
        or not sides
        or not set(sides) <= {"left", "right"}
        or not isinstance(rho, dict)
        or set(rho) != set(sides)
        or not all(
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and 0 < float(value) < 1
            for value in rho.values()
        )
    ):
        raise ConfigError(
            f"{owner} got a learned model whose 'matching' is not "
            "{'exclusive': ['left' and/or 'right'], 'rho': {side: share in (0, 1)}}. "
            f"Got {spec!r}."
        )
    return Matching.from_dict(spec)


def placeholders_dict(placeholders: dict[str, tuple[int, ...]]) -> dict[str, list[str]]:
    """Return placeholder days as saved: ``{"dob": ["01-01"]}``."""
    return {
        label: [f"{day // 100:02d}-{day % 100:02d}" for day in days]
        for label, days in placeholders.items()
    }


def read_placeholders(
    given: Any, fields: Any, owner: str
) -> dict[str, tuple[int, ...]]:
    """Read saved placeholder days (see :func:`placeholders_dict`) of ``fields``."""
    problem = (
        f"{owner} got a learned model whose 'placeholders' is not a mapping of "
        "its fields to lists of days written 'mm-dd'"
    )
    if not isinstance(given, dict) or not all(label in fields for label in given):
        raise ConfigError(f"{problem} ({', '.join(sorted(fields))}). Got {given!r}.")
    result = {}
    for label, days in given.items():
        if not isinstance(days, (list, tuple)):
            raise ConfigError(f"{problem}. Got {days!r} for {label!r}.")
        read = []
        for day in days:
            written = re.fullmatch(r"([0-9]{2})-([0-9]{2})", str(day))
            month, of_month = (0, 0) if written is None else map(int, written.groups())
            try:
                datetime.date(2000, month, of_month)  # a leap year: 02-29 is a day
            except ValueError:
                raise ConfigError(f"{problem}. Got {day!r} for {label!r}.") from None
            read.append(month * 100 + of_month)
        result[label] = tuple(sorted(set(read)))
    return result
