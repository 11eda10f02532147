"""The Cloze tab with "compare with" and reasoning, through its handlers and two real servers on
127.0.0.1 that answer differently: "Run this question" shows both choices and both raw replies
side by side with the disagreement marked, each reasoning collapsed with its token counts; one
model alone keeps its boxes as before. The leaderboard shows each accuracy's interval and shades
alike the rows it cannot tell apart. The baseline radio offers the released DINOv2 baseline."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest


from components.cloze import leaderboard
from components.cloze.leaderboard import row_from_results
from components.cloze.ui import handlers
from components.cloze.ui.session import ClozeSession, ClozeTab
from components.common.sessions import Resources
from components.settings.session import SessionSettings
from tests.helpers.openai_server import ScriptedOpenAIServer

TAB, RES = ClozeTab(""), Resources()


def _reply(letter: str) -> str:
    return json.dumps({"answer": letter, "reason": f"{letter} continues the motion"})


def _run_one(cloze_examples, settings: dict):
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    return handlers.run_one(TAB, RES, fresh, settings, str(cloze_examples), "all", "S", 42, "edge1",
                            False, "api", "frames")


def test_run_this_question_shows_both_models_side_by_side(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    second = {"content": _reply("D"), "reasoning_content": "the end frame mirrors D",
              "usage": {"prompt_tokens": 900, "completion_tokens": 50,
                        "completion_tokens_details": {"reasoning_tokens": 42}}}
    with ScriptedOpenAIServer([_reply("B")]) as a, ScriptedOpenAIServer([second]) as b:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, api_key="sk-a",
                                   compare="openai:model-b", compare_base_url=b.url, compare_api_key="sk-b").to_state()
        out = _run_one(cloze_examples, settings)
        assert a.requests[0]["messages"] == b.requests[0]["messages"]   # one request, sent twice
    boxes = out.question.answer
    assert (boxes.parsed, boxes.raw) == ("B", _reply("B"))             # the session model's boxes, as before
    beside = boxes.beside
    assert "cloze-pair" in beside and "data-agree='0'" in beside and "≠ differ" in beside
    assert re.findall(r"data-side='(\d)' data-letter='(\w)'", beside) == [("1", "B"), ("2", "D")]
    assert "openai:model-a" in beside and "openai:model-b" in beside
    assert "B continues the motion" in beside and "D continues the motion" in beside   # both raw replies
    om = boxes.option_map
    assert f"openai:model-a: B ({om['B']}) vs openai:model-b: D ({om['D']})" in beside
    # the second model's reasoning, collapsed, with the reasoning / answer token split
    assert "<details class='vb-reasoning'" in beside and "the end frame mirrors D" in beside
    assert "tokens: 900 prompt · 50 out (42 reasoning, 8 answer)" in beside
    assert beside.count("<details") == 1   # the first model gave no reasoning
    assert "sk-a" not in beside and "sk-b" not in beside


def test_both_choosing_alike_is_marked_as_agreeing(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    with ScriptedOpenAIServer([_reply("C")]) as a, ScriptedOpenAIServer([_reply("C")]) as b:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, compare="openai:model-b",
                                   compare_base_url=b.url).to_state()
        beside = _run_one(cloze_examples, settings).question.answer.beside
    assert "data-agree='1'" in beside and "= agree" in beside and "both chose C" in beside
    assert "≠" not in beside


def test_one_model_shows_its_reasoning_collapsed_and_nothing_of_a_second(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    with ScriptedOpenAIServer([_reply("A")]) as a:
        plain = SessionSettings(backend="openai:model-a", base_url=a.url).to_state()
        assert _run_one(cloze_examples, plain).question.answer.beside == ""   # no reasoning: as before
    with ScriptedOpenAIServer([{"content": _reply("A"), "reasoning_content": "A flows on"}]) as a:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url).to_state()
        beside = _run_one(cloze_examples, settings).question.answer.beside
    assert "A flows on" in beside and "<details" in beside and "tokens: 11 prompt · 7 out" in beside
    assert "cloze-pair" not in beside and "②" not in beside


OM = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}


def _results(right: list[int]) -> dict:
    return {f"s{i}": {d: {"answer": "A" if ok else "B", "expected": "A", "correct": bool(ok),
                          "option_map": OM, "data_set": "cloze"} for d in ("S", "A", "C")}
            for i, ok in enumerate(right)}


def test_tie_groups_join_runs_of_rows_that_cannot_be_told_apart():
    ns, sig = {"significant": False}, {"significant": True}
    assert leaderboard.tie_groups([ns, ns, sig, None]) == ["≈1", "≈1", "≈1", ""]
    assert leaderboard.tie_groups([sig, ns, None, ns, None]) == ["", "≈1", "≈1", "≈2", "≈2"]
    assert leaderboard.tie_groups([None, sig, None]) == ["", "", ""]
    assert leaderboard.tie_colour("≈1") != leaderboard.tie_colour("≈2") and leaderboard.tie_colour("") == ""


def test_the_leaderboard_shows_intervals_and_shades_rows_it_cannot_tell_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    rows = [row_from_results(name, _results(right), "imported", data="x")
            for name, right in (("twin-a", [1] * 30 + [0] * 10), ("twin-b", [1] * 30 + [0] * 10),
                                ("weak", [1] * 5 + [0] * 35))]
    board = handlers.refresh(TAB, RES, ClozeSession(data_dir=str(tmp_path)), rows, []).leaderboard
    value = board["value"]
    headers, data, styling = value["headers"], value["data"], value["metadata"]["styling"]
    assert headers[:2] == ["Model", "≈"] and "acc 95 % CI" in headers and "acc vs next row" in headers
    by_name = {row[0]: (row, style) for row, style in zip(data, styling)}
    (a, style_a), (b, style_b), (w, style_w) = by_name["twin-a"], by_name["twin-b"], by_name["weak"]
    assert a[1] == b[1] == "≈1" and w[1] == ""                          # the twins: one group
    assert style_a == style_b and "background-color" in style_a[0] and style_w == [""] * len(w)
    ci = headers.index("acc 95 % CI")
    assert re.fullmatch(r"\[[\d.]+, [\d.]+\]", a[ci]) and a[ci] == b[ci]
    assert a[headers.index("acc vs next row")].startswith("n.s. vs next (p 1.00")
    assert "cannot be told apart" in board["label"]
    assert len(value["metadata"]["display_value"]) == len(data)


def test_the_baseline_radio_offers_the_released_dinov2_baseline(cloze_examples):
    import gradio as gr

    from components.cloze.ui import build_tab
    from components.common.ui import TabContext

    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=cloze_examples.parent, settings=gr.State(SessionSettings().to_state()),
                             demo=demo))
    radio = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "cloze-edge")
    assert radio.choices == [("Edge-1 (pixel approximation)", "edge1"), ("Edge-4 (pixel approximation)", "edge4"),
                             ("Edge-4 DINOv2 (released)", "dinov2")]


def test_the_released_baseline_answers_in_the_tab_with_a_tiny_dinov2(cloze_examples, tmp_path, monkeypatch):
    from tests.helpers.tiny_dinov2 import build_tiny_dinov2

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    monkeypatch.setenv("APP_EDGE_MODEL", str(build_tiny_dinov2(tmp_path / "dinov2")))
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    out = handlers.run_one(TAB, RES, fresh, {"backend": "baseline"}, str(cloze_examples), "all", "S", 42,
                           "dinov2", False, "api", "frames")
    assert out.question.answer.parsed in "ABCD" and "Edge-4 DINOv2 (released)" in out.question.answer.raw
    assert out.question.answer.beside == ""


def test_run_the_set_compared_writes_each_models_result_file_and_both_reach_the_leaderboard(
        cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("APP_ADMIN", "1")   # the shared runs folder: the leaderboard lists it
    with ScriptedOpenAIServer([_reply("B")]) as a, ScriptedOpenAIServer([_reply("D")]) as b:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, compare="openai:model-b",
                                   compare_base_url=b.url).to_state()
        session = ClozeSession(data_dir=str(cloze_examples.parent))
        run = handlers.run_whole_set(TAB, RES, session, settings, str(cloze_examples), "all", "S", 42, "edge1",
                                     False, "api")
        assert len(a.requests) == len(b.requests) > 0
        assert [x["messages"] for x in a.requests] == [x["messages"] for x in b.requests]
    files = run.results_file["value"]
    assert [Path(f).name.split("-all")[0] for f in files] == ["openai-model-a", "openai-model-b"]
    answers = [{e["answer"] for dims in json.loads(Path(f).read_text()).values() for e in dims.values()}
               for f in files]
    assert answers == [{"B"}, {"D"}]
    assert run.summary.startswith("① **openai:model-a**") and "\n② **openai:model-b**" in run.summary
    names = [row[0] for row in handlers.refresh(TAB, RES, session, [], []).leaderboard["value"]["data"]]
    assert any("openai-model-a" in n for n in names) and any("openai-model-b" in n for n in names)


def test_a_set_runs_summary_says_which_entries_are_missing():
    from components.cloze.ui.handlers.model_panel import _run_summary

    entry = {"option_map": OM, "expected": "A"}
    results = {"s1": {"S": {**entry, "answer": "A", "correct": True}},
               "s2": {"S": {**entry, "answer": "B", "correct": False}, "A": {**entry, "answer": "A", "correct": True}}}
    line = _run_summary("m", "set", {"results": results, "counts": {"done": 3, "skipped": 0}})
    assert "missing entries A 1 (left out, as released)" in line and "S 50.00" in line
    complete = {"s1": {"S": results["s1"]["S"]}}
    assert "missing" not in _run_summary("m", "set", {"results": complete, "counts": {"done": 1, "skipped": 0}})


def test_a_run_file_that_cannot_be_read_is_named_with_what_is_wrong(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(runs))
    (runs / "good.json").write_text(json.dumps(_results([1] * 4 + [0] * 2)), encoding="utf-8")
    (runs / "torn.json").write_text('{"s0": {"S": {"answer": "A"', encoding="utf-8")   # half-written
    (runs / "wrong.json").write_text('["not", "a", "result", "file"]', encoding="utf-8")
    board = handlers.refresh(TAB, RES, ClozeSession(data_dir=str(tmp_path)), [], [])
    names = [row[0] for row in board.leaderboard["value"]["data"]]
    assert "★ good" in names and not any("torn" in n or "wrong" in n for n in names)
    line = board.message
    assert "torn.json" in line and "wrong.json" in line and "good.json" not in line
    assert "Left out of the leaderboard" in line and str(runs) not in line   # no server path
    # what is wrong is said for each, not just that it is
    torn, wrong = line.split("torn.json: ")[1], line.split("wrong.json: ")[1]
    assert torn.startswith("not valid JSON") and len(wrong.split(". Remove")[0].strip()) > 10
    # opening Compare says it too
    picked = handlers.pick_mode(TAB, RES, ClozeSession(data_dir=str(tmp_path)), "compare", [], "")
    assert picked.message == line
    clean = tmp_path / "clean"
    clean.mkdir()
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(clean))
    assert handlers.refresh(TAB, RES, ClozeSession(data_dir=str(tmp_path)), [], []).message == ""


def test_two_no_model_methods_side_by_side_offline(cloze_examples, tmp_path, monkeypatch):
    """Edge-1 and Edge-4 (pixel) on the same question, no model and no server: both sides shown,
    each labelled as a method; each one's record is what it gives alone."""
    from components.cloze.data import load_dataset
    from components.cloze.solvers import EdgeSolver

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    settings = SessionSettings(backend="baseline:edge1", compare="baseline:edge4").to_state()
    out = _run_one(cloze_examples, settings)
    beside = out.question.answer.beside
    sides = re.findall(r"data-side='(\d)' data-letter='(\w)'", beside)
    assert [s for s, _ in sides] == ["1", "2"]
    assert "method</span> baseline:edge1" in beside and "method</span> baseline:edge4" in beside
    assert "model" not in re.sub(r"<[^>]+>", "", beside).split("·")[0]   # the line names no model
    # each side's letter is that method's own answer to the question on screen
    ds = load_dataset(cloze_examples)
    q = handlers.questions_for(out.session)[1].questions[out.session.index]   # the question answered
    stem = q.stem
    assert out.summary.startswith(f"{stem} · dimension ")
    alone = [EdgeSolver(v).answer(ds.instance(stem), q)["answer"] for v in ("edge1", "edge4")]
    assert [letter for _, letter in sides] == alone
    assert out.question.answer.parsed == alone[0]                     # the first method steers the boxes
    # the same method on both sides: one line saying so
    same = SessionSettings(backend="baseline", compare="baseline:edge1").to_state()
    with pytest.raises(Exception, match="same method here .*baseline:edge1"):
        _run_one(cloze_examples, same)
