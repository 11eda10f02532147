"""Human-study records: durable appends, resume, redo, export, ids, concurrency, a killed server."""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from components.base.io import read_jsonl
from components.cloze.human import (HubPush, annotator_file, export_records, load_progress,
                                    record_answer, sanitise_annotator, study_dir, study_questions)
from components.cloze.data import load_dataset
from components.base.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM_KEYS = ["task_index", "stem", "dim", "answer", "expected", "correct", "option_map",
                 "display_mode", "answer_flow", "elapsed_sec", "answered_at_utc", "redo_count"]


@pytest.fixture(scope="module")
def questions(cloze_examples):
    return study_questions(load_dataset(cloze_examples), "examples", 42).questions


def _answer(path, q, i, letter, who="anon-1", session="s1"):
    return record_answer(path, q, task_index=i, answer=letter, annotator=who, session=session,
                         set_name="examples", order_seed=42, display_mode="frames",
                         answer_flow="immediate", elapsed_sec=3.2)


@pytest.mark.parametrize("value", ["anon-17", "A_b-9", "x" * 64])
def test_good_annotator_ids(value):
    assert sanitise_annotator(value) == value


@pytest.mark.parametrize("value", ["", "../etc/passwd", "a/b", "a b", "x" * 65, "名前", "..", "a.jsonl"])
def test_bad_annotator_ids_are_rejected(value):
    with pytest.raises(UserError, match="Annotator id"):
        sanitise_annotator(value)


def test_study_dir_env_override(tmp_path, monkeypatch):
    monkeypatch.delenv("APP_HUMAN_STUDY_DIR", raising=False)
    assert study_dir(tmp_path) == tmp_path / "cloze" / "human_study"
    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "elsewhere"))
    assert study_dir(tmp_path) == tmp_path / "elsewhere"


def test_record_format_resume_and_redo(tmp_path, questions):
    path = annotator_file(tmp_path, "anon-1")
    q0, q1 = questions[0], questions[1]
    r0 = _answer(path, q0, 0, q0.expected)
    assert list(r0)[:12] == UPSTREAM_KEYS
    assert r0["correct"] and r0["option_map"][r0["answer"]] == "GT" and r0["redo_count"] == 0
    assert r0["annotator"] == "anon-1" and r0["order_seed"] == 42 and r0["backend"] == "human"
    wrong = next(x for x in "ABCD" if x != q1.expected)
    _answer(path, q1, 1, wrong)
    prog = load_progress(path, questions)
    assert prog.next_index == 2 and prog.answered_count(questions) == 2
    redo = _answer(path, q1, 1, q1.expected, session="s2")
    assert redo["redo_count"] == 1
    prog = load_progress(path, questions)
    assert prog.answered[(q1.stem, q1.dim)]["correct"] is True      # latest record wins
    assert len(read_jsonl(path)) == 3                                # nothing overwritten
    with pytest.raises(UserError):
        _answer(path, q0, 0, "E")


def test_export_json_and_csv(tmp_path, questions):
    path = annotator_file(tmp_path, "anon-2")
    for i, q in enumerate(questions[:3]):
        _answer(path, q, i, "A", who="anon-2")
    _answer(path, questions[0], 0, "B", who="anon-2")
    data = json.loads(export_records(read_jsonl(path), "json"))
    assert len(data) == 3 and data[0]["answer"] == "B"
    rows = list(csv.DictReader(io.StringIO(export_records(read_jsonl(path), "csv"))))
    assert len(rows) == 3 and json.loads(rows[0]["option_map"]) == data[0]["option_map"]


