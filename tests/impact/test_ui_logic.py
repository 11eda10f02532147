"""The Impact tab: pure view helpers, the assembled tab's components, and its handlers' logic."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from components.impact import painting, view
from components.impact.data import ImpactItem, FrameAnnotation, load_annotations
from tests.impact.clipdata import make_impact_data

FPS = 24.0


@pytest.fixture(autouse=True)
def own_render_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))


def item(moments=((83, 86),), num_frames=156) -> ImpactItem:
    return ImpactItem(qid="h0001", video=Path("clip.mp4"), query="A man is struck behind the knees.",
                      num_frames=num_frames, moments=list(moments), fps=FPS,
                      frames={84: FrameAnnotation(["left calf", "right calf"])})


def test_window_to_frames_is_frame_accurate():
    assert view.window_to_frames(82 / FPS, 86 / FPS, FPS) == (83, 86)
    assert view.window_to_frames(0.0, 1 / FPS, FPS) == (1, 1)
    assert view.window_to_frames(3.4, 3.6, FPS) == (82, 87)  # 3.4 s is inside frame 82


def test_timeline_shows_truth_predictions_iou_and_seek_targets():
    it = item(moments=[(83, 86), (120, 121)])
    # prediction 1 is exactly the first moment (IoU 1); prediction 2 overlaps nothing
    html = view.timeline_html(it, [[82 / FPS, 86 / FPS, 1.0], [1.0, 1.25, 0.5]], current_frame=84)
    assert 'data-frame="83"' in html and 'data-frame="120"' in html  # truth blocks seek there
    assert "83-86 IoU 1.00" in html and "120-121 IoU 0.00" in html
    assert "#1 IoU 1.00" in html and "#2 IoU 0.00" in html
    assert 'data-frame="25"' in html  # prediction 2 starts at 1.0 s = frame 25
    assert 'title="frame 84"' in html  # the cursor
    empty = view.timeline_html(it, None)
    assert "press Run temporal" in empty
    assert "no interval predicted" in view.timeline_html(it, [])


def test_moment_ious():
    gt, pred = view.moment_ious([[0, 1], [2, 3]], [[0, 1, 1.0], [2.5, 3.5, 0.5]])
    assert gt == pytest.approx([1.0, 1 / 3]) and pred == pytest.approx([1.0, 1 / 3])


def test_regions_line():
    line = view.regions_line(["left calf"], ["left calf", "right calf"], 2 / 3)
    assert line == ("**Regions this frame:** predicted [left calf] · truth [left calf, right calf] · F1 0.67")
    assert "predicted — · truth [head] · F1 —" in view.regions_line(None, ["head"], None)


def test_frames_painted_alike_share_one_key_and_a_different_painting_gets_its_own():
    from components.impact.body import load_body

    body = load_body()
    calf = painting.paint_frame(body, item(), 84, ["left calf", "right calf"])
    assert painting.paint_frame(body, item(), 84, ["right calf", "left calf"]).key == calf.key
    assert painting.paint_frame(body, item(), 84, ["head"]).key != calf.key
    # two frames with no truth and no prediction look the same, so they are one painting
    assert painting.paint_frame(body, item(), 5, None).key == painting.paint_frame(body, item(), 6, None).key
    assert painting.paint_frame(body, item(), 5, None).key != calf.key


def test_paint_frame_scores_the_frame():
    from components.impact.body import load_body

    body = load_body()
    painted = painting.paint_frame(body, item(), 84, ["left calf"])
    assert painted.f1 == pytest.approx(
        2 * 1 * 0.5 / 1.5, rel=0.2)  # half of the truth's vertices predicted (calves of similar size)
    texts = [t for t, _ in painted.legend]
    assert len(texts) == 4  # body + hit / predicted only / missed
    only_truth = painting.paint_frame(body, item(), 84, None)
    assert only_truth.f1 is None and len(only_truth.legend) == 2


def test_tables_list_this_run_beside_the_paper_rows():
    result = {"mAP@0.3": 12.5, "R1@0.3": 50.0, "G-mAP": 10.0, "@1_tgt": 10.0, "@2_tgt": None,
              "@3+tgt": None, "mR@1": 50.0, "mR@2": None, "mR@3": None, "num_queries": 2,
              "by_length": {"short": {"mAP@0.3": 0.0, "num_queries": 1}},
              "by_count": {"single": {"mAP@0.3": 12.5, "num_queries": 2}}}
    table = view.temporal_table([("motion-energy baseline (no model)", result)])
    assert "| **motion-energy baseline (no model)** (this app) | 12.50 | 50.00 | 10.00 | 10.00 | n/a" in table
    assert "| GPT-5.4 ZS (paper, Table 3) | 42.64 | 47.76 | 43.64 |" in table
    assert "| Sim-DETR FT (paper, Table 2) | 23.27 |" in table
    breakdown = view.breakdown_table([("m", result)])
    assert "| GPT-5.4 (paper, Table 11) | 51.32 | 44.60 | 25.72 | 53.90 | 23.58 |" in breakdown
    spatial = view.spatial_table([("text-only", {"F1": 50.0, "body": "mannequin", "num_frames": 3})])
    assert "| Cosmos-Reason2-8B RS (paper, Table 4) | 18.59 | 16.17 | 44.11 | 33.31 | 21.21 | 20.01 | 15.92" in spatial


def test_tables_show_each_runs_interval_row():
    from components.impact.metrics.temporal import evaluate_temporal

    gts = [{"qid": f"q{i}", "relevant_windows": [[i, i + 1]]} for i in range(6)]
    preds = [{"qid": f"q{i}", "pred_relevant_windows": [[i, i + 1, 1.0]] if i % 2 else [[9, 9.5, 1.0]]}
             for i in range(6)]
    result = evaluate_temporal(gts, preds)
    table = view.temporal_table([("m", result)], with_reference=False)
    row = next(line for line in table.splitlines() if line.startswith("| ↳ m"))
    ci = result["intervals"]["mAP@0.3"]
    assert "bootstrap over 6 queries, 2000 resamples" in row
    assert row.split(" | ")[1] == f"[{ci['low']:.2f}, {ci['high']:.2f}]"
    header = next(line for line in table.splitlines() if line.startswith("| Method"))
    assert row.count("|") == header.count("|")  # one cell per column
    assert row.endswith("| 6 | this data (6 queries) |")
    assert view.interval_row("x", {"mAP@0.3": 1.0}, ("mAP@0.3",), 1, "d") is None


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    make_impact_data(root)
    return root


def test_the_tab_has_every_documented_component(data_dir):
    import gradio as gr

    from components.impact.ui import build_tab
    from components.common.ui import TabContext

    with gr.Blocks() as demo:
        settings = gr.State({"backend": "baseline", "max_frames": 32})
        build_tab(TabContext(data_dir=data_dir, settings=settings))
    ids = {c.elem_id for c in demo.blocks.values() if getattr(c, "elem_id", None)}
    for needed in ("impact-clip", "impact-run-temporal", "impact-run-spatial", "impact-frame",
                   "impact-body3d", "impact-turntable", "impact-timeline", "impact-regions",
                   "impact-metrics", "impact-video"):
        assert needed in ids, needed
    from components.impact.ui import handlers
    from components.impact.ui.session import tab_source
    from components.impact.ui.session import ImpactResources, ImpactSession

    data = tab_source(data_dir).get()          # what a page load reads
    opened = handlers.on_load(data, ImpactResources(), ImpactSession(), {})
    assert opened.clip.choices[0] == ("h0001 · A man is struck behind the knees by a staff.", "h0001")
    # a click on a timeline block (the browser sends {frame}) seeks the player and the slider
    seek = handlers.on_timeline_click(data, ImpactResources(), ImpactSession(), "h0002", {"frame": 90})
    video, slider = seek.video, seek.frame
    assert slider.value == 90 and video.playback_position == pytest.approx(89 / 24)


def test_missing_annotations_show_a_note_instead_of_failing(tmp_path):
    import gradio as gr

    from components.impact.ui import build_tab
    from components.common.ui import TabContext

    from components.impact.ui import handlers
    from components.impact.ui.session import ImpactResources, ImpactSession

    with gr.Blocks():
        build_tab(TabContext(data_dir=tmp_path, settings=gr.State({})))   # builds without data
    from components.impact.ui.session import tab_source
    opened = handlers.on_load(tab_source(tmp_path).get(), ImpactResources(), ImpactSession(), {})
    assert opened.message.startswith("⚠ No impact annotations") and str(tmp_path) not in opened.message


def test_frame_view_paints_regions_and_explains_a_missing_turntable(data_dir, monkeypatch):
    from components.impact.render import RenderUnavailable
    from components.impact.ui import handlers
    from components.impact.ui.session import ImpactSession

    from components.impact.ui.session import load_tab
    data = load_tab(data_dir)
    state = ImpactSession(spatial={"h0001": {"84": {"regions": ["left calf", "right calf"], "note": "text-only"}}})
    frame = handlers.body.frame_view(data, state, "h0001", 84, turntable=False)
    body3d, legend, line, turn, msg, note = (frame.body3d, frame.legend, frame.regions,
                                             frame.turntable, frame.turntable_msg, frame.body_note)
    mesh = Path(unquote(body3d["mesh"].removeprefix("gradio_api/file=")))
    assert mesh.exists() and mesh.stat().st_size == body3d["vertices"] * 12 + body3d["faces"] * 3 * 2
    assert "predicted [left calf, right calf] · truth [left calf, right calf] · F1 1.00" in line
    assert "hit" in legend.lower() or "both" in legend.lower()
    assert turn is None and "Render turntable" in msg  # rendering costs time: only on request
    assert "mannequin" in note.lower() or "smpl-x" in note.lower()

    def no_gl(body, painted, **kwargs):
        raise RenderUnavailable("no offscreen OpenGL (install libosmesa6 or libegl1)")

    monkeypatch.setattr(handlers.body.render, "turntable_for", no_gl)
    frame = handlers.body.frame_view(data, state, "h0001", 85, turntable=True)
    turn, msg = frame.turntable, frame.turntable_msg
    assert turn is None and msg == "Rotating view unavailable: no offscreen OpenGL (install libosmesa6 or libegl1)"


def test_set_metrics_with_the_baselines_labels_them_and_shows_the_paper(data_dir):
    from components.impact.ui.handlers.metrics import set_metrics
    from components.impact.ui.handlers.model_runs import temporal_status
    from components.impact.ui.session import ImpactTab
    from components.impact.ui.session import ImpactResources
    from components.impact.ui.session import ImpactSession

    annotations = load_annotations(data_dir / "impact" / "annotations.json")
    md = set_metrics(ImpactTab(annotations), ImpactResources(), ImpactSession(), "test",
                     {"backend": "baseline", "max_frames": 32}).metrics
    assert "motion-energy baseline (no model)" in md and "text-only" in md
    assert "(paper, Table 3)" in md and "(paper, Table 4)" in md
    row = next(line for line in md.splitlines() if line.startswith("| **motion-energy"))
    assert re.search(r"\| \d+\.\d\d \|", row)

    from components.impact.solvers import TemporalPrediction

    text = temporal_status(TemporalPrediction("q", [], "unparsed", "openai:gpt-4o", raw="blah",
                                              attempts=["blah"] * 3, prompt_style="gpt", num_frames_sent=40))
    assert "kept raw, counted as unparsed" in text and "3 attempt(s)" in text and "blah" in text


def test_every_metrics_row_names_its_data_and_the_table_says_rows_are_not_comparable(data_dir):
    """Issue 13: this app's numbers on a few clips sat above the paper's HAPACT-test rows with
    nothing saying they are on different data."""
    from components.impact.ui.handlers.metrics import set_metrics
    from components.impact.ui.session import ImpactTab
    from components.impact.ui.session import ImpactResources
    from components.impact.ui.session import ImpactSession

    annotations = load_annotations(data_dir / "impact" / "annotations.json")
    md = set_metrics(ImpactTab(annotations), ImpactResources(), ImpactSession(), "test",
                     {"backend": "baseline", "max_frames": 32}).metrics
    assert md.count("Rows on different data are not comparable") == 3  # temporal, breakdown, spatial
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| Method")]
    assert rows
    for row in rows:
        data = row.rstrip(" |").rsplit("| ", 1)[-1]
        if "(this app" in row:
            assert data.startswith("impact, split test (") and ("queries)" in data or "frames)" in data), row
        else:
            assert data.startswith("HAPACT test (433 queries), paper Table") \
                or data.startswith("HAPACT test (3142 frames), paper Table 4"), row
    assert "mR\\@1/2/3 scored on" in md  # Markdown shows it as mR@1/2/3, not as a mailto link
