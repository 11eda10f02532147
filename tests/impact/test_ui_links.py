"""Deep links (?tab=impact&clip=&frame=), the copy-link query, the frame box's bad values, the 3D
view sent a painting once, and the clip list of a large set (its neighbours; a typed qid or words)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import gradio as gr
import pytest

from components.base.errors import UserError
from components.impact import links, view
from components.impact.ui import handlers
from components.impact.ui.session import load_tab
from components.common.ui import UNCHANGED, outputs
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
    return load_tab(root)


def test_read_link_opens_the_named_clip_and_frame(data):
    items = data.annotations.items
    second = items[1]
    assert links.read_link({"tab": "impact", "clip": second.qid, "frame": "3"}, items) == (second.qid, 3, "")
    assert links.read_link({"clip": second.qid}, items) == (second.qid, None, "")  # no tab: its own keys
    assert links.read_link({"tab": "cloze", "clip": second.qid}, items) == (None, None, "")
    assert links.read_link({}, items) == (None, None, "")


@pytest.mark.parametrize("params,words", [
    ({"tab": "impact", "clip": "p9999"}, ["The link's clip `p9999` is not in this data; showing the first clip."]),
    ({"tab": "impact", "frame": "abc"}, ["The link's frame `abc` is not a frame of", "showing its first moment"]),
    ({"tab": "impact", "frame": "0"}, ["frame `0`"]),
    ({"tab": "impact", "frame": "100000"}, ["frame `100000`"]),
    ({"tab": "impact", "clip": "`<b>x</b>` " + "y" * 80}, ["`<b>x</b> yyyy", "…`"]),
])
def test_a_link_value_this_data_cannot_show_falls_back_and_says_which(data, params, words):
    qid, frame, note = links.read_link(params, data.annotations.items)
    assert qid == data.annotations.items[0].qid and frame is None
    for word in words:
        assert word in note, note
    assert note.count("`") % 2 == 0  # the quoted value cannot break the Markdown around it


def test_the_page_load_view_follows_the_link_with_its_body_and_says_what_was_wrong(data):
    item = data.annotations.items[1]
    shown = handlers.on_load(data, ImpactResources(), ImpactSession(), {"tab": "impact", "clip": item.qid, "frame": "5"})
    assert shown.clip.value == item.qid and shown.frame.value == 5 and shown.status == ""
    assert "frame 5 = " in shown.timeline
    # the clip list, video, frame and timeline, the body's seven, the status, the split list and the timer
    assert len(outputs(shown)) == 14 and shown.body.body3d["key"] and shown.poll.active is False
    bad = handlers.on_load(data, ImpactResources(), ImpactSession(), {"tab": "impact", "clip": "nope"})
    assert bad.clip.value == data.annotations.items[0].qid and "`nope`" in bad.message   # the message line
    plain = handlers.on_load(data, ImpactResources(), ImpactSession(), {})
    assert plain.frame.value == view.first_frame(data.annotations.items[0])


def test_copy_link_names_the_clip_and_frame_shown(data):
    qid = data.annotations.items[0].qid
    def link(frame):
        return handlers.copy_link(data, RES, ImpactSession(), qid, frame).link["value"]
    assert link(12) == f"clip={qid}&frame=12&tab=impact"
    assert link(12.0) == f"clip={qid}&frame=12&tab=impact"
    assert link(None) == f"clip={qid}&tab=impact"  # an empty box: no frame
    assert links.view_link(b="2", a="x y&z", c=None) == "a=x+y%26z&b=2"


@pytest.mark.parametrize("value,words", [(None, "frame box is empty"), ("", "frame box is empty"),
                                         (2.5, "not a whole frame"), (0, "outside"), (10_000, "outside"),
                                         ("x", "holds `x`")])
def test_a_frame_box_without_a_frame_of_the_clip_keeps_the_view_and_says_what_to_type(data, value, words):
    item = data.annotations.items[0]
    res = ImpactResources()
    moved = handlers.on_frame(data, res, ImpactSession(), item.qid, value)
    assert all(isinstance(v, SKIP) for v in outputs(moved))  # the view stays
    assert moved.message.startswith("⚠ ") and words in moved.message, moved.message
    assert str(item.num_frames) in moved.message and "preprocess" not in moved.message.lower()
    with pytest.raises(UserError, match=words.split("`")[0]):
        handlers.run_spatial(data, RES, ImpactSession(), {"backend": "baseline"}, item.qid, value)
    ok = handlers.on_frame(data, res, ImpactSession(), item.qid, 3)
    assert ok.message == "" and "frame 3 = " in ok.timeline   # the next good frame clears the line
    assert "status" not in {f.name for f in dataclasses.fields(ok)}   # the last run's status is never an output
    then = handlers.on_frame(data, res, ImpactSession(), item.qid, 4)
    assert then.message is None   # and then leaves the line alone (a link's note stays)


def test_the_page_load_view_carries_the_body_and_the_same_painting_is_never_sent_twice(data):
    page = ImpactResources()
    item = data.annotations.items[0]
    loaded = handlers.on_load(data, page, ImpactSession(), {"clip": item.qid, "frame": "3"})
    first = loaded.body.body3d
    assert first["key"] and len(first["camera"]) == 3 and first["mesh"].startswith("gradio_api/file=")
    again = handlers.on_frame(data, page, ImpactSession(), item.qid, 3, shown=first)
    assert again.body.body3d is UNCHANGED and isinstance(outputs(again)[2], SKIP)  # the page shows it: the camera the visitor turned stays
    other = handlers.on_frame(data, page, ImpactSession(), item.qid, view.first_frame(item), shown=first)
    assert other.body.body3d["key"] != first["key"]  # a different painting goes out


def test_reset_view_resends_the_camera_facing_the_hit_each_time(data):
    item = data.annotations.items[0]
    frame = view.first_frame(item)
    one = handlers.reset_view(data, RES, ImpactSession(), item.qid, frame).body3d
    two = handlers.reset_view(data, RES, ImpactSession(), item.qid, frame).body3d
    painted = handlers.body.frame_view(data, ImpactSession(), item.qid, frame).body3d
    assert one["key"] == painted["key"]  # the same painting: only the camera moves
    assert one["camera"][:2] == two["camera"][:2] and one["camera"] != two["camera"]
    assert painted["camera"][:2] == one["camera"][:2]


def test_the_frame_box_reaches_the_handlers_raw_so_no_gradio_preprocess_error_is_shown(data, tmp_path):
    """A cleared box is None; gradio's Slider preprocessing would fail on it with its own text."""
    from components.common.ui import TabContext
    from components.impact.ui import build_tab

    (tmp_path / "impact").symlink_to(data.annotations.path.parent)
    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=tmp_path, settings=gr.State({"backend": "baseline"}), demo=demo))
    raw = {fn.api_name for fn in demo.fns.values() if not fn.preprocess}
    assert {"on_frame", "on_run_temporal", "on_run_spatial", "on_render", "on_copy_link",
            "on_reset_view"} <= raw


