"""The Impact tab with "compare with" and reasoning, through its handlers and two real servers on
127.0.0.1 that answer differently: both moment sets on the timeline (the time only one predicts
outlined), both region answers with a difference painting of the body (or either model against
the truth), each call's reasoning collapsed with its token counts, and both rows in the set's
metrics; one model alone looks as before."""
from __future__ import annotations

import re

import pytest

from components.impact import painting
from components.impact.body import load_body
from components.impact.ui import handlers
from components.impact.ui.session import load_tab
from components.impact.ui.session import ImpactResources, ImpactSession
from components.settings.session import SessionSettings
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.impact.clipdata import make_impact_data


@pytest.fixture(autouse=True)
def own_render_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    make_impact_data(root)
    return load_tab(root)


def _images(body: dict) -> int:
    return sum(1 for part in body["messages"][-1]["content"] if isinstance(part, dict) and part.get("type") == "image_url")


def model(moments: str, regions: str, reasoning: str = ""):
    """A scripted server: a temporal answer for a clip's many frames, a region answer for one."""
    def answer(body: dict):
        content = regions if _images(body) == 1 else moments
        return {"content": content, "reasoning_content": reasoning} if reasoning else content
    return answer


def _settings(a, b=None) -> dict:
    extra = {"compare": "openai:model-b", "compare_base_url": b.url, "compare_api_key": "sk-b"} if b else {}
    return SessionSettings(backend="openai:model-a", base_url=a.url, api_key="sk-a", max_frames=16,
                           **extra).to_state()


def test_both_moment_sets_on_one_timeline_with_the_difference_outlined(data):
    with ScriptedOpenAIServer(model("The event happens in 3.4 - 3.6 seconds.", "head")) as a, \
            ScriptedOpenAIServer(model("The event happens in 3.0 - 3.5 seconds.", "head",
                                       reasoning="the staff lands just after 3 s")) as b:
        out = handlers.run_temporal(data, ImpactResources(), ImpactSession(), _settings(a, b), "h0001", 84, "auto")
        assert a.requests[0]["messages"] == b.requests[0]["messages"]   # one request, sent twice
    timeline = out.timeline
    assert "data-compared=\"1\"" in timeline and "① predicted" in timeline and "② predicted" in timeline
    first_row = re.search(r'data-row="first".*?data-row="second"', timeline, re.S).group(0)
    second_row = timeline[timeline.index('data-row="second"'):]
    assert 'class="impact-block"' in first_row and 'class="impact-block"' in second_row
    assert "only ① predicts 3.500-3.600 s" in first_row and "only ② predicts 3.000-3.400 s" in second_row
    # the two answers and the second's reasoning, collapsed with its token counts, under the timeline
    assert "impact-pair-temporal" in timeline and "≠ differ" in timeline
    assert "② temporal reasoning · tokens: 11 prompt · 7 out" in timeline and "just after 3 s" in timeline
    assert out.status.startswith("① Temporal: **") and "\n② Temporal: **openai:model-b" in out.status
    assert out.session.temporal["h0001"]["pred_relevant_windows"][0][:2] == [3.4, 3.6]
    assert [list(span) for span in out.session.temporal_second["h0001"]["only_second"]] == [[3.0, 3.4]]
    assert "sk-a" not in timeline + out.status and "sk-b" not in timeline + out.status
    # a later run with one model drops the clip's second moments
    with ScriptedOpenAIServer(model("The event happens in 3.4 - 3.6 seconds.", "head")) as a:
        alone = handlers.run_temporal(data, ImpactResources(), out.session, _settings(a), "h0001", 84, "auto")
    assert "②" not in alone.timeline and "h0001" not in alone.session.temporal_second


