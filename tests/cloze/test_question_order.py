"""The Cloze tab's question order from the runs (issue 29): in Model mode the navigator, ◀ ▶ and the
deep link step through the set hardest first, by disagreement, or people right and every model
wrong; a practice playthrough keeps its own order, blind or not; and the progress line is not
shown in Compare mode."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

gr = pytest.importorskip("gradio")

from components.cloze import links  # noqa: E402 - after the gradio skip
from components.cloze.metrics import PAPER_KEYS  # noqa: E402
from components.cloze.ui import handlers  # noqa: E402
from components.cloze.ui.handlers import runs_panel  # noqa: E402
from components.cloze.ui.session import ClozeSession, ClozeTab  # noqa: E402
from components.base.errors import UserError  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

RES = Resources()


@pytest.fixture
def loaded(cloze_examples, tmp_path, monkeypatch):
    """The example set loaded in Model mode, the example runs read."""
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "practice"))
    runs_panel.forget_loaders()
    tab = ClozeTab(str(cloze_examples.parent))
    fresh = ClozeSession(data_dir=str(cloze_examples.parent))
    session = handlers.start(tab, RES, fresh, "model", "cloze", "all", "S, A, P", 42, "", "frames").session
    table = runs_panel.loader_for(session.data_dir, ()).wait(120).table
    yield tab, session, table
    runs_panel.forget_loaders()


def _keys(session: ClozeSession) -> list[tuple[str, str]]:
    return [(q.stem, q.dim) for q in handlers.questions_for(session)[1].questions]


def _share_right(table, key: tuple[str, str]) -> float:
    """The share of runs right on a question, counted here from each run's answer."""
    answers = [a for a in table.question(key[0], PAPER_KEYS.get(key[1], key[1])).answers if a.correct is not None]
    return sum(a.correct for a in answers) / len(answers) if answers else 2.0   # unanswered: last


def test_hardest_first_is_the_navigators_own_order_and_keeps_the_question_on_screen(loaded):
    tab, session, table = loaded
    plain = _keys(session)
    on_screen = handlers.next_question(tab, RES, session, "frames").session   # the set's 2nd question
    shown = plain[1]
    view = handlers.order_questions(tab, RES, on_screen, "frames", "hardest")
    ordered = _keys(view.session)
    assert sorted(ordered) == sorted(plain) and ordered != plain                 # the same set, reordered
    shares = [_share_right(table, k) for k in ordered]
    assert shares == sorted(shares) and shares[0] < shares[-1]                    # fewest runs right first
    assert ordered[view.session.index] == shown                                   # the question stays
    assert "hardest first" in view.question.progress and f"of {len(plain)}" in view.question.progress
    # ▶ and the navigator step through the runs' order
    after = handlers.next_question(tab, RES, view.session, "frames").session
    assert ordered[after.index] == ordered[view.session.index + 1]
    first = handlers.navigate(tab, RES, after, "frames", "1").session
    assert _keys(first)[first.index] == ordered[0]


def test_disagreement_order_and_an_empty_filter_says_so(loaded):
    tab, session, table = loaded
    view = handlers.order_questions(tab, RES, session, "frames", "disagree")
    spread = [table.question(s, PAPER_KEYS.get(d, d)) for s, d in _keys(view.session)]

    def disagreement(qr) -> float:
        picks = [a.pick for a in qr.answers if a.correct is not None]
        return 1 - max(picks.count(p) for p in set(picks)) / len(picks) if picks else -1.0
    values = [disagreement(q) for q in spread]
    assert values == sorted(values, reverse=True) and values[0] > 0
    # the example data has no study answers: no question where people were right and every model wrong
    with pytest.raises(UserError, match="people were right and every model wrong"):
        handlers.order_questions(tab, RES, view.session, "frames", "people")
    back = handlers.order_questions(tab, RES, view.session, "frames", "")
    assert back.session.order == "" and "hardest" not in back.question.progress
    assert _keys(back.session) == _keys(session)


def test_the_order_is_in_the_deep_link_and_a_link_opens_it(loaded):
    tab, session, _table = loaded
    view = handlers.order_questions(tab, RES, session, "frames", "hardest")
    address = dict(parse_qsl(handlers.view_address(tab, view.session)))
    assert address["sort"] == "hardest" and address["mode"] == "model"
    assert dict(parse_qsl(handlers.copy_link(tab, RES, view.session).link["value"]))["sort"] == "hardest"
    fresh = ClozeSession(data_dir=session.data_dir)
    opened = handlers.open_link(fresh, {"tab": "cloze", "mode": "model", "sort": "hardest", "q": "1"}, "frames")
    assert opened.session.order == "hardest" and opened.order == "hardest" and opened.message == ""
    # a link with a sort and no mode is Model mode's view (the list of hardest questions links so)
    assert links.read_link({"tab": "cloze", "sort": "disagree"}).mode == "model"
    assert _keys(opened.session)[opened.session.index] == _keys(view.session)[0]   # question 1 of that order


def test_a_practice_playthrough_keeps_its_own_order_blind_or_not(loaded):
    tab, session, _table = loaded
    practice = handlers.start(tab, RES, ClozeSession(data_dir=session.data_dir), "practice", "cloze", "all",
                              "S, A, P", 42, "order-anon", "frames").session
    with pytest.raises(UserError, match="practice playthrough keeps its own order"):
        handlers.order_questions(tab, RES, practice, "frames", "hardest")
    # an order chosen in Model mode is not applied when the visitor turns to the playthrough
    ordered = handlers.order_questions(tab, RES, session, "frames", "hardest").session
    back = handlers.pick_mode(tab, RES, ordered, "practice", [], "").session
    assert back.human and _keys(back) == _keys(practice)
    assert "sort" not in dict(parse_qsl(handlers.view_address(tab, back)))
    assert "hardest" not in handlers.next_question(tab, RES, back, "frames").question.progress
    # a practice link with a sort: the order is refused with one line, the playthrough's kept
    req = links.read_link({"tab": "cloze", "mode": "practice", "sort": "hardest", "stem": "ball_roll"})
    assert req.sort == "" and req.problems == ["A practice playthrough keeps its own order; the link's sort "
                                               "is for Model mode."]
    opened = handlers.open_link(ClozeSession(data_dir=session.data_dir),
                                {"tab": "cloze", "mode": "human", "sort": "hardest"}, "frames")
    assert opened.session.human and opened.session.order == "" and _keys(opened.session) == _keys(practice)
    assert "keeps its own order" in opened.message


def test_compare_mode_hides_the_question_progress_line(loaded):
    tab, session, _table = loaded
    assert handlers.mode_view("compare").progress_box["visible"] is False
    assert handlers.mode_view("model").progress_box["visible"] is True
    assert handlers.mode_view("practice").progress_box["visible"] is True