def _items(n: int):
    from components.impact.data import ImpactAnnotations, ImpactItem

    items = [ImpactItem(qid=f"h{i:04d}", query=f"Clip {i}: a man is hit in the {'head' if i % 2 else 'leg'}",
                        video=Path(f"clips/h{i:04d}.mp4"), fps=24.0, num_frames=48, moments=[(3, 5)])
             for i in range(1, n + 1)]
    return ImpactAnnotations(path=Path("annotations.json"), fps=24.0, items=items)


def test_a_small_set_lists_every_clip_and_a_large_one_the_clips_near_the_one_shown():
    small = _items(view.CLIPS_LISTED_MAX)
    assert [v for _, v in view.clip_choices(small, "h0030")] == [i.qid for i in small.items]
    large = _items(433)
    near = [v for _, v in view.clip_choices(large, "h0200")]
    # the first, the ten before and after, the last
    assert near == ["h0001", *[f"h{i:04d}" for i in range(190, 211)], "h0433"]
    assert [v for _, v in view.clip_choices(large, "h0002")][:3] == ["h0001", "h0002", "h0003"]
    assert len(view.clip_choices(large, None)) == 12   # no clip yet: the first ones and the last
    label, value = view.clip_choices(large, "h0200")[11]
    assert value == "h0200" and label.startswith("h0200 · Clip 200:")


def test_a_typed_qid_entry_or_query_words_name_a_clip():
    large = _items(433)
    assert view.find_clip(large, "h0321") == "h0321"
    assert view.find_clip(large, "  H0321 ") == "h0321"            # any case, spaces around
    assert view.find_clip(large, "h0321 · Clip 321: a man") == "h0321"   # a list entry
    assert view.find_clip(large, "clip 57:  A MAN") == "h0057"      # words of a query
    assert view.find_clip(large, "in the leg") == "h0002"          # the first clip that holds them
    assert view.find_clip(large, "h9999") is None and view.find_clip(large, "") is None


def test_a_typed_clip_opens_with_its_neighbours_listed_and_a_bad_one_says_what_to_type(data):
    first = data.annotations.items[0]
    typed = handlers.on_clip(data, ImpactResources(), ImpactSession(), first.qid.upper())
    assert typed.clip.value == first.qid and (f"{first.qid} · {first.query}", first.qid) in typed.clip.choices
    words = " ".join(data.annotations.items[1].query.split()[1:4])
    assert handlers.on_clip(data, ImpactResources(), ImpactSession(), words).clip.value in \
        [i.qid for i in data.annotations.items if words.lower() in i.query.lower()]
    with pytest.raises(UserError, match="No clip matches .*type a qid"):
        handlers.on_clip(data, ImpactResources(), ImpactSession(), "nothing like this")
