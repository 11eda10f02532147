"""components.base.io: atomic writes, torn-tail-safe appends, path locks."""
from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from components.base import io
from components.base.errors import DataFormatError


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_writes_leave_0644_files_and_no_temp_files(tmp_path):
    folder = tmp_path / "out" / "deep"
    io.atomic_write_text(folder / "a.txt", "héllo")
    io.atomic_write_bytes(folder / "b.bin", b"\x00\x01")
    io.atomic_write_json(folder / "c.json", {"k": [1, 2], "é": True})
    io.atomic_write_jsonl(folder / "d.jsonl", [{"n": 1}, {"n": 2}])
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.bin", "c.json", "d.jsonl"]
    assert all(mode(p) == 0o644 for p in folder.iterdir())
    assert (folder / "a.txt").read_text(encoding="utf-8") == "héllo"
    assert json.loads((folder / "c.json").read_text(encoding="utf-8")) == {"k": [1, 2], "é": True}
    assert io.read_jsonl(folder / "d.jsonl") == [{"n": 1}, {"n": 2}]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "keep.txt"
    io.atomic_write_text(target, "old")

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        io.atomic_write(target, broken)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_temp_path_and_commit_for_writers_that_need_a_name(tmp_path):
    target = tmp_path / "clips" / "cut.mp4"
    tmp = io.atomic_temp_path(target)
    assert tmp.parent == target.parent and tmp.suffix == ".mp4" and tmp != target
    assert tmp != io.atomic_temp_path(target)  # unique per call
    tmp.write_bytes(b"movie")
    io.commit_temp(tmp, target)
    assert target.read_bytes() == b"movie" and mode(target) == 0o644
    assert not tmp.exists()


