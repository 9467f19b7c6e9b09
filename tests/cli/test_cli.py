"""The lsh-frame command line."""

import gzip
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli
from lsh_frame._version import __version__
from lsh_frame.cli import dedupe as cli_dedupe
from lsh_frame.cli import demo
from lsh_frame.cli import io as cli_io
from lsh_frame.cli import link as cli_link

COLUMNS = ["given_name", "surname", "date_of_birth", "email", "postcode"]


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    return lf.datasets.make_customers(600, seed=4)


@pytest.fixture
def customers_csv(tmp_path: Path, customers: pd.DataFrame) -> Path:
    path = tmp_path / "customers.csv"
    customers.to_csv(path, index=False)
    return path


def _read_back(path: Path) -> pd.DataFrame:
    return cli_io.read_table(str(path))


# ----------------------------------------------------------------------------
# demo


def test_demo_dedupes_and_reports_quality():
    out = io.StringIO()
    assert demo.run_demo(3_000, seed=3, out=out) == 0
    text = out.getvalue()
    assert "3,000 records" in text
    found = re.search(r"3,000 records → ([\d,]+) entities", text)
    assert found is not None
    metrics = re.findall(
        r"(pairs|entities)\s+precision ([\d.]+)\s+recall ([\d.]+)\s+F1 ([\d.]+)", text
    )
    assert [name for name, *_ in metrics] == ["pairs", "entities"]
    for _, precision, recall, f1 in metrics:
        assert float(precision) > 0.9
        assert float(recall) > 0.8
        assert float(f1) > 0.85
    assert "truth says" in text


def test_demo_with_one_row_finds_nothing():
    out = io.StringIO()
    assert demo.run_demo(1, seed=1, out=out) == 0
    assert "1 records → 1 entities" in out.getvalue()


@pytest.mark.parametrize("rows", [2, 30])
def test_demo_with_too_few_pairs_to_learn_still_reports(rows):
    out = io.StringIO()
    assert demo.run_demo(rows, seed=1, out=out) == 0
    assert "Against the built-in truth" in out.getvalue()


def test_main_runs_demo(capsys):
    assert cli.main(["demo", "--rows", "300"]) == 0
    assert "lsh_frame" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--rows", "0"],
        ["demo", "--rows", "x"],
        ["nope"],
        [],
        ["dedupe", "x.csv"],  # --on is required
        ["plan"],
        ["plan", "--threshold", "1.5"],
        ["dedupe", "x.csv", "--on", "a", "--min-score", "high"],
    ],
)
def test_bad_arguments_exit_with_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert "usage: lsh-frame" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert __version__ in capsys.readouterr().out


def test_module_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "lsh_frame", "demo", "--rows", "200"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Against the built-in truth" in result.stdout
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


# ----------------------------------------------------------------------------
# dedupe


def test_dedupe_csv_matches_the_library(customers_csv, customers, tmp_path, capsys):
    output = tmp_path / "out.csv"
    code = cli.main(
        ["dedupe", str(customers_csv), "--on", "given_name,surname", "--on",
         "date_of_birth,email,postcode", "-o", str(output), "--input-order"]
    )  # fmt: skip
    assert code == 0
    written = _read_back(output)
    as_text = customers.astype("string").astype(object)
    expected = lf.dedupe(cli_io.read_table(str(customers_csv)), COLUMNS)
    added = ["cluster_id", "cluster_size"]  # the names Python gives
    assert list(written.columns) == [*customers.columns, *added]
    assert written["cluster_id"].astype(int).tolist() == expected["cluster_id"].tolist()
    # Text cells come back exactly as written (leading zeros of postcodes kept).
    pd.testing.assert_frame_equal(
        written[customers.columns].fillna("<NA>").astype(object),
        as_text.fillna("<NA>").reset_index(drop=True),
        check_index_type=False,
    )
    summary = capsys.readouterr().err
    assert "600 records →" in summary
    assert f"wrote 600 rows to {output}" in summary


def test_dedupe_drop_parquet_and_quiet(customers_csv, customers, tmp_path, capsys):
    output = tmp_path / "kept.parquet"
    code = cli.main(
        ["dedupe", str(customers_csv), "--on", ",".join(COLUMNS), "--drop",
         "--keep", "most_complete", "-o", str(output), "--quiet"]
    )  # fmt: skip
    assert code == 0
    assert capsys.readouterr().err == ""
    kept = pd.read_parquet(output)
    expected = lf.drop_duplicates(
        cli_io.read_table(str(customers_csv)), COLUMNS, keep="most_complete"
    )
    assert len(kept) == len(expected) < len(customers)
    assert kept["entity_id"].tolist() == expected["entity_id"].tolist()


