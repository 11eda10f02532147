"""A batch run appends its results through one open file, each line fsynced before the next
item counts as done (components.base.io.JsonlAppender; issue 35: ~13 system calls a result
before, each a hand-over of the GIL at concurrency 64)."""
from __future__ import annotations

import json
import os

from components.base import io as base_io
from components.base.io import JsonlAppender
from components.common.batch import run_resumable


def test_a_run_opens_its_output_once_and_fsyncs_every_line(tmp_path, monkeypatch):
    out = tmp_path / "p.jsonl"
    opened, synced = [], []
    real_open, real_fsync = os.open, os.fsync

    def counting_open(path, *args, **kwargs):
        fd = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(out):
            opened.append(fd)
        return fd

    monkeypatch.setattr(base_io.os, "open", counting_open)
    monkeypatch.setattr(base_io.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    counts = run_resumable([f"q{i}" for i in range(20)], key=str, work=lambda k: {"value": k},
                           out_path=out, concurrency=4, progress=False)
    assert counts["done"] == 20
    assert len(opened) == 1 and synced.count(opened[0]) == 20
    assert sorted(json.loads(line)["qid"] for line in out.read_text().splitlines()) == sorted(f"q{i}" for i in range(20))


def test_the_appender_ends_a_torn_last_line_first_and_makes_no_file_for_no_line(tmp_path):
    path = tmp_path / "a.jsonl"
    with JsonlAppender(path):
        pass
    assert not path.exists()
    path.write_text('{"qid": "q1"}\n{"qid": "q2", "cu')
    with JsonlAppender(path) as out:
        out.append({"qid": "q3", "text": "ü"})
        out.append({"qid": "q4"})
    assert path.read_text(encoding="utf-8").splitlines() == [
        '{"qid": "q1"}', '{"qid": "q2", "cu', '{"qid": "q3", "text": "ü"}', '{"qid": "q4"}']
    assert oct(path.stat().st_mode & 0o777) == oct(base_io.FILE_MODE)
