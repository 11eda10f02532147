"""The 3D view's camera faces the painted (hit) vertices: painting.camera_for, on a box and on the body."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from components.impact import painting
from components.impact.data import FrameAnnotation, ImpactItem
from components.impact.body import load_body, vertex_mask_from_annotation
from components.impact.painting import FRONT_CAMERA, camera_for, vertex_normals


@pytest.fixture(autouse=True)
def own_render_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))


def box(width=1.0, height=2.0, depth=0.5):
    """A closed box centred at the origin (y up), its faces wound outwards."""
    x, y, z = width / 2, height / 2, depth / 2
    vertices = np.array([[-x, -y, -z], [x, -y, -z], [x, y, -z], [-x, y, -z],
                         [-x, -y, z], [x, -y, z], [x, y, z], [-x, y, z]], dtype=float)
    faces = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                      [3, 7, 6], [3, 6, 2], [0, 4, 7], [0, 7, 3], [1, 2, 6], [1, 6, 5]])
    return vertices, faces


def angle_gap(a: float, b: float) -> float:
    return abs((a - b + 180) % 360 - 180)


def test_vertex_normals_of_a_box_point_outwards():
    vertices, faces = box()
    normals = vertex_normals(vertices, faces)
    assert np.allclose(np.linalg.norm(normals, axis=1), 1.0)
    assert (np.sum(normals * vertices, axis=1) > 0).all()  # every corner's normal points away from the centre


@pytest.mark.parametrize("side,alpha", [("front", 90), ("back", 270), ("+x", 0), ("-x", 180)])
def test_a_painted_side_of_a_box_is_faced(side, alpha):
    vertices, faces = box(width=1.0, height=1.0, depth=1.0)
    normals = vertex_normals(vertices, faces)
    axis, sign = {"front": (2, 1), "back": (2, -1), "+x": (0, 1), "-x": (0, -1)}[side]
    painted = np.sign(vertices[:, axis]) == sign
    a, b, r = camera_for(vertices, normals, painted)
    assert angle_gap(a, alpha) < 5.0, (side, a)  # (the triangulation tilts corner normals a little)
    assert b == pytest.approx(90.0)  # the painted side is neither high nor low on the box
    assert r == pytest.approx(3.3 * np.sqrt(0.75), abs=0.01)  # frames the whole box


def test_nothing_painted_is_the_front_view():
    vertices, faces = box()
    normals = vertex_normals(vertices, faces)
    for painted in (None, np.zeros(len(vertices), dtype=bool)):
        a, b, _ = camera_for(vertices, normals, painted)
        assert (a, b) == FRONT_CAMERA[:2]


@pytest.mark.parametrize("labels,alpha", [(["butt"], 270), (["back"], 270), (["chest"], 90),
                                          (["head"], 90), (["right hand"], 180), (["left hand"], 0)])
def test_the_body_is_seen_from_the_side_that_was_hit(labels, alpha):
    body = load_body()
    normals = vertex_normals(body.vertices, body.faces)
    a, _, _ = camera_for(body.vertices, normals, vertex_mask_from_annotation(body, labels, None))
    assert angle_gap(a, alpha) < 25.0, (labels, a)


def test_the_camera_tilts_towards_a_hit_high_or_low_on_the_body():
    body = load_body()
    normals = vertex_normals(body.vertices, body.faces)
    _, head, _ = camera_for(body.vertices, normals, vertex_mask_from_annotation(body, ["head"], None))
    _, calf, _ = camera_for(body.vertices, normals, vertex_mask_from_annotation(body, ["left calf"], None))
    assert 60 <= head < 85 and 95 < calf <= 120


def test_a_painted_frame_carries_the_camera_of_its_paint():
    body = load_body()
    item = ImpactItem(qid="h7", video=Path("clip.mp4"), query="hit in the buttocks", num_frames=48,
                      moments=[(10, 12)], fps=24.0, frames={11: FrameAnnotation(["butt"])})
    hit = painting.paint_frame(body, item, 11, None)
    assert angle_gap(hit.camera[0], 270) < 25.0
    assert painting.paint_frame(body, item, 30, None).camera[:2] == FRONT_CAMERA[:2]  # nothing painted there
