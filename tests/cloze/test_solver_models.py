"""Model answering against a real OpenAI-compatible HTTP server and the tiny local model."""
import pytest

from backends.config import ApiSettings
from backends.registry import resolve
from components.cloze.data import load_dataset
from components.cloze.prompts import eval_prompt
from components.cloze.questions import build_set
from components.cloze.pipeline import answer_safely
from components.cloze.metrics import score_results
from components.cloze.solvers import ModelSolver, solvers_for
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.fixture(scope="module")
def ds(cloze_examples):
    return load_dataset(cloze_examples)


@pytest.fixture(scope="module")
def question(ds):
    return build_set(ds, "all", ["A"]).questions[0]


def _backend(server, **kw):
    return resolve("openai:test-model", api=ApiSettings(base_url=server.url, api_key="sk-test",
                                                         max_retries=0, **kw))


def _solver(backend):
    return solvers_for(backend).solver


def _parts(body):
    return body["messages"][0]["content"]


def test_request_layout_is_the_released_one(ds, question):
    with ScriptedOpenAIServer([f'{{"answer": "{question.expected}", "reason": "smooth"}}']) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
        body = server.requests[0]
    assert body["temperature"] == 0
    # the released evaluation's request length (was 512, which cut thinking models' replies)
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 8192
    parts = _parts(body)
    kinds = ["img" if p["type"] == "image_url" else p["text"] for p in parts]
    assert kinds[0] == eval_prompt()
    expected = [eval_prompt(), "[BEGINNING]", *["img"] * 16, "[END]", *["img"] * 16]
    for letter in "ABCD":
        expected += [f"[Candidate {letter}]", *["img"] * 16]
    assert kinds == expected and kinds.count("img") == 96
    assert all(p["image_url"]["url"].startswith("data:image/jpeg;base64,") for p in parts if p["type"] == "image_url")
    assert rec["answer"] == question.expected and rec["correct"] and rec["used_num_frames"] == 16
    assert rec["option_map"] == question.option_map and rec["reason"] == "smooth"


def test_garbage_is_retried_three_times_then_kept_raw_as_unparsed(ds, question):
    script = ["I think it is B", "```\nnot json\n```", '{"answer": "B or C"}', '{"answer": "A"}']
    with ScriptedOpenAIServer(script) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
        assert len(server.requests) == 3
    assert rec["answer"] is None and rec["parsed"] is False and rec["correct"] is False
    assert rec["raw"] == '{"answer": "B or C"}' and rec["raw_attempts"][0] == "I think it is B"
    assert rec["attempts"] == 3 and "unparsed" in rec["error"]
    m = score_results({question.stem: {question.dim: rec}})
    assert m["invalid_entries_skipped"] == 1 and m["parse_rate"] == 0.0


def test_a_late_valid_answer_is_used(ds, question):
    with ScriptedOpenAIServer(["nope", '{"answer": "c", "reason": "r"}']) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
    assert rec["answer"] == "C" and rec["attempts"] == 2


def test_server_rejecting_images_steps_frames_down(ds, question):
    def script(body):
        n = sum(1 for p in _parts(body) if p["type"] == "image_url")
        if n > 24:
            return {"status": 400, "body": {"error": {"message": f"too many images: {n} > 24"}}}
        return '{"answer": "A", "reason": "r"}'

    with ScriptedOpenAIServer(script) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
        counts = [sum(1 for p in _parts(b) if p["type"] == "image_url") for b in server.requests]
    assert counts == [96, 72, 24]             # 16 -> 12 -> 4 frames per clip
    assert rec["used_num_frames"] == 4 and rec["answer"] == "A"


def test_backend_max_images_is_respected_before_sending(ds, question):
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        rec = _solver(_backend(server, max_images=30)).answer(ds.instance(question.stem), question)
        counts = [sum(1 for p in _parts(b) if p["type"] == "image_url") for b in server.requests]
    assert counts == [24] and rec["used_num_frames"] == 4


def test_a_timeout_is_recorded_not_guessed(ds, question):
    with ScriptedOpenAIServer([{"content": '{"answer": "A"}', "delay": 1.5}]) as server:
        backend = resolve("openai:test-model", api=ApiSettings(base_url=server.url, api_key="sk-test",
                                                               timeout_s=0.3, max_retries=0))
        rec = ModelSolver(backend, max_attempts=2).answer(ds.instance(question.stem), question)
        sent = len(server.requests)
    # as released eval.py: a failure is asked again within the attempts, then recorded, unguessed
    assert sent == 2
    assert rec["answer"] is None and rec["attempts"] == 2 and "timed out" in rec["error"]
    assert rec["parsed"] is False and rec["raw"] == ""
    assert "sk-test" not in rec["error"]


