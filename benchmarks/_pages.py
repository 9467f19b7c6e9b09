"""A corpus of republished web pages with ground truth, built from real text.

The text is what the ``gensim`` package ships with its tests (LGPL-2.1; only read,
never imported or run): 349 Australian Broadcasting Corporation news articles of
the Lee corpus (``lee_background.cor``, ``lee.cor``), 200 Usenet posts of the
20 Newsgroups collection (``mini_newsgroup``, a zlib-compressed pickle read with an
unpickler that builds nothing but dicts, lists, strings and numpy arrays) and 206
English Wikipedia articles (``enwiki-latest-pages-articles1...-shortened.bz2``, cut
into their sections). Get it with either of::

    pip download gensim --no-deps -d benchmarks/.data     # the wheel, not installed
    pip install gensim                                     # or installed in the venv

Every page is published on a site: the site's header (name, menu, cookie notice,
date line, share buttons), the title, the text in paragraphs with the site's
advertisements between them, and the site's footer (related stories: titles of
other pages of the corpus, copyright, links, newsletter). A share of the texts is
republished on other sites with a few edits: words replaced, inserted or dropped,
a sentence dropped, the title changed, a closing line added, sometimes only the
first paragraphs (an excerpt). Pages of one text are the same document (``doc``);
every other pair of pages is not.
"""

from __future__ import annotations

import bz2
import copyreg
import html
import io
import pickle
import re
import zipfile
import zlib
from collections.abc import Iterator
from importlib import util
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent

_FILES = {
    "news": ("lee_background.cor", "lee.cor"),
    "posts": ("mini_newsgroup",),
    "wiki": ("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2",),
}
_TEST_DATA = "gensim/test/test_data/"


