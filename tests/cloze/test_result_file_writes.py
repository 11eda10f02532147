"""A cloze run's cost per answer stays flat (issue 35): each answer is appended to the sidecar
JSONL; the released-format result file is written whole on a timer, at the end and on a stop or
Ctrl-C, never once per answer. Counted, not timed."""
from __future__ import annotations

import json
import threading
import time

import pytest

from backends.registry import resolve
from components.cloze import pipeline
from components.cloze.data import load_dataset
from components.cloze.questions import build_set
from components.cloze.solvers import SolverSettings, solvers_for


@pytest.fixture
def counted_writes(monkeypatch):
    """Each whole write of a result file, as the path written."""
    writes: list[str] = []
    real = pipeline.atomic_write_json

    def counted(path, obj, **kw):
        writes.append(str(path))
        return real(path, obj, **kw)
    monkeypatch.setattr(pipeline, "atomic_write_json", counted)
    return writes


def _setup(cloze_examples):
    ds = load_dataset(cloze_examples)
    questions = build_set(ds, "all", ["S", "A", "C"], seed=42).questions
    solver = solvers_for(resolve("baseline"), SolverSettings()).solver
    return ds, questions, solver


def test_the_result_file_is_not_rewritten_per_answer(cloze_examples, tmp_path, counted_writes):
    ds, questions, solver = _setup(cloze_examples)
    assert len(questions) >= 18
    out = tmp_path / "R.json"
    started = time.monotonic()
    result = pipeline.run_set(solver, ds, questions, out, progress=False, concurrency=4)
    ran_s = time.monotonic() - started
    assert result["counts"]["done"] == len(questions)
    # at most one write per WRITE_EVERY_S of the run, and the final one (the old code wrote the
    # whole file after every answer: len(questions) + 1 writes)
    assert len(counted_writes) <= 2 + ran_s // pipeline.WRITE_EVERY_S, counted_writes
    assert json.loads(out.read_text()) == pipeline.records_to_results(
        json.loads(line) for line in pipeline.sidecar_path(out).read_text().splitlines())
    assert sum(len(d) for d in json.loads(out.read_text()).values()) == len(questions)


def test_the_file_is_readable_during_the_run_from_the_timer(cloze_examples, tmp_path, monkeypatch):
    ds, questions, solver = _setup(cloze_examples)
    monkeypatch.setattr(pipeline, "WRITE_EVERY_S", 0.05)
    out = tmp_path / "R.json"
    seen: list[int] = []

    def on_result(rec: dict) -> None:
        if len(seen) == 0:   # the first answer: wait until the timer has written it
            deadline = time.monotonic() + 60
            while not out.exists():
                assert time.monotonic() < deadline, "the timer never wrote the result file"
                time.sleep(0.01)
            seen.append(sum(len(d) for d in json.loads(out.read_text()).values()))
    pipeline.run_set(solver, ds, questions[:6], out, progress=False, on_result=on_result)
    assert seen and seen[0] >= 1


def test_ctrl_c_leaves_every_answer_of_the_sidecar_in_the_result_file(cloze_examples, tmp_path,
                                                                      counted_writes):
    ds, questions, solver = _setup(cloze_examples)
    out = tmp_path / "R.json"
    answered = [0]
    real_answer = solver.answer

    def answer(inst, q):
        if answered[0] == 5:
            raise KeyboardInterrupt   # as Ctrl-C reaches the batch's loop
        answered[0] += 1
        return real_answer(inst, q)
    solver.answer = answer
    with pytest.raises(KeyboardInterrupt):
        pipeline.run_set(solver, ds, questions, out, progress=False)
    results = json.loads(out.read_text())
    assert sum(len(d) for d in results.values()) == 5 and len(counted_writes) == 1
    side = [json.loads(line) for line in pipeline.sidecar_path(out).read_text().splitlines()]
    assert results == pipeline.records_to_results(side)


def test_a_stop_writes_the_file_with_the_answers_so_far(cloze_examples, tmp_path, counted_writes):
    ds, questions, solver = _setup(cloze_examples)
    out = tmp_path / "R.json"
    stop = threading.Event()
    done = [0]

    def on_result(rec):
        done[0] += 1
        if done[0] == 3:
            stop.set()
    result = pipeline.run_set(solver, ds, questions, out, progress=False, stop=stop, on_result=on_result)
    assert sum(len(d) for d in json.loads(out.read_text()).values()) == result["counts"]["done"] == 3
    assert len(counted_writes) == 1