def test_dedupe_reads_parquet_and_writes_stdout(customers, tmp_path, capsys):
    source = tmp_path / "in.parquet"
    customers.to_parquet(source)
    code = cli.main(
        ["dedupe", str(source), "--on", "given_name,surname,email", "--min-score",
         "0.8", "--index", "-q"]
    )  # fmt: skip
    assert code == 0
    written = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    # Every row once, the records of an entity together (entities in order of
    # their first record, each entity's rows in input order).
    assert sorted(written.index) == customers.index.tolist()
    assert written.index.name == customers.index.name
    assert written["cluster_id"].is_monotonic_increasing
    for _, rows in written.groupby("cluster_id"):
        assert rows.index.is_monotonic_increasing
    assert (written.groupby("cluster_id").size() == written.groupby("cluster_id")[
        "cluster_size"].first()).all()  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dedupe", "{missing}", "--on", "surname"], "no such file"),
        (["dedupe", "{dir}", "--on", "surname"], "cannot tell the format"),
        (["dedupe", "{csv}", "--on", "surnam"], "surnam"),
        (["dedupe", "{csv}", "--on", ","], "names no column"),
        (["dedupe", "{garbage}", "--on", "surname"], "cannot read"),
        (["dedupe", "{csv}", "--on", "surname", "-o", "out.xlsx"], "format"),
        (["link", "{csv}", "{missing}", "--on", "surname"], "no such file"),
        (["link", "{csv}", "{csv}", "--on", "surname", "--right-on", "a,b"], "one"),
    ],
)
def test_cli_errors_exit_with_2_and_say_why(
    argv, message, customers_csv, tmp_path, capsys
):
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    places = {
        "{missing}": str(tmp_path / "missing.csv"),
        "{dir}": str(tmp_path),
        "{csv}": str(customers_csv),
        "{garbage}": str(garbage),
    }
    argv = [places.get(part, part) for part in argv]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"lsh-frame {argv[0]}: error:")
    assert message in error


def test_job_failure_exits_with_1(customers_csv, capsys):
    argv = ["dedupe", str(customers_csv), "--on", "city", "--max-pairs", "1"]
    assert cli.main([*argv, "--threshold", "0.1"]) == 1
    error = capsys.readouterr().err
    # The option's name on the command line, not the parameter's in Python.
    assert "--max-pairs" in error and "max_pairs" not in error


# ----------------------------------------------------------------------------
# link and plan


def _split(customers: pd.DataFrame, tmp_path: Path) -> tuple[Path, Path]:
    left = customers.iloc[::2]
    right = customers.iloc[1::2].rename(columns={"surname": "family_name"})
    left_path, right_path = tmp_path / "left.csv", tmp_path / "right.parquet"
    left.to_csv(left_path, index=False)
    right.to_parquet(right_path, index=False)
    return left_path, right_path


def test_link_writes_the_merge(customers, tmp_path, capsys):
    left_path, right_path = _split(customers, tmp_path)
    output = tmp_path / "merged.csv"
    on = ["given_name", "surname", "date_of_birth"]
    right_on = ["given_name", "family_name", "date_of_birth"]
    code = cli.main(
        ["link", str(left_path), str(right_path), "--on", ",".join(on),
         "--right-on", ",".join(right_on), "--how", "left", "--one-to-one",
         "-o", str(output)]
    )  # fmt: skip
    assert code == 0
    merged = _read_back(output)
    left = cli_io.read_table(str(left_path))
    assert len(merged) == len(left)
    assert merged["given_name_x"].fillna("").tolist() == (
        left["given_name"].fillna("").tolist()
    )
    expected = lf.merge(
        left,
        pd.read_parquet(right_path),
        left_on=on,
        right_on=right_on,
        how="left",
        one_to_one=True,
    )
    assert merged["score"].notna().sum() == expected["score"].notna().sum()
    assert "matched pairs" in capsys.readouterr().err


def test_link_pairs(customers, tmp_path, capsys):
    left_path, right_path = _split(customers, tmp_path)
    code = cli.main(
        ["link", str(left_path), str(right_path), "--on", "given_name,date_of_birth",
         "--pairs", "-q"]
    )  # fmt: skip
    assert code == 0
    pairs = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert {"left", "right", "score", "match", "given_name_left"} <= set(pairs)