def _gensim_files() -> dict[str, bytes]:
    """The corpus files, from an installed gensim or a downloaded wheel."""
    names = [name for files in _FILES.values() for name in files]
    spec = util.find_spec("gensim")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "test/test_data"
        if all((folder / name).is_file() for name in names):
            return {name: (folder / name).read_bytes() for name in names}
    for wheel in sorted((HERE / ".data").glob("gensim-*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            return {name: archive.read(_TEST_DATA + name) for name in names}
    raise SystemExit(
        "The pages corpus needs gensim's test data: run `pip download gensim "
        "--no-deps -d benchmarks/.data` (or `pip install gensim`)."
    )


class _Bunch(dict):  # type: ignore[type-arg]
    """scikit-learn's Bunch, read back as a plain dict."""


class _DataOnly(pickle.Unpickler):
    """Unpickle containers, strings and numpy arrays only; refuse anything else."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) == ("sklearn.datasets.base", "Bunch"):
            return _Bunch
        if name == "_reconstructor" and module in ("copy_reg", "copyreg"):
            return copyreg._reconstructor
        if module in ("__builtin__", "builtins") and name in ("dict", "list", "object"):
            return {"dict": dict, "list": list, "object": object}[name]
        if module.startswith("numpy") and name in ("_reconstruct", "ndarray", "dtype"):
            from numpy.core import multiarray

            return {
                "_reconstruct": multiarray._reconstruct,
                "ndarray": np.ndarray,
                "dtype": np.dtype,
            }[name]
        raise pickle.UnpicklingError(f"refused to load {module}.{name}")


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def _paragraphs_of(text: str, per: int = 3) -> list[str]:
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    return [" ".join(sentences[i : i + per]) for i in range(0, len(sentences), per)]


def _news(files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    for name in _FILES["news"]:
        for line in files[name].decode("utf8", "replace").splitlines():
            if len(line.split()) >= 40:
                paragraphs = _paragraphs_of(line)
                title = " ".join(paragraphs[0].split()[:9]).rstrip(",.;:")
                yield title, paragraphs


def _posts(files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    raw = zlib.decompress(files["mini_newsgroup"])
    bunch = _DataOnly(io.BytesIO(raw), encoding="latin1").load()
    for post in bunch["data"]:
        head, _, body = post.partition("\n\n")
        subject = re.search(r"^Subject: (.*)$", head, re.M)
        blocks = [" ".join(b.split()) for b in re.split(r"\n\s*\n", body)]
        blocks = [b for b in blocks if b]
        if subject and sum(len(b.split()) for b in blocks) >= 40:
            yield subject.group(1).strip(), blocks


_SKIPPED_SECTIONS = {
    "see also", "references", "external links", "further reading", "notes",
    "bibliography", "sources", "footnotes", "citations",
}  # fmt: skip


def _unwiki(text: str) -> str:
    """Wikitext to plain text, roughly: no templates, tables, refs, files."""
    text = html.unescape(text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"<ref[^>/]*/>", "", text)
    text = re.sub(r"<ref[^>]*>.*?</ref>", "", text, flags=re.S)
    for pattern in (r"\{\{[^{}]*\}\}", r"\{\|[^{}]*?\|\}"):
        previous = None
        while previous != text:
            previous, text = text, re.sub(pattern, "", text, flags=re.S)
    previous = None
    while previous != text:  # inner links first, then files and categories
        previous = text
        text = re.sub(r"\[\[([^\[\]|]*)\|([^\[\]]*)\]\]", r"\2", text)
        text = re.sub(r"\[\[([^\[\]|:]*)\]\]", r"\1", text)
        text = re.sub(r"\[\[[^\[\]]*:[^\[\]]*\]\]", "", text)
    text = re.sub(r"\[https?://\S+ ([^\]]*)\]", r"\1", text)
    text = re.sub(r"\[https?://\S+\]", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("'''", "").replace("''", "")


def _wiki(files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    xml = bz2.decompress(files[_FILES["wiki"][0]]).decode("utf8", "replace")
    for page in re.findall(r"<page>.*?</page>", xml, re.S):
        title = re.search(r"<title>(.*?)</title>", page)
        body = re.search(r"<text[^>]*>(.*?)</text>", page, re.S)
        if not title or not body or "#REDIRECT" in body.group(1)[:20].upper():
            continue
        parts = re.split(r"^==+\s*(.*?)\s*==+\s*$", _unwiki(body.group(1)), flags=re.M)
        sections = [("", parts[0]), *zip(parts[1::2], parts[2::2], strict=True)]
        for heading, text in sections:
            if heading.lower() in _SKIPPED_SECTIONS:
                continue
            blocks = [
                " ".join(line.lstrip("*#:; ").split()) for line in text.splitlines()
            ]
            blocks = [b for b in blocks if len(b.split()) >= 8]
            # Long sections are cut into pages of about 400 words.
            page_blocks: list[str] = []
            count = 0
            name = html.unescape(title.group(1)) + (f" – {heading}" if heading else "")
            part = 1
            for block in blocks:
                page_blocks.append(block)
                count += len(block.split())
                if count >= 400:
                    yield f"{name} ({part})" if part > 1 else name, page_blocks
                    page_blocks, count, part = [], 0, part + 1
            if count >= 80:
                yield f"{name} ({part})" if part > 1 else name, page_blocks


def texts() -> pd.DataFrame:
    """Every text of the corpus: ``source``, ``title``, ``paragraphs``."""
    files = _gensim_files()
    rows = [
        (source, title, paragraphs)
        for source, reader in (("news", _news), ("posts", _posts), ("wiki", _wiki))
        for title, paragraphs in reader(files)
    ]
    return pd.DataFrame(rows, columns=["source", "title", "paragraphs"])


# ------------------------------------------------------------------------------------
# Sites: the boilerplate around a text
# ------------------------------------------------------------------------------------

_SITE_NAMES = [
    "The Daily Ledger", "Metro Herald", "Newswire Today", "Pulse Online",
    "The Evening Courier", "Coastal Times", "Northern Star Post", "Capital Report",
    "The Open Forum", "Readers Digest Hub", "World Brief", "Insight Weekly",
    "The Civic Voice", "Harbour Gazette", "Summit News Network", "Valley Chronicle",
    "Knowledge Base Online", "The Reference Desk", "Encyclopedia Mirror",
    "Archive Express", "Global Dispatch", "The Morning Digest", "Frontline Wire",
    "Community Bulletin",
]  # fmt: skip
_MENU = [
    "Home", "News", "World", "Politics", "Business", "Tech", "Science", "Sport",
    "Culture", "Opinion", "Video", "Podcasts", "Weather", "Local", "Health",
    "Travel", "Lifestyle", "Entertainment", "Education", "Environment",
]  # fmt: skip
_PRODUCTS = [
    "mortgage refinancing", "noise-cancelling headphones", "a meal kit delivery",
    "travel insurance", "an online degree", "solar panels", "a standing desk",
    "a language learning app", "home security cameras", "a credit card with no fees",
    "electric bikes", "a password manager", "hearing aids", "a retirement plan",
]  # fmt: skip
_CLAIMS = [
    "Save up to 40% this week only.", "Rated five stars by thousands of customers.",
    "Find out why everyone is switching.", "Limited time offer, while stocks last.",
    "Get a free quote in under two minutes.", "No commitment, cancel any time.",
    "Doctors hate this one simple trick.", "See the prices in your area today.",
]  # fmt: skip


def _sites(rng: np.random.Generator) -> list[dict[str, object]]:
    sites = []
    for name in _SITE_NAMES:
        menu = " | ".join(rng.choice(_MENU, size=rng.integers(6, 11), replace=False))
        header = [f"{name} | {menu} | Search | Sign in | Subscribe"]
        if rng.random() < 0.5:
            header.append(
                "We use cookies to improve your experience and to show you relevant "
                "advertising. By continuing to browse this site you agree to our use "
                "of cookies. Accept all | Manage preferences"
            )
        footer = [
            f"© 2026 {name}. All rights reserved. About us | Contact | Careers | "
            "Advertise with us | Privacy policy | Terms of use | Cookie settings",
            "Sign up for our newsletter: the day's top stories in your inbox every "
            "morning. Follow us on Facebook, X, Instagram and YouTube.",
        ]
        ads = [
            f"Advertisement. Sponsored: {product} — {claim} Learn more"
            for product, claim in zip(
                rng.choice(_PRODUCTS, size=4), rng.choice(_CLAIMS, size=4), strict=True
            )
        ]
        sites.append({
            "name": name, "header": header, "footer": footer, "ads": ads,
            "ads_per_page": int(rng.integers(0, 4)),
            "share": rng.random() < 0.6,
        })  # fmt: skip
    return sites


def _page(
    site: dict[str, object],
    title: str,
    paragraphs: list[str],
    related: list[str],
    rng: np.random.Generator,
) -> str:
    lines = list(site["header"])  # type: ignore[call-overload]
    day = int(rng.integers(1, 29))
    month = str(rng.choice(["January", "March", "May", "July", "October"]))
    lines.append(f"Published {day} {month} 2026 · {int(rng.integers(2, 12))} min read")
    if site["share"]:
        lines.append("Share on Facebook | Share on X | Email this story")
    lines.append(title)
    ads = list(site["ads"])  # type: ignore[call-overload]
    slots = set(
        rng.choice(len(paragraphs), size=min(int(site["ads_per_page"]),  # type: ignore[call-overload]
                                            len(paragraphs)), replace=False)
    ) if site["ads_per_page"] else set()  # fmt: skip
    for position, paragraph in enumerate(paragraphs):
        lines.append(paragraph)
        if position in slots:
            lines.append(ads[int(rng.integers(len(ads)))])
    lines.append("Related stories: " + " · ".join(related))
    lines += list(site["footer"])  # type: ignore[call-overload]
    return "\n".join(lines)


def _edited(
    title: str, paragraphs: list[str], vocabulary: np.ndarray, rng: np.random.Generator
) -> tuple[str, list[str]]:
    """A republished text: a few words and maybe a sentence, the title, the end."""
    paragraphs = list(paragraphs)
    if len(paragraphs) > 3 and rng.random() < 0.1:  # an excerpt
        paragraphs = paragraphs[: max(2, int(len(paragraphs) * 0.7))]
    words = [p.split() for p in paragraphs]
    for _ in range(int(rng.integers(1, 6))):
        p = int(rng.integers(len(words)))
        if not words[p]:
            continue
        w = int(rng.integers(len(words[p])))
        kind = rng.random()
        if kind < 0.5:
            words[p][w] = str(rng.choice(vocabulary))
        elif kind < 0.75:
            del words[p][w]
        else:
            words[p].insert(w, str(rng.choice(vocabulary)))
    paragraphs = [" ".join(w) for w in words if w]
    if len(paragraphs) > 2 and rng.random() < 0.3:  # drop a sentence
        p = int(rng.integers(len(paragraphs)))
        sentences = _SENTENCE.split(paragraphs[p])
        if len(sentences) > 1:
            del sentences[int(rng.integers(len(sentences)))]
            paragraphs[p] = " ".join(sentences)
    if rng.random() < 0.3:
        prefix = rng.choice(["UPDATED: ", "Exclusive: ", "Read: ", "In depth: "])
        title = str(prefix) + title
    if rng.random() < 0.3:
        paragraphs.append("This article was first published elsewhere and is "
                          "republished here with permission.")  # fmt: skip
    return title, paragraphs


def make_pages(
    copies_per_text: float = 0.8, *, seed: int = 1, limit: int | None = None
) -> pd.DataFrame:
    """Pages of the corpus: ``page`` (the text with its site), ``doc``, ``site``.

    Every text is published once on a site; each text is republished on
    ``Poisson(copies_per_text)`` other sites with edits (:func:`_edited`).
    ``limit`` keeps that many texts (a seeded sample). The rows are shuffled.
    """
    rng = np.random.default_rng(seed)
    corpus = texts()
    if limit is not None and limit < len(corpus):
        corpus = corpus.iloc[np.sort(rng.choice(len(corpus), limit, replace=False))]
    corpus = corpus.reset_index(drop=True)
    sites = _sites(rng)
    vocabulary = np.unique(
        np.array(" ".join(corpus["paragraphs"].str.join(" ").iloc[:200]).split())
    )
    titles = corpus["title"].to_numpy()
    rows = []
    for doc, (title, paragraphs) in enumerate(
        zip(corpus["title"], corpus["paragraphs"], strict=True)
    ):
        chosen = rng.choice(len(sites), size=len(sites), replace=False)
        copies = min(int(rng.poisson(copies_per_text)), len(sites) - 1)
        for number, site in enumerate(chosen[: copies + 1]):
            text_title, text = (
                (title, paragraphs)
                if number == 0
                else _edited(title, paragraphs, vocabulary, rng)
            )
            related = list(rng.choice(titles, size=3))
            page = _page(sites[site], text_title, text, related, rng)
            rows.append((page, doc, sites[site]["name"], corpus["source"][doc]))
    pages = pd.DataFrame(rows, columns=["page", "doc", "site", "source"])
    pages = pages.iloc[rng.permutation(len(pages))].reset_index(drop=True)
    pages.index.name = "page_id"
    return pages


def true_pairs(docs: pd.Series) -> pd.DataFrame:
    """Every unordered pair of pages of one document (labels of ``docs``)."""
    order = np.argsort(docs.to_numpy(), kind="stable")
    labels = docs.index.to_numpy()[order]
    values = docs.to_numpy()[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    ends = np.r_[starts[1:], values.size]
    left, right = [], []
    for start, end in zip(starts, ends, strict=True):
        for i in range(start, end):
            for j in range(i + 1, end):
                left.append(labels[i])
                right.append(labels[j])
    return pd.DataFrame({"left": left, "right": right})