def test_both_region_answers_paint_their_difference_or_either_against_the_truth(data):
    with ScriptedOpenAIServer(model("3 - 4 seconds", "The affected body regions are left calf, right calf.")) as a, \
            ScriptedOpenAIServer(model("3 - 4 seconds", "left calf and right hand",
                                       reasoning="the staff swings low")) as b:
        res = ImpactResources()
        out = handlers.run_spatial(data, res, ImpactSession(), _settings(a, b), "h0001", 84)
        assert len(a.requests) == len(b.requests) == 4   # the four annotated frames, each to both
    body = out.body
    # each side's F1 as the one-model view scores the same labels on the same body
    item = data.item("h0001")
    f1_second = painting.paint_frame(load_body(), item, 84, ["left calf", "right hand"]).f1
    assert 0 < f1_second < 1
    assert "① [left calf, right calf] (F1 1.00)" in body.regions
    assert f"② [left calf, right hand] (F1 {f1_second:.2f})" in body.regions
    assert "only ① [right calf] · only ② [right hand]" in body.regions and "truth [left calf, right calf]" in body.regions
    assert "only ① openai:model-a" in body.legend and "only ② openai:model-b" in body.legend
    assert "both models" in body.legend and out.paint["visible"] and out.paint["value"] == "difference"
    assert "impact-pair-regions" in body.beside and "② regions reasoning" in body.beside
    assert "the staff swings low" in body.beside and "4 frame(s)" in out.status and "differ on 4" in out.status
    difference = body.body3d["key"]
    # either model against the truth: the usual hit / predicted-only painting
    first = handlers.set_paint(data, res, out.session, "h0001", 84, "first").body
    second = handlers.set_paint(data, res, out.session, "h0001", 84, "second").body
    assert "hit (predicted and true)" in first.legend and "only ①" not in first.legend
    alone = {tuple(labels): painting.paint_frame(load_body(), item, 84, labels).key
             for labels in (["left calf", "right calf"], ["left calf", "right hand"])}
    assert first.body3d["key"] == alone[("left calf", "right calf")]
    assert second.body3d["key"] == alone[("left calf", "right hand")]
    assert len({difference, first.body3d["key"], second.body3d["key"]}) == 3


def test_one_model_looks_as_before_with_its_reasoning_beside(data):
    with ScriptedOpenAIServer(model("3.4 - 3.6 seconds", "left calf", reasoning="low hit")) as a:
        out = handlers.run_spatial(data, ImpactResources(), ImpactSession(), _settings(a), "h0001", 84)
        temporal = handlers.run_temporal(data, ImpactResources(), ImpactSession(), _settings(a), "h0001", 84, "auto")
    assert "②" not in out.body.regions + out.body.legend + out.body.beside and not out.paint["visible"]
    assert "<details class='vb-reasoning'" in out.body.beside and "low hit" in out.body.beside
    assert "data-compared" not in temporal.timeline and "temporal reasoning · tokens" in temporal.timeline
    with ScriptedOpenAIServer(model("3.4 - 3.6 seconds", "left calf")) as a:
        plain = handlers.run_spatial(data, ImpactResources(), ImpactSession(), _settings(a), "h0001", 84)
    assert plain.body.beside == ""   # no reasoning: nothing beside the body


def test_the_sets_metrics_give_each_compared_model_its_row_and_interval(data):
    with ScriptedOpenAIServer(model("The event happens in 3.4 - 3.6 seconds.", "left calf, right calf")) as a, \
            ScriptedOpenAIServer(model("The event happens in 0.0 - 0.5 seconds.", "head")) as b:
        table = handlers.set_metrics(data, ImpactResources(), ImpactSession(), "all", _settings(a, b)).metrics
    assert table.count("(this app) |") >= 4   # temporal and spatial rows of both models
    assert "**openai:model-b" in table and "↳ openai:model-b" in table.replace("\\", "")
    assert "queries with no prediction: 0." in table and "queries with 3+ moments (@3+tgt): 0" in table


def test_two_no_model_methods_run_alone_and_say_why(data):
    """Impact has one no-model method per task: comparing two methods runs it alone, and the status
    says so instead of showing an empty second side."""
    settings = SessionSettings(backend="baseline:edge1", compare="baseline:rag").to_state()
    out = handlers.run_temporal(data, ImpactResources(), ImpactSession(), settings, "h0001", 84, "auto")
    assert "②" not in out.timeline and "h0001" not in out.session.temporal_second
    assert "one no-model method per task" in out.status and "baseline:rag adds no second side" in out.status
    spatial = handlers.run_spatial(data, ImpactResources(), ImpactSession(), settings, "h0001", 84)
    assert "one no-model method per task" in spatial.status and "②" not in spatial.status
    plain = handlers.run_temporal(data, ImpactResources(), ImpactSession(),
                                  SessionSettings(backend="baseline").to_state(), "h0001", 84, "auto")
    assert "no-model method per task" not in plain.status


def test_the_sets_metrics_leave_out_a_query_with_no_prediction_and_say_so(data):
    # issue 35: the tab scores as QV-M2 does; a model that answers "None" is left out of the
    # temporal scores (not a miss), and the note beside the table says how many and why
    with ScriptedOpenAIServer(model("None", "left calf")) as a:
        table = handlers.set_metrics(data, ImpactResources(), ImpactSession(), "all", _settings(a)).metrics
    clips = len(data.annotations.items)
    assert re.search(rf"{clips} quer(y|ies) with no prediction \({clips} empty window list\(s\)", table)
    assert "left out as the reference (QV-M2) does" in table and f"over 0 of {clips} queries" in table
    assert "queries with no prediction: 0." not in table
