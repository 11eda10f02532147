"""The Cloze question panel sends the page only what changed: a large set's navigator lists the
questions near the one shown (any number can be typed), and a question in the display already
shown sends its media as plain values (no `visible` update per player)."""
from __future__ import annotations

import pytest
from PIL import Image

from components.cloze.ui import handlers as h
from components.cloze.ui.handlers import question
from components.cloze.ui.session import ClozeSession, ClozeTab
from components.base.errors import UserError
from components.common.sessions import Resources
from components.common.ui import UNCHANGED

TAB, RES = ClozeTab(""), Resources()


def _started(example_data_dir, tmp_path, monkeypatch, display="frames"):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    session = ClozeSession(data_dir=str(example_data_dir))
    return h.start(TAB, RES, session, "practice", "cloze", "all", "S, A, P", 42, f"anon-{tmp_path.name}", display)


def _choices(update) -> list[str]:
    return [c[0] if isinstance(c, (list, tuple)) else c for c in update["choices"]]


def test_a_large_sets_navigator_lists_the_questions_near_the_one_shown(example_data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(question, "NAVIGATOR_MARKS_MAX", 3)    # the example set counts as large
    monkeypatch.setattr(question, "NAVIGATOR_NEAR", 2)
    started = _started(example_data_dir, tmp_path, monkeypatch)
    total = started.session.total
    assert total > 7
    first = started.question.navigator
    assert _choices(first) == ["1", "2", "3", str(total)] and first["value"] == "1"
    moved = h.navigate(TAB, RES, started.session, "frames", "6")      # a number typed
    assert moved.session.index == 5
    assert _choices(moved.question.navigator) == ["1", "4", "5", "6", "7", "8", str(total)]
    again = h.navigate(TAB, RES, moved.session, "frames", "6")        # the same place: the value alone
    assert again.question.navigator == "6"


@pytest.mark.parametrize("typed", ["0", "seven", "99999"])
def test_a_number_out_of_the_set_is_said_in_one_line(example_data_dir, tmp_path, monkeypatch, typed):
    started = _started(example_data_dir, tmp_path, monkeypatch)
    with pytest.raises(UserError, match=rf"from 1 to {started.session.total}"):
        h.navigate(TAB, RES, started.session, "frames", typed)


def test_a_small_set_lists_every_question_and_marks_the_answered(example_data_dir, tmp_path, monkeypatch):
    started = _started(example_data_dir, tmp_path, monkeypatch)
    answered = h.choose(TAB, RES, started.session, "A", "frames", "immediate", False)
    marks = _choices(answered.question.navigator)
    assert len(marks) == started.session.total and marks[0] == "1 · answered"


def test_the_same_display_sends_media_only_and_a_new_display_sets_the_players(example_data_dir, tmp_path,
                                                                               monkeypatch):
    started = _started(example_data_dir, tmp_path, monkeypatch)
    clips = started.question.clips                       # the page's first question: players set
    assert all(isinstance(c, dict) and "visible" in c for c in clips)
    nxt = h.next_question(TAB, RES, started.session, "frames")
    images = [nxt.question.clips[i] for i in (0, 1, 4, 5, 6, 7)]
    videos = [nxt.question.clips[i] for i in (2, 3, 8, 9, 10, 11)]
    assert all(isinstance(c, Image.Image) for c in images), images   # the pictures, bare
    assert all(c is UNCHANGED for c in videos)   # left as they are (gr.skip() on the wire)
    video = h.redisplay(TAB, RES, nxt.session, "video")
    assert all(isinstance(c, dict) and "visible" in c for c in video.question.clips)
    assert [c["visible"] for c in video.question.clips] == [False, False, True, True] + [False] * 4 + [True] * 4


def test_a_visitors_first_question_sends_its_pictures_bare_into_the_players_the_tab_is_built_with(
        example_data_dir, tmp_path, monkeypatch):
    """The tab is built showing the pictures (the videos hidden), and its first session says so:
    the page's first question in that display is sent as plain values; a link's video display
    still sets the players."""
    import gradio as gr

    import app

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    demo = app.build_app(example_data_dir)
    blocks = list(demo.blocks.values())
    first = next(b.value for b in blocks if isinstance(b, gr.State) and isinstance(b.value, ClozeSession))
    slots = {b.elem_id: b.visible for b in blocks if b.elem_id in
             {f"cloze-{slot}-{kind}" for slot in ("beginning", "end", "cand-A", "cand-B", "cand-C", "cand-D")
              for kind in ("img", "video")}}
    assert len(slots) == 12
    assert first.players == "frames"
    assert all(shown for slot, shown in slots.items() if slot.endswith("-img"))
    assert not any(shown for slot, shown in slots.items() if slot.endswith("-video"))
    clips = h.open_page(TAB, RES, first, "frames", {}).question.clips
    assert all(isinstance(clips[i], Image.Image) for i in (0, 1, 4, 5, 6, 7)), clips
    assert all(clips[i] is UNCHANGED for i in (2, 3, 8, 9, 10, 11))
    video = h.open_page(TAB, RES, first, "video", {}).question.clips
    assert [c["visible"] for c in video] == [False, False, True, True] + [False] * 4 + [True] * 4
