"""The Cloze tab builds, carries the documented elem_ids, and its handlers work end to end."""
from pathlib import Path

import pytest

gr = pytest.importorskip("gradio")

from components.cloze.ui import handlers  # noqa: E402 - after the gradio skip
from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab  # noqa: E402
from components.base.errors import UserError  # noqa: E402
from components.common.sessions import Resources  # noqa: E402
from components.common.ui import View, outputs  # noqa: E402

TAB, RES = ClozeTab(""), Resources()

REQUIRED_IDS = ["cloze-mode", "cloze-annotator", "cloze-start", "cloze-progress", "cloze-submit",
                "cloze-next", "cloze-prev", "cloze-navigator", "cloze-export-json", "cloze-export-csv",
                "cloze-blind", "cloze-display", "cloze-flow", "cloze-run-one", "cloze-run-set",
                "cloze-raw", "cloze-parsed", "cloze-reason", "cloze-option-map", "cloze-leaderboard",
                "cloze-hvm", "cloze-order-run", "cloze-prompt-style", *[f"cloze-choice-{x}" for x in "ABCD"]]


def _build(data_dir: Path):
    from components.cloze.ui import build_tab
    from components.settings.session import SessionSettings
    from components.common.ui import TabContext

    with gr.Blocks() as demo:
        settings = gr.State(SessionSettings().to_state())
        build_tab(TabContext(data_dir=data_dir, settings=settings, demo=demo))
    return demo


def test_tab_builds_with_every_elem_id(cloze_examples):
    demo = _build(cloze_examples.parent)
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    missing = [i for i in REQUIRED_IDS if i not in ids]
    assert not missing, missing


