"""Every action of the Cloze tab acts on the question on screen: Start / resume on a linked (or
navigated-to) question plays it, Run this question answers it whichever order showed it, a mode
switch keeps it and drops the last verdict; the page's address names it (issue 27)."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

gr = pytest.importorskip("gradio")

from components.cloze.ui import handlers  # noqa: E402 - after the gradio skip
from components.cloze.ui.handlers.model_panel import _run_summary  # noqa: E402
from components.cloze.ui.session import ClozeSession, ClozeTab  # noqa: E402
from components.base.io import read_jsonl  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

TAB, RES = ClozeTab(""), Resources()
LINK = {"tab": "cloze", "stem": "bar_fill", "q": "P"}
SETTINGS = {"backend": "baseline"}


@pytest.fixture
def fresh(cloze_examples, tmp_path, monkeypatch) -> ClozeSession:
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "practice"))
    return ClozeSession(data_dir=str(cloze_examples.parent))


def _shown(session: ClozeSession) -> tuple[str, str]:
    _, qs = handlers.questions_for(session)
    q = qs.questions[session.index]
    return q.stem, q.dim


def _first_unanswered_is_elsewhere(fresh: ClozeSession) -> None:
    opened = handlers.open_link(fresh, LINK, "frames")
    assert _shown(opened.session) == ("bar_fill", "C") and opened.session.index != 0   # the test means something


def test_start_on_a_linked_question_plays_that_question_and_records_it(fresh):
    _first_unanswered_is_elsewhere(fresh)
    opened = handlers.open_link(fresh, LINK, "frames")
    started = handlers.start(TAB, RES, opened.session, "practice", "cloze", "all", "S, A, P", 42, "linked", "frames")
    assert _shown(started.session) == ("bar_fill", "C")
    assert f"Question {opened.session.index + 1} of " in started.question.progress
    answered = handlers.choose(TAB, RES, started.session, "A", "frames", "immediate", False)
    records = read_jsonl(answered.session.file)
    assert [(r["stem"], r["dim"]) for r in records] == [("bar_fill", "C")]


def test_start_without_a_chosen_question_resumes_at_the_first_unanswered(fresh):
    first = handlers.start(TAB, RES, fresh, "practice", "cloze", "all", "S, A, P", 42, "resumer", "frames")
    assert first.session.index == 0
    handlers.choose(TAB, RES, first.session, "B", "frames", "immediate", False)
    page = handlers.open_page(TAB, RES, fresh, "frames", {})       # a page naming no question
    assert page.session.loaded and not page.session.pinned and page.session.index == 0
    again = handlers.start(TAB, RES, page.session, "practice", "cloze", "all", "S, A, P", 42, "resumer", "frames")
    assert again.session.index == 1 and "Resumed" in again.feedback


def test_a_question_reached_with_the_arrows_is_the_one_start_plays(fresh):
    page = handlers.open_page(TAB, RES, fresh, "frames", {})
    moved = handlers.next_question(TAB, RES, handlers.next_question(TAB, RES, page.session, "frames").session, "frames")
    started = handlers.start(TAB, RES, moved.session, "practice", "cloze", "all", "S, A, P", 42, "arrows", "frames")
    assert started.session.index == 2 and _shown(started.session) == _shown(moved.session)


def test_the_page_opens_on_the_first_questions_clips(fresh):
    page = handlers.open_page(TAB, RES, fresh, "frames", {})
    images = [page.question.clips[i] for i in (0, 1, 4, 5, 6, 7)]   # BEGINNING, END, A-D images
    assert all(img["visible"] and img["value"].size[0] > 100 for img in images), images
    assert "Question 1 of " in page.question.progress


def test_run_this_question_after_a_mode_switch_answers_the_linked_question(fresh):
    opened = handlers.open_link(fresh, LINK, "frames")
    picked = handlers.pick_mode(TAB, RES, opened.session, "model", [], "", "frames")
    assert picked.feedback == "" and _shown(picked.session) == ("bar_fill", "C") and not picked.session.human
    ran = handlers.run_one(TAB, RES, picked.session, SETTINGS, "cloze", "all", "S, A, P", 42, "edge1", False, "api",
                           "frames")
    assert ran.summary.startswith("bar_fill · dimension P · expected ")
    assert f"Question {ran.session.index + 1} of " in ran.question.progress
    # straight from the practice order (no mode switch, e.g. the API): the same question
    direct = handlers.run_one(TAB, RES, opened.session, SETTINGS, "cloze", "all", "S, A, P", 42, "edge1", False,
                              "api", "frames")
    assert direct.summary.startswith("bar_fill · dimension P · expected ")


def test_a_mode_switch_and_back_keeps_the_question_and_clears_the_verdict(fresh):
    started = handlers.start(TAB, RES, handlers.open_link(fresh, LINK, "frames").session, "practice", "cloze", "all",
                             "S, A, P", 42, "switcher", "frames")
    answered = handlers.choose(TAB, RES, started.session, "A", "frames", "immediate", False)
    assert answered.feedback
    to_model = handlers.pick_mode(TAB, RES, answered.session, "model", [], "", "frames")
    back = handlers.pick_mode(TAB, RES, to_model.session, "practice", [], "", "frames")
    assert to_model.feedback == "" and back.feedback == ""
    assert _shown(back.session) == _shown(answered.session) and back.session.index == answered.session.index
    assert back.session.file == answered.session.file                # the playthrough goes on


def test_the_address_names_the_question_once_it_was_asked_for(fresh):
    page = handlers.open_page(TAB, RES, fresh, "frames", {})
    assert handlers.view_address(TAB, page.session) == "tab=cloze"   # a reload opens the same first question
    opened = handlers.open_link(fresh, {**LINK, "seed": "7"}, "frames")
    assert dict(parse_qsl(handlers.view_address(TAB, opened.session))) == {**LINK, "seed": "7"}
    model = handlers.pick_mode(TAB, RES, opened.session, "model", [], "", "frames").session
    assert dict(parse_qsl(handlers.view_address(TAB, model))) == {**LINK, "seed": "7", "mode": "model"}
    assert handlers.view_address(TAB, fresh) == "tab=cloze"


def test_a_set_summary_says_nothing_of_invalid_answers_when_there_are_none_and_names_them_else():
    entry = {"option_map": {"A": "middle", "B": "d1", "C": "d2", "D": "d3"}, "expected": "A"}
    valid = {"s1": {"S": {**entry, "answer": "A", "correct": True}}}
    line = _run_summary("m", "set", {"results": valid, "counts": {"done": 1, "skipped": 0}})
    assert "invalid" not in line and "()" not in line
    broken = {"s1": {"S": {**entry, "answer": None, "correct": False, "truncated": True}}}
    line = _run_summary("m", "set", {"results": broken, "counts": {"done": 1, "skipped": 0}})
    assert "invalid 1 (truncated 1)" in line, line
