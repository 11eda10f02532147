"""A resumed output is repaired or its faults named (components/common/batch.py, issue 28)."""
from __future__ import annotations

import json
import threading

import pytest

from components.common.batch import run_resumable
from components.base.errors import UserError


def _run(out, keys, work=None, **kw):
    return run_resumable(keys, key=str, work=work or (lambda k: {"value": k}), out_path=out,
                         progress=False, **kw)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_unreadable_line_in_the_middle_is_moved_aside_named_and_its_item_redone(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    _run(out, ["q1", "q2", "q3"])
    lines = out.read_text().splitlines()
    out.write_text("\n".join([lines[0], '{"qid": "q2", "val', lines[2], "[1, 2]"]) + "\n")
    counts = _run(out, ["q1", "q2", "q3"])
    err = capsys.readouterr().err
    assert "p.jsonl: line(s) 2, 4 were not readable JSON records" in err and "p.jsonl.torn" in err
    assert counts["done"] == 1 and counts["skipped"] == 2           # q2 asked again
    assert sorted(r["qid"] for r in _lines(out)) == ["q1", "q2", "q3"]
    assert (tmp_path / "p.jsonl.torn").read_text() == '{"qid": "q2", "val\n[1, 2]\n'


def test_a_key_written_twice_keeps_its_first_line_and_the_rest_is_named(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    _run(out, ["q1", "q2"])
    first = out.read_text()
    out.write_text(first + first.replace('"value": "q', '"value": "again q'))   # two runs at once
    assert _run(out, ["q1", "q2", "q3"]) == {"done": 1, "skipped": 2, "failed": 0, "stopped": 0}
    err = capsys.readouterr().err
    assert "2 line(s) repeated a qid" in err and "'q1' again on line 3" in err
    assert [r["value"] for r in _lines(out)] == ["q1", "q2", "q3"]
    assert [r["value"] for r in _lines(tmp_path / "p.jsonl.duplicates")] == ["again q1", "again q2"]
    _run(out, ["q1", "q2", "q3"])
    assert capsys.readouterr().err == ""                              # nothing left to repair


def test_another_backend_is_refused_naming_both_and_older_lines_without_one_are_adopted_only_when_asked(
        tmp_path):
    out = tmp_path / "p.jsonl"
    out.write_text('{"qid": "q0", "value": "q0"}\n')                  # from before backends were kept
    with pytest.raises(UserError, match="--adopt"):                 # issue 38: it may be any model's
        _run(out, ["q0", "q1"], stamp={"backend": "openai:a", "prompt_style": "api"})
    assert [r.get("backend") for r in _lines(out)] == [None]
    _run(out, ["q0", "q1"], stamp={"backend": "openai:a", "prompt_style": "api"}, adopt=True)
    assert [r.get("backend") for r in _lines(out)] == ["openai:a", "openai:a"]
    with pytest.raises(UserError) as info:
        _run(out, ["q2"], stamp={"backend": "openai:b", "prompt_style": "api"})
    assert "backend openai:a" in str(info.value) and "backend openai:b" in str(info.value)
    assert "p.jsonl" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(UserError, match="prompt_style open"):
        _run(out, ["q2"], stamp={"backend": "openai:a", "prompt_style": "open"})
    assert len(_lines(out)) == 2


def test_failures_in_a_row_stop_the_run_and_a_success_resets_the_count(tmp_path, capsys):
    asked: list[int] = []

    def work(i: int) -> dict:
        asked.append(i)
        if i in (1, 3, 4, 5) or i >= 7:
            raise RuntimeError("connection refused")
        return {"value": i}

    counts = _run(tmp_path / "p.jsonl", range(20), work, stop_after_failures=3)
    err = capsys.readouterr().err
    assert asked == [0, 1, 2, 3, 4, 5]                  # 1 alone did not stop it; 3, 4, 5 did
    assert counts == {"done": 2, "skipped": 0, "failed": 4, "stopped": 14, "gave_up": 3}
    assert "stopped: 3 items in a row failed (the last: connection refused)" in err
    assert "14 more were not asked" in err


def test_another_writer_of_the_output_is_refused_naming_its_process(tmp_path):
    import os

    from components.base.io import output_lock

    out = tmp_path / "p.jsonl"
    held, release = threading.Event(), threading.Event()

    def hold():
        with output_lock(out):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(30)
    try:
        with pytest.raises(UserError) as info:
            _run(out, ["q1"])
    finally:
        release.set()
        holder.join()
    assert f"process {os.getpid()}" in str(info.value) and "p.jsonl" in str(info.value)
    assert not out.exists()
    assert _run(out, ["q1"])["done"] == 1                 # free again once the holder is done


def test_lines_moved_aside_are_appended_durably_after_a_torn_last_line_of_the_aside_file(tmp_path, monkeypatch):
    """The lines a repair moves aside go through base/io's durable append (`append_lines`): a
    `.duplicates` or `.torn` file whose own last line was cut off (a crash while moving lines
    aside) is ended first, so the moved lines stay whole lines, and each append is fsynced."""
    import os

    from components.base import io as base_io
    from components.common.batch import repair_companion

    out = tmp_path / "p.jsonl"
    _run(out, ["q1", "q2"])
    first = out.read_text()
    out.write_text(first + first.replace('"value": "q', '"value": "again q') + '{"qid": "q3", "val\n[1]\n')
    (tmp_path / "p.jsonl.duplicates").write_bytes(b'{"qid": "q0", "cut')   # torn earlier
    (tmp_path / "p.jsonl.torn").write_bytes(b'{"cut')
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(base_io.os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    _run(out, ["q1", "q2"])
    moved = (tmp_path / "p.jsonl.duplicates").read_text().splitlines()
    assert moved[0] == '{"qid": "q0", "cut'
    assert [json.loads(line) for line in moved[1:]] == [{"qid": "q1", "value": "again q1"},
                                                         {"qid": "q2", "value": "again q2"}]
    assert (tmp_path / "p.jsonl.torn").read_text().splitlines() == ['{"cut', '{"qid": "q3", "val', "[1]"]
    assert str(tmp_path / "p.jsonl.duplicates") in synced and str(tmp_path / "p.jsonl.torn") in synced

    # a companion file (grounding's traces) the same way
    traces = tmp_path / "t.jsonl"
    traces.write_text('{"qid": "q1"}\n{"qid": "q1"}\n')
    (tmp_path / "t.jsonl.duplicates").write_bytes(b'{"cut')
    repair_companion(traces, out, ["q1", "q2"], "qid")
    assert (tmp_path / "t.jsonl.duplicates").read_text().splitlines() == ['{"cut', '{"qid": "q1"}']
