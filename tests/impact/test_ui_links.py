"""Deep links (?tab=impact&clip=&frame=), the copy-link query, the frame box's bad values, and the
page-side guard that sends the 3D view a body only once it is on screen."""
from __future__ import annotations

import gradio as gr
import pytest

from components.common.errors import UserError
from components.impact import view
from components.impact.ui import handlers
from components.common.ui import outputs
from components.impact.ui.session import ImpactResources, ImpactSession

from tests.impact.clipdata import make_impact_data

RES = ImpactResources()

SKIP = type(gr.skip())


@pytest.fixture(autouse=True)
def own_render_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    make_impact_data(root)
    return handlers.load_data(root)


def test_read_link_opens_the_named_clip_and_frame(data):
    items = data.annotations.items
    second = items[1]
    assert view.read_link({"tab": "impact", "clip": second.qid, "frame": "3"}, items) == (second.qid, 3, "")
    assert view.read_link({"clip": second.qid}, items) == (second.qid, None, "")  # no tab: its own keys
    assert view.read_link({"tab": "cloze", "clip": second.qid}, items) == (None, None, "")
    assert view.read_link({}, items) == (None, None, "")


@pytest.mark.parametrize("params,words", [
    ({"tab": "impact", "clip": "p9999"}, ["The link's clip `p9999` is not in this data; showing the first clip."]),
    ({"tab": "impact", "frame": "abc"}, ["The link's frame `abc` is not a frame of", "showing its first moment"]),
    ({"tab": "impact", "frame": "0"}, ["frame `0`"]),
    ({"tab": "impact", "frame": "100000"}, ["frame `100000`"]),
    ({"tab": "impact", "clip": "`<b>x</b>` " + "y" * 80}, ["`<b>x</b> yyyy", "…`"]),
])
def test_a_link_value_this_data_cannot_show_falls_back_and_says_which(data, params, words):
    qid, frame, note = view.read_link(params, data.annotations.items)
    assert qid == data.annotations.items[0].qid and frame is None
    for word in words:
        assert word in note, note
    assert note.count("`") % 2 == 0  # the quoted value cannot break the Markdown around it


def test_the_page_load_view_follows_the_link_without_a_body_and_says_what_was_wrong(data):
    item = data.annotations.items[1]
    shown = handlers.on_load(data, ImpactResources(), ImpactSession(), {"tab": "impact", "clip": item.qid, "frame": "5"})
    assert shown.clip.value == item.qid and shown.frame.value == 5 and shown.status == ""
    assert "frame 5 = " in shown.timeline
    assert len(outputs(shown)) == 12
    bad = handlers.on_load(data, ImpactResources(), ImpactSession(), {"tab": "impact", "clip": "nope"})
    assert bad.clip.value == data.annotations.items[0].qid and "`nope`" in bad.message   # the message line
    plain = handlers.on_load(data, ImpactResources(), ImpactSession(), {})
    assert plain.frame.value == handlers.first_frame(data.annotations.items[0])


def test_copy_link_names_the_clip_and_frame_shown(data):
    qid = data.annotations.items[0].qid
    def link(frame):
        return handlers.copy_link(data, RES, ImpactSession(), qid, frame).link["value"]
    assert link(12) == f"clip={qid}&frame=12&tab=impact"
    assert link(12.0) == f"clip={qid}&frame=12&tab=impact"
    assert link(None) == f"clip={qid}&tab=impact"  # an empty box: no frame
    assert view.view_link(b="2", a="x y&z", c=None) == "a=x+y%26z&b=2"


@pytest.mark.parametrize("value,words", [(None, "frame box is empty"), ("", "frame box is empty"),
                                         (2.5, "not a whole frame"), (0, "outside"), (10_000, "outside"),
                                         ("x", "holds `x`")])
