"""The Cloze tab draws ahead: while a visitor reads the page the default sets' first questions are
made, and Start / resume then shows one without decoding a clip."""
from __future__ import annotations

import pytest

from components.cloze import frames
from components.cloze.ui import handlers as h
from components.cloze.ui.session import ClozeSession

from components.cloze.ui.session import ClozeTab  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

TAB, RES = ClozeTab(""), Resources()


@pytest.mark.parametrize("mode,annotator", [("practice", "anon-ahead"), ("model", "")])
def test_start_shows_the_first_question_drawn_while_the_page_was_read(example_data_dir, tmp_path, monkeypatch,
                                                                      decodes, mode, annotator):
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    session = ClozeSession(data_dir=str(example_data_dir))
    h.draw_first_ahead(session, "frames").join(120)
    frames._prefetcher.submit(lambda: None).result(120)   # the drawing is done
    drawn = len(decodes)
    assert 6 <= drawn <= 12                                 # both sets' first questions (they may share clips)
    started = h.start(TAB, RES, session, mode, "cloze", "all", "S, A, P", 42, annotator, "frames")
    assert "rror" not in str(getattr(started, "feedback", ""))
    assert started.session.index == 0 and started.session.total > 0
    in_request = [path for thread, path in decodes[drawn:] if not thread.startswith("cloze-prefetch")]
    assert in_request == []                                 # shown from what was drawn ahead


def test_nothing_is_drawn_ahead_for_the_video_display(example_data_dir, decodes):
    assert h.draw_first_ahead(ClozeSession(data_dir=str(example_data_dir)), "video") is None
    frames._prefetcher.submit(lambda: None).result(120)
    assert decodes == []
