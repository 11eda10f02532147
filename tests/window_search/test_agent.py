"""Algorithm 1 (Appendix D.1) step by step, with a scripted backend: the agent is under test."""
from __future__ import annotations

import threading

import pytest

from backends.base import GenerationResult
from backends.errors import TooManyImagesError
from components.base.errors import UserError
from components.window_search import prompts
from components.window_search.agent import agentic_window_search
from components.window_search.solvers import ModelWindowSolver
from components.window_search.types import Chunk, SearchTrace
from tests.window_search.agent_fixtures import CUES, ScriptedBackend, VideoMovie, decompose_reply, \
    frame_times, inspect_reply, make_memory, select_reply, texts, write_test_video

QUERY = "Lloyd and Harry walk on a snowy street at night."
BROKEN = '{"statements": [{"id": "s1", "holds": "maybe"'  # not readable


@pytest.fixture(scope="module")
def movie(tmp_path_factory) -> VideoMovie:
    d = tmp_path_factory.mktemp("aws-movie")
    return VideoMovie(write_test_video(d / "movie.mp4"), CUES)


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    return make_memory(tmp_path_factory.mktemp("aws-memory"))


def ranked(*windows: tuple[float, float]) -> list[Chunk]:
    return [Chunk(index=int(s // 60), start=s, end=e, score=1.0 - 0.1 * r, rank=r + 1)
            for r, (s, e) in enumerate(windows)]


DEFAULT_RANKED = ranked((60, 120), (120, 180), (0, 60), (180, 240))


def run(backend, movie, memory, chunks=None, **kw) -> SearchTrace:
    kw.setdefault("frame_cap", 8)
    return agentic_window_search(QUERY, chunks or DEFAULT_RANKED, movie, memory,
                                 ModelWindowSolver(backend), qid="q1", **kw)


def total_calls(trace: SearchTrace) -> int:
    return sum(trace.calls[k] for k in ("decompose", "inspect", "select", "retries"))


def test_stops_at_first_emit(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("REJECT", ["true", "false", "true"]),
                                  inspect_reply("EMIT")])
    trace = run(be, movie, memory)
    assert trace.accepted_rank == 2 and trace.selected_rank is None
    assert trace.window == (120.0, 180.0)
    assert [c.outcome for c in trace.candidates] == ["rejected", "accepted"]  # 3 and 4 never seen
    assert trace.calls == {"decompose": 1, "inspect": 2, "select": 0, "localize": 0, "retries": 0}
    assert [r.task for r in be.requests] == ["aws.decompose", "aws.inspect", "aws.inspect"]
    assert len(trace.statements) == 3 and trace.statements[1].text == "statement 2"


def test_expand_truncated_to_delta_max_and_only_new_band_appended(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", ["true", "cutoff", "true"], side="right",
                                                secs=45), inspect_reply("EMIT")])
    trace = run(be, movie, memory, frame_cap=None)
    first, second = be.by_task("aws.inspect")
    steps = trace.candidates[0].steps
    assert steps[0].expand_seconds == 45 and steps[0].applied_seconds == 30.0
    assert steps[1].window == (60.0, 150.0) and trace.window == (60.0, 150.0)
    # call 1 saw the chunk at 1 fps; call 2 carries that turn unchanged plus ONLY the new band
    assert frame_times(first.messages[1]) == [float(t) for t in range(60, 120)]
    assert second.messages[1].content == first.messages[1].content
    assert second.messages[2].role == "assistant" and second.messages[2].content == [steps[0].raw]
    assert frame_times(second.messages[3]) == [float(t) for t in range(120, 150)]
    assert "Expansion 1: revealed 30 s" in texts(second.messages[3])
    assert "truncated to 30 s" in texts(second.messages[3])
    # the new band's subtitles only ("Harry walks ..." at 118 s belongs to the first window)
    assert "[t=118.0s]" in texts(first.messages[1]) and "[t=118.0s]" not in texts(second.messages[3])