def test_two_annotators_and_two_tabs_at_once_lose_nothing(tmp_path, questions):
    def worker(who, qs):
        path = annotator_file(tmp_path, who)
        for i, q in enumerate(qs):
            _answer(path, q, i, "A", who=who)

    threads = [threading.Thread(target=worker, args=(who, questions[half::2]))
               for who in ("anon-1", "anon-2") for half in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for who in ("anon-1", "anon-2"):
        recs = read_jsonl(annotator_file(tmp_path, who))
        assert len(recs) == len(questions)
        assert {(r["stem"], r["dim"]) for r in recs} == {(q.stem, q.dim) for q in questions}


def test_a_killed_server_loses_no_answer_and_resumes(tmp_path, cloze_examples, questions):
    script = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from components.cloze.human import record_answer, study_questions
from components.cloze.data import load_dataset
qs = study_questions(load_dataset({str(cloze_examples)!r}), "examples", 42).questions
for i, q in enumerate(qs):
    record_answer({str(tmp_path / 'anon-9.jsonl')!r}, q, task_index=i, answer="A", annotator="anon-9",
                  session="s", set_name="examples", order_seed=42, display_mode="video",
                  answer_flow="immediate", elapsed_sec=1.0)
    print(i, flush=True)
    if i == 2:
        time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        confirmed = [proc.stdout.readline().strip() for _ in range(3)]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert confirmed == ["0", "1", "2"]
    prog = load_progress(tmp_path / "anon-9.jsonl", questions)
    assert prog.answered_count(questions) == 3 and prog.next_index == 3


def test_hub_push_is_configured_lazily(tmp_path, monkeypatch):
    import inspect

    monkeypatch.delenv("APP_HUMAN_STUDY_REPO", raising=False)
    assert HubPush.from_env(tmp_path) is None
    monkeypatch.setenv("APP_HUMAN_STUDY_REPO", "someone/study")
    push = HubPush.from_env(tmp_path)
    assert push is not None and not push.started
    kwargs = push.scheduler_kwargs()
    assert kwargs["repo_id"] == "someone/study" and kwargs["repo_type"] == "dataset"
    from huggingface_hub import CommitScheduler

    params = inspect.signature(CommitScheduler.__init__).parameters
    assert set(kwargs) <= set(params)   # the scheduler accepts exactly these arguments (not started)


def test_hub_push_never_uploads_a_temp_file(tmp_path):
    from huggingface_hub.utils import filter_repo_objects

    from components.base.io import atomic_temp_path

    kwargs = HubPush("someone/study", tmp_path).scheduler_kwargs()
    tmp = atomic_temp_path(tmp_path / "anon-1.jsonl").name
    names = ["anon-1.jsonl", tmp, "sub/.x.tmp.jsonl"]
    kept = list(filter_repo_objects(names, allow_patterns=kwargs["allow_patterns"],
                                    ignore_patterns=kwargs["ignore_patterns"]))
    assert kept == ["anon-1.jsonl"], kept


def test_an_append_waits_for_a_running_push(tmp_path, questions):
    """While the scheduler holds its lock (uploading), no answer is half-written into the file."""
    from components.cloze import human

    push = HubPush("someone/study", tmp_path)
    push.scheduler = type("Scheduler", (), {"lock": threading.Lock()})()
    human._started[str(tmp_path.resolve())] = push
    try:
        path = annotator_file(tmp_path, "anon-7")
        with push.scheduler.lock:
            worker = threading.Thread(target=_answer, args=(path, questions[0], 0, "A", "anon-7"))
            worker.start()
            worker.join(0.5)
            assert worker.is_alive() and not path.exists()
        worker.join(10)
        assert [r["answer"] for r in read_jsonl(path)] == ["A"]
    finally:
        human._started.pop(str(tmp_path.resolve()), None)


def test_a_playthrough_once_answered_blind_never_reveals_again(tmp_path, questions):
    """The explorer's practice playthrough: a reload that loses the Blind tick, or unticking it,
    must not reveal answers to an annotator who answered blind (components/cloze/human.py)."""
    from components.cloze.human import answer_feedback, playthrough_blind

    path = annotator_file(tmp_path, "exp-ann")
    q = questions[0]
    wrong = next(x for x in "ABCD" if x != q.expected)
    rec = record_answer(path, q, task_index=0, answer=wrong, annotator="exp-ann", session="s",
                        set_name="examples", order_seed=42, display_mode="frames", answer_flow="immediate",
                        elapsed_sec=1.0, blind=True)
    history = read_jsonl(path)
    assert playthrough_blind(history, False) is True and playthrough_blind([], False) is False
    for blind in (playthrough_blind(history, False), True):
        text = answer_feedback(1, rec, blind=blind)
        assert text == "Question 1: answer saved."
        assert q.expected not in text.replace("Question", "") and "true middle" not in text
    revealed = answer_feedback(1, rec, blind=False)
    assert f"{q.expected} was the true middle" in revealed and "Not quite" in revealed
