"""Near-duplicate pages: SimHash and MinHash on pages with boilerplate (issue 44).

    pip download gensim --no-deps -d benchmarks/.data    # the text (see _pages.py)
    python benchmarks/pages.py                           # quality, then 30,000 pages
    python benchmarks/pages.py --parts quality           # quality only (~2 minutes)
    python benchmarks/pages.py --parts speed --pages 30000

Two parts:

1. **Quality** on about 2,200 pages (1,250 real texts of news, Usenet posts and
   Wikipedia sections, each published on a site with its header, footer and
   advertisements, about 0.8 republications each with a few edits; see
   ``_pages.py``): every method makes entities, measured as pairs of pages in one
   entity against the truth (precision, recall, F1), with the largest entity.
   SimHash as ``lsh-frame dedupe --method simhash`` runs it (the fingerprints'
   pairs within a distance, then connected components); MinHash as
   ``df.lsh.dedupe`` runs it (blocking, scores, the learned decision, entities),
   with the default fields and with word or stop-word shingles. The target: the
   recommended setting finds >= 95% of the republished pages at precision >= 0.95.
2. **Speed** on 30,000 pages (all 2,109 texts, about 13 republications each):
   ``df.lsh.dedupe(["page"])`` end to end, each step's seconds, and the rate of
   scoring the candidate pairs (``lf.score`` on them, planning included).
   Targets: the dedupe in <= 30 s; scoring >= 100,000 pairs/s.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
import _pages

import lsh_frame as lf
from lsh_frame import _progress
from lsh_frame.block.hamming import entities

log = _common.log_to_stderr("pages")

RECOMMENDED = 'MinHash `dedupe("page")` (default, recommended)'


def _quiet(function: Any, *arguments: Any, **options: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*arguments, **options)
    return result, [str(warning.message) for warning in caught]


def quality(texts: int) -> str:
    pages = _pages.make_pages(limit=texts)
    truth = pages["doc"]
    republished = int((truth.value_counts() > 1).sum())
    log(f"{len(pages):,} pages of {truth.nunique():,} texts")
    methods: list[tuple[str, Any]] = []
    for label, options in [
        ("words, counts (docs/simhash.md for pages)", {}),
        ("words, IDF", {"weights": "idf"}),
        ("word 2-grams, IDF", {"weights": "idf", "k": 2}),
        ("stop-word shingles", {"kind": "stopword"}),
        ("character 5-grams", {"kind": "char", "k": 5}),
    ]:
        for distance in (3, 6, 10):
            methods.append((
                f"SimHash {label}, distance {distance}",
                lambda options=options, distance=distance: pd.Series(
                    entities(pages, ["page"], distance=distance, **options)[0],
                    index=pages.index,
                ),
            ))  # fmt: skip
    for label, fields in [
        (RECOMMENDED, ["page"]),
        *[
            (f'MinHash `Field("page", {text})`', [lf.Field("page", **options)])
            for text, options in [
                ('shingle="stopword"', {"shingle": "stopword"}),
                ('shingle="word"', {"shingle": "word"}),
                ('shingle="word", k=3', {"shingle": "word", "k": 3}),
            ]
        ],
    ]:
        methods.append((
            label,
            lambda fields=fields: pages[["page"]].lsh.dedupe(fields)["cluster_id"],
        ))  # fmt: skip
    rows = []
    measured = {}
    for label, method in methods:
        started = time.perf_counter()
        ids, warned = _quiet(method)
        seconds = time.perf_counter() - started
        score = measured[label] = lf.evaluate(ids, truth)
        giant = any("Weak links may be chaining" in message for message in warned)
        largest = int(ids.value_counts().max())
        rows.append([
            label, f"{score.precision:.3f}", f"{score.recall:.3f}", f"{score.f1:.3f}",
            f"{largest:,}", "yes" if giant else "", f"{seconds:.1f}",
        ])  # fmt: skip
        log(f"{label}: P {score.precision:.3f} R {score.recall:.3f} ({seconds:.1f} s)")
    recommended = measured[RECOMMENDED]
    ok = recommended.recall >= 0.95 and recommended.precision >= 0.95
    return "\n".join([
        f"## Quality: {len(pages):,} pages of {truth.nunique():,} texts "
        f"({republished:,} republished), {len(_pages.true_pairs(truth)):,} true pairs",
        "",
        _common.markdown_table(
            ["method", "precision", "recall", "F1", "largest entity",
             "giant-entity warning", "seconds"],
            rows, "lrrrrcr",
        ),
        "",
        f"Target (recommended setting: recall >= 0.95 at precision >= 0.95): "
        f"{_common.pass_miss(ok)} (precision {recommended.precision:.3f}, "
        f"recall {recommended.recall:.3f}).",
        "",
    ])  # fmt: skip


def speed(copies: float, target_pages: int) -> str:
    pages = _pages.make_pages(copies)[["page", "doc"]]
    log(f"{len(pages):,} pages of {pages['doc'].nunique():,} texts")
    frame = pages[["page"]]
    started = time.perf_counter()
    with _progress.recording() as steps:
        result, _ = _quiet(frame.lsh.dedupe, ["page"])
    total = time.perf_counter() - started
    ended = started + total
    timeline = [
        [label, f"{(following - at):.2f}"]
        for (label, at), (_, following) in zip(
            steps, [*steps[1:], ("end", ended)], strict=True
        )
    ]
    score = lf.evaluate(result["cluster_id"], pages["doc"])
    log(f"dedupe {total:.1f} s")
    candidates, _ = _quiet(frame.lsh.candidates, ["page"])
    started = time.perf_counter()
    _quiet(frame.lsh.score, candidates, ["page"])
    scoring = time.perf_counter() - started
    rate = len(candidates) / scoring
    log(f"score {len(candidates):,} pairs in {scoring:.1f} s")
    return "\n".join([
        f"## Speed: {len(pages):,} pages ({pages['doc'].nunique():,} texts)",
        "",
        f"- `df.lsh.dedupe([\"page\"])`: **{total:.1f} s** "
        f"({_common.pass_miss(total <= 30 if len(pages) >= target_pages else None)} "
        f"<= 30 s), {result.attrs['lsh_frame']['pairs']:,} candidate pairs, "
        f"precision {score.precision:.3f}, recall {score.recall:.3f}.",
        f"- `lf.score` of {len(candidates):,} candidate pairs (planning included): "
        f"{scoring:.1f} s, **{rate:,.0f} pairs/s** "
        f"({_common.pass_miss(rate >= 100_000)} >= 100,000).",
        f"- Load average after: {_common.load_average()}.",
        "",
        "Steps of the dedupe (seconds):",
        "",
        _common.markdown_table(["step", "seconds"], timeline),
        "",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", default=["quality", "speed"],
                        choices=["quality", "speed"])  # fmt: skip
    parser.add_argument("--texts", type=int, default=1_250, help="quality corpus")
    parser.add_argument("--pages", type=int, default=30_000, help="speed corpus")
    arguments = parser.parse_args()
    print(_common.report_header("Near-duplicate pages (issue 44)", ["gensim"]))
    if "quality" in arguments.parts:
        print(quality(arguments.texts), flush=True)
    if "speed" in arguments.parts:
        texts = len(_pages.texts())
        copies = max(arguments.pages / texts - 1, 0.0)
        print(speed(copies, arguments.pages), flush=True)


if __name__ == "__main__":
    main()