def test_new_band_capped_at_max_new_frames(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side="left", secs=60),
                                  inspect_reply("EMIT")])
    trace = run(be, movie, memory, chunks=ranked((120, 180)), delta_max=60.0)
    new = frame_times(be.by_task("aws.inspect")[1].messages[3])
    assert trace.candidates[0].steps[0].applied_seconds == 60.0
    assert len(new) == 32 and min(new) >= 60.0 and max(new) < 120.0
    assert trace.window == (60.0, 180.0)


@pytest.mark.parametrize("chunk,side,applied,window", [
    ((0, 60), "left", 0.0, (0.0, 60.0)),          # already at the movie start
    ((10, 70), "left", 10.0, (0.0, 70.0)),         # clamped at the movie start
    ((180, 240), "right", 0.0, (180.0, 240.0)),    # already at the movie end
    ((200, 230), "right", 10.0, (200.0, 240.0)),   # clamped at the movie end
])
def test_expansion_clamped_to_the_movie(movie, memory, chunk, side, applied, window):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side=side, secs=30), inspect_reply("EMIT")])
    trace = run(be, movie, memory, chunks=ranked(chunk))
    assert trace.candidates[0].steps[0].applied_seconds == applied
    assert trace.window == window
    new = frame_times(be.by_task("aws.inspect")[1].messages[3])
    assert len(new) == int(applied) and all(window[0] <= t < window[1] for t in new)
    if applied < 30:
        assert "reached the " + ("start" if side == "left" else "end") in texts(
            be.by_task("aws.inspect")[1].messages[3])


def test_always_expand_residual_becomes_reject_then_select(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", ["cutoff"] * 3, side="right", secs=30)],
                         select=[select_reply(1)])
    chunks = ranked((0, 30), (100, 130), (200, 210))
    trace = run(be, movie, memory, chunks=chunks, K=3, M=3)
    assert trace.calls["inspect"] == 3 * (3 + 1) and trace.calls["select"] == 1
    for cand in trace.candidates:
        assert [s.n for s in cand.steps] == [0, 1, 2, 3]
        assert [s.decision for s in cand.steps] == ["EXPAND"] * 3 + ["REJECT"]
        assert cand.steps[-1].converted_from_expand and cand.outcome in ("rejected", "selected")
    assert trace.candidates[0].final_window == (0.0, 120.0)       # three 30 s steps
    assert trace.candidates[2].final_window == (200.0, 240.0)     # clamped at the end
    assert trace.selected_rank == 2 and trace.window == (100.0, 220.0)
    assert trace.accepted_rank is None


def test_budget_messages_verbatim(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side="right", secs=10)])
    run(be, movie, memory, chunks=ranked((0, 20)), K=1, M=3)
    calls = be.by_task("aws.inspect")
    assert len(calls) == 4
    expected = [
        "[Budget] Expansion 1 of 3 available (0 used, 3 remaining). Each EXPAND reveals up to 30 s "
        "on one side. You may EXPAND, EMIT, or REJECT.",
        "[Budget] Expansion 2 of 3 available (1 used, 2 remaining). Each EXPAND reveals up to 30 s "
        "on one side. You may EXPAND, EMIT, or REJECT.",
        "[Budget] Expansion 3 of 3 available (2 used, 1 remaining). Each EXPAND reveals up to 30 s "
        "on one side. You may EXPAND, EMIT, or REJECT."]
    for n, req in enumerate(calls[:3]):
        assert texts(req.messages[-1]).endswith(expected[n])
        assert "exhausted" not in texts(req.messages[-1])
    last = texts(calls[3].messages[-1])
    assert last.endswith("[Budget] Expansion budget exhausted (3 of 3 used, 0 remaining). You may no "
                         "longer EXPAND – choose EMIT or REJECT.\nExpansion budget exhausted. You "
                         "may no longer EXPAND. Judge the statements and choose EMIT or REJECT "
                         "based on what you have seen.")
    # every earlier turn keeps the budget line it was given
    for n in range(3):
        assert texts(calls[3].messages[1 + 2 * n]).endswith(expected[n])
    assert calls[0].messages[0].content == [prompts.load_prompt("aws_inspect_system")]