def test_a_failure_then_an_answer_is_the_answer_as_released(ds, question):
    """eval.py re-asks after any exception within its 3 attempts: a 400 (not retried by the
    backend itself) then a good reply gives that reply, on attempt 2."""
    script = [{"status": 400, "body": {"error": {"message": "bad gateway state"}}},
              '{"answer": "B", "reason": "r"}']
    with ScriptedOpenAIServer(script) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
        bodies = list(server.requests)
    assert len(bodies) == 2 and rec["answer"] == "B" and rec["attempts"] == 2
    assert rec["error"] is None and rec["parsed"] is True


def test_the_request_is_sent_as_released_without_top_p(ds, question):
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        _solver(_backend(server)).answer(ds.instance(question.stem), question)
        body = server.requests[0]
    # released eval.py: create(model=..., messages=..., max_tokens=8192, temperature=0)
    assert body["temperature"] == 0 and body["max_tokens"] == 8192
    assert "top_p" not in body


def test_a_broken_clip_is_recorded_with_a_media_error(cloze_copy):
    ds = load_dataset(cloze_copy)
    q = build_set(ds, "all", ["S"]).questions[0]
    (ds.instance(q.stem).folder / "GT.mp4").write_bytes(b"not a video")
    with ScriptedOpenAIServer(['{"answer": "A"}']) as server:
        rec = answer_safely(_solver(_backend(server)), ds, q)
        assert server.requests == []
    assert rec["answer"] is None and rec["error"].startswith("media:") and "GT.mp4" in rec["error"]


def test_tiny_local_model_output_is_counted_unparsed_with_raw_kept(ds, question, tiny_vlm_dir):
    backend = resolve(f"hf:{tiny_vlm_dir}")
    rec = ModelSolver(backend, max_frames=1, max_tokens=8).answer(ds.instance(question.stem), question)
    assert 1 <= rec["attempts"] <= 3 and rec["used_num_frames"] == 1
    assert isinstance(rec["raw"], str)
    if rec.get("truncated"):    # 8 tokens of noise use up max_tokens: truncated, not re-asked
        assert rec["attempts"] == 1 and rec["error"].startswith("truncated") and rec["answer"] is None
        assert score_results({question.stem: {question.dim: rec}})["invalid_kinds"]["truncated"] == 1
    elif rec["answer"] is None:  # noise: unparsed after exactly the bounded number of attempts
        assert rec["attempts"] == 3 and rec["parsed"] is False and rec["correct"] is False
        assert score_results({question.stem: {question.dim: rec}})["invalid_entries_skipped"] == 1
    else:                       # a parse can only come from a real JSON answer
        assert rec["answer"] in "ABCD" and rec["raw"]


def test_one_factory_picks_the_solver_and_carries_the_model_panels_frames(ds, question):
    from components.cloze.solvers import EdgeSolver, SolverSettings

    baseline = solvers_for(resolve("baseline"), SolverSettings(edge_variant="edge4"))
    assert isinstance(baseline.solver, EdgeSolver) and baseline.name == "baseline:edge4"
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        solvers = solvers_for(_backend(server), SolverSettings(max_frames=4))
        rec = solvers.solver.answer(ds.instance(question.stem), question)
        counts = [sum(1 for p in _parts(b) if p["type"] == "image_url") for b in server.requests]
    assert solvers.name == "openai:test-model" and counts == [24] and rec["used_num_frames"] == 4


def test_frames_reach_the_server_as_the_tabs_own_jpeg_bytes(ds, question):
    """Encoded once: the bytes a server receives are exactly the cloze tab's JPEG (360 px, q85)."""
    import base64

    from components.cloze.frames import clip_jpegs

    with ScriptedOpenAIServer([f'{{"answer": "{question.expected}", "reason": "r"}}']) as server:
        _solver(_backend(server)).answer(ds.instance(question.stem), question)
        body = server.requests[0]
    urls = [p["image_url"]["url"] for p in _parts(body) if p["type"] == "image_url"]
    sent = [base64.b64decode(u.split(",", 1)[1]) for u in urls]
    inst = ds.instance(question.stem)
    ours = [e.data for clip in ("before", "after", *question.options)
            for e in clip_jpegs(inst.clip_path(clip), 16)]
    assert len(sent) == 96 and sent == ours
    assert all(u.startswith("data:image/jpeg;base64,") for u in urls)


