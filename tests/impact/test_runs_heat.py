"""The runs' heat on the body (issue 29): for the frame on screen, each region painted by how many
of the N runs named it (a sequential scale, legend "k of N runs"), the annotated regions striped green;
the colour logic (components/impact/runs_view.py) on the real mannequin, and the runs panel's
toggle (ui/handlers/body.set_runs_heat) on run files written here."""
from __future__ import annotations

import json

import numpy as np
import pytest

from components.impact import runs_view
from components.impact.body import load_body, region_vertex_mask
from components.impact.body_mesh import painting_payload
from components.impact.regions import PALETTE
from components.impact.painting import hex_to_rgba
from components.impact.runs import FrameRuns, RunRegions
from components.impact.ui import handlers
from components.impact.ui.handlers import runs_panel
from components.impact.ui.session import ImpactResources, ImpactSession, load_tab
from tests.impact.clipdata import make_impact_data

#: what three runs named at frame 84 of h0001 (the truth: left calf, right calf)
ANSWERS = {"run-a": ["left calf", "right calf"], "run-b": ["left calf"], "run-c": ["left calf", "head"]}


def rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(v) for v in hex_to_rgba(colour)[:3])


@pytest.fixture(scope="module")
def body():
    return load_body()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("heat")
    make_impact_data(root)
    for name, regions in ANSWERS.items():
        lines = [{"qid": "h0001", "frame": f, "regions": regions if f == 84 else ["left calf"]} for f in range(83, 87)]
        folder = root / "impact" / "runs" / name
        folder.mkdir(parents=True)
        (folder / "spatial_pred.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    tab = load_tab(root)
    assert runs_panel.loader_for(root).wait(120) is not None
    return tab


def test_the_scale_runs_from_the_lightest_to_the_darkest_colour_linearly_in_k_over_n():
    assert runs_view.heat_colour(4, 4) == runs_view.HEAT_SCALE[-1]
    assert runs_view.heat_colour(3, 9) == runs_view.HEAT_SCALE[1]   # 1/3 of the way: the second anchor
    low, high = np.array(rgb(runs_view.HEAT_SCALE[1])), np.array(rgb(runs_view.HEAT_SCALE[2]))
    assert np.abs(np.array(rgb(runs_view.heat_colour(2, 4))) - (low + high) / 2).max() <= 0.5   # k/N = 1/2
    darkness = [sum(rgb(runs_view.heat_colour(k, 5))) for k in range(1, 6)]
    assert darkness == sorted(darkness, reverse=True) and len(set(darkness)) == 5   # more runs, darker
    with pytest.raises(ValueError, match="0 of 3"):
        runs_view.heat_colour(0, 3)


def test_the_legend_says_k_of_n_runs_and_the_stripes():
    texts = [t for t, _ in runs_view.heat_legend(3, truth=True)]
    assert texts == ["no run", "1 of 3 runs", "2 of 3 runs", "3 of 3 runs", "annotated (green stripes)"]
    many = [t for t, _ in runs_view.heat_legend(10, truth=False)]
    assert many == ["no run", "1 of 10 runs", "2 of 10 runs", "5 of 10 runs", "8 of 10 runs", "10 of 10 runs"]


def test_each_region_takes_the_colour_of_its_count_and_the_truth_is_striped(body):
    truth = region_vertex_mask(body, ["left calf", "right calf", "head", "left upper arm"])
    colors = runs_view.heat_colors(body, {"left calf": 3, "head": 1, "not a region": 2}, 3, truth)
    striped = runs_view.stripes(body, truth)
    assert not (striped & ~truth).any()
    left, right, head, arm = (region_vertex_mask(body, [r]) for r in ("left calf", "right calf", "head", "left upper arm"))
    for region in (left, right, head, arm):   # every annotated region shows stripes and what lies between them
        assert 0.1 < (striped & region).sum() / region.sum() < 0.6
    assert (colors[left & ~striped, :3] == rgb(runs_view.heat_colour(3, 3))).all()
    assert (colors[right & ~striped, :3] == rgb(PALETTE["body"])).all()   # annotated, named by no run: grey
    assert (colors[head & ~striped, :3] == rgb(runs_view.heat_colour(1, 3))).all()
    assert (colors[striped, :3] == rgb(runs_view.TRUTH_COLOUR)).all()
    rest = ~(left | right | head | arm)
    assert (colors[rest, :3] == rgb(PALETTE["body"])).all()         # a label of no region is never painted


def test_a_frame_of_three_runs_paints_their_counts_and_faces_the_most_named(body, data):
    frame = FrameRuns(84, ["left calf", "right calf"], [RunRegions(n, r, "ok") for n, r in ANSWERS.items()])
    assert frame.counts() == {"left calf": 3, "head": 1, "right calf": 1}
    painted = runs_view.paint_runs_heat(body, data.item("h0001"), frame)
    assert [t for t, _ in painted.legend][1:4] == ["1 of 3 runs", "2 of 3 runs", "3 of 3 runs"]
    palette = {tuple(c) for c in painting_payload(painted.colors)["palette"]}
    assert {rgb(runs_view.heat_colour(3, 3)), rgb(runs_view.heat_colour(1, 3)), rgb(runs_view.TRUTH_COLOUR)} <= palette
    assert rgb(runs_view.heat_colour(2, 3)) not in palette          # no region was named by exactly two
    assert painted.camera[1] > 90                                    # the calves: the camera looks up from below
    assert "3 of 3 runs say left calf" in runs_view.heat_line(frame)


def test_hundreds_of_runs_stay_within_a_paintings_colours(body):
    counts = {r: k for r, k in zip(("head", "neck", "chest", "back", "left hand"), (1, 77, 150, 299, 300))}
    colors = runs_view.heat_colors(body, counts, 300, region_vertex_mask(body, ["chest"]))
    assert len(painting_payload(colors)["palette"]) <= 256


def test_the_runs_toggle_paints_the_frame_on_screen_and_turning_it_off_paints_the_session_again(data, tmp_path,
                                                                                              monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))
    res, session = ImpactResources(), ImpactSession()
    plain = handlers.on_frame(data, res, session, "h0001", 84).body
    heat = handlers.set_runs_heat(data, res, session, "h0001", 84, True, dict(plain.body3d))
    assert heat.session.runs_heat and not session.runs_heat
    assert heat.body.body3d["key"] != plain.body3d["key"]            # a new painting went out
    assert "3 of 3 runs" in heat.body.legend and "1 of 3 runs" in heat.body.legend
    assert "annotated (green stripes)" in heat.body.legend
    assert "3 of 3 runs say left calf · 1 of 3 runs say head · 1 of 3 runs say right calf" in heat.body.regions
    palette = {tuple(c) for c in heat.body.body3d["palette"]}
    assert rgb(runs_view.heat_colour(3, 3)) in palette and rgb(runs_view.heat_colour(1, 3)) in palette
    moved = handlers.on_frame(data, res, heat.session, "h0001", 85).body  # the heat follows the frame
    assert "3 of 3 runs say left calf" in moved.regions and "head" not in moved.regions.split("Runs at")[1]
    unannotated = handlers.on_frame(data, res, heat.session, "h0001", 10).body
    assert "No run answered frame 10" in unannotated.regions and "runs" not in unannotated.legend
    off = handlers.set_runs_heat(data, res, heat.session, "h0001", 84, False, heat.body.body3d)
    assert off.body.body3d["key"] == plain.body3d["key"] and "Runs at" not in off.body.regions
