"""A question opened from a link is answered with a letter, no Start / resume first: presentation
mode hides that button (a presenter plays the linked question in front of a room)."""
from __future__ import annotations

import pytest

gr = pytest.importorskip("gradio")

from components.cloze.ui import handlers  # noqa: E402 - after the gradio skip
from components.cloze.ui.session import ClozeSession, ClozeTab  # noqa: E402
from components.base.errors import UserError  # noqa: E402
from components.base.io import read_jsonl  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

TAB, RES = ClozeTab(""), Resources()


@pytest.fixture
def fresh(cloze_examples, tmp_path, monkeypatch) -> ClozeSession:
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    return ClozeSession(data_dir=str(cloze_examples.parent))


def test_a_letter_answers_the_linked_question_under_a_made_up_id(fresh):
    opened = handlers.open_link(fresh, {"tab": "cloze", "stem": "bar_fill", "q": "P"}, "frames")
    assert opened.session.file == "" and opened.session.human and opened.session.loaded
    linked = opened.session.index
    answered = handlers.choose(TAB, RES, opened.session, "B", "frames", "immediate", False)
    session = answered.session
    assert session.annotator.startswith("anon-") and session.file
    records = read_jsonl(session.file)
    assert [(r["task_index"], r["stem"], r["answer"]) for r in records] == [(linked, "bar_fill", "B")]
    assert "answered 1/" in answered.question.progress
    # the next answer goes to the same playthrough
    again = handlers.choose(TAB, RES, session, "C", "frames", "immediate", False)
    assert again.session.file == session.file and len(read_jsonl(session.file)) == 2


def test_a_page_that_opened_no_question_still_asks_for_start(fresh):
    with pytest.raises(UserError, match="Start / resume"):
        handlers.choose(TAB, RES, fresh, "B", "frames", "immediate", False)