def test_budget_numbers_follow_configured_budget(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side="right", secs=10)])
    run(be, movie, memory, chunks=ranked((0, 20)), K=1, M=1, delta_max=20.0)
    first, second = be.by_task("aws.inspect")
    assert texts(first.messages[-1]).endswith(
        "[Budget] Expansion 1 of 1 available (0 used, 1 remaining). Each EXPAND reveals up to 20 s "
        "on one side. You may EXPAND, EMIT, or REJECT.")
    assert "AT MOST 1 times" in first.messages[0].content[0]
    assert "(1 of 1 used, 0 remaining)" in texts(second.messages[-1])


def test_broken_json_retried_then_reject_with_raw_kept(movie, memory):
    be = ScriptedBackend(inspect=[BROKEN, BROKEN, BROKEN, inspect_reply("EMIT")])
    trace = run(be, movie, memory)
    bad = trace.candidates[0].steps[0]
    assert bad.decision == "REJECT" and bad.raw == BROKEN and bad.parse_error
    assert "3 attempts" in bad.parse_error
    assert trace.calls["inspect"] == 2 and trace.calls["retries"] == 2
    assert len(be.by_task("aws.inspect")) == 4 and trace.accepted_rank == 2
    # the retries re-asked the very same conversation
    a, b, c, _ = be.by_task("aws.inspect")
    assert a.messages == b.messages == c.messages


def test_malformed_then_valid_reply_is_used(movie, memory):
    fenced = "Here is my verdict:\n```json\n" + inspect_reply("EMIT")[:-1] + ",}\n```"
    be = ScriptedBackend(inspect=["no json at all", fenced])
    trace = run(be, movie, memory)
    assert trace.accepted_rank == 1 and trace.calls["retries"] == 1
    assert trace.candidates[0].steps[0].raw == fenced


def test_select_prompt_has_summaries_confidences_and_midpoint_frames(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("REJECT", ["true", "false", "true"], conf=0.9),
                                  inspect_reply("REJECT", ["false", "false", "true"], conf=0.35)],
                         select=[select_reply(1)])
    chunks = ranked((60, 120), (120, 180))
    trace = run(be, movie, memory, chunks=chunks, K=2)
    (req,) = be.by_task("aws.select")
    assert req.params.temperature == 0.2
    body = texts(req.messages[1])
    assert 'Target query: "' + QUERY + '"' in body
    assert "There are 2 candidate segments below, none confirmed." in body
    assert "[0] chunk 1: examined window [60s, 120s], verdict=REJECT, confidence=0.90" in body
    assert "[1] chunk 2: examined window [120s, 180s], verdict=REJECT, confidence=0.35" in body
    assert "s2 false: seen" in body and "reject summary" in body
    assert frame_times(req.messages[1]) == [90.0, 150.0]
    assert body.endswith(prompts.load_prompt("aws_select_closing"))
    assert trace.selected_rank == 2 and trace.window == (120.0, 180.0)
    assert trace.candidates[1].outcome == "selected" and trace.select_raw == select_reply(1)


def test_unreadable_select_falls_back_to_first_rejected(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("REJECT")], select=["I pick the second one"])
    trace = run(be, movie, memory, chunks=ranked((60, 120), (120, 180)), K=2)
    assert trace.calls["select"] == 1 and trace.calls["retries"] == 2
    assert trace.selected_rank == 1 and trace.window == (60.0, 120.0)
    assert any("fell back" in e for e in trace.errors)