def test_plan_prints_the_s_curve(capsys):
    assert cli.main(["plan", "--threshold", "0.8", "--num-perm", "64"]) == 0
    text = capsys.readouterr().out
    expected = lf.plan(0.8, num_perm=64)
    assert f"{expected.bands} bands × {expected.rows} rows" in text
    rows = re.findall(r"^\s+(0\.\d|1\.0)\s+([\d.]+)", text, flags=re.MULTILINE)
    probabilities = [float(p) for _, p in rows]
    assert len(rows) == 10
    assert probabilities == sorted(probabilities)
    assert probabilities[-1] == 1.0


def test_dedupe_with_an_id_column_and_keep_none(customers, tmp_path):
    source = tmp_path / "people.csv"
    customers.assign(customer_id=[f"c{i}" for i in range(len(customers))]).to_csv(
        source, index=False
    )
    output = tmp_path / "unique.csv"
    code = cli.main(
        ["dedupe", str(source), "--on", ",".join(COLUMNS), "--index-col",
         "customer_id", "--drop", "--keep", "none", "-o", str(output), "-q"]
    )  # fmt: skip
    assert code == 0
    written = pd.read_csv(output, dtype=str)
    assert written.columns[0] == "customer_id"
    frame = cli_io.read_table(str(source)).set_index("customer_id")
    expected = lf.drop_duplicates(frame, COLUMNS, keep=False)
    assert written["customer_id"].tolist() == expected.index.tolist()


