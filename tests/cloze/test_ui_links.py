"""Links to a Cloze question: written for the question on screen, read back to the same question,
and a bad value gives one readable line, never an exception; errors go to the tab's message line."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

gr = pytest.importorskip("gradio")

from components.cloze import links  # noqa: E402 - after the gradio skip
from components.cloze.ui import handlers  # noqa: E402
from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab  # noqa: E402
from components.base.errors import UserError  # noqa: E402
from components.common.sessions import Resources  # noqa: E402
from components.common.ui import TabEvents  # noqa: E402
from components.cloze.ui.views import LinkBoxView, RootView, StartView  # noqa: E402

TAB, RES = ClozeTab(""), Resources()


def page(data_dir: str) -> TabEvents:
    """The tab's events as gradio calls them (one visitor; the data folder never shown)."""
    return TabEvents(TAB, RESOURCES, message=None, data_dir=data_dir)


def visitor() -> object:
    return type("Request", (), {"session_hash": "links-visitor"})()


@pytest.fixture
def fresh(cloze_examples, tmp_path, monkeypatch) -> ClozeSession:
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    return ClozeSession(data_dir=str(cloze_examples.parent))


def _shown(view) -> tuple[str, str]:
    """(stem, dim) of the question a view put on screen."""
    _, qs = handlers.questions_for(view.session)
    q = qs.questions[view.session.index]
    return q.stem, q.dim


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(query))


def test_read_link_keeps_good_values_and_names_each_bad_one():
    req = links.read_link({"tab": "cloze", "stem": "bar_fill", "q": "p", "mode": "model", "seed": "7",
                           "set": "examples", "dims": "S"})
    assert (req.stem, req.dim, req.mode, req.seed, req.set_name, req.dims) == \
        ("bar_fill", "C", "model", 7, "examples", ("S",))          # P is the paper's name of folder C
    assert req.problems == []
    bad = links.read_link({"tab": "cloze", "stem": "bar_fill", "q": "Z", "mode": "judge", "seed": "-3",
                           "dims": "S,Q"})
    assert bad.problems == [
        "The link's mode `judge` is not practice, model or compare; showing the practice playthrough.",
        "The link's dims `S,Q` are not one of S, A, P, S,A,P or Mixed; showing S, A, P.",
        "The link's seed `-3` is not a whole number of 0 or more; showing seed 42.",
        "The link's q `Z` is not S, A, P or Mixed; showing the stem's first question."]
    assert (bad.mode, bad.seed, bad.dims, bad.dim) == ("practice", 42, ("S", "A", "P"), None)
    assert links.read_link({"q": "0"}).problems[0].startswith("The link's q `0` is not a question number")
    assert links.read_link({"stem": "x", "q": "Mixed"}).dims == ("Mixed",)
    assert links.is_for_this_tab({"stem": "x"}) and not links.is_for_this_tab({"tab": "impact", "stem": "x"})


def test_find_question_by_stem_and_dimension_or_by_number():
    questions = [("a", "S"), ("a", "C"), ("b", "S")]
    assert links.find_question(links.read_link({"stem": "a", "q": "P"}), questions) == (1, [])
    assert links.find_question(links.read_link({"stem": "b"}), questions) == (2, [])
    assert links.find_question(links.read_link({"q": "3"}), questions) == (2, [])
    assert links.find_question(links.read_link({"q": "9"}), questions) == \
        (0, ["The link's q `9` is past the last question (3); showing question 1."])
    assert links.find_question(links.read_link({"stem": "zz", "q": "S"}), questions) == \
        (0, ["The link's stem `zz` is not in this set; showing question 1."])
    assert links.find_question(links.read_link({"stem": "b", "q": "A"}), questions) == \
        (2, ["The link's q `A` is not asked for `b` in this set; showing its first question."])


@pytest.mark.parametrize("mode", ["practice", "model"])
def test_the_copied_link_reopens_the_question_on_screen(fresh, cloze_examples, mode):
    started = handlers.start(TAB, RES, fresh, mode, "cloze", "all", "S, A, P", 7, "anon-link", "frames")
    on_screen = handlers.next_question(TAB, RES, handlers.next_question(TAB, RES, started.session, "frames").session, "frames")
    want = _shown(on_screen)
    query = handlers.copy_link(TAB, RES, on_screen.session).link["value"]
    params = _params(query)
    assert params["tab"] == "cloze" and params["stem"] == want[0] and params["seed"] == "7"
    assert params["q"] == {"C": "P"}.get(want[1], want[1])
    assert ("mode" in params) == (mode == "model") and "folder" not in params and "set" not in params
    opened = handlers.open_link(fresh, params, "frames")          # another visitor's fresh page
    assert opened.message == "" and _shown(opened) == want
    assert opened.session.index == on_screen.session.index and opened.session.human == (mode == "practice")
    assert (opened.mode, opened.seed, opened.dims) == (mode, 7, "S, A, P")
    assert f"Question {on_screen.session.index + 1} of " in opened.question.progress
    assert opened.session.file == ""                                # a link answers nothing by itself


def test_a_mixed_question_link_round_trips(fresh):
    opened = handlers.open_link(fresh, {"tab": "cloze", "stem": "clock_hand", "q": "Mixed", "mode": "model"},
                                "frames")
    assert _shown(opened) == ("clock_hand", "Mixed") and opened.dims == "Mixed" and opened.message == ""
    again = handlers.open_link(fresh, _params(handlers.copy_link(TAB, RES, opened.session).link["value"]), "frames")
    assert _shown(again) == ("clock_hand", "Mixed")


