"""One writer per output file, whatever its path (issue 38 item 9): the lock is taken on the
resolved real path, so a symlink or `..` to a file held by a run is refused."""
from __future__ import annotations

import json
import os
import threading

import pytest

from components.base.errors import UserError
from components.base.io import lock_path, output_lock
from components.common.batch import run_resumable


def _other_thread(fn):
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    th = threading.Thread(target=run)
    th.start()
    th.join()
    return box


def test_two_paths_to_one_file_take_one_lock(tmp_path):
    real = tmp_path / "runs" / "p.jsonl"
    real.parent.mkdir()
    real.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    dotted = tmp_path / "runs" / ".." / "runs" / "p.jsonl"
    assert lock_path(link) == lock_path(real) == lock_path(dotted)
    with output_lock(real):
        for other in (link, dotted):
            box = _other_thread(lambda other=other: run_resumable(
                ["q1"], key=str, work=lambda k: {"v": k}, out_path=other, progress=False))
            assert isinstance(box.get("error"), UserError), box
            assert "being written by another run" in str(box["error"])
    assert real.read_text() == ""                       # nothing written by the refused runs


def test_a_run_through_a_symlink_writes_the_file_and_keeps_the_link(tmp_path):
    real = tmp_path / "p.jsonl"
    real.write_text('{"qid": "q1", "v": 1}\n{"qid": "q1", "v": 2}\n')   # a repeated key: repaired
    link = tmp_path / "elsewhere" / "p.jsonl"
    link.parent.mkdir()
    link.symlink_to(real)
    counts = run_resumable(["q1", "q2"], key=str, work=lambda k: {"v": k}, out_path=link, progress=False)
    assert counts["done"] == 1 and counts["skipped"] == 1
    assert os.path.islink(link) and os.path.realpath(link) == str(real)
    assert [json.loads(line)["qid"] for line in real.read_text().splitlines()] == ["q1", "q2"]


def test_two_processes_through_a_symlink_are_refused(tmp_path):
    import subprocess
    import sys

    real = tmp_path / "p.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom components.base.io import output_lock\n"
         "with output_lock(sys.argv[1]):\n    print('held', flush=True)\n    sys.stdin.read()",
         str(real)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(UserError, match=f"process {holder.pid}"):
            with output_lock(link):
                pass
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
