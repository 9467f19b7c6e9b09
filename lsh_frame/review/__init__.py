"""A person looks at the pairs: the answer loop.

:mod:`.session` holds the loop's state and its pure steps (the next question,
an answer, taking one back, the refit); :mod:`.show` draws a pair side by side
with the characters that differ marked (text or HTML); :mod:`.answers` reads
and writes the answers file (``left,right,match``), every write atomic;
:mod:`.label` is :func:`label_pairs`, the loop in a notebook or at a Python
prompt; :mod:`.notebook` is :class:`LabelSession`, the same loop one reply per
call (a notebook cell per answer, nothing waiting on ``input()``).
``lsh-frame label`` (:mod:`lsh_frame.cli.label`) is the same loop in a
terminal.
"""

from lsh_frame.review.label import label_pairs
from lsh_frame.review.notebook import LabelSession

__all__ = ["LabelSession", "label_pairs"]
