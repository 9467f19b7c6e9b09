"""The lsh-frame command line."""

import io
import re
import subprocess
import sys

import pytest

from lsh_frame import __version__, cli


def test_demo_reports_separation_of_duplicates():
    out = io.StringIO()
    assert cli.run_demo(800, seed=3, out=out) == 0
    text = out.getvalue()
    assert "800 records" in text
    means = dict(
        re.findall(r"(true duplicate pairs|unrelated pairs)\s+mean (\d\.\d\d)", text)
    )
    assert float(means["true duplicate pairs"]) > 0.5 > float(means["unrelated pairs"])
    share = float(re.search(r"([\d.]+)% of the true pairs found", text).group(1))
    assert share > 95


def test_demo_with_one_row_has_no_pairs():
    out = io.StringIO()
    assert cli.run_demo(1, seed=1, out=out) == 0
    assert "0 true duplicate pairs" in out.getvalue()


def test_main_runs_demo(capsys):
    assert cli.main(["demo", "--rows", "300"]) == 0
    assert "lsh_frame" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["demo", "--rows", "0"], ["demo", "--rows", "x"], ["nope"], []]
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
    assert "true duplicate pairs" in result.stdout
