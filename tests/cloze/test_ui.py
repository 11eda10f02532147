"""The Cloze tab builds, carries the documented elem_ids, and its handlers work end to end."""
from pathlib import Path

import pytest

gr = pytest.importorskip("gradio")

REQUIRED_IDS = ["cloze-mode", "cloze-annotator", "cloze-start", "cloze-progress", "cloze-submit",
                "cloze-next", "cloze-prev", "cloze-navigator", "cloze-export-json", "cloze-export-csv",
                "cloze-blind", "cloze-display", "cloze-flow", "cloze-run-one", "cloze-run-set",
                "cloze-raw", "cloze-parsed", "cloze-reason", "cloze-option-map", "cloze-leaderboard",
                "cloze-hvm", "cloze-order-run", *[f"cloze-choice-{l}" for l in "ABCD"]]


def _build(data_dir: Path):
    from components.cloze.ui import build_tab
    from components.settings.session import SessionSettings
    from components.common.ui import TabContext

    with gr.Blocks() as demo:
        settings = gr.State(SessionSettings().to_state())
        build_tab(TabContext(data_dir=data_dir, settings=settings))
    return demo


def _fn(demo, name):
    for block_fn in demo.fns.values():
        if getattr(block_fn.fn, "__name__", "") == name:
            return block_fn.fn
    raise AssertionError(f"no handler {name}")


def test_tab_builds_with_every_elem_id(cloze_examples):
    demo = _build(cloze_examples.parent)
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    missing = [i for i in REQUIRED_IDS if i not in ids]
    assert not missing, missing


def test_human_session_through_the_handlers(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "study"))
    monkeypatch.delenv("APP_HUMAN_STUDY_REPO", raising=False)
    demo = _build(cloze_examples.parent)
    start, choice = _fn(demo, "on_start"), _fn(demo, "on_choice")
    root = str(cloze_examples)
    out = start({}, "Human study", root, "examples", "S, A, P", 42, "anon-5", "frames")
    st = out[0]
    assert st["index"] == 0 and "Question 1 of 18" in out[13]
    out = choice(st, "B", "frames", "immediate", False)
    st = out[0]
    assert st["index"] == 1 and "Question 1:" in out[15]
    # a restart (new session state) resumes at the next unanswered question
    out = start({}, "Human study", root, "examples", "S, A, P", 42, "anon-5", "video")
    assert out[0]["index"] == 1 and "Resumed" in out[15]
    with pytest.raises(gr.Error):
        start({}, "Human study", root, "examples", "S, A, P", 42, "../x", "frames")


def test_select_then_submit_blind_redo_and_export(cloze_examples, tmp_path, monkeypatch):
    import json

    from components.common.io import read_jsonl

    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "study"))
    demo = _build(cloze_examples.parent)
    start, choice, submit = _fn(demo, "on_start"), _fn(demo, "on_choice"), _fn(demo, "on_submit")
    navigate, export = _fn(demo, "on_navigate"), _fn(demo, "on_export_json")
    st = start({}, "Human study", str(cloze_examples), "examples", "A", 42, "anon-6", "frames")[0]
    out = choice(st, "C", "frames", "select_then_submit", True)
    st = out[0]
    assert st["selected"] == "C" and st["index"] == 0 and "Submit" in out[15]
    assert not read_jsonl(tmp_path / "study" / "anon-6.jsonl")          # nothing saved yet
    out = submit(st, "frames", "select_then_submit", True)
    assert out[15] == "Question 1: answer saved."                        # blind: no reveal
    st = navigate(out[0], "frames", "1 ✓")[0]                             # navigator back to 1
    out = choice(st, "D", "frames", "immediate", False)
    assert "true middle" in out[15]                                       # reveal when not blind
    recs = read_jsonl(tmp_path / "study" / "anon-6.jsonl")
    assert [r["redo_count"] for r in recs] == [0, 1]
    assert recs[0]["answer_flow"] == "select_then_submit" and recs[0]["blind"] is True
    path = export(out[0])
    data = json.loads(open(path).read())
    assert len(data) == 1 and data[0]["answer"] == "D"
