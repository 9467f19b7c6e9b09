"""The command line speaks its own words: one-line messages, hints, options."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli
from lsh_frame.cli.messages import cli_text

ROWS = "id{sep}name{sep}city\n1{sep}ann smith{sep}york\n2{sep}anne smith{sep}york\n" \
    "3{sep}bob jones{sep}leeds\n4{sep}rob jones{sep}leeds\n"  # fmt: skip


def _environment() -> dict[str, str]:
    root = str(Path(lf.__file__).resolve().parents[1])
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@pytest.mark.parametrize("separator", [";", "\t", "|", ","])
def test_the_separator_is_sniffed(separator, tmp_path, capsys):
    path = tmp_path / "people.csv"
    path.write_text(ROWS.format(sep=separator))
    output = tmp_path / "out.csv"
    argv = ["dedupe", str(path), "--on", "name", "--min-score", "0.5", "-o"]
    assert cli.main([*argv, str(output)]) == 0
    written = pd.read_csv(output, dtype=str)
    assert list(written.columns[:3]) == ["id", "name", "city"]
    assert written["cluster_id"].nunique() == 2
    said = capsys.readouterr().err
    # Said when it was not a comma, so that a surprise is visible.
    assert ("with separator" in said) == (separator != ",")


def test_a_comma_in_quotes_does_not_make_it_the_separator(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text('id;name\n1;"smith, ann"\n2;"smith, anne"\n')
    output = tmp_path / "out.csv"
    argv = ["dedupe", str(path), "--on", "name", "--min-score", "0.5", "-o"]
    assert cli.main([*argv, str(output), "-q"]) == 0
    assert pd.read_csv(output, dtype=str)["name"].tolist()[0].startswith("smith")


def test_a_wrong_separator_hints_at_sep(tmp_path, capsys):
    path = tmp_path / "people.csv"
    path.write_text(ROWS.format(sep=";"))
    assert cli.main(["dedupe", str(path), "--on", "name", "--sep", ","]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "has no column 'name'" in error and "--sep ';'" in error


def test_a_byte_order_mark_read_as_latin_1_is_named(tmp_path, capsys):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffid,name\n1,ann\n2,anne\n".encode())
    argv = ["dedupe", str(path), "--on", "name", "--encoding", "latin-1"]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "byte order mark" in error and "--encoding" in error
    # Read as UTF-8 (the default), the mark is no part of the first name.
    output = tmp_path / "out.csv"
    argv = ["dedupe", str(path), "--on", "id,name", "--min-score", "0.5", "-q"]
    assert cli.main([*argv, "-o", str(output)]) == 0
    assert pd.read_csv(output, dtype=str).columns[0] == "id"


def test_a_wrong_encoding_hints_at_encoding(tmp_path, capsys):
    path = tmp_path / "latin.csv"
    path.write_bytes("id,name\n1,José\n2,Jose\n".encode("latin-1"))
    assert cli.main(["dedupe", str(path), "--on", "name"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "not utf-8 text" in error and "--encoding latin-1" in error
    assert "UnicodeDecodeError" not in error


def test_output_to_the_null_device(tmp_path, capsys):
    path = tmp_path / "people.csv"
    path.write_text(ROWS.format(sep=","))
    argv = ["dedupe", str(path), "--on", "name", "--min-score", "0.5"]
    assert cli.main([*argv, "-o", os.devnull]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "4 records" in captured.err


def test_demo_takes_quiet(capsys):
    assert cli.main(["demo", "--rows", "300", "-q"]) == 0
    assert "records" in capsys.readouterr().out


def test_warnings_are_one_line_in_option_names(tmp_path, capsys):
    path = tmp_path / "people.csv"
    frame = pd.DataFrame({"name": ["ann smith"] * 30 + ["bob jones", "rob jones"]})
    frame.to_csv(path, index=False)
    argv = ["dedupe", str(path), "--on", "name", "--max-bucket", "5", "-o", os.devnull]
    assert cli.main([*argv, "--min-score", "0.5"]) == 0
    lines = capsys.readouterr().err.splitlines()
    warned = [line for line in lines if ": warning: " in line]
    assert warned and all(
        line.startswith("lsh-frame dedupe: warning:") for line in warned
    )
    assert any("--max-bucket" in line for line in warned)
    assert not any("max_bucket" in line or "=" in line for line in warned)


def test_no_python_source_line_in_a_real_run(tmp_path):
    path = tmp_path / "people.csv"
    frame = pd.DataFrame({"name": ["ann smith"] * 30 + ["bob jones", "rob jones"]})
    frame.to_csv(path, index=False)
    result = subprocess.run(
        [sys.executable, "-m", "lsh_frame", "dedupe", str(path), "--on", "name",
         "--max-bucket", "5", "-o", os.devnull],
        capture_output=True, env=_environment(), timeout=120, text=True,
    )  # fmt: skip
    assert result.returncode == 0
    assert "sys.exit" not in result.stderr and "Warning:" not in result.stderr
    assert "lsh-frame dedupe: warning:" in result.stderr


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("Pass min_score= a number.", "Pass --min-score a number."),
        ("raise min_score, or block", "raise --min-score, or block"),
        ("The 'recall' parameter of plan must be in (0, 1].", "--recall must be"),
        ("Raise max_bucket or block on more fields.", "Raise --max-bucket or"),
        ("entity ids 1, 2; all ids are in ids.attrs['lsh_frame']['review'].", "2."),
        ("a threshold of 0.5", "a threshold of 0.5"),  # a word, not a parameter
    ],
)
def test_cli_text(message, said):
    assert said in cli_text(message)


@pytest.mark.parametrize("shingle", ["word", "stopword"])
def test_shingle_chooses_the_fields_tokens(shingle, tmp_path):
    rng = np.random.default_rng(2)
    words = ["the", "of", "and", "a", "to", "in"] + [f"w{i}" for i in range(300)]
    bodies = [" ".join(rng.choice(words, 60)) for _ in range(40)]
    bodies += [body.replace(body.split()[3], "edited", 1) for body in bodies[:15]]
    frame = pd.DataFrame({"body": bodies})
    path = tmp_path / "texts.csv"
    frame.to_csv(path, index=False)
    output = tmp_path / "out.csv"
    argv = ["dedupe", str(path), "--on", "body", "--shingle", shingle, "-q"]
    assert cli.main([*argv, "--input-order", "-o", str(output)]) == 0
    written = pd.read_csv(output)
    expected = frame.lsh.dedupe([lf.Field("body", shingle=shingle)])
    assert written["cluster_id"].tolist() == expected["cluster_id"].tolist()
    assert written["cluster_size"].max() == 2


def test_shingle_chooses_the_simhash_tokens(tmp_path):
    from lsh_frame.block.hamming import entities

    frame = pd.DataFrame({"body": ["one two three four five"] * 2 + ["six seven"]})
    path = tmp_path / "texts.csv"
    frame.to_csv(path, index=False)
    output = tmp_path / "out.csv"
    argv = ["dedupe", str(path), "--on", "body", "--method", "simhash", "-q"]
    assert cli.main([*argv, "--shingle", "char", "-o", str(output)]) == 0
    expected, _ = entities(frame, ["body"], distance=3, kind="char")
    assert pd.read_csv(output)["cluster_id"].tolist() == expected.tolist()


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".csv.gz", ".parquet"])
def test_writing_in_pieces_counts_every_row_and_keeps_the_table(
    suffix, tmp_path, monkeypatch
):
    # Issue 44: writing a 2.9M-pair file showed nothing for 20 s. Plain CSV is
    # written in pieces, each reported; the file is the one a single write gives.
    from lsh_frame import _progress
    from lsh_frame.cli import io

    monkeypatch.setattr(io, "WRITE_ROWS", 7)
    frame = pd.DataFrame(
        {"name": [f"n{i}" for i in range(30)], "score": np.linspace(0, 1, 30)}
    )
    path = tmp_path / f"out{suffix}"
    with _progress.recording_work() as work:
        io.write_table(frame, str(path), index=False, progress=True)
    _, total, reports = work[-1]
    assert total == 30
    assert reports[-1][1] == 30
    if suffix in (".csv", ".tsv"):
        assert len(reports) == 5  # 7, 14, 21, 28, 30
    if suffix == ".parquet":
        back = pd.read_parquet(path)
    else:
        back = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    pd.testing.assert_frame_equal(back, frame)
