"""Window search's views of "compare with" and of reasoning, through the tab's handlers with two
real servers on 127.0.0.1 that answer differently: both checklists of each window side by side
with the differing statements marked, both accepted windows and predictions on the one timeline,
the disagreements listed, each step's reasoning collapsed with its token counts; one model alone
looks as before. And the benchmark table's interval row under this run's row."""
from __future__ import annotations

import json
import re

import pytest

from components.settings.session import SessionSettings
from components.window_search import pair_view
from components.window_search.data import load_annotations
from components.window_search.metrics import evaluate
from components.window_search.data import Prediction
from components.window_search.ui import handlers
from components.window_search.ui.handlers import bench
from components.window_search.ui.session import WindowSearchTab
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.window_search.test_pairs import Model, _inspect


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


def _run(tab, settings: dict, qid: str = "p0006_t"):
    res = WindowSearchResources()
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 60).session
    session = handlers.pick_query(tab, res, session, qid).session
    views = list(handlers.run(tab, res, session, settings, tab.annotations.query(qid).query, 60, 2, 0, 30, "aws"))
    return res, views[-1]


def _first():
    return Model(["Harry walks", "in an office"], [_inspect("REJECT", "false"), _inspect("EMIT", "true")],
                 "0 - 10", reasoning="")


def _second():
    return Model(["Harry crosses a room", "it is daytime"], [_inspect("EMIT", "true"), _inspect("REJECT", "false")],
                 "5 - 20", reasoning="the office shows in the first window")


def test_two_servers_side_by_side_with_the_disagreement_marked(tab):
    with ScriptedOpenAIServer(_first()) as a, ScriptedOpenAIServer(_second()) as b:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, api_key="sk-a", max_frames=8,
                                   compare="openai:model-b", compare_base_url=b.url,
                                   compare_api_key="sk-b").to_state()
        res, done = _run(tab, settings)
        assert len(a.requests) == len(b.requests) == 4   # decompose, 2 inspect, localize: both
    trace = done.session.trace
    assert [c.outcome for c in trace.candidates] == ["rejected", "accepted"]  # model-a steered
    # the accepted window's checklist: both verdicts per statement, s2 marked as differing
    checklist = done.checklist
    assert "ws-pair-checklist" in checklist and "① <b>EMIT</b>" in checklist and "② <b>REJECT</b>" in checklist
    differing = re.findall(r"<tr class='ws-stmt ws-differs' data-sid='(\w+)'", checklist)
    assert differing == ["s2"] and "≠ differ" in checklist
    # the second model's reasoning, collapsed, with its token counts; the first gave none
    assert "<details class='vb-reasoning'" in checklist and "② reasoning · tokens: 11 prompt · 7 out" in checklist
    assert "the office shows in the first window" in checklist and "① reasoning ·" not in checklist
    # the first window (rejected by ①, accepted by ②) on the timeline, marked
    timeline = handlers.search._timeline(done.session)
    assert "ws-bar-window-2" in timeline and "ws-bar-pred-2" in timeline and "data-compared='1'" in timeline
    assert re.search(r"data-rank='1' data-differs='1'", timeline)
    # under the result: both windows, both predictions, every disagreement
    calls = done.calls
    assert "ws-pair-summary" in calls and "openai:model-b" in calls
    assert calls.count("<li>") == 5   # statements, two checklists, window, prediction
    assert "candidate 1, call 0: REJECT vs EMIT (statements s2)" in calls
    assert "② Decompose reasoning" in calls
    assert "sk-a" not in calls + checklist + timeline and "sk-b" not in calls + checklist + timeline
    # the rejected window shows the other disagreement
    first_window = handlers.select_window(tab, res, done.session, "#1").checklist
    assert "① <b>REJECT</b>" in first_window and "② <b>EMIT</b>" in first_window