def test_a_reply_cut_at_max_tokens_is_recorded_as_truncated(ds, question):
    cut = {"content": '<think>the first clip shows the ball rolling left, then', "finish_reason": "length"}
    with ScriptedOpenAIServer([cut, '{"answer": "A", "reason": "r"}']) as server:
        rec = ModelSolver(_backend(server), max_tokens=64).answer(ds.instance(question.stem), question)
        assert len(server.requests) == 1                       # not re-asked: it would be cut again
        assert server.requests[0].get("max_tokens", server.requests[0].get("max_completion_tokens")) == 64
    assert rec["truncated"] is True and rec["answer"] is None and rec["parsed"] is False
    assert rec["error"].startswith("truncated") and "unparsed" not in rec["error"]
    assert rec["raw"] == cut["content"]                        # the raw reply is kept
    m = score_results({question.stem: {question.dim: rec}})
    assert m["invalid_kinds"]["truncated"] == 1 and m["invalid_kinds"]["unparsed"] == 0


def test_closed_reasoning_is_stripped_before_the_released_parser(ds, question):
    other = next(x for x in "ABCD" if x != question.expected)
    reply = (f'<think>maybe {{"answer": "{other}"}} fits</think>\n'
             f'{{"answer": "{question.expected}", "reason": "r"}}')
    with ScriptedOpenAIServer([reply]) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
    # the reasoning is kept in its own field, never parsed; `raw` is the answer the model gave
    assert rec["answer"] == question.expected
    assert rec["raw"] == f'{{"answer": "{question.expected}", "reason": "r"}}'
    assert rec["reasoning"] == f'maybe {{"answer": "{other}"}} fits'


def test_server_reasoning_field_and_token_counts_reach_the_record(ds, question):
    """vLLM's reasoning parser sends the thinking as `reasoning_content` and counts it in
    usage.completion_tokens_details.reasoning_tokens; both land in the record, apart."""
    other = next(x for x in "ABCD" if x != question.expected)
    reply = {"content": f'{{"answer": "{question.expected}", "reason": "r"}}',
             "reasoning_content": f'Maybe {{"answer": "{other}"}}? No.',
             "usage": {"prompt_tokens": 900, "completion_tokens": 50,
                       "completion_tokens_details": {"reasoning_tokens": 38}}}
    with ScriptedOpenAIServer([reply]) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
    assert rec["answer"] == question.expected and rec["correct"] is True
    assert rec["reasoning"] == f'Maybe {{"answer": "{other}"}}? No.'
    assert rec["usage"] == {"prompt_tokens": 900, "completion_tokens": 50, "reasoning_tokens": 38}


def test_a_record_without_reasoning_keeps_the_keys_it_had(ds, question):
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
    assert "reasoning" not in rec and "reasoning_attempts" not in rec and "usage" not in rec


def test_unclosed_reasoning_is_unparsed_not_read(ds, question):
    reply = f'<think>I think {{"answer": "{question.expected}", "reason": "r"}} but wait'
    with ScriptedOpenAIServer([reply]) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
        assert len(server.requests) == 3
    assert rec["answer"] is None and rec["error"].startswith("unparsed") and "reasoning" in rec["error"]
    assert rec["raw"] == reply


def test_open_prompt_style_sends_the_vllm_prompt_at_original_size(ds, question):
    import io

    from PIL import Image

    from components.cloze.solvers import SolverSettings

    inst = ds.instance(question.stem)
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        solver = solvers_for(_backend(server), SolverSettings(prompt_style="open")).solver
        rec = solver.answer(inst, question)
        body = server.requests[0]
    parts = _parts(body)
    assert parts[0]["text"] == eval_prompt("open")
    assert parts[0]["text"].splitlines()[-1].startswith("Output JSON only: {")
    assert eval_prompt("api").splitlines()[-1].startswith("**Output JSON only** : {")
    import base64

    first = next(p for p in parts if p["type"] == "image_url")["image_url"]["url"]
    size = Image.open(io.BytesIO(base64.b64decode(first.split(",", 1)[1]))).size
    from components.media import open_video

    src = open_video(inst.clip_path("before"))
    try:
        assert size == (src.info.width, src.info.height)      # no 360 px resize
    finally:
        src.close()
    assert rec["prompt_style"] == "open"


def test_a_record_of_a_model_that_does_not_reason_has_no_usage_key(ds, question):
    """Token counts go into a record only with reasoning (the reasoning / answer split), so the
    result files of other models keep exactly the keys they had."""
    with ScriptedOpenAIServer(['{"answer": "A", "reason": "r"}']) as server:
        rec = _solver(_backend(server)).answer(ds.instance(question.stem), question)
    assert "usage" not in rec and "reasoning" not in rec
