"""``lf.label_pairs``: the loop at a Python prompt or in a notebook."""

from __future__ import annotations

import builtins
import sys
import types

import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.review import label as label_module

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


def _typing(monkeypatch, replies, prompts=None):
    """Make ``input()`` return the replies in turn (EOFError after them)."""
    replies = iter(replies)

    def fake_input(prompt=""):
        if prompts is not None:
            prompts.append(prompt)
        try:
            reply = next(replies)
        except StopIteration:
            raise EOFError from None
        if isinstance(reply, BaseException):
            raise reply
        return reply

    monkeypatch.setattr(builtins, "input", fake_input)


def test_input_is_read_answers_are_returned_and_written(
    people, scored, tmp_path, monkeypatch, capsys
):
    prompts: list[str] = []
    _typing(monkeypatch, ["y", "n", "u", "q"], prompts)
    path = tmp_path / "labels.csv"
    answers = lf.label_pairs(people, FIELDS, scored=scored, path=path, display="text")
    assert answers.columns.tolist() == ["left", "right", "match"]
    assert answers["match"].dtype == "boolean"
    assert answers["match"].tolist()[:2] == [True, False]
    assert answers["match"].isna().tolist() == [False, False, True]
    assert len(prompts) == 4 and prompts[0].startswith("Same entity? [y]es")
    on_disk = pd.read_csv(path)
    assert on_disk[["left", "right"]].to_numpy().tolist() == (
        answers[["left", "right"]].to_numpy().tolist()
    )
    out = capsys.readouterr().out
    assert out.count("Pair ") == 4
    assert "3 answers in" in out and "(1 same, 1 different, 1 unsure" in out
    assert "expected precision" in out


def test_a_second_call_with_the_path_continues(people, scored, tmp_path, monkeypatch):
    path = tmp_path / "labels.csv"
    _typing(monkeypatch, ["y", "n"])  # then the end of input
    first = lf.label_pairs(people, FIELDS, scored=scored, path=path, display="text")
    _typing(monkeypatch, ["n", "q"])
    second = lf.label_pairs(people, FIELDS, path=path, display="text")
    assert len(first) == 2 and len(second) == 3
    pd.testing.assert_frame_equal(second.iloc[:2], first)
    asked = set(zip(first["left"], first["right"], strict=True))
    assert (second["left"].iloc[2], second["right"].iloc[2]) not in asked
    assert len(pd.read_csv(path)) == 3


def test_labels_and_the_file_together_keep_each_answer_once(
    people, scored, tmp_path, monkeypatch
):
    path = tmp_path / "labels.csv"
    _typing(monkeypatch, ["y", "n", "q"])
    first = lf.label_pairs(people, FIELDS, scored=scored, path=path, display="text")
    _typing(monkeypatch, ["q"])
    again = lf.label_pairs(
        people, FIELDS, scored=scored, labels=pd.read_csv(path), path=path
    )
    pd.testing.assert_frame_equal(again, first)


def test_an_interrupt_quits_and_keeps_the_answers(people, scored, monkeypatch):
    _typing(monkeypatch, ["y", KeyboardInterrupt()])
    answers = lf.label_pairs(people, FIELDS, scored=scored, display="text")
    assert answers["match"].tolist() == [True]


def test_n_stops_after_that_many_answers(people, scored, monkeypatch):
    _typing(monkeypatch, ["n"] * 5)
    answers = lf.label_pairs(people, FIELDS, scored=scored, n=2, display="text")
    assert len(answers) == 2


def test_the_answers_teach_the_jobs(people, scored, monkeypatch):
    _typing(monkeypatch, ["y", "n", "y", "q"])
    answers = lf.label_pairs(people, FIELDS, scored=scored, display="text")
    deduped = lf.dedupe(people, FIELDS, labels=answers)
    assert deduped.attrs["lsh_frame"]["labels"]["given"] == 3


class FakeIPython(types.ModuleType):
    """Enough of IPython for a kernel: get_ipython() and IPython.display."""

    def __init__(self, kernel: bool) -> None:
        super().__init__("IPython")
        self.shown: list[str] = []
        shell = types.SimpleNamespace(config={"IPKernelApp": {}} if kernel else {})
        self.get_ipython = lambda: shell
        display = types.ModuleType("IPython.display")

        class HTML:
            def __init__(self, data: str) -> None:
                self.data = data

        display.HTML = HTML  # type: ignore[attr-defined]
        display.display = lambda item: self.shown.append(item.data)  # type: ignore[attr-defined]
        self.display = display


@pytest.mark.parametrize("kernel", [True, False])
def test_a_notebook_shows_an_html_table_a_prompt_shows_text(
    people, scored, monkeypatch, capsys, kernel
):
    fake = FakeIPython(kernel)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setitem(sys.modules, "IPython.display", fake.display)
    _typing(monkeypatch, ["n", "q"])
    lf.label_pairs(people, FIELDS, scored=scored)
    out = capsys.readouterr().out
    if kernel:
        assert len(fake.shown) == 2 and all("<table" in page for page in fake.shown)
        assert "<mark>" in "".join(fake.shown)
        assert "Pair 1" not in out
    else:
        assert fake.shown == [] and "Pair 1" in out


def test_a_text_display_has_no_colour_off_a_terminal(people, scored, monkeypatch):
    monkeypatch.setattr(label_module, "use_colour", lambda stream: False)
    pages: list[str] = []
    monkeypatch.setattr(builtins, "print", lambda *args, **kw: pages.append(args[0]))
    _typing(monkeypatch, ["q"])
    lf.label_pairs(people, FIELDS, scored=scored, display="text")
    assert "\x1b" not in "".join(map(str, pages))


def test_colour_follows_the_terminal_and_no_color(monkeypatch):
    terminal = types.SimpleNamespace(isatty=lambda: True)
    pipe = types.SimpleNamespace(isatty=lambda: False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert label_module.use_colour(terminal) and not label_module.use_colour(pipe)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not label_module.use_colour(terminal)


def test_bad_parameters_are_named(people, scored):
    with pytest.raises(lf.ConfigError, match="'display' parameter of label_pairs"):
        lf.label_pairs(people, FIELDS, scored=scored, display="gui")
    with pytest.raises(lf.ConfigError, match="'n' parameter of label_pairs"):
        lf.label_pairs(people, FIELDS, scored=scored, n=0)
    with pytest.raises(lf.ConfigError, match="'batch' parameter of label_pairs"):
        lf.label_pairs(people, FIELDS, scored=scored, batch=0)
    with pytest.raises(lf.ColumnError, match="surnme"):
        lf.label_pairs(people, ["given_name", "surnme"])
