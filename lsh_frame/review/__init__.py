"""A person looks at the pairs: the review page and the answer loop.

:func:`review` writes one self-contained HTML file of scored pairs (see
:mod:`lsh_frame.review.page`; :mod:`lsh_frame.review.payload` computes the data
it shows).

The answer loop: :mod:`.session` holds the loop's state and its pure steps (the
next question, an answer, taking one back, the refit); :mod:`.show` draws a
pair side by side with the characters that differ marked (text or HTML);
:mod:`.answers` reads and writes the answers file (``left,right,match``), every
write atomic; :mod:`.label` is :func:`label_pairs`, the loop in a notebook or
at a Python prompt; :mod:`.notebook` is :class:`LabelSession`, the same loop
one reply per call (a notebook cell per answer, nothing waiting on
``input()``). ``lsh-frame label`` (:mod:`lsh_frame.cli.label`) is the same loop
in a terminal.
"""

from __future__ import annotations

from lsh_frame.review.label import label_pairs
from lsh_frame.review.notebook import LabelSession
from lsh_frame.review.page import review

__all__ = ["LabelSession", "label_pairs", "review"]