def test_a_frame_box_without_a_frame_of_the_clip_keeps_the_view_and_says_what_to_type(data, value, words):
    item = data.annotations.items[0]
    res = ImpactResources()
    moved = handlers.on_frame(data, res, ImpactSession(), item.qid, value)
    assert all(isinstance(v, SKIP) for v in outputs(moved))  # the view and the run's status stay
    assert moved.message.startswith("⚠ ") and words in moved.message, moved.message
    assert str(item.num_frames) in moved.message and "preprocess" not in moved.message.lower()
    with pytest.raises(UserError, match=words.split("`")[0]):
        handlers.run_spatial(data, RES, ImpactSession(), {"backend": "baseline"}, item.qid, value)
    ok = handlers.on_frame(data, res, ImpactSession(), item.qid, 3)
    assert ok.message == "" and "frame 3 = " in ok.timeline   # the next good frame clears the line
    assert isinstance(ok.status, SKIP)
    then = handlers.on_frame(data, res, ImpactSession(), item.qid, 4)
    assert then.message is None   # and then leaves the line alone (a link's note stays)


def test_a_page_gets_its_first_body_when_its_tab_is_on_screen_and_never_the_same_twice(data):
    page = ImpactResources()
    qid = data.annotations.items[0].qid
    handlers.on_load(data, page, ImpactSession(), {})          # a browser page loaded
    hidden = handlers.on_clip(data, page, ImpactSession(), qid)
    assert isinstance(hidden.body.body3d, SKIP)  # the tab is not mounted yet: its Model3D would drop it
    first = handlers.on_body_shown(data, page, ImpactSession(), qid, 3).body3d
    assert first.value["path"].endswith(".glb") and len(first.camera_position) == 3
    again = handlers.on_frame(data, page, ImpactSession(), qid, 3)
    assert isinstance(again.body.body3d, SKIP)  # sent already, while the page may still be loading it
    other = handlers.on_frame(data, page, ImpactSession(), qid, handlers.first_frame(data.annotations.items[0]))
    assert not isinstance(other.body.body3d, SKIP)  # a different painting goes out
    api = handlers.on_clip(data, ImpactResources(), ImpactSession(), qid)
    assert api.body.body3d.value["path"].endswith(".glb")  # a caller that never loaded the page


def test_reset_view_resends_the_camera_facing_the_hit_each_time(data):
    item = data.annotations.items[0]
    frame = handlers.first_frame(item)
    one = handlers.reset_view(data, RES, ImpactSession(), item.qid, frame)
    two = handlers.reset_view(data, RES, ImpactSession(), item.qid, frame)
    assert one.value is None  # the camera only: the body on screen stays
    assert one.camera_position[:2] == two.camera_position[:2] and one.camera_position != two.camera_position
    painted = handlers.frame_view(data, ImpactSession(), item.qid, frame).body3d
    assert painted.camera_position[:2] == one.camera_position[:2]


def test_the_frame_box_reaches_the_handlers_raw_so_no_gradio_preprocess_error_is_shown(data, tmp_path):
    """A cleared box is None; gradio's Slider preprocessing would fail on it with its own text."""
    from components.common.ui import TabContext
    from components.impact.ui import build_tab

    (tmp_path / "impact").symlink_to(data.annotations.path.parent)
    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=tmp_path, settings=gr.State({"backend": "baseline"}), demo=demo))
    raw = {fn.api_name for fn in demo.fns.values() if not fn.preprocess}
    assert {"on_frame", "on_run_temporal", "on_run_spatial", "on_render", "on_copy_link",
            "on_reset_view", "on_body_shown"} <= raw
    qid = data.annotations.items[0].qid
    first = handlers.on_frame(data, ImpactResources(), ImpactSession(), qid, 3).body.body3d.value
    again = handlers.on_frame(data, ImpactResources(), ImpactSession(), qid, 3, shown={"path": first["path"], "url": "/x"})
    assert isinstance(again.body.body3d, SKIP)  # the raw FileData the page sends counts as shown


def test_a_body_view_on_screen_before_the_page_named_a_clip_gets_the_body_of_the_first_frame(data):
    """The tab may mount (and report its view on screen) before the page-load view fills the
    clip list: the view is marked as shown, and the page-load's frame then sends the body."""
    page = ImpactResources()
    assert isinstance(handlers.on_body_shown(data, page, ImpactSession(), None, 1).body3d, SKIP)
    handlers.on_load(data, page, ImpactSession(), {})
    qid = data.annotations.items[0].qid
    moved = handlers.on_frame(data, page, ImpactSession(), qid, handlers.first_frame(data.annotations.items[0]))
    assert moved.body.body3d.value["path"].endswith(".glb")
