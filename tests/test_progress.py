"""The progress line: shown when asked or watched, quiet otherwise, counts, shares."""

from __future__ import annotations

import threading

import pytest

import lsh_frame as lf
from lsh_frame import _progress


@pytest.fixture(autouse=True)
def _every_update_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)


def _work() -> None:
    _progress.step("counting")
    _progress.advance(3)
    _progress.advance(4)
    _progress.step("sharing", total=10)
    _progress.advance(10)
    _progress.step("waiting")


def test_a_shown_line_carries_the_description_and_the_steps(
    capsys: pytest.CaptureFixture,
) -> None:
    with _progress.reporting(True, "job"):
        _work()
    err = capsys.readouterr().err
    assert "job: counting" in err
    assert "job: sharing" in err
    assert "100%" in err  # the step with a total shows its share done


def test_a_step_without_a_total_shows_its_count(capsys: pytest.CaptureFixture) -> None:
    with _progress.reporting(True, "job"):
        _progress.step("counting")
        _progress.advance(1234)
        _progress.step("next")
    assert "counting: 1234" in capsys.readouterr().err


def test_by_default_the_line_waits_for_a_watcher_and_the_delay(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_progress, "interactive", lambda: False)
    with _progress.reporting(None, "job"):
        _work()
    assert capsys.readouterr().err == ""  # nobody watches
    monkeypatch.setattr(_progress, "interactive", lambda: True)
    monkeypatch.setattr(_progress, "DELAY", 3_600.0)
    with _progress.reporting(None, "job"):
        _work()
    assert capsys.readouterr().err == ""  # a job shorter than the delay is quiet
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    with _progress.reporting(None, "job"):
        _work()
    assert "job: sharing" in capsys.readouterr().err


def test_the_line_stops_its_thread_when_closed() -> None:
    before = threading.active_count()
    with _progress.reporting(True, "job"):
        _work()
    assert threading.active_count() == before


def test_the_first_listener_wins() -> None:
    with _progress.recording() as outer, _progress.reporting(True, "inner"):
        _work()
    assert [label for label, _ in outer] == ["counting", "sharing", "waiting"]


def test_recording_work_keeps_what_each_step_reported() -> None:
    with _progress.recording_work() as work:
        _work()
    assert [(label, total) for label, total, _ in work] == [
        ("counting", None),
        ("sharing", 10),
        ("waiting", None),
    ]
    assert [done for _, done in work[0][2]] == [3, 7]
    assert [done for _, done in work[1][2]] == [10]
    assert work[2][2] == []


def test_nothing_listens_outside_a_block() -> None:
    assert not _progress.listening()
    with _progress.recording():
        assert _progress.listening()
    _progress.step("nobody hears this")  # a no-op, not an error
    _progress.advance(5)


@pytest.mark.parametrize("value", ["yes", 1, 0.5])
def test_progress_must_be_true_false_or_none(value: object) -> None:
    frame = lf.datasets.make_customers(50, seed=1)
    with pytest.raises(lf.ConfigTypeError, match="True, False or None"):
        frame.lsh.dedupe(["surname"], progress=value)
