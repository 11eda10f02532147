"""Two backends on the same Cloze question ("compare with"): two real servers that answer
differently get the same 96-frame request, built once; both records and the disagreement come
back; the partner's unreadable first reply is re-asked on its own; a recorded pair replays."""
from __future__ import annotations

import json

import pytest

from backends.config import ApiSettings
from backends.pair import PairedBackend
from backends.registry import resolve
from components.cloze.data import load_dataset
from components.cloze.pairs import answer_pair
from components.cloze.questions import build_set
from components.cloze.solvers import solvers_for
from components.base.errors import UserError
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.fixture(scope="module")
def ds(cloze_examples):
    return load_dataset(cloze_examples)


@pytest.fixture(scope="module")
def question(ds):
    return build_set(ds, "all", ["A"]).questions[0]


def _backend(server, model, record_to=None):
    return resolve(f"openai:{model}", api=ApiSettings(base_url=server.url, api_key="sk-cloze-pair",
                                                      max_retries=0), record_to=record_to)


def _reply(letter):
    return json.dumps({"answer": letter, "reason": "r"})


def test_both_models_answer_the_same_request_and_the_disagreement_is_named(ds, question, tmp_path):
    wrong = next(x for x in "ABCD" if x != question.expected)
    trace = tmp_path / "pair.jsonl"
    with ScriptedOpenAIServer([_reply(question.expected)]) as a, \
            ScriptedOpenAIServer(["not json", {"content": _reply(wrong),
                                               "reasoning_content": "the ending flows"}]) as b:
        paired = PairedBackend(_backend(a, "model-a", trace), _backend(b, "model-b", trace))
        pair = answer_pair(solvers_for(paired), ds.instance(question.stem), question)
        body_a, bodies_b = a.requests[0], list(b.requests)
    first, second = pair.first, pair.second
    assert first["backend"] == "openai:model-a" and second["backend"] == "openai:model-b"
    assert first["answer"] == question.expected and first["correct"] is True
    assert second["answer"] == wrong and second["correct"] is False and second["attempts"] == 2
    assert second["reasoning"] == "the ending flows" and "reasoning" not in first
    assert not pair.agree and pair.same_request
    assert pair.disagreement == (f"openai:model-a: {question.expected} (GT) vs openai:model-b: "
                                 f"{wrong} ({question.option_map[wrong]})")
    # the same 96 images and prompt to both; as released: no top_p
    assert body_a["messages"] == bodies_b[0]["messages"] == bodies_b[1]["messages"]
    assert sum(p["type"] == "image_url" for p in body_a["messages"][0]["content"]) == 96
    assert "top_p" not in body_a and "top_p" not in bodies_b[0]
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len({line["pair"] for line in lines}) == 1 and len(lines) == 3

    # offline: the recorded pair answers again, each side from its own calls
    replayed = answer_pair(solvers_for(PairedBackend(resolve(f"replay:{trace}#openai:model-a"),
                                                     resolve(f"replay:{trace}#openai:model-b"))),
                           ds.instance(question.stem), question)
    assert (replayed.first["answer"], replayed.second["answer"]) == (question.expected, wrong)


def test_the_edge_baseline_cannot_be_compared(ds, question):
    with pytest.raises(UserError, match="edge baseline asks no model"):
        answer_pair(solvers_for(resolve("baseline")), ds.instance(question.stem), question)
