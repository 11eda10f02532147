"""Bad input gets one readable line that names the field (never gradio's red badge, a temp path or
an errno), and a visitor's memory edits stay in their own session unless APP_ADMIN=1."""
from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from components.base.errors import UserError
from components.window_search.data import load_annotations
from components.window_search.memory import CharacterMemory
from components.window_search.ui import handlers
from components.window_search.ui.handlers import memory as memory_handlers
from components.window_search.ui.session import WindowSearchTab
from components.common.ui import TabEvents
from components.window_search.ui.views import LinkView, PlayheadView, QueryView
from components.window_search.ui.session import RESOURCES, WindowSearchResources, WindowSearchSession


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


@pytest.mark.parametrize("k, m, delta, says", [
    (0, 3, 30, "K candidates must be at least 1 (got 0)."),
    (2.5, 3, 30, "K candidates must be a whole number (got 2.5)."),
    (5, -1, 30, "M expansions must be at least 0 (got -1)."),
    (5, 3, 0, "Δmax seconds must be more than 0"),
    (5, float("nan"), 30, "M expansions must be a finite number"),
])
def test_absurd_budgets_are_refused_naming_the_field(k, m, delta, says):
    with pytest.raises(UserError) as err:
        handlers.search.search_settings(None, k, m, delta)
    assert says in str(err.value)
    assert handlers.search.search_settings(None, 5, 0, 30).k == 5


def test_a_chunk_length_below_ten_seconds_is_refused():
    with pytest.raises(UserError, match="chunk seconds must be at least 10"):
        handlers.search.read_chunk(0)


def _request(key: str) -> SimpleNamespace:
    return SimpleNamespace(session_hash=key)


def test_errors_go_to_the_message_line_and_leave_the_other_outputs_alone(tab):
    events = TabEvents(tab, RESOURCES, message=None)
    fn = events.fn(handlers.select_window, PlayheadView)
    out = fn(_request("ev"), WindowSearchSession(), "#1")
    assert len(out) == 8 and out[-1] == "⚠ Window: run a query (or load a trace) first."
    assert all(isinstance(o, dict) and o.get("__type__") == "update" and len(o) == 1 for o in out[:-1])

    def broken(tab, res, x):
        raise OSError(2, "No such file or directory", "/tmp/gradio/abc/secret.mp4")

    msg = events.fn(broken, LinkView)(_request("ev"), 1)[-1]
    assert msg.startswith("⚠ Something went wrong") and "/tmp" not in msg and "Errno" not in msg
    ok = events.fn(handlers.pick_query, QueryView)(_request("ev"), WindowSearchSession(), "p0002_t")
    assert ok[-1] == "" and ok[1] == "Mary waves in the kitchen."   # the next action clears the line
    RESOURCES.release("ev")


def test_a_file_that_is_not_a_trace_is_refused(tab, tmp_path):
    res, session = WindowSearchResources(), WindowSearchSession()
    for name, text, why in [("hello.json", '{"hello": 1}', "it has no 'query' and 'candidates'"),
                            ("list.json", "[1, 2]", "it has no 'query'"),
                            ("bad.json", "{not json", "not JSON: line 1"),
                            ("lines.jsonl", '{"qid": "x"}\n', "it has no 'query'")]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(UserError) as err:
            handlers.load(tab, res, session, str(path))
        assert f"Load trace: {name} is not a saved window-search trace ({why}" in str(err.value)
        assert str(tmp_path) not in str(err.value)


def test_an_upload_that_is_not_a_video_says_so_without_server_paths(tab, tmp_path):
    fake = tmp_path / "upload-dir" / "holiday.mp4"
    fake.parent.mkdir()
    fake.write_bytes(b"this is not a video at all" * 100)
    with pytest.raises(UserError) as err:
        handlers.upload_movie(tab, WindowSearchResources(), WindowSearchSession(), [str(fake)], 180)
    text = str(err.value)
    assert text.startswith("Upload: holiday.mp4 could not be read as a video.")
    assert str(tmp_path) not in text and "Errno" not in text


