"""One output never mixes two revisions of its data (components/common/batch.py)."""
from __future__ import annotations

import json

import pytest

from components.common.batch import run_resumable
from components.base.errors import UserError

A = "hf://datasets/o/n@" + "a" * 40
B = "hf://datasets/o/n@" + "b" * 40


def _run(out, keys, stamp):
    return run_resumable(keys, key=str, work=lambda k: {"value": k}, out_path=out, progress=False, stamp=stamp)


def test_the_stamp_is_in_every_record_and_another_one_is_refused(tmp_path):
    out = tmp_path / "p.jsonl"
    assert _run(out, ["q1", "q2"], {"data_revision": A})["done"] == 2
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["data_revision"] for r in records] == [A, A]
    with pytest.raises(UserError) as info:
        _run(out, ["q3"], {"data_revision": B})
    assert A in str(info.value) and B in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(UserError, match="a local folder"):
        _run(out, ["q3"], {"data_revision": None})
    assert len(out.read_text().splitlines()) == 2          # nothing was added
    assert _run(out, ["q1", "q3"], {"data_revision": A}) == {"done": 1, "skipped": 2, "failed": 0, "stopped": 0}


def test_local_data_writes_no_stamp_and_old_outputs_resume(tmp_path):
    out = tmp_path / "p.jsonl"
    out.write_text('{"qid": "q1", "value": "q1"}\n')     # an output from before revisions were kept
    assert _run(out, ["q1", "q2"], {"data_revision": None})["done"] == 1
    assert "data_revision" not in out.read_text()
    with pytest.raises(UserError):
        _run(out, ["q3"], {"data_revision": A})


def test_a_set_stop_starts_no_more_items_and_counts_the_rest_as_stopped_not_failed(tmp_path):
    import threading

    from components.common.batch import run_resumable

    stop = threading.Event()
    started: list[int] = []

    def work(i: int) -> dict:
        started.append(i)
        if i == 2:
            stop.set()           # Stop pressed while the third item runs
        return {"value": i}

    counts = run_resumable(range(1000), key=str, work=work, out_path=tmp_path / "out.jsonl",
                           progress=False, stop=stop)
    assert started == [0, 1, 2]                      # nothing started after the stop
    assert counts == {"done": 3, "skipped": 0, "failed": 0, "stopped": 997}
    stop.clear()
    again = run_resumable(range(1000), key=str, work=work, out_path=tmp_path / "out.jsonl", progress=False)
    assert again["skipped"] == 3 and again["done"] == 997   # the rest is asked by the next run
