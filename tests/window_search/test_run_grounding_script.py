"""`run grounding` end to end against the real scripted HTTP server (tests/helpers/openai_server):
a server that only sends garbage writes no scored prediction, and the paper's AWS script
(Decompose, Inspect with an EXPAND, a REJECT, an EMIT, localize) goes out with the budgets, the
sampling, max_tokens and the thinking switch of CoM2 Section 5."""
from __future__ import annotations

import json
import re

import pytest

from app import build_parser
from components.base.io import read_jsonl
from tests.helpers.openai_server import ScriptedOpenAIServer

OFF = {"enable_thinking": False}  # what a vLLM / SGLang server gets for thinking=False


def _run(argv) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


def _text(body: dict) -> str:
    out = []
    for m in body["messages"]:
        content = m["content"]
        out += [content] if isinstance(content, str) else \
            [p["text"] for p in content if p.get("type") == "text"]
    return "\n".join(out)


def _images(message: dict) -> int:
    content = message["content"]
    return 0 if isinstance(content, str) else sum(p.get("type") == "image_url" for p in content)


def _role(body: dict) -> str:
    first = body["messages"][0]
    system = first["content"] if first["role"] == "system" and isinstance(first["content"], str) else ""
    if system.startswith("You split a scene description"):
        return "decompose"
    if "VERIFIER" in system:
        return "inspect"
    if system.startswith("You are choosing which candidate"):
        return "select"
    return "localize"


@pytest.fixture
def env(grounding_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return grounding_examples / "annotations.json", tmp_path


def test_a_garbage_server_writes_no_scored_prediction_and_eval_reports_zero(env, capsys):
    ann, tmp = env
    out = tmp / "p.jsonl"
    with ScriptedOpenAIServer(["I'm sorry, I can't help with that."]) as server:
        assert _run(["run", "grounding", "--annotations", str(ann), "--backend", "openai:test-vlm",
                     "--base-url", server.url, "--out", str(out), "--k", "2", "--m", "1",
                     "--chunk-seconds", "60", "--limit", "2", "--no-progress"]) == 0
        roles = [_role(b) for b in server.requests]
    # every unreadable reply is asked 3 times in all (2 re-asks), then kept raw: per query one
    # Decompose, K = 2 candidates' first Inspect (unread: REJECT), one Select, one localize
    assert {r: roles.count(r) for r in set(roles)} == {"decompose": 6, "inspect": 12, "select": 6,
                                                       "localize": 6}
    records = read_jsonl(out)
    assert len(records) == 2
    for r in records:  # no interval anyone could score; the fallback is kept apart, labelled
        assert r["interval"] is None and r["source"] == "fallback:decompose-unparsed"
        assert r["fallback_interval"] == r["window"]
    err = capsys.readouterr().err
    assert "0 model answers, 2 fallbacks, 0 unparsed" in err

    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(out), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["mIoU"] == 0.0 and metrics["R@1@0.3"] == 0.0
    assert metrics["counts"]["fallback"] == 2 and metrics["counts"]["model"] == 0
    assert metrics["counts"]["missing"] == metrics["num_queries"] - 2
    assert metrics["scored_fallbacks"] is False

    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(out),
                 "--score-fallbacks"]) == 0
    table = capsys.readouterr().out
    assert "DIAGNOSTIC: fallbacks were scored" in table


class PaperScript:
    """Decompose -> 2 statements; the first candidate: EXPAND right 50 s, then (budget spent)
    REJECT; the second: EMIT; the localizer answers inside the window it is shown."""

    def __init__(self):
        self.first_chunk: str | None = None

    def __call__(self, body: dict) -> str:
        role = _role(body)
        if role == "decompose":
            return json.dumps({"statements": [{"id": "s1", "text": "Lloyd and Harry walk"},
                                              {"id": "s2", "text": "a snowy street at night"}],
                               "cast": []})
        if role == "localize":
            m = re.search(r"The window runs from ([\d.]+) seconds to ([\d.]+) seconds", _text(body))
            s = float(m.group(1))
            return f"The event happens in {s + 5:.1f} - {s + 20:.1f} seconds."
        if role == "inspect":
            chunk = re.search(r"chunk (\d+), movie time", _text(body)).group(1)
            self.first_chunk = self.first_chunk or chunk
            turns = sum(m["role"] == "assistant" for m in body["messages"])
            if chunk == self.first_chunk:
                return json.dumps({"statements": [{"id": "s1", "note": "x", "holds": "true"},
                                                  {"id": "s2", "note": "y", "holds": "cutoff"}],
                                   "cooccurrence": "late", "decision": "EXPAND" if turns == 0 else "REJECT",
                                   "confidence": 0.7, "expand_direction": "right", "expand_seconds": 50})
            return json.dumps({"statements": [{"id": "s1", "note": "x", "holds": "true"},
                                              {"id": "s2", "note": "y", "holds": "true"}],
                               "cooccurrence": "all", "decision": "EMIT", "confidence": 0.9})
        raise AssertionError("Select must not be called: a candidate was accepted")