def test_human_session_through_the_handlers(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    monkeypatch.delenv("APP_HUMAN_STUDY_REPO", raising=False)
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    root = str(cloze_examples)
    out = handlers.start(TAB, RES, fresh, "practice", root, "examples", "S, A, P", 42, "anon-5", "frames")
    st = out.session
    assert st.index == 0 and "Question 1 of 18" in out.question.progress
    out = handlers.choose(TAB, RES, st, "B", "frames", "immediate", False)
    st = out.session
    assert st.index == 1 and "Question 1:" in out.feedback
    # a restart (new session state) resumes at the next unanswered question
    out = handlers.start(TAB, RES, fresh, "practice", root, "examples", "S, A, P", 42, "anon-5", "video")
    assert out.session.index == 1 and "Resumed" in out.feedback
    with pytest.raises(UserError, match="Annotator id"):
        handlers.start(TAB, RES, fresh, "practice", root, "examples", "S, A, P", 42, "../x", "frames")
    empty = handlers.start(TAB, RES, fresh, "practice", root, "examples", "S, A, P", 42, "", "frames")
    assert empty.annotator.startswith("anon-") and empty.annotator in empty.feedback   # the placeholder starts


def test_select_then_submit_blind_redo_and_export(cloze_examples, tmp_path, monkeypatch):
    import json

    from components.base.io import read_jsonl

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    st = handlers.start(TAB, RES, fresh, "practice", str(cloze_examples), "examples", "A", 42, "anon-6", "frames").session
    out = handlers.choose(TAB, RES, st, "C", "frames", "select_then_submit", True)
    st = out.session
    assert st.selected == "C" and st.index == 0 and "Submit" in out.feedback
    assert not read_jsonl(tmp_path / "study" / "anon-6.jsonl")          # nothing saved yet
    out = handlers.submit(TAB, RES, st, "frames", "select_then_submit", True)
    assert out.feedback == "Question 1: answer saved."                   # blind: no reveal
    st = handlers.navigate(TAB, RES, out.session, "frames", "1 ✓").session          # navigator back to 1
    out = handlers.choose(TAB, RES, st, "D", "frames", "immediate", False)
    assert out.feedback == "Question 1: answer saved."    # unticking Blind never reveals: once blind, blind
    seen = handlers.start(TAB, RES, fresh, "practice", str(cloze_examples), "examples", "A", 42, "anon-6b", "frames")
    out = handlers.choose(TAB, RES, seen.session, "D", "frames", "immediate", False)
    assert "true middle" in out.feedback                                  # a player never blind: the reveal
    recs = read_jsonl(tmp_path / "study" / "anon-6.jsonl")
    assert [r["redo_count"] for r in recs] == [0, 1]
    assert recs[0]["answer_flow"] == "select_then_submit" and recs[0]["blind"] is True
    path = handlers.export_json(TAB, RES, out.session).export_file["value"]
    data = json.loads(open(path).read())
    assert len(data) == 1 and data[0]["answer"] == "D"


def test_views_spread_into_the_wired_outputs(cloze_examples, tmp_path, monkeypatch):
    def spread(view: View) -> list:
        return [*outputs(view), view.message]

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    demo = _build(cloze_examples.parent)
    wired = {fn.api_name: len(fn.outputs) for fn in demo.fns.values()}
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    start = handlers.start(TAB, RES, fresh, "practice", str(cloze_examples), "all", "S", 42, "anon-7", "frames")
    assert len(spread(start)) == wired["on_start"]
    assert len(spread(handlers.choose(TAB, RES, start.session, "A", "frames", "immediate", False))) == wired["on_choice"]
    assert len(spread(handlers.next_question(TAB, RES, start.session, "frames"))) == wired["on_next"]
    assert len(spread(handlers.pick_mode(TAB, RES, fresh, "model", [], ""))) == wired["on_mode"]
    assert len(spread(handlers.run_one(TAB, RES, fresh, {"backend": "baseline"}, str(cloze_examples), "all", "S",
                                       42, "edge1", False, "api", "frames"))) == wired["on_run_one"]


def test_unload_sets_the_sessions_stop_event_and_releases_it():
    stop = RESOURCES.get("page-1").stop
    assert not stop.is_set() and RESOURCES.get("page-1").stop is stop
    RESOURCES.release("page-1")
    assert stop.is_set()
    assert RESOURCES.get("page-1").stop is not stop        # a new page starts with a fresh event
    RESOURCES.release("page-1")


def test_a_stopped_set_run_asks_nothing_and_resumes_later(cloze_examples, tmp_path, monkeypatch):
    import threading

    from components.cloze.data import load_dataset
    from components.cloze.questions import build_set
    from components.cloze.pipeline import run_set
    from components.cloze.solvers import EdgeSolver

    ds = load_dataset(cloze_examples)
    questions = build_set(ds, "all", ["S"]).questions[:2]
    stop = threading.Event()
    stop.set()
    out = run_set(EdgeSolver(), ds, questions, tmp_path / "r.json", progress=False, stop=stop)
    assert out["counts"] == {"done": 0, "skipped": 0, "failed": 0, "stopped": 2}   # not asked, not failures
    out = run_set(EdgeSolver(), ds, questions, tmp_path / "r.json", progress=False)
    assert out["counts"]["done"] == 2


def test_run_one_sends_the_chosen_prompt_style_and_the_leaderboard_marks_its_data(cloze_examples, tmp_path,
                                                                                monkeypatch):
    from components.cloze.prompts import eval_prompt
    from components.settings.session import SessionSettings
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        settings = SessionSettings(backend="openai:test-model", base_url=server.url,
                                   api_key="sk-test").to_state()
        out = handlers.run_one(TAB, RES, fresh, settings, str(cloze_examples), "all", "S", 42, "edge1",
                               False, "open", "frames")
        body = server.requests[0]
    assert body["messages"][0]["content"][0]["text"] == eval_prompt("open")
    assert out.question.answer.parsed == "A" and out.question.clips[0]["visible"]   # shown with its answer
    board = handlers.refresh(TAB, RES, fresh, [], []).leaderboard
    assert "not comparable" in board["label"] and "Data (size)" in board["headers"]
