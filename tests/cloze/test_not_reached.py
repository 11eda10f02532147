"""Run this question / Run the set when no reply comes back: a transport failure (an `openai:`
backend pointed at a port with no server; a server answering HTTP 404) reads "not reached:
<reason>" once, never "unparsed"; the set summary counts the questions not reached apart from the
unparsed replies; the summary line names the paper's dimension, the expected and the picked letter.
Real parts: a closed port on 127.0.0.1 and a real HTTP server (tests/helpers/openai_server.py)."""
from __future__ import annotations

import re

import pytest

gr = pytest.importorskip("gradio")

import backends.openai_api as openai_api  # noqa: E402 - after the gradio skip
from components.cloze.ui import handlers  # noqa: E402
from components.cloze.ui.handlers.model_panel import _run_summary  # noqa: E402
from components.cloze.ui.session import ClozeSession, ClozeTab  # noqa: E402
from components.common import outcome  # noqa: E402
from components.common.sessions import Resources  # noqa: E402
from tests.helpers.live_app import free_port  # noqa: E402
from tests.helpers.openai_server import ScriptedOpenAIServer  # noqa: E402

TAB = ClozeTab("")
LINK = {"tab": "cloze", "stem": "bar_fill", "q": "P", "mode": "model"}


@pytest.fixture
def linked(cloze_examples, tmp_path, monkeypatch) -> ClozeSession:
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    # the transport's own back-off between its retries (1 s, 2 s) is not what is tested here
    monkeypatch.setattr(openai_api, "_sleep", lambda seconds, cancel: None)
    return handlers.open_link(ClozeSession(data_dir=str(cloze_examples.parent)), LINK, "frames").session


def _run_one(session: ClozeSession, settings: dict):
    return handlers.run_one(TAB, Resources(), session, settings, "cloze", "all", "S, A, P", 42, "edge1", False,
                            "api", "frames")


def _shown_text(ran) -> str:
    """Everything Run this question puts on the page, as text."""
    boxes = ran.question.answer
    html_text = re.sub(r"<[^>]+>", " ", f"{boxes.headline} {boxes.beside}")
    return " ".join(str(x) for x in (ran.summary, boxes.raw, boxes.parsed, boxes.reason, html_text))


def test_a_closed_port_reads_not_reached_once_and_never_unparsed(linked):
    port = free_port()   # nothing listens there
    ran = _run_one(linked, {"backend": "openai:m", "base_url": f"http://127.0.0.1:{port}/v1", "api_key": "sk-x"})
    text = _shown_text(ran)
    assert "unparsed" not in text.lower(), text
    assert text.count("not reached:") == 1, text
    assert re.search(r"not reached: .*connection failed", ran.question.answer.headline), ran.question.answer.headline
    assert "data-state='not-reached'" in ran.question.answer.headline
    assert ran.question.answer.parsed == "" and ran.question.answer.reason == ""
    assert " · not reached · " in ran.summary and "picked —" in ran.summary


def test_the_summary_names_the_dimension_the_expected_and_the_picked_letter(linked):
    ran = _run_one(linked, {"backend": "baseline"})
    _, qs = handlers.questions_for(ran.session)
    q = qs.questions[ran.session.index]
    assert (q.stem, q.dim) == ("bar_fill", "C")            # folder C is the paper's P
    letter = ran.question.answer.parsed
    assert letter in "ABCD" and letter
    verdict = "correct" if letter == q.expected else "wrong"
    assert ran.summary.startswith(f"bar_fill · dimension P · expected {q.expected} · picked {letter} · {verdict} · "), \
        ran.summary
    head = ran.question.answer.headline
    assert f"data-letter='{letter}'" in head and ("✓" if verdict == "correct" else "✗") in head
    assert f"(expected {q.expected})" in head


def test_the_set_summary_counts_not_reached_apart_from_unparsed(linked):
    _, qs = handlers.questions_for(linked)
    n = len(qs.questions)

    def script(body: dict):   # 3 attempts a question, asked one after another
        question = (script.calls // 3)
        script.calls += 1
        return "I cannot tell." if question % 2 == 0 else {"status": 404, "body": {"error": {
            "message": "The model `m` does not exist."}}}
    script.calls = 0
    with ScriptedOpenAIServer(script) as server:
        ran = handlers.run_whole_set(TAB, Resources(), linked, {"backend": "openai:m", "base_url": server.url,
                                                                "api_key": "sk-x"},
                                     "cloze", "all", "S, A, P", 42, "edge1", False, "api")
    unparsed, missed = (n + 1) // 2, n // 2
    assert f"invalid {unparsed} (unparsed {unparsed}" in ran.summary, ran.summary
    assert re.search(rf"not reached {missed}: .*HTTP 404.*does not exist", ran.summary), ran.summary


def test_outcome_words():
    failed = "openai:m failed: openai:m failed after 3 attempt(s): connection failed (Connection refused)."
    assert outcome.is_not_reached(failed)
    assert outcome.not_reached(failed) == "not reached: openai:m failed after 3 attempt(s): connection failed " \
                                          "(Connection refused)"
    for replied in ("unparsed: no letter", "truncated: cut", "media: broken clip"):
        assert not outcome.is_not_reached(replied)
    assert not outcome.is_not_reached(failed, answered=True) and not outcome.is_not_reached(None)
    # a summary of a run whose every question was answered says nothing of it
    entry = {"option_map": {"A": "GT", "B": "d1", "C": "d2", "D": "d3"}, "expected": "A"}
    line = _run_summary("m", "set", {"results": {"s": {"S": {**entry, "answer": "A", "correct": True}}},
                                     "counts": {"done": 1, "skipped": 0, "failed": 0}})
    assert "not reached" not in line
