"""Saving an index safely and loading it with every check (lsh_frame.index.store,
lsh_frame.index.files, lsh_frame.index.checks)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.index import store as index_store

#: The street scored by TF-IDF: the index holds every kind of file.
FIELDS = [
    "given_name",
    "surname",
    lf.Field("street_address", compare="tfidf"),
    "date_of_birth",
    "email",
]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(900, seed=5).drop(columns="entity_id")


def build(frame: pd.DataFrame) -> lf.Index:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lf.Index.build(frame, FIELDS)


@pytest.fixture(scope="module")
def index(people) -> lf.Index:
    return build(people.iloc[:700])


@pytest.fixture(scope="module")
def other(people) -> lf.Index:
    """Another index of the same columns (fewer records)."""
    return build(people.iloc[:500])


@pytest.fixture(scope="module")
def saved(tmp_path_factory, index) -> Path:
    path = tmp_path_factory.mktemp("saved") / "ix"
    index.save(path)
    return path


def same(loaded: lf.Index, expected: lf.Index, new: pd.DataFrame) -> bool:
    """Whether ``loaded`` holds and answers as ``expected`` does."""
    if len(loaded) != len(expected) or not loaded.entity_ids.equals(
        expected.entity_ids
    ):
        return False
    return loaded.query(new, k=3).equals(expected.query(new, k=3))


def strays(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".lsh_frame"))


# -- overwrite=True replaces an index, nothing else ------------------------------


def test_overwrite_refuses_a_folder_that_is_not_an_index(tmp_path, index, monkeypatch):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "q3.xlsx").write_text("numbers")
    with pytest.raises(lf.FolderExistsError, match=r"reports.*holds no lsh_frame"):
        index.save(reports, overwrite=True)
    assert (reports / "q3.xlsx").read_text() == "numbers"
    assert sorted(os.listdir(reports)) == ["q3.xlsx"]
    # The current folder: nothing deleted, a clear error (not Errno 22).
    monkeypatch.chdir(reports)
    with pytest.raises(FileExistsError, match="holds no lsh_frame index"):
        index.save(".", overwrite=True)
    assert sorted(os.listdir(reports)) == ["q3.xlsx"]
    # A file, and a folder whose index.json is another program's.
    with pytest.raises(lf.FolderExistsError, match="is a file"):
        index.save(reports / "q3.xlsx", overwrite=True)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.json").write_text('{"format": "someone.else"}')
    with pytest.raises(lf.FolderExistsError):
        index.save(foreign, overwrite=True)
    assert (foreign / "index.json").read_text() == '{"format": "someone.else"}'
    assert strays(tmp_path) == [] and strays(reports) == []


def test_overwrite_refuses_the_folder_the_process_works_in(
    tmp_path, index, monkeypatch
):
    path = tmp_path / "ix"
    index.save(path)
    (path / "inner").mkdir()
    for here, given in ((path, "."), (path, path), (path / "inner", "..")):
        monkeypatch.chdir(here)
        with pytest.raises(lf.FolderExistsError, match="works in"):
            index.save(given, overwrite=True)
    assert (path / "index.json").is_file() and (path / "inner").is_dir()


def test_overwrite_replaces_an_index_or_an_empty_folder(tmp_path, index, other, people):
    path = tmp_path / "ix"
    other.save(path)
    with pytest.raises(lf.FolderExistsError, match="overwrite=True"):
        index.save(path)
    index.save(path, overwrite=True)
    assert same(lf.Index.load(path), index, people.iloc[700:760])
    empty = tmp_path / "empty"
    empty.mkdir()
    index.save(empty, overwrite=True)
    assert len(lf.Index.load(empty)) == len(index)
    assert strays(tmp_path) == []


# -- a failed save leaves the old index whole ------------------------------------


def interrupt_at(monkeypatch, name: str, call: int, error: BaseException) -> None:
    """Make the ``call``-th call of ``os.<name>`` raise ``error`` (after it ran)."""
    real = getattr(os, name)
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == call and name != "unlink":
            raise error
        result = real(*args, **kwargs)
        if len(calls) == call:
            raise error
        return result

    monkeypatch.setattr(os, name, failing)


@pytest.mark.parametrize(
    ("name", "call", "error"),
    [
        # The issue's case: Ctrl-C as the old files are removed.
        ("unlink", 1, KeyboardInterrupt()),
        ("unlink", 3, OSError("disk gone")),
        # Moving the old index aside, moving the new one in.
        ("rename", 1, KeyboardInterrupt()),
        ("rename", 2, KeyboardInterrupt()),
        ("rename", 2, OSError("disk full")),
        # Flushing the files of the new one.
        ("fsync", 2, KeyboardInterrupt()),
    ],
)
def test_an_interrupted_save_leaves_a_whole_index(
    tmp_path, index, other, people, monkeypatch, name, call, error
):
    path = tmp_path / "ix"
    other.save(path)
    new = people.iloc[700:760]
    with monkeypatch.context() as patch:
        interrupt_at(patch, name, call, error)
        try:
            index.save(path, overwrite=True)
        except (KeyboardInterrupt, OSError) as raised:
            assert raised is error
    loaded = lf.Index.load(path)
    assert same(loaded, other, new) or same(loaded, index, new)
    if name in ("rename", "fsync"):  # failed before the new one was in
        assert same(loaded, other, new)
    # The next save cleans up whatever the failed one left.
    index.save(path, overwrite=True)
    assert strays(tmp_path) == []
    assert same(lf.Index.load(path), index, new)


def test_a_failed_write_keeps_the_old_index_and_leaves_nothing(
    tmp_path, index, other, people, monkeypatch
):
    path = tmp_path / "ix"
    other.save(path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_store, "write_text", full)
    with pytest.raises(OSError, match="No space"):
        index.save(path, overwrite=True)
    monkeypatch.undo()
    assert same(lf.Index.load(path), other, people.iloc[700:760])
    assert strays(tmp_path) == []


def test_a_save_killed_between_its_renames_is_put_back(tmp_path, index, people):
    """The old index moved aside, the new not yet in: load and save put it back."""
    path = tmp_path / "ix"
    index.save(path)
    aside = tmp_path / ".lsh_frame-ix.old-1-0123abcd"
    os.rename(path, aside)
    assert not path.exists()
    loaded = lf.Index.load(path)
    assert path.is_dir() and not aside.exists()
    assert same(loaded, index, people.iloc[700:760])
    # A save finds the path empty in the same way.
    os.rename(path, aside)
    with pytest.raises(lf.FolderExistsError):
        index.save(path)  # the old index is back first: it exists
    assert same(lf.Index.load(path), index, people.iloc[700:760])


def test_stale_folders_are_removed_by_the_next_save(tmp_path, index):
    path = tmp_path / "ix"
    index.save(path)
    # What killed saves leave: a half-written new folder, a trash folder, an
    # old one moved aside (the path holds a whole index, so it is stale), and
    # the temporary copy of a version before the renames.
    for name in (
        ".lsh_frame-ix.new-5-00000000",
        ".lsh_frame-ix.trash-6-11111111",
        ".lsh_frame-ix.old-7-22222222",
        ".lsh_frame-abcd1234",
    ):
        shutil.copytree(path, tmp_path / name)
    (tmp_path / ".lsh_frame-ix.new-5-00000000" / "index.json").unlink()
    # Not ours: another index's folders, and a user's folder of other files.
    kept = [".lsh_frame-other.new-5-00000000", ".lsh_frame-xyzw9876"]
    shutil.copytree(path, tmp_path / kept[0])
    (tmp_path / kept[1]).mkdir()
    (tmp_path / kept[1] / "notes.txt").write_text("mine")
    index.save(path, overwrite=True)
    assert strays(tmp_path) == sorted(kept)
    assert (tmp_path / kept[1] / "notes.txt").read_text() == "mine"


def test_every_file_is_flushed_before_the_new_index_moves_in(
    tmp_path, index, monkeypatch
):
    from lsh_frame.index import files as index_files

    flushed: list[str] = []
    renamed_at: list[int] = []
    real_fsync, real_text, real_rename = (
        index_files._fsync,
        index_store.write_text,
        os.rename,
    )

    def fsync(path):
        flushed.append(Path(path).name)
        return real_fsync(path)

    def write_text(path, text):
        real_text(path, text)  # flushed inside (os.fsync of its descriptor)
        flushed.append(Path(path).name)

    def rename(source, target):
        renamed_at.append(len(flushed))
        return real_rename(source, target)

    monkeypatch.setattr(index_files, "_fsync", fsync)
    monkeypatch.setattr(index_store, "write_text", write_text)
    monkeypatch.setattr(os, "rename", rename)
    path = tmp_path / "ix"
    index.save(path)
    monkeypatch.undo()
    before = flushed[: renamed_at[0]]
    assert set(os.listdir(path)) <= set(before)  # each file, index.json included
    assert before[-1].startswith(".lsh_frame-ix.new-")  # then its folder
    assert flushed[renamed_at[0] :] == [tmp_path.name]  # then the parent's entries


# -- loading checks everything ----------------------------------------------------


def damage(path: Path, how: str, rng: np.random.Generator, donor: Path) -> None:
    data = bytearray(path.read_bytes())
    if how == "flip":
        flipped = np.frombuffer(data, dtype=np.uint8).copy()
        flipped[rng.integers(0, len(data), size=64)] ^= 0xFF
        data = bytearray(flipped.tobytes())
    elif how == "flip_middle":
        middle = len(data) // 2
        data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    elif how == "cut":
        data = data[: len(data) // 2]
    elif how == "other":
        data = bytearray(donor.read_bytes())
    path.write_bytes(bytes(data))


def kinds_of_files(folder: Path, *, largest: bool = False) -> dict[str, str]:
    """One file of each kind of an index folder (the first, or the largest)."""
    kinds: dict[str, str] = {}
    for name in sorted(os.listdir(folder)):
        kind = name.split("-")[0].split(".")[0]
        if kind not in kinds or (
            largest
            and (folder / name).stat().st_size > (folder / kinds[kind]).stat().st_size
        ):
            kinds[kind] = name
    return kinds


def test_the_index_has_every_kind_of_file(saved):
    assert set(kinds_of_files(saved)) == {
        "index",
        "state",
        "vocabulary",
        "tfidf",
        "records",
        "keys",
        "tokens",
        "postings",
    }


@pytest.mark.parametrize("how", ["flip", "flip_middle", "cut", "other", "missing"])
def test_a_damaged_file_is_named_on_load(tmp_path, saved, other, people, how):
    donor = tmp_path / "donor"
    other.save(donor)
    rng = np.random.default_rng(5)
    for kind, name in kinds_of_files(saved).items():
        if kind == "index":
            continue
        folder = tmp_path / kind
        shutil.copytree(saved, folder)
        if how == "missing":
            (folder / name).unlink()
        else:
            damage(folder / name, how, rng, donor / name)
        # The checksums find any change; without them the checks of the
        # arrays do (or the index answers: numbers within their ranges).
        with pytest.raises(lf.DamagedIndexError, match=f"{folder}.*{name}"):
            lf.Index.load(folder)
        try:
            loaded = lf.Index.load(folder, checksums=False)
            loaded.query(people.iloc[700:])
        except lf.DamagedIndexError as error:
            assert str(folder) in str(error) and name in str(error)
        if how in ("cut", "missing"):
            with pytest.raises(lf.DamagedIndexError, match=name):
                lf.Index.load(folder, checksums=False)


def test_a_segfault_of_the_issue_is_a_clear_error(tmp_path, people):
    """64 bytes flipped in the middle of records-0.arrow crashed a query."""
    folder = tmp_path / "ix"
    build(people.iloc[:700]).save(folder)
    damage(folder / "records-0.arrow", "flip_middle", np.random.default_rng(0), folder)
    code = (
        "import sys, lsh_frame as lf, warnings; warnings.simplefilter('ignore')\n"
        "people = lf.datasets.make_customers(900, seed=5).drop(columns='entity_id')\n"
        "for checksums in (True, False):\n"
        "    try:\n"
        "        index = lf.Index.load(sys.argv[1], checksums=checksums)\n"
        "        index.query(people.iloc[700:])\n"
        "        print('answered')\n"
        "    except lf.DamagedIndexError as error:\n"
        "        print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr  # not -11 (SIGSEGV)
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("DamagedIndexError") for line in lines)
    assert all("records-0.arrow" in line for line in lines)


def test_files_of_two_indexes_are_not_read_as_one(tmp_path, index, other):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    index.save(ours)
    other.save(theirs)
    mixed = tmp_path / "mixed"
    shutil.copytree(ours, mixed)
    shutil.copy(theirs / "state.arrow", mixed / "state.arrow")
    with pytest.raises(lf.DamagedIndexError, match=r"state\.arrow"):
        lf.Index.load(mixed, checksums=False)
    # Another index's manifest among our files.
    shutil.copytree(ours, tmp_path / "mixed2")
    shutil.copy(theirs / "index.json", tmp_path / "mixed2" / "index.json")
    with pytest.raises(lf.DamagedIndexError, match=r"\.arrow"):
        lf.Index.load(tmp_path / "mixed2", checksums=False)
    # The same index saved twice: same sizes, different saves.
    again = tmp_path / "again"
    index.save(again)
    shutil.copytree(ours, tmp_path / "mixed3")
    shutil.copy(again / "keys-0-0.arrow", tmp_path / "mixed3" / "keys-0-0.arrow")
    with pytest.raises(lf.DamagedIndexError, match="another save"):
        lf.Index.load(tmp_path / "mixed3", checksums=False)


MANIFESTS = {
    "cut short": lambda text: text[: len(text) // 2],
    "empty": lambda text: "",
    "not JSON": lambda text: "index, please",
    "a list": lambda text: "[1, 2]",
    "binary": lambda text: b"\x89\xff\xfe\x00".decode("latin-1"),
    "no settings": lambda text: drop(text, "settings"),
    "no keys": lambda text: drop(text, "keys"),
    "no files": lambda text: drop(text, "files"),
    "segments": lambda text: change(text, segments=[5]),
    "columns": lambda text: change(text, settings={"columns": 3}),
    "a file's size": lambda text: change(text, files={"state.arrow": {"bytes": 1}}),
    "version": lambda text: change(text, version="2"),
    "next_id": lambda text: change(text, next_id=1.5),
    "a field": lambda text: change(text, fields=[{"columns": ["a"], "k": -4}]),
    "a key": lambda text: change(text, keys=[{"kind": "lsh"}]),
    "the model": lambda text: change(text, decision={"model": {"levels": 3}}),
}


def drop(text: str, key: str) -> str:
    manifest = json.loads(text)
    del manifest[key]
    return json.dumps(manifest)


def change(text: str, **values) -> str:
    manifest = json.loads(text)
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(manifest.get(key), dict):
            manifest[key] = {**manifest[key], **value}
        else:
            manifest[key] = value
    return json.dumps(manifest)


@pytest.mark.parametrize("case", list(MANIFESTS))
def test_a_damaged_manifest_is_one_clear_error(tmp_path, saved, case):
    folder = tmp_path / "ix"
    shutil.copytree(saved, folder)
    text = (folder / "index.json").read_text()
    (folder / "index.json").write_bytes(MANIFESTS[case](text).encode("latin-1"))
    with pytest.raises(lf.DamagedIndexError) as raised:
        lf.Index.load(folder)
    message = str(raised.value)
    assert str(folder) in message and ("index.json" in message or ".arrow" in message)
    assert isinstance(raised.value, lf.ConfigError)


def test_another_format_and_a_newer_version(tmp_path, saved):
    folder = tmp_path / "ix"
    shutil.copytree(saved, folder)
    manifest = json.loads((folder / "index.json").read_text())
    (folder / "index.json").write_text(json.dumps({**manifest, "version": 3}))
    with pytest.raises(lf.ConfigError, match=r"version 3.*reads versions 1 to 2"):
        lf.Index.load(folder)
    (folder / "index.json").write_text(json.dumps({**manifest, "format": "x"}))
    with pytest.raises(lf.DamagedIndexError, match="not a readable lsh_frame index"):
        lf.Index.load(folder)


def test_an_index_saved_before_checksums_still_loads(tmp_path, saved, index, people):
    """Version 1 had no checksums and no save id: read with every other check."""
    import pyarrow as pa

    folder = tmp_path / "v1"
    shutil.copytree(saved, folder)
    manifest = json.loads((folder / "index.json").read_text())
    del manifest["files"], manifest["save_id"]
    (folder / "index.json").write_text(json.dumps({**manifest, "version": 1}))
    for name in os.listdir(folder):  # as version 1 wrote them: no save id
        if name.endswith(".arrow"):
            data = pa.BufferReader((folder / name).read_bytes())
            table = pa.ipc.open_file(data).read_all()
            table = table.replace_schema_metadata(None)
            with (
                pa.OSFile(str(folder / name), "wb") as sink,
                pa.ipc.new_file(sink, table.schema) as writer,
            ):
                writer.write_table(table)
    loaded = lf.Index.load(folder)
    assert same(loaded, index, people.iloc[700:760])
    # Saved again, it is version 2 with its checksums.
    loaded.save(folder, overwrite=True)
    assert json.loads((folder / "index.json").read_text())["version"] == 2
    # Without checksums, damage of a version 1 index is still refused.
    keys = sorted(name for name in os.listdir(saved) if name.startswith("postings"))
    shutil.copytree(saved, tmp_path / "v1b")
    (tmp_path / "v1b" / "index.json").write_text(json.dumps({**manifest, "version": 1}))
    damage(tmp_path / "v1b" / keys[0], "cut", np.random.default_rng(1), folder)
    with pytest.raises(lf.DamagedIndexError, match=keys[0]):
        lf.Index.load(tmp_path / "v1b")


def test_checksums_must_be_a_bool(saved):
    with pytest.raises(lf.ConfigTypeError, match="checksums"):
        lf.Index.load(saved, checksums="no")


def _child_killing_itself(folder: Path, source: Path, function: str, call: int) -> int:
    """Save ``source`` over ``folder`` in a child that SIGKILLs itself at the
    ``call``-th call of ``os.<function>``; return its exit status."""
    code = (
        "import os, signal, sys, lsh_frame as lf\n"
        "index = lf.Index.load(sys.argv[2])\n"
        "real, calls = getattr(os, sys.argv[3]), []\n"
        "def killing(*args, **kwargs):\n"
        "    calls.append(1)\n"
        "    if len(calls) == int(sys.argv[4]):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(*args, **kwargs)\n"
        "setattr(os, sys.argv[3], killing)\n"
        "index.save(sys.argv[1], overwrite=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(folder), str(source), function, str(call)],
        capture_output=True,
        text=True,
    )
    return result.returncode


@pytest.mark.parametrize(
    ("function", "call"),
    [("rename", 1), ("rename", 2), ("rename", 3), ("fsync", 3), ("unlink", 2)],
)
def test_a_kill_at_each_step_of_a_save_leaves_a_whole_index(
    tmp_path, saved, index, other, people, function, call
):
    """A real SIGKILL at the riskiest moments: as the old index moves aside,
    between the two renames, as the old one goes to the trash, while the new
    files are flushed, while the old ones are deleted."""
    donor = tmp_path / "donor"
    other.save(donor)
    folder = tmp_path / "ix"
    shutil.copytree(saved, folder)
    status = _child_killing_itself(folder, donor, function, call)
    assert status == -signal.SIGKILL
    loaded = lf.Index.load(folder)
    new = people.iloc[700:760]
    assert same(loaded, index, new) or same(loaded, other, new)
    if (function, call) == ("rename", 2):  # between the renames: the old one
        assert same(loaded, index, new)
    other.save(folder, overwrite=True)
    assert strays(tmp_path) == []


#: The child of the flipped-bytes test: load (with or without checksums) and
#: answer a query; print what happened (a crash is its exit status).
CHILD = """
import sys, warnings
warnings.simplefilter("ignore")
import lsh_frame as lf
folder, checksums = sys.argv[1], sys.argv[2] == "yes"
new = lf.datasets.make_customers(300, seed=99).drop(columns="entity_id")
try:
    lf.Index.load(folder, checksums=checksums).query(new)
    print("answered")
