"""Two backends on the same search ("compare with"): the session model's Algorithm 1 runs on the
example movie against one real server, and a second real server that answers differently is sent
exactly the same Decompose, Inspect and localize requests (built once, sent twice); both
checklists of each window, both accepted windows and both intervals come back, with where they
disagree; a recorded pair replays offline."""
from __future__ import annotations

import json

import pytest

from backends.config import ApiSettings
from backends.pair import PairedBackend
from backends.registry import resolve
from components.media import DiskCache
from components.window_search.data import load_annotations
from components.window_search.pairs import search_pair
from components.window_search.pipeline import MovieLibrary, SearchSettings, ground_query
from components.window_search.types import SearchTrace
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.fixture(scope="module")
def example(grounding_examples, tmp_path_factory):
    ann = load_annotations(grounding_examples / "annotations.json")
    lib = MovieLibrary(memory_dir=grounding_examples / "memory")
    movie = lib.movie(ann.movie("m01"))
    movie.cache = DiskCache(tmp_path_factory.mktemp("ws-pair-cache"))
    return ann, lib, movie


def _role(body: dict) -> str:
    """Which call a request is, by its Section 5 sampling (and ours for the localizer)."""
    return {(0.2, 1024): "decompose", (0.4, 1024): "inspect", (0.2, 512): "select",
            (0.0, 128): "localize"}[(body["temperature"], body["max_tokens"])]


def _inspect(decision: str, s2: str) -> str:
    return json.dumps({"statements": [{"id": "s1", "note": "Harry walks", "holds": "true"},
                                      {"id": "s2", "note": "the office", "holds": s2}],
                       "cooccurrence": "-", "decision": decision, "confidence": 0.8,
                       "expand_direction": None, "expand_seconds": None})


class Model:
    """A scripted model: its answers per role; Inspect answers in call order."""

    def __init__(self, statements, inspects, localize, reasoning=""):
        self.statements, self.inspects, self.localize = statements, list(inspects), localize
        self.reasoning = reasoning

    def __call__(self, body: dict):
        role = _role(body)
        if role == "decompose":
            content = json.dumps({"statements": [{"id": f"s{i}", "text": t}
                                                 for i, t in enumerate(self.statements, 1)],
                                  "cast": []})
        elif role == "inspect":
            content = self.inspects.pop(0) if len(self.inspects) > 1 else self.inspects[0]
        else:
            content = self.localize
        return {"content": content, "reasoning_content": self.reasoning} if self.reasoning \
            else content


def _backend(server, model, record_to=None):
    return resolve(f"openai:{model}", api=ApiSettings(base_url=server.url, api_key="sk-ws-pair",
                                                      max_retries=0), record_to=record_to)


def test_both_models_judge_the_same_windows_and_the_disagreement_is_marked(example, tmp_path):
    ann, lib, movie = example
    q = ann.query("p0006_t")
    settings = SearchSettings(k=3, m=0, frame_cap=4, localize_cap=4)
    first = Model(["Harry walks", "in an office"],
                  [_inspect("REJECT", "false"), _inspect("EMIT", "true")], "0 - 10")
    second = Model(["Harry crosses a room", "it is daytime"],
                   [_inspect("EMIT", "true"), _inspect("REJECT", "false")], "5 - 20",
                   reasoning="the second window looks better")
    trace_file = tmp_path / "ws-pair.jsonl"
    with ScriptedOpenAIServer(first) as a, ScriptedOpenAIServer(second) as b:
        paired = PairedBackend(_backend(a, "model-a", trace_file), _backend(b, "model-b", trace_file))
        trace = ground_query(q.query, movie, paired, embedder=lib.embedder(),
                             memory=lib.memory("m01"), method="aws", settings=settings, qid=q.qid)
        bodies_a, bodies_b = list(a.requests), list(b.requests)
    # the same requests, in the same order, to both servers
    assert [_role(x) for x in bodies_a] == ["decompose", "inspect", "inspect", "localize"]
    assert [x["messages"] for x in bodies_a] == [x["messages"] for x in bodies_b]
    # the session model steered: candidate 1 rejected, candidate 2 accepted
    assert [c.outcome for c in trace.candidates] == ["rejected", "accepted"]
    assert trace.partner_backend == "openai:model-b"
    view = search_pair(trace)
    assert [(s.rank, s.first.decision, s.second.decision) for s in view.steps] == [
        (1, "REJECT", "EMIT"), (2, "EMIT", "REJECT")]
    assert view.steps[0].differing_statements == ["s2"] and not view.steps[0].agree
    assert view.first_window == trace.candidates[1].span
    assert view.second_window == trace.candidates[0].span and view.second_window_how == "emitted"
    assert view.second_statements == ["Harry crosses a room", "it is daytime"]
    assert view.first_prediction == trace.prediction and view.second_prediction is not None
    w0, w1 = trace.window
    assert w0 <= view.second_prediction[0] < view.second_prediction[1] <= w1
    assert view.first_prediction != view.second_prediction
    assert view.reasonings["decompose"] == ("", "the second window looks better")
    assert len(view.disagreements) == 5  # statements, two checklists, window, prediction
    # the trace round-trips with the partner's answers (exports carry them)
    again = search_pair(SearchTrace.from_dict(json.loads(json.dumps(trace.to_dict()))))
    assert again.second_window == view.second_window and again.steps == view.steps
    lines = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert len(lines) == 8 and len({line["pair"] for line in lines}) == 4

    # offline: both sides replay from the recorded pair
    replay = PairedBackend(resolve(f"replay:{trace_file}#openai:model-a"),
                           resolve(f"replay:{trace_file}#openai:model-b"))
    replayed = ground_query(q.query, movie, replay, embedder=lib.embedder(),
                            memory=lib.memory("m01"), method="aws", settings=settings, qid=q.qid)
    again = search_pair(replayed)
    assert again.second_window == view.second_window
    assert again.second_prediction == view.second_prediction
    assert replayed.prediction == trace.prediction
