"""The review page: look at the matches and entities, answer, export labels.

:func:`review` writes one self-contained HTML file of scored pairs (see
:mod:`lsh_frame.review.page`); :mod:`lsh_frame.review.payload` computes the
data it shows.
"""

from __future__ import annotations

from lsh_frame.review.page import review

__all__ = ["review"]