def test_id_column_must_exist_and_be_unique(customers, tmp_path, capsys):
    source = tmp_path / "people.csv"
    customers.to_csv(source, index=False)
    argv = ["dedupe", str(source), "--on", "surname", "--index-col"]
    assert cli.main([*argv, "nope"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    assert cli.main([*argv, "surname"]) == 2
    assert "present and unique" in capsys.readouterr().err


def test_a_saved_model_decides_a_small_batch(customers, tmp_path, capsys):
    saved = tmp_path / "saved.csv"
    batch = tmp_path / "batch.csv"
    model = tmp_path / "model.json"
    customers.iloc[:580].to_csv(saved, index=False)
    customers.iloc[580:].to_csv(batch, index=False)
    on = ",".join(COLUMNS)
    learn = ["link", str(saved), str(saved), "--on", on, "--pairs", "-o",
             str(tmp_path / "self.csv"), "--save-model", str(model)]  # fmt: skip
    assert cli.main(learn) == 0
    assert f"saved the learned model to {model}" in capsys.readouterr().err
    learned = json.loads(model.read_text())
    assert set(learned["fields"]) == set(COLUMNS)
    use = ["link", str(saved), str(batch), "--on", on, "--pairs", "--model", str(model),
           "-q"]  # fmt: skip
    assert cli.main(use) == 0
    pairs = pd.read_csv(io.StringIO(capsys.readouterr().out))
    expected = lf.link(
        cli_io.read_table(str(saved)), cli_io.read_table(str(batch)), COLUMNS,
        min_score=learned, values=True,
    )  # fmt: skip
    assert pairs["match"].tolist() == expected["match"].tolist()
    for min_score in ("0.8", "auto"):
        assert cli.main([*use, "--min-score", min_score]) == 2
        assert "not both" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert cli.main([*use[:-3], "--model", str(broken), "-q"]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_link_keeps_both_tables_ids(tmp_path, capsys):
    left, right = tmp_path / "l.csv", tmp_path / "r.csv"
    left.write_text("id,name\nL1,john smith\nL2,mary jones\n")
    right.write_text("id,name\nR7,jon smith\nR9,peter pan\n")
    argv = ["link", str(left), str(right), "--on", "name", "--index-col", "id",
            "--threshold", "0.3", "--min-score", "0.8", "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    merged = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert merged[["id_x", "id_y"]].values.tolist() == [["L1", "R7"]]
    assert cli.main([*argv, "--pairs"]) == 0
    pairs = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert pairs.loc[pairs["match"], ["left", "right"]].values.tolist() == [
        ["L1", "R7"]
    ]
    # --how outer: every record of both files, ids in their columns only.
    assert cli.main([*argv, "--how", "outer"]) == 0
    merged = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    # The left ids, then each matched field's two values and score side by side.
    assert merged.columns[:4].tolist() == ["id_x", "name_x", "name_y", "name_score"]
    assert "id_y" in merged.columns
    assert merged[["id_x", "id_y"]].fillna("").values.tolist() == [
        ["L1", "R7"],
        ["L2", ""],
        ["", "R9"],
    ]


def test_parquet_index_types_and_labels_are_kept(tmp_path, capsys):
    source = tmp_path / "typed.parquet"
    pd.DataFrame(
        {
            "name": ["john smith", "jon smith", "mary jones"],
            "dob": pd.to_datetime(["1980-01-02", "1980-01-02", "1975-05-06"]),
            "year": [1980.0, 1980.0, float("nan")],
        },
        index=pd.Index(["a", "b", "c"], name="cid"),
    ).to_parquet(source)
    output = tmp_path / "out.parquet"
    argv = ["dedupe", str(source), "--on", "name,dob,year", "--min-score", "0.8",
            "--drop", "-o", str(output), "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    kept = pd.read_parquet(output)
    assert kept["cid"].tolist() == ["a", "c"]  # the stored index is not dropped
    # Typed columns are matched as their text but written with their types.
    assert pd.api.types.is_datetime64_any_dtype(kept["dob"])
    assert kept["year"].dtype == "float64"
    numbered = tmp_path / "numbered.parquet"
    pd.DataFrame({0: ["ann", "anne", "bob"], 1: ["x", "y", "z"]}).to_parquet(numbered)
    argv = ["dedupe", str(numbered), "--on", "0", "--min-score", "0.8", "-q"]
    assert cli.main(argv) == 0
    assert "cluster_id" in capsys.readouterr().out


@pytest.fixture
def typed_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "typed.parquet"
    pd.DataFrame(
        {
            "name": ["john smith", "jon smith", "mary jones", "peter pan"],
            "dob": pd.to_datetime(
                ["1980-01-02", "1980-01-02", "1975-05-06", "1990-01-01"]
            ),
            "n": [1, 1, 2, 3],
        }
    ).to_parquet(path, index=False)
    return path


@pytest.mark.parametrize(
    ("command", "columns"),
    [
        (["dedupe", "{typed}"], ["dob", "n"]),
        (["dedupe", "{typed}", "--drop"], ["dob", "n"]),
        (["link", "{typed}", "{typed}"], ["dob_x", "n_x", "dob_y", "n_y"]),
        (["link", "{typed}", "{typed}", "--pairs"], ["dob_left", "n_right"]),
    ],
)
def test_parquet_typed_columns_keep_their_dtypes(
    command, columns, typed_parquet, tmp_path
):
    output = tmp_path / "out.parquet"
    argv = [str(typed_parquet) if part == "{typed}" else part for part in command]
    argv += ["--on", "name,dob,n", "--threshold", "0.3", "--min-score", "0.5",
             "-o", str(output), "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    written = pd.read_parquet(output)
    assert len(written) > 0
    for column in columns:
        if column.split("_")[0] == "dob":
            assert pd.api.types.is_datetime64_any_dtype(written[column]), column
        else:
            assert written[column].dtype == "int64", column


# ----------------------------------------------------------------------------
# Duplicated headers, closed pipes, unwritable outputs


@pytest.mark.parametrize(
    ("name", "header", "command"),
    [
        ("dup.csv", "name,name,city", ["dedupe", "{bad}"]),
        ("dup.tsv", "name\tcity\tname", ["dedupe", "{bad}"]),
        ("dup.csv.gz", "name,name,city", ["dedupe", "{bad}"]),
        ("dup.csv", '"name",name,city', ["link", "{bad}", "{good}"]),
        ("dup.csv", "name,name,city", ["link", "{good}", "{bad}"]),
    ],
)
def test_a_duplicated_csv_header_is_refused(name, header, command, tmp_path, capsys):
    bad, good = tmp_path / name, tmp_path / "good.csv"
    separator = "\t" if name.endswith(".tsv") else ","
    rows = "\n".join(["ann,bob,x", "anne,bob,x", ""]).replace(",", separator)
    opener: Any = gzip.open if name.endswith(".gz") else open
    with opener(bad, "wt", encoding="utf8") as file:
        file.write(f"{header}\n{rows}")
    good.write_text("name,city\nann,x\n")
    places = {"{bad}": str(bad), "{good}": str(good)}
    argv = [places.get(part, part) for part in command]
    assert cli.main([*argv, "--on", "name", "--min-score", "0.5", "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err
    assert error.count("\n") == 1
    assert error.startswith(f"lsh-frame {command[0]}: error:")
    assert "'name'" in error
    assert str(bad) in error


def test_a_parquet_column_named_as_its_stored_index_is_refused(tmp_path, capsys):
    source = tmp_path / "twice.parquet"
    frame = pd.DataFrame({"name": ["ann", "anne"]}, index=pd.Index([1, 2], name="name"))
    frame.to_parquet(source)
    assert cli.main(["dedupe", str(source), "--on", "name", "-q"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "'name'" in error
    assert str(source) in error


def test_a_duplicated_csv_header_on_stdin_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("name,city,name\nann,x,y\n"))
    assert cli.main(["dedupe", "-", "--on", "name", "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "'name'" in captured.err
    assert "standard input" in captured.err


def test_stdin_csv_is_read_as_before(customers_csv, monkeypatch, capsys):
    text = customers_csv.read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert cli.main(["dedupe", "-", "--on", ",".join(COLUMNS), "-q"]) == 0
    from_stdin = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    argv = ["dedupe", str(customers_csv), "--on", ",".join(COLUMNS), "-q"]
    assert cli.main(argv) == 0
    from_file = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    pd.testing.assert_frame_equal(from_stdin, from_file)


def _command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "lsh_frame", *argv]


def _environment() -> dict[str, str]:
    """The environment of a child ``python -m lsh_frame`` that imports this tree."""
    root = str(Path(lf.__file__).resolve().parents[1])
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.csv"
    lf.datasets.make_customers(3_000, seed=2).to_csv(path, index=False)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="closed pipes are EPIPE on POSIX")
def test_a_reader_that_stops_early_ends_the_job_quietly(big_csv):
    # Far more output than a pipe holds (64 KiB on Linux): the writer must
    # meet the closed pipe, as in `lsh-frame dedupe big.csv ... | head -n 2`.
    assert big_csv.stat().st_size > 256 * 1024
    argv = ["dedupe", str(big_csv), "--on", "given_name,surname,email"]
    process = subprocess.Popen(
        _command(*argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = [process.stdout.readline() for _ in range(2)]
    process.stdout.close()
    error = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=120) == cli_io.BROKEN_PIPE == 141
    assert first[0].startswith(b"entity_id,given_name,")
    assert error == b""  # no message, no traceback, no "Exception ignored"


@pytest.mark.skipif(sys.platform == "win32", reason="closed pipes are EPIPE on POSIX")
@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--threshold", "0.8"],
        ["demo", "--rows", "200"],
        ["dedupe", "{csv}", "--on", "surname"],
        ["link", "{csv}", "{csv}", "--on", "surname,given_name", "--pairs"],
    ],
)
def test_writing_to_a_closed_pipe_ends_quietly(argv, customers_csv):
    argv = [str(customers_csv) if part == "{csv}" else part for part in argv]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        result = subprocess.run(
            _command(*argv), stdout=write_end, stderr=subprocess.PIPE,
            env=_environment(), timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert result.stderr == b""
    assert result.returncode == 141


@pytest.fixture
def no_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every job of the command line fail the test if it starts."""

    def started(*args: object, **kwargs: object) -> pd.DataFrame:
        raise AssertionError("the job started")

    for module, job in [
        (cli_dedupe, "dedupe_frame"),
        (cli_dedupe, "drop_duplicates"),
        (cli_dedupe, "_simhash_dedupe"),
        (cli_link, "link"),
        (cli_link, "merge"),
    ]:
        monkeypatch.setattr(module, job, started)


@pytest.mark.parametrize(
    "command",
    [
        ["dedupe", "{csv}"],
        ["dedupe", "{csv}", "--drop"],
        ["link", "{csv}", "{csv}"],
        ["link", "{csv}", "{csv}", "--pairs"],
    ],
)
@pytest.mark.parametrize(
    ("option", "target", "message"),
    [
        ("-o", "missing/out.csv", "the folder '{tmp}/missing' does not exist"),
        ("-o", "missing/out.parquet", "does not exist"),
        ("-o", "out.xlsx", "cannot tell the format of output"),
        ("-o", "out", "cannot tell the format of output"),
        ("-o", "folder.csv", "it is a directory"),
        ("-o", "file.csv/out.csv", "is not a folder"),
        ("--save-model", "missing/model.json", "does not exist"),
        ("--save-model", "folder.csv", "it is a directory"),
    ],
)
def test_an_unwritable_output_is_refused_before_the_job(
    command, option, target, message, customers_csv, tmp_path, capsys, no_job
):
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "file.csv").write_text("a\n1\n")
    argv = [str(customers_csv) if part == "{csv}" else part for part in command]
    argv += ["--on", "surname", option, str(tmp_path / target), "-q"]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith(f"lsh-frame {command[0]}: error: cannot ")
    assert message.format(tmp=tmp_path) in error
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("locked/out.csv", "the folder '{tmp}/locked' is not writable"),
        ("locked/kept.csv", "the file is not writable"),
    ],
)
def test_an_output_without_write_permission_is_refused_before_the_job(
    target, message, customers_csv, tmp_path, capsys, monkeypatch, no_job
):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "kept.csv").write_text("a\n1\n")
    allowed = os.access

    # Permission bits do not bind root (tests may run as root): deny by name.
    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        inside = Path(path) == locked or locked in Path(path).parents
        return not (inside and mode & os.W_OK) and allowed(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    argv = ["dedupe", str(customers_csv), "--on", "surname", "-o"]
    assert cli.main([*argv, str(tmp_path / target), "-q"]) == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err


def test_csv_separator_encoding_and_spaced_headers(tmp_path, capsys):
    # FEBRL writes "rec_id, given_name, surname"; a Latin-1 file with ";".
    path = tmp_path / "people.csv"
    rows = ["rec_id; given_name ; surname", "a;José;Núñez", "b;Jose;Nunez", "c;Ann;Lee"]
    path.write_bytes("\n".join(rows).encode("latin-1"))
    code = cli.main(
        ["dedupe", str(path), "--on", "given_name,surname", "--sep", ";",
         "--encoding", "latin-1", "--index-col", "rec_id", "--min-score", "0.5",
         "-q", "--input-order"]
    )  # fmt: skip
    assert code == 0
    written = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert written.index.name == "rec_id"
    assert list(written.columns) == [
        "given_name",
        "surname",
        "cluster_id",
        "cluster_size",
    ]
    assert written.loc["a", "given_name"] == "José"
    assert written.loc["a", "cluster_id"] == written.loc["b", "cluster_id"]
    # Without the encoding the bytes are not UTF-8: a clear usage error.
    assert cli.main(["dedupe", str(path), "--on", "given_name", "--sep", ";"]) == 2
    assert "cannot read input" in capsys.readouterr().err
    assert cli.main(
        ["dedupe", str(path), "--on", "given_name", "--encoding", "klingon"]
    ) == 2  # fmt: skip
    assert "klingon" in capsys.readouterr().err


def test_link_rounds_scores_for_display(tmp_path, capsys):
    people = lf.datasets.make_customers(300, seed=2).drop(columns="entity_id")
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    people.iloc[:200].to_csv(left, index=False)
    people.iloc[100:].to_csv(right, index=False)
    outputs = {}
    for digits in ("2", "all"):
        code = cli.main(
            ["link", str(left), str(right), "--on", "given_name,surname,email",
             "--pairs", "--digits", digits, "-q"]
        )  # fmt: skip
        assert code == 0
        outputs[digits] = pd.read_csv(io.StringIO(capsys.readouterr().out))
    rounded, whole = outputs["2"], outputs["all"]
    for column in ("score", "given_name_score", "match_probability"):
        np.testing.assert_allclose(
            rounded[column], whole[column].round(2), rtol=0, atol=1e-12
        )  # NaN (a field missing in a record) stays NaN
        assert (whole[column] != whole[column].round(2)).any()
    assert rounded["left"].equals(whole["left"])
    with pytest.raises(SystemExit) as refused:
        cli.main(["link", str(left), str(right), "--on", "email", "--digits", "x"])
    assert refused.value.code == 2
    assert "number of decimals" in capsys.readouterr().err


def test_dedupe_with_integer_ids_finds_what_python_finds(tmp_path, capsys):
    # The command line reads ids as text; Python users hold them as integers.
    # The same rows must give the same entities (issue 17).
    columns = ["given_name", "surname", "street_address", "city", "postcode",
               "phone", "date_of_birth", "email"]  # fmt: skip
    people = lf.datasets.make_customers(2_000, seed=3)[columns].rename_axis("id")
    source = tmp_path / "people.csv"
    people.to_csv(source)
    output = tmp_path / "entities.csv"
    code = cli.main(
        ["dedupe", str(source), "--on", ",".join(columns), "--index-col", "id",
         "-o", str(output), "--input-order"]
    )  # fmt: skip
    assert code == 0
    expected = people.lsh.dedupe(columns)
    entities = expected.attrs["lsh_frame"]["entities"]
    assert f"2,000 records → {entities:,} entities" in capsys.readouterr().err
    written = pd.read_csv(output, index_col="id")
    assert written.index.tolist() == people.index.tolist()

    # Entity ids are numbered in label order, which differs between 10 and
    # "10": compare the groups, each named by its smallest id.
    def groups(ids: pd.Series) -> pd.Series:
        return ids.index.to_series().groupby(ids.to_numpy()).transform("min")

    pd.testing.assert_series_equal(
        groups(written["cluster_id"]), groups(expected["cluster_id"])
    )


def test_dedupe_writes_the_scored_pairs_for_review(customers_csv, tmp_path, capsys):
    output, pairs_path = tmp_path / "out.csv", tmp_path / "pairs.parquet"
    code = cli.main(
        ["dedupe", str(customers_csv), "--on", "given_name,surname,email",
         "-o", str(output), "--pairs-output", str(pairs_path), "--digits", "3",
         "--input-order"]
    )  # fmt: skip
    assert code == 0
    assert f"scored pairs to {pairs_path}" in capsys.readouterr().err
    pairs = pd.read_parquet(pairs_path)
    records = cli_io.read_table(str(customers_csv))
    expected = lf.pairs(records, ["given_name", "surname", "email"])
    assert len(pairs) == len(expected)
    assert pairs.columns[:5].tolist() == [
        "left", "right", "given_name_left", "given_name_right", "given_name_score"
    ]  # fmt: skip
    assert (pairs["match"].to_numpy() == expected["match"].to_numpy()).all()
    np.testing.assert_allclose(pairs["score"], expected["score"].round(3), atol=1e-12)
    # Each value is its record's.
    first = pairs.iloc[0]
    assert first["surname_left"] == records.loc[first["left"], "surname"]
    assert first["surname_right"] == records.loc[first["right"], "surname"]
    written = _read_back(output)
    matched = pairs[pairs["match"]]
    ids = written["cluster_id"]
    assert (
        ids.loc[matched["left"]].to_numpy() == ids.loc[matched["right"]].to_numpy()
    ).all()
    # Pairs need the MinHash method, and a file the writer knows.
    assert cli.main(
        ["dedupe", str(customers_csv), "--on", "surname", "--method", "simhash",
         "--pairs-output", str(pairs_path)]
    ) == 2  # fmt: skip
    assert "--pairs-output needs --method minhash" in capsys.readouterr().err


def test_link_writes_each_fields_values_side_by_side(tmp_path, capsys):
    left, right = tmp_path / "l.csv", tmp_path / "r.csv"
    left.write_text("name,city,age\njohn smith,leeds,40\nmary jones,york,31\n")
    right.write_text("full_name,town,age\njon smith,leeds,41\npeter pan,york,12\n")
    argv = ["link", str(left), str(right), "--on", "name,city", "--right-on",
            "full_name,town", "--threshold", "0.3", "--min-score", "0.75",
            "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    merged = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert merged.columns.tolist() == [
        "name",
        "full_name",
        "name_score",
        "city",
        "town",
        "city_score",
        "score",
        "age_x",
        "age_y",
    ]  # fmt: skip (a number decides: no match_probability)
    assert merged[["name", "full_name"]].values.tolist() == [
        ["john smith", "jon smith"]
    ]


def test_dedupe_groups_entities_in_the_order_of_their_first_row(tmp_path, capsys):
    # Ids follow the labels' order (a1 < b2 < m5 < z9); the rows follow the file.
    path = tmp_path / "people.csv"
    path.write_text(
        "id,name\nz9,carol white\nb2,ann smith\nm5,carol white\na1,ann smith\n"
    )
    argv = ["dedupe", str(path), "--on", "name", "--index-col", "id",
            "--min-score", "0.9", "--threshold", "0.5", "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    written = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="id")
    assert written.index.tolist() == ["z9", "m5", "b2", "a1"]
    assert written["cluster_size"].tolist() == [2, 2, 2, 2]


@pytest.mark.parametrize("separator", [";;", ""])
def test_a_separator_is_one_character(separator, customers_csv, capsys):
    with pytest.raises(SystemExit) as refused:
        cli.main(["dedupe", str(customers_csv), "--on", "surname", "--sep", separator])
    assert refused.value.code == 2
    assert "must be one character" in capsys.readouterr().err


def test_numbers_read_from_csv_are_compared_as_numbers(tmp_path):
    # CSV cells are read as text (0800 keeps its zero); a column of numbers is
    # still compared as numbers, as it would be typed.
    path = tmp_path / "products.csv"
    rows = ["name,price"] + [
        f"{name},{price}"
        for name, price in [("sony tv", "399.00"), ("sony tv 40", "$399.99"),
                            ("canon camera", "549"), ("canon cam", "549.00"),
                            ("apple ipod", "149")] * 30
    ]  # fmt: skip
    path.write_text("\n".join(rows) + "\n")
    records = cli_io.read_table(str(path))
    assert records["price"].map(type).eq(str).all()
    typed = records.assign(price=records["price"].str.lstrip("$").astype(float))
    candidates = lf.candidates(records, ["name"])
    read, given = (
        lf.score(frame, candidates, ["name", "price"], min_score=0.5)
        for frame in (records, typed)
    )
    assert read.attrs["lsh_frame"]["compare"]["price"] == "number"
    assert given.attrs["lsh_frame"]["compare"]["price"] == "number"
    pd.testing.assert_series_equal(read["price_score"], given["price_score"])


@pytest.mark.parametrize(
    "options",
    [
        ["--method", "simhash", "--model", "no_such_file.json"],
        ["--method", "simhash", "--min-score", "0.9"],
        ["--method", "simhash", "--threshold", "0.5"],
        ["--method", "simhash", "--num-perm", "64"],
        ["--method", "simhash", "--recall", "0.9"],
        ["--method", "simhash", "--max-bucket", "10"],
        ["--method", "simhash", "--save-model", "model.json"],
        ["--keep", "last"],
        ["--keep", "first"],  # given, even as the default value
        ["--distance", "5"],
        ["--digits", "3"],
        ["--drop", "--id-column", "entity"],
        ["--drop", "--size-column", "n"],
        ["--drop", "--input-order"],
    ],
)
def test_options_the_mode_ignores_are_refused(
    options, customers_csv, tmp_path, capsys, no_job
):
    """Issue 38, defect 12: --method simhash ran (rc 0) with --model naming no
    file, and --keep without --drop wrote every row."""
    argv = ["dedupe", str(customers_csv), "--on", "given_name,surname", *options,
            "-o", str(tmp_path / "out.csv")]  # fmt: skip
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    refused = [option for option in options if option.startswith("--")][-1]
    assert error.startswith(f"lsh-frame dedupe: error: {refused} ")
    assert "leave it out" in error
    assert not (tmp_path / "out.csv").exists()


def test_link_pairs_refuses_how(customers_csv, capsys, no_job):
    argv = ["link", str(customers_csv), str(customers_csv), "--on", "surname",
            "--pairs", "--how", "left"]  # fmt: skip
    assert cli.main(argv) == 2
    assert "--how applies to the joined rows" in capsys.readouterr().err


def test_options_that_apply_are_taken(customers_csv, tmp_path, capsys):
    """The options refused elsewhere still work where they apply."""
    output = tmp_path / "kept.csv"
    argv = ["dedupe", str(customers_csv), "--on", "given_name,surname,email",
            "--drop", "--keep", "last", "-o", str(output), "-q"]  # fmt: skip
    assert cli.main(argv) == 0
    records = cli_io.read_table(str(customers_csv))
    with_last = lf.drop_duplicates(records, ["given_name", "surname", "email"],
                                   keep="last")  # fmt: skip
    assert len(_read_back(output)) == len(with_last)
    argv = ["dedupe", str(customers_csv), "--on", "surname", "--method", "simhash",
            "--distance", "0", "--seed", "2", "-o", str(output), "-q"]  # fmt: skip
    assert cli.main(argv) == 0


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.xz"])
def test_a_compressed_input_cut_short_is_one_line(suffix, tmp_path, capsys):
    """Issue 38, defect 7: EOFError printed a traceback, exit 1."""
    import bz2
    import lzma

    compress = {".csv.gz": gzip.compress, ".csv.bz2": bz2.compress,
                ".csv.xz": lzma.compress}[suffix]  # fmt: skip
    data = compress(b"name\n" + b"john smith\n" * 5_000)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(data[: len(data) // 2])
    assert cli.main(["dedupe", str(path), "--on", "name"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith(f"lsh-frame dedupe: error: cannot read input '{path}'")
    assert "EOFError" in error


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # A header cell longer than the csv module's field limit (128 kB).
        ("h" * 200_000 + ",city\na,b\n", "has no column 'name'"),
        # An unclosed quote in the first line of an input over 128 kB.
        ('name,"city\n' + "a,b\n" * 40_000, "EOF inside string"),
        # A small one: was read as one header cell holding the whole data.
        ('name,"city\na,b\nc,d\n', "EOF inside string"),
    ],
)
def test_standard_input_is_read_and_refused_as_a_file_is(text, message, tmp_path):
    """Issue 38, defect 8: _csv.Error: field larger than field limit, exit 1."""
    path = tmp_path / "same.csv"
    path.write_text(text)
    results = [
        subprocess.run(
            _command("dedupe", source, "--on", "name"), input=text.encode(),
            capture_output=True, env=_environment(), timeout=120,
        )
        for source in ("-", str(path))
    ]  # fmt: skip
    for result in results:
        assert result.returncode == 2
        error = result.stderr.decode()
        assert error.count("\n") == 1 and "Traceback" not in error
        assert message in error
        assert len(error) < 1_000  # a huge header cell is not printed whole
    assert "standard input" in results[0].stderr.decode() or message.startswith(
        "has no column"
    )