def test_append_after_a_torn_tail_keeps_the_next_line_readable(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"qid": 1}\n{"qid": 2, "pred')  # power lost mid-line
    io.append_jsonl(path, {"qid": 3})
    io.append_jsonl(path, {"qid": 4})
    assert io.read_jsonl(path) == [{"qid": 1}, {"qid": 3}, {"qid": 4}]
    assert path.read_bytes().endswith(b'"pred\n{"qid": 3}\n{"qid": 4}\n')


def test_append_creates_a_0644_file_and_its_folder(tmp_path):
    path = tmp_path / "new" / "log.jsonl"
    io.append_jsonl(path, {"a": "ü"})
    assert mode(path) == 0o644
    assert path.read_text(encoding="utf-8") == '{"a": "ü"}\n'


def test_two_threads_appending_interleave_whole_lines(tmp_path):
    path = tmp_path / "shared.jsonl"
    per_thread = 150
    payload = "x" * 5000  # longer than one write() of a pipe or buffer

    def writer(name: str) -> None:
        for i in range(per_thread):
            io.append_jsonl(path, {"who": name, "i": i, "payload": payload})

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * per_thread
    records = [json.loads(line) for line in lines]  # every line whole
    for name in ("a", "b"):
        assert [r["i"] for r in records if r["who"] == name] == list(range(per_thread))


def test_read_jsonl_skips_blank_torn_and_undecodable_lines(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'{"a": 1}\n\n   \nnot json\n\xff\xfe\n{"b": 2}\n{"c": ')
    assert io.read_jsonl(path) == [{"a": 1}, {"b": 2}]
    assert io.read_jsonl(tmp_path / "missing.jsonl") == []


def test_path_lock_is_one_object_for_every_spelling(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "f.jsonl"
    lock = io.path_lock(target)
    assert io.path_lock(str(target)) is lock
    assert io.path_lock(tmp_path / "sub" / ".." / "f.jsonl") is lock
    monkeypatch.chdir(tmp_path / "sub")
    assert io.path_lock("../f.jsonl") is lock
    (tmp_path / "link.jsonl").symlink_to(target)
    assert io.path_lock(tmp_path / "link.jsonl") is lock
    assert io.path_lock(tmp_path / "other.jsonl") is not lock


def test_load_json_names_the_problem(tmp_path):
    with pytest.raises(DataFormatError, match="annotations not found"):
        io.load_json(tmp_path / "none.json", "annotations")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(DataFormatError, match="bad.json is not valid JSON"):
        io.load_json(bad)
    with pytest.raises(DataFormatError, match="cannot be read"):
        io.load_json(tmp_path)
    good = tmp_path / "good.json"
    io.atomic_write_json(good, [1, {"a": None}])
    assert io.load_json(good) == [1, {"a": None}]


def test_fsync_dir_ignores_what_it_cannot_open(tmp_path):
    io.fsync_dir(tmp_path)
    io.fsync_dir(tmp_path / "not-there")  # no error


def test_a_repeated_key_is_found_with_its_line_and_only_inside_one_object():
    from components.base.io import duplicate_key_line

    # the same key in sibling objects of a list, or inside a string, is no repeat
    assert duplicate_key_line('[{"a": 1}, {"a": 2}, {"s": "\\"a\\": 3, \\"a\\": 4"}]') is None
    assert duplicate_key_line('{"a": {"b": 1}, "c": {"b": 2},\n"c": 3}') == (2, "c")
    assert duplicate_key_line('{"x\\"y": 1,\n\n "x\\"y": 2}') == (3, 'x"y')


def test_load_json_refuses_a_repeated_key(tmp_path):
    from components.base.io import load_json

    path = tmp_path / "r.json"
    path.write_text('{"s1": 1,\n "s1": 2}')
    with pytest.raises(DataFormatError, match=r"r.json: line 2: key 's1' appears twice"):
        load_json(path)
    path.write_text('[{"s1": 1}, {"s1": 2}]')
    assert load_json(path) == [{"s1": 1}, {"s1": 2}]


def test_a_torn_tail_longer_than_the_search_window_is_cut_at_its_own_line(tmp_path):
    from components.base.io import repair_torn_tail, torn_path

    path = tmp_path / "p.jsonl"
    head = b'{"qid": "a"}\n'
    torn = b'{"qid": "b", "raw": "' + b"x" * 300_000  # no newline, not JSON
    path.write_bytes(head + torn)
    assert repair_torn_tail(path) == len(torn)
    assert path.read_bytes() == head and torn_path(path).read_bytes() == torn + b"\n"
    assert repair_torn_tail(path) == 0 and path.read_bytes() == head  # nothing left to repair
    path.write_bytes(torn)  # the only line torn: the file becomes empty, the bytes kept aside
    assert repair_torn_tail(path) == len(torn) and path.read_bytes() == b""


def test_a_symlink_replaces_what_was_there_in_one_step_and_leaves_no_temp(tmp_path):
    first, second = tmp_path / "first.bin", tmp_path / "second.bin"
    first.write_bytes(b"one")
    second.write_bytes(b"two")
    link = tmp_path / "mirror" / "clip.bin"
    io.atomic_symlink(first, link)
    assert link.is_symlink() and link.read_bytes() == b"one"
    io.atomic_symlink(second, link)                     # over an existing link
    assert os.readlink(link) == str(second) and link.read_bytes() == b"two"
    assert [p.name for p in link.parent.iterdir()] == ["clip.bin"]


def test_where_links_are_not_allowed_the_file_is_copied(tmp_path, monkeypatch):
    src = tmp_path / "src.bin"
    src.write_bytes(b"bytes")

    def refused(*args):
        raise PermissionError("links not allowed here")

    monkeypatch.setattr(os, "symlink", refused)
    io.atomic_symlink(src, tmp_path / "copy.bin")
    assert not (tmp_path / "copy.bin").is_symlink() and (tmp_path / "copy.bin").read_bytes() == b"bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.bin", "src.bin"]


def test_a_text_written_without_fsync_is_still_whole_and_0644(tmp_path):
    target = io.atomic_write_text(tmp_path / "ref", "abc123", durable=False)
    assert target.read_text() == "abc123" and mode(target) == 0o644


#: files whose own durable writes another change is moving onto base/io (issue 36)
_WRITES_ELSEWHERE = {"components/media/cache.py", "components/common/batch.py"}


def test_the_app_writes_files_only_through_base_io():
    """No `Path.write_text` / `write_bytes` and no `open(..., "w"/"a"/"x")` in app code outside
    components/base/io.py: a plain write leaves a torn file behind a crash."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for path in [root / "app.py", *(root / "components").rglob("*.py"), *(root / "backends").rglob("*.py")]:
        rel = path.relative_to(root).as_posix()
        if rel == "components/base/io.py" or rel in _WRITES_ELSEWHERE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("write_text", "write_bytes"):
                found.append(f"{rel}:{node.lineno} .{func.attr}")
            elif isinstance(func, ast.Name) and func.id == "open":
                mode = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "mode"), None)
                if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax"):
                    found.append(f"{rel}:{node.lineno} open(..., {mode.value!r})")
    assert found == []
