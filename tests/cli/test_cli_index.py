"""``lsh-frame index build|query|add|resolve`` on CSV files."""

from __future__ import annotations

import os
import subprocess
import sys
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
    # Labels the index holds already (given with --index-col).
    ids = tmp_path / "ids"
    assert run("index", "build", str(ids), str(saved), "--index-col", "record_id",
               "--on", COLUMNS, "-q") == 0  # fmt: skip
    assert run("index", "add", str(ids), str(saved), "--index-col", "record_id") == 2
    assert "already holds" in capsys.readouterr().err
    assert run("index", "query", str(folder), str(new), "--index-col", "nope") == 2
    assert run("index", "query", str(tmp_path / "missing"), str(new)) == 2
    assert "holds no lsh_frame index" in capsys.readouterr().err


def test_build_overwrite_never_replaces_a_folder_of_other_files(
    files, tmp_path, capsys
):
    """Issue 38, defect 1: --overwrite emptied any folder (rc 0)."""
    saved, _, _ = files
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "q3.xlsx").write_text("numbers")
    assert run("index", "build", str(reports), str(saved), "--on", COLUMNS,
               "--overwrite", "-q") == 2  # fmt: skip
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "reports" in error
    assert "holds no lsh_frame index" in error and "--overwrite" in error
    assert sorted(p.name for p in reports.iterdir()) == ["q3.xlsx"]
    assert (reports / "q3.xlsx").read_text() == "numbers"


def _damage(folder: Path, how: str) -> None:
    if how == "a JSON list":
        (folder / "index.json").write_text("[1, 2]")
    elif how == "an empty manifest":
        (folder / "index.json").write_text("")
    elif how == "a manifest cut short":
        text = (folder / "index.json").read_text()
        (folder / "index.json").write_text(text[: len(text) // 2])
    elif how == "binary bytes":
        (folder / "index.json").write_bytes(bytes(range(256)))
    else:  # an Arrow file cut short
        data = (folder / "records-0.arrow").read_bytes()
        (folder / "records-0.arrow").write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    "how",
    ["a JSON list", "an empty manifest", "a manifest cut short", "binary bytes",
     "an Arrow file cut short"],
)  # fmt: skip
def test_a_damaged_index_is_one_line_and_exit_2(files, tmp_path, capsys, how):
    """Issue 38, defect 5: a traceback and exit 1."""
    saved, new, _ = files
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS, "-q") == 0
    _damage(folder, how)
    for action in ("query", "add", "resolve"):
        assert run("index", action, str(folder), str(new), "-q") == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and str(folder) in error
        assert "index.json" in error or "records-0.arrow" in error


def test_a_damaged_index_prints_no_traceback(files, tmp_path):
    saved, new, _ = files
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS, "-q") == 0
    (folder / "index.json").write_text("[1, 2]")
    root = str(Path(lf.__file__).resolve().parents[1])
    result = subprocess.run(
        [sys.executable, "-m", "lsh_frame", "index", "query", str(folder), str(new)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": root},
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("lsh-frame index: error: ")
    assert "index.json is not a readable lsh_frame index" in result.stderr


def test_add_and_resolve_number_a_files_rows_after_the_labels_held(files, tmp_path):
    """Issue 38, defect 9: without --index-col every second file's labels
    (0, 1, 2 ...) collided with the index's."""
    saved, new, people = files
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(saved), "--on", COLUMNS, "-q") == 0
    resolved = tmp_path / "resolved.csv"
    assert run("index", "resolve", str(folder), str(new), "-o", str(resolved),
               "-q") == 0  # fmt: skip
    index = lf.Index.load(folder)
    assert index.labels.tolist() == list(range(len(people)))
    written = pd.read_csv(resolved, dtype={"record_id": str})
    assert (index.entity_ids.iloc[1_350:].to_numpy() == written["cluster_id"]).all()
    assert run("index", "add", str(folder), str(new), "-q") == 0
    assert lf.Index.load(folder).labels[-1] == len(people) + 150 - 1


def test_records_labelled_by_ids_need_index_col(files, tmp_path, capsys):
    saved, new, _ = files
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(saved), "--index-col", "record_id",
               "--on", COLUMNS, "-q") == 0  # fmt: skip
    for action in ("add", "resolve"):
        assert run("index", action, str(folder), str(new), "-q") == 2
        error = capsys.readouterr().err
        assert "--index-col" in error and error.count("\n") == 1
    assert len(lf.Index.load(folder)) == 1_350


def test_entity_column_of_a_csv_is_read_as_integers(tmp_path, capsys):
    """Issue 38, defect 10: CSV cells are text; only Parquet could use it."""
    people = lf.datasets.make_customers(600, seed=2)
    path, more = tmp_path / "resolved.csv", tmp_path / "more.csv"
    people.iloc[:500].to_csv(path)
    people.iloc[500:].rename(index=lambda label: f"m{label}").to_csv(more)
    folder = tmp_path / "ix"
    assert run("index", "build", str(folder), str(path), "--index-col", "record_id",
               "--on", "given_name,surname", "--entity-column", "entity_id",
               "-q") == 0  # fmt: skip
    index = lf.Index.load(folder)
    assert index.entity_ids.tolist() == people["entity_id"].iloc[:500].tolist()
    assert run("index", "add", str(folder), str(more), "--index-col", "record_id",
               "--entity-column", "entity_id", "-q") == 0  # fmt: skip
    assert lf.Index.load(folder).entity_ids.tolist() == people["entity_id"].tolist()
    # A cell that is no integer is named.
    bad = people.iloc[:50].astype({"entity_id": object})
    bad.loc[bad.index[7], "entity_id"] = "seven"
    bad.to_csv(tmp_path / "bad.csv")
    argv = ["index", "build", str(tmp_path / "bad"), str(tmp_path / "bad.csv"),
            "--on", "given_name,surname", "--entity-column", "entity_id"]  # fmt: skip
    assert run(*argv) == 2
    error = capsys.readouterr().err
    assert "'entity_id'" in error and "'seven'" in error and "row 7" in error
    assert not (tmp_path / "bad").exists()