def test_one_model_looks_as_before_with_its_reasoning_collapsed_beside_each_step(tab):
    model = Model(["Harry walks", "in an office"], [_inspect("REJECT", "false"), _inspect("EMIT", "true")],
                  "0 - 10", reasoning="s2 fails: no office")
    with ScriptedOpenAIServer(model) as a:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, max_frames=8).to_state()
        _, done = _run(tab, settings)
    assert "ws-pair" not in done.checklist and "②" not in done.checklist
    assert "data-compared" not in handlers.search._timeline(done.session)
    # each Inspect call's reasoning beside its decision, its token counts in the summary line
    assert re.search(r"<li><b>EMIT</b>.*?<details class='vb-reasoning'.*?reasoning · tokens: 11 prompt · 7 out"
                     r".*?s2 fails: no office", done.checklist, re.S)
    # Decompose and localize reasoning under the result, nothing of a second model
    assert "Decompose reasoning" in done.calls and "Localize reasoning" in done.calls
    assert "ws-pair-summary" not in done.calls and "①" not in done.calls


def test_one_model_without_reasoning_shows_only_its_token_counts(tab):
    with ScriptedOpenAIServer(_first()) as a:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, max_frames=8).to_state()
        _, done = _run(tab, settings)
    assert "<details" not in done.checklist and "vb-tokens" in done.checklist
    # no reasoning at all: each role's token counts under the result, nothing to unfold
    assert "<details" not in done.calls and "Decompose · tokens: 11 prompt · 7 out" in done.calls


def test_the_benchmark_table_puts_the_intervals_under_this_runs_row(tab):
    preds = {q.qid: Prediction(q.qid, (q.interval[0], q.interval[1] + 3.0)) for q in tab.annotations.queries}
    metrics = evaluate(tab.annotations, preds)
    table = bench.run_table(metrics, data_set="examples", method="AWS · x")
    mine, below = table[-2], table[-1]
    assert mine[:2] == ["examples", "AWS · x"] and below[:2] == ["examples", "AWS · x 95 % interval"]
    ci = metrics["intervals"]["mIoU"]
    assert below[-1] == f"[{ci['low']:.1f}, {ci['high']:.1f}]" and ci["low"] <= mine[-1] <= ci["high"]


def test_a_loaded_compared_trace_shows_both_sides(tab, tmp_path):
    with ScriptedOpenAIServer(_first()) as a, ScriptedOpenAIServer(_second()) as b:
        settings = SessionSettings(backend="openai:model-a", base_url=a.url, max_frames=8,
                                   compare="openai:model-b", compare_base_url=b.url).to_state()
        res, done = _run(tab, settings)
    exported = handlers.export(tab, res, done.session).export_file["value"]
    loaded = handlers.load(tab, WindowSearchResources(), WindowSearchSession(), exported)
    assert "ws-pair-checklist" in loaded.checklist and loaded.calls == done.calls
    assert json.loads(open(exported).read())["trace"]["partner_backend"] == "openai:model-b"
    assert pair_view.checklist(None, None) == handlers.search.view.checklist_html(None, None)


def test_two_no_model_methods_side_by_side_offline(tab):
    """The text-only method (word overlap) beside the RAG method (MiniLM embeddings of the
    subtitles), no model and no server: the search the first steers, every window's two checklists,
    each side labelled as a method, the second's verdicts its own."""
    from components.window_search.solvers import TextOnlyBaselineSolver

    settings = SessionSettings(backend="baseline:text", compare="baseline:rag").to_state()
    _, done = _run(tab, settings)
    trace = done.session.trace
    rag = TextOnlyBaselineSolver(embedder="minilm")
    assert trace.backend == "baseline:text" and trace.partner_backend == f"baseline:rag ({rag.similarity.method})"
    checklist = done.checklist
    assert "ws-pair-checklist" in checklist and "ws-pair-summary" in done.calls
    assert "method</span> baseline:text" in checklist and "method</span> baseline:rag" in checklist
    assert "checks the same windows" in checklist and "is sent the same requests" not in checklist
    # the second side's verdicts are the RAG method's own on the same window and checklist
    first = trace.candidates[0]
    step = first.steps[0]
    ctx_checks = [c["status"] for c in step.partner["value"]["checks"]]
    assert len(ctx_checks) == len(trace.statements) and step.partner["raw"].startswith("{")
    assert json.loads(step.partner["raw"])["cooccurrence"].startswith("text-only:")
