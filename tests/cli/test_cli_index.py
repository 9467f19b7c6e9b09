"""``lsh-frame index build|query|add|resolve`` on CSV files."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli

COLUMNS = "given_name,surname,date_of_birth,postcode,phone"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, pd.DataFrame]:
    people = lf.datasets.make_customers(1_500, seed=4).drop(columns="entity_id")
    saved, new = tmp_path / "saved.csv", tmp_path / "new.csv"
    people.iloc[:1_350].to_csv(saved)
    people.iloc[1_350:].to_csv(new)
    return saved, new, people


def run(*argv: str) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cli.main(list(argv))


def test_build_query_resolve_add(files, tmp_path, capsys):
    saved, new, people = files
    folder = tmp_path / "crm.index"
    assert run("index", "build", str(folder), str(saved), "--index-col", "record_id",
               "--on", COLUMNS) == 0  # fmt: skip
    assert "1,350 records" in capsys.readouterr().err
    # The same index as the library's on the same frame (labels read as text).
    frame = pd.read_csv(saved, dtype=str, keep_default_na=False, na_values=[""])
    frame = frame.set_index("record_id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = lf.Index.build(frame, COLUMNS.split(","))
    loaded = lf.Index.load(folder)
    assert loaded.entity_ids.equals(expected.entity_ids)

    found = tmp_path / "found.csv"
    assert run("index", "query", str(folder), str(new), "--index-col", "record_id",
               "-k", "2", "--matches", "-o", str(found)) == 0  # fmt: skip
    written = pd.read_csv(found, dtype={"left": str, "right": str})
    assert len(written) > 0 and written["match"].all()
    assert written["rank"].max() <= 2

    resolved = tmp_path / "resolved.csv"
    assert run("index", "resolve", str(folder), str(new), "--index-col", "record_id",
               "-o", str(resolved)) == 0  # fmt: skip
    table = pd.read_csv(resolved, dtype={"record_id": str})
    assert list(table.columns) == [*people.reset_index().columns, "cluster_id"]
    after = lf.Index.load(folder)
    assert len(after) == len(people)
    # Existing ids did not change; the new records hold the ids written.
    assert after.entity_ids.loc[loaded.labels].equals(loaded.entity_ids)
    assert (
        after.entity_ids.loc[table["record_id"]].to_numpy()
        == table["cluster_id"].to_numpy()
    ).all()

    more = tmp_path / "more.csv"
    people.iloc[:5].rename(index=lambda label: f"m{label}").to_csv(more)
    assert run("index", "add", str(folder), str(more), "--index-col", "record_id") == 0
    assert len(lf.Index.load(folder)) == len(people) + 5


def test_errors_exit_with_2(files, tmp_path, capsys):
    saved, new, _ = files
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS, "-q") == 0
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS,
               "--overwrite", "-q") == 0  # fmt: skip
    # Records the index already holds (same row numbers as labels).
    assert run("index", "add", str(folder), str(saved)) == 2
    assert "already holds" in capsys.readouterr().err
    assert run("index", "query", str(folder), str(new), "--index-col", "nope") == 2
    assert run("index", "query", str(tmp_path / "missing"), str(new)) == 2
    assert "holds no lsh_frame index" in capsys.readouterr().err