except lf.DamagedIndexError as error:
    print("damaged", error)
"""


@pytest.mark.slow
def test_a_megabyte_flipped_in_each_kind_of_file(tmp_path):
    """1 MiB of random bytes (half a smaller file's) flipped in each kind of file
    of a 30,000-record index, one file at a time, each read in a child process:
    with checksums every load names the file; without them the checks of the
    arrays name it or the index answers; never a crash."""
    people = lf.datasets.make_customers(30_000, seed=3).drop(columns="entity_id")
    folder = tmp_path / "ix"
    build(people).save(folder)
    rng = np.random.default_rng(38)
    outcomes = {}
    for kind, name in kinds_of_files(folder, largest=True).items():
        for checksums in ("yes", "no"):
            work = tmp_path / f"{kind}-{checksums}"
            shutil.copytree(folder, work)
            data = np.frombuffer((work / name).read_bytes(), dtype=np.uint8).copy()
            count = min(1 << 20, data.size // 2)
            data[rng.choice(data.size, size=count, replace=False)] ^= np.uint8(
                rng.integers(1, 256)
            )
            (work / name).write_bytes(data.tobytes())
            result = subprocess.run(
                [sys.executable, "-c", CHILD, str(work), checksums],
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert result.returncode == 0, (name, checksums, result.stderr[-2000:])
            said = result.stdout.strip()
            if said.startswith("damaged"):
                assert str(work) in said and name in said, said
            else:
                assert said == "answered" and checksums == "no", (name, said)
            outcomes[(name, checksums)] = said.split()[0]
            shutil.rmtree(work)
    print(outcomes)
    assert all(
        outcome == "damaged"
        for (_, checksums), outcome in outcomes.items()
        if checksums == "yes"
    )