@pytest.fixture
def shared_memory(grounding_examples, tmp_path):
    """A private copy of the example data (the shared memory file must stay as it is elsewhere)."""
    data = tmp_path / "grounding"
    shutil.copytree(grounding_examples, data)
    return WindowSearchTab(load_annotations(data / "annotations.json")), data / "memory" / "m01.json"


def _picked_ref(tab, res) -> WindowSearchSession:
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 180).session
    return memory_handlers.ref_selected(tab, res, session, 0).session


def test_removing_a_reference_asks_first_and_changes_only_this_session(shared_memory, monkeypatch):
    monkeypatch.delenv("APP_ADMIN", raising=False)
    tab, shared = shared_memory
    before = shared.read_text()
    res_a, res_b = WindowSearchResources(), WindowSearchResources()
    a = _picked_ref(tab, res_a)
    ask = memory_handlers.remove_ref(tab, res_a, a)
    assert ask.confirm_row["visible"] is True and "your session's copy of the memory only" in ask.confirm_text
    assert shared.read_text() == before                         # nothing removed before the yes
    cancelled = memory_handlers.cancel_remove(tab, res_a, a)
    assert cancelled.confirm_row["visible"] is False and a.pending_remove is None
    memory_handlers.remove_ref(tab, res_a, a)
    done = memory_handlers.confirm_remove(tab, res_a, a)
    n_shared = sum(len(c.references) for c in CharacterMemory.load(shared).characters)
    n_mine = sum(len(c.references) for c in CharacterMemory.load(a.movie.memory).characters)
    assert n_mine == n_shared - 1 and shared.read_text() == before
    assert all(p.is_file() for p in shared.parent.joinpath("m01").iterdir())   # no shared image deleted
    assert "your session's copy" in done.memory_names
    b = handlers.pick_movie(tab, res_b, WindowSearchSession(), "m01", 180).session   # another visitor
    assert sum(len(c.references) for c in CharacterMemory.load(b.movie.memory).characters) == n_shared
    copy = a.movie.memory
    res_a.release()                                             # the page closes: its copy goes
    assert not (copy and __import__("pathlib").Path(copy).exists())


def test_with_app_admin_the_shared_memory_is_edited(shared_memory, monkeypatch):
    monkeypatch.setenv("APP_ADMIN", "1")
    tab, shared = shared_memory
    n_before = sum(len(c.references) for c in CharacterMemory.load(shared).characters)
    res = WindowSearchResources()
    session = _picked_ref(tab, res)
    ask = memory_handlers.remove_ref(tab, res, session)
    assert "the shared memory file on the server, for every visitor" in ask.confirm_text
    memory_handlers.confirm_remove(tab, res, session)
    data = json.loads(shared.read_text())
    assert sum(len(c["references"]) for c in data["characters"]) == n_before - 1


def test_find_names_says_what_it_found_as_a_note_on_the_message_line(shared_memory, monkeypatch):
    monkeypatch.delenv("APP_ADMIN", raising=False)
    tab, _ = shared_memory
    res = WindowSearchResources()
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 180).session
    found = memory_handlers.find_names(tab, res, session)
    assert found.message.startswith("<span class='tab-note'>")          # a note, not a toast
    assert "new name(s) found in the subtitles" in found.message
    res.release()


def test_a_movie_the_browser_cannot_play_is_one_line_not_a_toast(tmp_path, monkeypatch):
    movie = tmp_path / "film.avi"
    movie.write_bytes(b"not a video")
    monkeypatch.setattr(handlers.search.processing_utils, "ffmpeg_installed", lambda: True)
    monkeypatch.setattr(handlers.search.players, "playable", lambda path: False)
    shown, line = handlers.search.player_value(str(movie))
    assert shown is None and line.startswith("⚠ film.avi is not browser-playable")
    assert str(tmp_path) not in line
    assert handlers.search.player_value(None) == (None, "")