def test_call_count_bound_with_adversarial_model(movie, memory):
    """Every role answers garbage twice, then something valid; Inspect always wants more."""
    def adversary(req):
        k = len([r for r in be.requests if r.task == req.task])
        if k % 3 != 0:
            return "{broken"
        return {"aws.decompose": decompose_reply(7), "aws.select": select_reply(99),
                "aws.inspect": inspect_reply("EXPAND", ["cutoff"] * 7, side="left", secs=500)}[req.task]

    be = ScriptedBackend(fn=adversary)
    K, M, R = 4, 3, 2
    trace = run(be, movie, memory, K=K, M=M)
    logical = trace.calls["decompose"] + trace.calls["inspect"] + trace.calls["select"]
    assert logical <= K * (M + 1) + 2
    assert len(be.requests) == total_calls(trace) <= K * (M + 1) + 2 + R * (K * (M + 1) + 2)
    assert trace.calls["inspect"] == K * (M + 1) and trace.calls["select"] == 1
    assert trace.calls["retries"] == R * logical
    assert all(s.applied_seconds in (None, 0.0, 30.0) for c in trace.candidates for s in c.steps)


def test_history_carries_earlier_replies_within_a_candidate_only(movie, memory):
    r1 = inspect_reply("EXPAND", side="left", secs=20, note="first look")
    r2 = inspect_reply("EXPAND", side="right", secs=20, note="second look")
    be = ScriptedBackend(inspect=[r1, r2, inspect_reply("REJECT"), inspect_reply("EMIT")])
    run(be, movie, memory)
    calls = be.by_task("aws.inspect")
    assert [m.role for m in calls[2].messages] == ["system", "user", "assistant", "user",
                                                   "assistant", "user"]
    assert calls[2].messages[2].content == [r1] and calls[2].messages[4].content == [r2]
    assert frame_times(calls[2].messages[3]) == [float(t) for t in range(40, 60)]
    assert frame_times(calls[2].messages[5]) == [float(t) for t in range(120, 140)]
    # the next candidate starts a fresh conversation
    assert [m.role for m in calls[3].messages] == ["system", "user"]
    assert "Candidate segment: chunk 2" in texts(calls[3].messages[1])


def test_cast_from_memory_goes_to_decompose_and_inspect(movie, memory):
    cast = [{"char_id": "C1", "name": "Lloyd", "ref": "C1:r2"},
            {"char_id": "C2", "name": "Harry", "ref": "C2:r9"}]  # unknown label -> first reference
    be = ScriptedBackend(decompose=[decompose_reply(3, cast)], inspect=[inspect_reply("EMIT")])
    trace = run(be, movie, memory)
    assert trace.matched_characters == ["C1", "C2"]
    dec = be.by_task("aws.decompose")[0]
    assert dec.params.temperature == 0.2
    body = texts(dec.messages[1])
    assert body.startswith('Scene description: "' + QUERY + '"')
    assert "[C1] Lloyd Christmas" in body and "[C2] Harry Dunne" in body
    labels = [p for p in dec.messages[1].content if isinstance(p, str)]
    assert labels[-1].endswith("[C2:r2]") and dec.messages[1].num_images() == 4
    assert [(c.char_id, c.name, c.ref_id) for c in trace.cast] == [("C1", "Lloyd", "C1:r2"),
                                                                  ("C2", "Harry", "C2:r1")]
    first = be.by_task("aws.inspect")[0].messages[1].content
    assert first[0] == "[REF:Lloyd]" and not isinstance(first[1], str)
    assert first[2] == "[REF:Harry]" and not isinstance(first[3], str)
    assert first[1].getpixel((2, 2))[0] > 150   # Lloyd's red reference image


def test_query_naming_nobody_in_memory(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("EMIT")])
    trace = agentic_window_search("A dog barks at a passing car.", DEFAULT_RANKED, movie, memory,
                                  ModelWindowSolver(be), frame_cap=4)
    assert trace.matched_characters == [] and trace.cast == []
    dec = be.by_task("aws.decompose")[0]
    assert "CAST" not in texts(dec.messages[1]) and dec.messages[1].num_images() == 0
    assert "[REF:" not in texts(be.by_task("aws.inspect")[0].messages[1])
    assert trace.accepted_rank == 1


def test_sampling_params_per_call_type(movie, memory):
    be = ScriptedBackend(inspect=[inspect_reply("REJECT")], select=[select_reply(0)])
    run(be, movie, memory, chunks=ranked((0, 60), (60, 120)), K=2)
    got = {(r.task, r.params.temperature, r.params.top_p) for r in be.requests}
    assert got == {("aws.decompose", 0.2, 1.0), ("aws.inspect", 0.4, 0.9), ("aws.select", 0.2, 1.0)}
    assert all(r.ref == "q1" for r in be.requests)


