"""``lsh-frame dedupe --method simhash``: near-identical texts as one entity."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lsh_frame import cli
from lsh_frame.block.hamming import entities
from lsh_frame.cli import io as cli_io


@pytest.fixture
def articles(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    rng = np.random.default_rng(3)
    words = np.array([f"word{i}" for i in range(3_000)])
    bodies = [" ".join(rng.choice(words, 120)) for _ in range(40)]
    # Rows 40-49 repeat rows 0-9 with one word changed; 50 is an exact copy of 3.
    edited = [body.replace(body.split()[5], "changed", 1) for body in bodies[:10]]
    frame = pd.DataFrame(
        {"title": [f"t{i}" for i in range(51)],
         "body": bodies + edited + [bodies[3]]}
    )  # fmt: skip
    path = tmp_path / "articles.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_dedupe_simhash_ids_match_the_library(articles, tmp_path, capsys):
    path, frame = articles
    output = tmp_path / "out.csv"
    code = cli.main(["dedupe", str(path), "--on", "body", "--method", "simhash",
                     "--distance", "6", "-o", str(output)])  # fmt: skip
    assert code == 0
    written = cli_io.read_table(str(output))
    ids = written["cluster_id"].astype(int).to_numpy()
    expected, counts = entities(frame, ["body"], distance=6)
    np.testing.assert_array_equal(ids, expected)
    # The exact copy is always found; most one-word edits are within 6 bits.
    assert ids[50] == ids[3]
    assert (ids[40:50] == ids[:10]).sum() >= 8
    assert len(set(ids[:40])) == 40
    # The same columns as the default method (issue 38, defect 11).
    assert written.columns[-2:].tolist() == ["cluster_id", "cluster_size"]
    assert (
        written["cluster_size"].astype(int).tolist() == np.bincount(ids)[ids].tolist()
    )
    assert f"51 records → {counts['entities']} entities" in capsys.readouterr().err


def test_dedupe_simhash_drop_keeps_one_row_per_entity(articles, tmp_path):
    path, frame = articles
    output = tmp_path / "kept.csv"
    code = cli.main(["dedupe", str(path), "--on", "body", "--method", "simhash",
                     "--drop", "--keep", "last", "-o", str(output)])  # fmt: skip
    assert code == 0
    kept = cli_io.read_table(str(output))
    assert "t3" not in kept["title"].tolist()  # its copy, row 50, is last
    assert "t50" in kept["title"].tolist()
    assert len(kept) < len(frame)


def test_dedupe_simhash_bad_distance(articles, capsys):
    path, _ = articles
    code = cli.main(["dedupe", str(path), "--on", "body", "--method", "simhash",
                     "--distance", "40", "-o", "-"])  # fmt: skip
    assert code != 0
    error = capsys.readouterr().err
    assert "--distance must be in [0, 16]" in error and "'distance'" not in error


def test_dedupe_simhash_names_its_columns_as_asked(articles, tmp_path):
    """Issue 38, defect 11: --size-column changed nothing with simhash."""
    path, frame = articles
    output = tmp_path / "out.csv"
    code = cli.main(["dedupe", str(path), "--on", "body", "--method", "simhash",
                     "--id-column", "entity", "--size-column", "n", "-o",
                     str(output), "-q"])  # fmt: skip
    assert code == 0
    written = cli_io.read_table(str(output))
    assert written.columns.tolist() == [*frame.columns, "entity", "n"]


def test_a_giant_simhash_entity_is_warned_about(tmp_path, capsys):
    """Issue 44: --method simhash made one entity of 1,766 pages, silently."""
    rng = np.random.default_rng(5)
    boilerplate = " ".join(f"menu{i}" for i in range(150))
    bodies = [f"{boilerplate} {' '.join(rng.choice(['a', 'b', 'c'], 3))} {i}"
              for i in range(300)]  # fmt: skip
    path = tmp_path / "pages.csv"
    pd.DataFrame({"body": bodies}).to_csv(path, index=False)
    code = cli.main(["dedupe", str(path), "--on", "body", "--method", "simhash",
                     "--distance", "6", "-o", "-"])  # fmt: skip
    assert code == 0
    warned = [
        line
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("lsh-frame dedupe: warning:")
    ]
    assert len(warned) == 1
    assert "of the 300 rows" in warned[0] and "--distance" in warned[0]