def test_bad_link_values_show_the_first_question_with_one_readable_line(fresh):
    opened = handlers.open_link(fresh, {"tab": "cloze", "stem": "no_such_stem", "q": "S", "folder": "/etc",
                                        "set": "nope"}, "frames")
    assert opened.session.index == 0 and opened.session.loaded
    assert opened.message == ("⚠ The link's folder `/etc` is not a shared folder of this app's data; showing "
                           "`cloze`. The link's set `nope` is not in this data; showing all. The link's stem "
                           "`no_such_stem` is not in this set; showing question 1.")
    private = handlers.open_link(fresh, {"tab": "cloze", "stem": "bar_fill", "folder": "cloze/uploads/abc"},
                                 "frames")
    assert "`cloze/uploads/abc` is not a shared folder" in private.message and _shown(private)[0] == "bar_fill"
    assert handlers.open_link(fresh, {"tab": "window-search", "movie": "m01"}, "frames").message is None   # the line left alone


def test_a_link_to_a_folder_without_data_says_so(fresh, tmp_path):
    empty = ClozeSession(data_dir=str(tmp_path))
    opened = handlers.open_link(empty, {"tab": "cloze", "stem": "bar_fill"}, "frames")
    assert opened.message.startswith("⚠ The link could not be opened: ") and "Traceback" not in opened.message
    assert str(tmp_path) not in opened.message


def test_copy_link_needs_a_shared_question_on_screen(fresh, cloze_examples, tmp_path):
    with pytest.raises(UserError, match="open a question first"):
        handlers.copy_link(TAB, RES, fresh)
    built = ClozeSession(data_dir=fresh.data_dir, root=str(cloze_examples.parent / "cloze" / "built" / "x"))
    with pytest.raises(UserError, match="only this page can open"):
        handlers.copy_link(TAB, RES, built)


def test_errors_go_to_the_message_line_and_the_next_good_action_clears_it(fresh):
    events = page(fresh.data_dir)
    wired = events.fn(handlers.load_root, RootView)
    out = wired(visitor(), fresh, "/etc")
    assert out[:2] == [gr.skip(), gr.skip()]                        # no control replaced
    assert out[2].startswith("⚠ The data folder must be inside the app's data folder")
    start = events.fn(handlers.start, StartView)
    out = start(visitor(), fresh, "practice", "cloze", "all", "S, A, P", -1, "anon-e", "frames")
    assert out[-1] == "⚠ Seed must be at least 0 (got -1)." and all(v == gr.skip() for v in out[:-1])
    out = start(visitor(), fresh, "practice", "cloze", "all", "S, A, P", 2.5, "anon-e", "frames")
    assert out[-1] == "⚠ Seed must be a whole number (got 2.5)."
    ok = wired(visitor(), fresh, "cloze")
    assert ok[-1] == "" and "stems" in ok[1]                          # cleared by an action that works

    def broken(tab, res, session):
        raise KeyError("/srv/secret/path")
    line = events.fn(broken, LinkBoxView)(visitor(), fresh)[-1]
    assert line.startswith("⚠ Something went wrong while doing that (error ") and "/srv" not in line


def test_every_event_but_the_clock_ends_with_the_message_line(cloze_examples):
    from components.cloze.ui import build_tab
    from components.common.ui import TabContext
    from components.settings.session import SessionSettings

    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=cloze_examples.parent, settings=gr.State(SessionSettings().to_state()),
                             demo=demo))
    fns = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
    assert "on_open_cloze_link" in fns and "on_copy_link" in fns
    for name, fn in fns.items():
        if fn.fn is None or not fn.outputs or fn.outputs[-1].elem_id in ("cloze-timer", None) \
                or name.startswith("_"):   # the copy step in the page; the timer switch
            continue
        assert fn.outputs[-1].elem_id == "cloze-message", name


def test_a_missing_data_folder_is_named_relative_to_the_data_folder(tmp_path):
    out = page(str(tmp_path)).fn(handlers.load_root, RootView)(visitor(), ClozeSession(data_dir=str(tmp_path)), "cloze")
    assert out[-1].startswith("⚠ No TempCloze data in cloze: expected a 'choices/&lt;stem&gt;/' folder")
    assert str(tmp_path) not in out[-1] and "/tmp" not in out[-1]


def test_empty_gap_boxes_ask_for_an_automatic_gap_and_a_half_gap_is_refused():
    assert handlers.requested_gap(None, None) is None
    assert handlers.requested_gap(0, 0) is None                    # what the page sends for empty boxes
    assert handlers.requested_gap(2, 5.5) == (2.0, 5.5)
    with pytest.raises(UserError, match="Gap end \\(0 s\\) must be after gap start \\(3 s\\)"):
        handlers.requested_gap(3, 0)


def test_a_compare_link_opens_compare_mode_and_the_address_says_so(fresh):
    assert links.read_link({"tab": "cloze", "mode": "compare"}).problems == []
    opened = handlers.open_link(fresh, {"tab": "cloze", "mode": "compare"}, "frames", RES)
    assert opened.message == "" and opened.mode == "compare" and opened.session.comparing
    assert opened.panels.compare_group["visible"] and not opened.panels.question_group["visible"]
    # the leaderboard is drawn (the paper's rows at least); nothing of a question's panels shows
    assert any("Human" in str(row[0]) for row in opened.board.leaderboard["value"]["data"])
    for hidden in ("status_line", "display", "copy_link", "runs_fold", "start", "progress_box"):
        assert getattr(opened.panels, hidden)["visible"] is False, hidden
    assert _params(handlers.view_address(TAB, opened.session)) == {"tab": "cloze", "mode": "compare"}
    # back to Model mode: the question is there, the address names it again
    back = handlers.pick_mode(TAB, RES, opened.session, "model", [], "")
    session = back.session if back.session is not handlers.page.UNCHANGED else opened.session
    assert not session.comparing and _params(handlers.view_address(TAB, session)).get("mode") == "model"