def test_on_update_after_every_model_call_and_stop_event(movie, memory):
    stop = threading.Event()
    snapshots = []

    def on_update(trace):
        snapshots.append(trace.calls["inspect"])
        if trace.calls["inspect"] == 2:
            stop.set()

    be = ScriptedBackend(inspect=[inspect_reply("REJECT")])
    trace = run(be, movie, memory, on_update=on_update, stop=stop)
    assert trace.stopped and trace.window is None
    assert len(be.by_task("aws.inspect")) == 2 and not be.by_task("aws.select")
    assert snapshots[:3] == [0, 1, 2]  # after decompose, after each inspect
    assert all(r.cancel is stop for r in be.requests)


def test_stop_already_set_makes_no_call(movie, memory):
    stop = threading.Event()
    stop.set()
    be = ScriptedBackend()
    trace = run(be, movie, memory, stop=stop)
    assert trace.stopped and be.requests == []


def test_image_cap_of_the_backend_is_respected(movie, memory):
    cast = [{"char_id": "C1", "name": "Lloyd", "ref": "C1:r1"}]
    be = ScriptedBackend(decompose=[decompose_reply(3, cast)],
                         inspect=[inspect_reply("EXPAND", side="right", secs=30),
                                  inspect_reply("EMIT")], max_images=12)
    trace = run(be, movie, memory, frame_cap=None)
    for req in be.by_task("aws.inspect"):
        assert req.num_images() <= 12
        assert req.messages[1].content[0] == "[REF:Lloyd]"   # references are never dropped
    steps = trace.candidates[0].steps
    assert steps[0].num_frames == 11 and steps[0].frames_dropped == 60 - 11
    assert steps[1].num_frames == 11 and steps[1].frames_dropped == 90 - 11
    kept = frame_times(be.by_task("aws.inspect")[0].messages[1])
    assert kept == sorted(kept) and kept[0] < 70 and kept[-1] > 110   # spread over the window


def test_backend_failure_is_recorded_not_guessed(movie, memory):
    class Failing(ScriptedBackend):
        def generate(self, request):
            self.requests.append(request)
            if request.task == "aws.inspect":
                return GenerationResult(text="", backend="scripted:test", model="t",
                                        error="HTTP 500 after 3 retries")
            return super().generate(request)

    trace = run(Failing(), movie, memory)
    assert trace.window is None and not trace.stopped
    assert any("HTTP 500" in e for e in trace.errors)


def test_bad_inputs_are_user_errors(movie, memory):
    solver = ModelWindowSolver(ScriptedBackend())
    with pytest.raises(UserError, match="No ranked chunks"):
        agentic_window_search(QUERY, [], movie, memory, solver)
    with pytest.raises(UserError, match="query is empty"):
        agentic_window_search("  ", DEFAULT_RANKED, movie, memory, solver)


def test_trace_round_trips_through_json(movie, memory):
    import json
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side="right", secs=30),
                                  inspect_reply("REJECT"), inspect_reply("EMIT")])
    trace = run(be, movie, memory)
    again = SearchTrace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again == trace


def test_server_image_limit_is_obeyed_on_the_next_attempt(movie, memory):
    class Picky(ScriptedBackend):
        def generate(self, request):
            if request.num_images() > 10:
                self.requests.append(request)
                raise TooManyImagesError("at most 10 images per request", limit=10,
                                         sent=request.num_images())
            return super().generate(request)

    be = Picky(inspect=[inspect_reply("EMIT")])
    trace = run(be, movie, memory, frame_cap=None)
    inspects = be.by_task("aws.inspect")
    assert [r.num_images() for r in inspects] == [60, 10]
    assert trace.accepted_rank == 1 and trace.calls["retries"] == 1
    assert trace.candidates[0].steps[0].frames_dropped == 50