def test_the_paper_script_goes_out_exactly_as_specified(env):
    ann, tmp = env
    out, traces = tmp / "p.jsonl", tmp / "t.jsonl"
    with ScriptedOpenAIServer(PaperScript()) as server:
        assert _run(["run", "grounding", "--annotations", str(ann), "--backend", "openai:test-vlm",
                     "--localizer", "openai:loc-model", "--base-url", server.url, "--out", str(out),
                     "--traces", str(traces), "--k", "2", "--m", "1", "--delta-max", "40",
                     "--chunk-seconds", "60", "--limit", "1", "--no-progress"]) == 0
        bodies = list(server.requests)
    assert [_role(b) for b in bodies] == ["decompose", "inspect", "inspect", "inspect", "localize"]
    # models: the verifier, and the localizer as its own model
    assert [b["model"] for b in bodies] == ["test-vlm"] * 4 + ["loc-model"]
    # Section 5 sampling, our max_tokens, and thinking off in every request body
    expected = {"decompose": (0.2, 1.0, 1024), "inspect": (0.4, 0.9, 1024), "localize": (0.0, 1.0, 128)}
    for b in bodies:
        assert (b["temperature"], b["top_p"], b["max_tokens"]) == expected[_role(b)]
        assert b["chat_template_kwargs"] == OFF, b.get("chat_template_kwargs")
    first, second, third, loc = bodies[1:]
    # K = 2 (two candidates inspected), M = 1: the second call of the first candidate has the
    # budget exhausted and expansion masked
    assert "Expansion 1 of 1 available (0 used, 1 remaining)" in _text(first)
    assert "Expansion budget exhausted (1 of 1 used, 0 remaining)" in _text(second)
    assert "Expansion budget exhausted" not in _text(third)
    # Δmax = 40: the 50 s request is truncated; the new band has at most 32 frames at 1 fps
    assert "The request of 50 s was truncated to 40 s." in _text(second)
    initial = _images(first["messages"][1])
    assert initial == 60  # a 60 s chunk at 1 fps
    assert _images(second["messages"][-1]) == 32 and _images(second["messages"][1]) == initial
    assert len(second["messages"]) == 4  # system, user, the EXPAND reply, the expansion turn
    # the localizer prompt states the sampling it really uses, each frame has its real time
    loc_text = _text(loc)
    n = _images(loc["messages"][0])
    assert n == 32 and f"You are given {n} frames" in loc_text and "sampled at 1 fps" not in loc_text
    times = [float(t) for t in re.findall(r"<([\d.]+) seconds>", loc_text)]
    assert len(times) == n and times == sorted(times)
    spacing = (times[-1] - times[0]) / (n - 1)
    assert f"one frame every {spacing:.1f} seconds" in loc_text
    (trace,) = read_jsonl(traces)
    assert trace["calls"] == {"decompose": 1, "inspect": 3, "select": 0, "localize": 1, "retries": 0}
    assert trace["accepted_rank"] == 2 and trace["source"] == "emitted" and trace["thinking"] is False
    assert trace["localizer_backend"] == "openai:loc-model"
    (rec,) = read_jsonl(out)
    assert rec["source"] == "emitted" and rec["interval"] == [rec["window"][0] + 5, rec["window"][0] + 20]


def test_thinking_default_sends_no_switch(env):
    ann, tmp = env
    with ScriptedOpenAIServer(['{"start": 10, "end": 40}']) as server:
        assert _run(["run", "grounding", "--annotations", str(ann), "--backend", "openai:test-vlm",
                     "--base-url", server.url, "--method", "rag", "--out", str(tmp / "p.jsonl"),
                     "--limit", "1", "--thinking", "default", "--no-progress"]) == 0
        (body,) = server.requests
    assert "chat_template_kwargs" not in body and "reasoning_effort" not in body
    (rec,) = read_jsonl(tmp / "p.jsonl")
    assert rec["source"] == "rag" and rec["interval"] is not None
