"""Vertex colours, the offscreen turntable and its fallback message."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from components.impact.body import load_body, region_vertex_mask
from components.impact.regions import PALETTE
from components.impact.painting import color_legend, hex_to_rgba, rotation_y, vertex_colors
from components.impact.regions import REGION_COLORS, REGION_LABELS
from components.impact.render import RenderUnavailable, render_turntable, render_views

ROOT = Path(__file__).resolve().parents[2]




def region_colors(body) -> np.ndarray:
    """(N, 4) uint8: each vertex in its region's colour (the 18-label map): a painting to render."""
    table = np.stack([hex_to_rgba(REGION_COLORS[label]) for label in REGION_LABELS])
    return table[body.vertex_region]

@pytest.fixture(scope="module")
def body():
    return load_body(prefer_smplx=False)


def _require_gl() -> None:
    """`make test` installs OSMesa (scripts/install_system_deps.sh): no offscreen GL is a failure."""
    from components.impact.render import ensure_gl_platform

    try:
        ensure_gl_platform()
    except RenderUnavailable as exc:
        pytest.fail(f"offscreen GL is missing ({exc}); run scripts/install_system_deps.sh as root")


def test_vertex_colors_categories(body):
    pred = region_vertex_mask(body, ["head", "left calf"])
    gt = region_vertex_mask(body, ["head", "chest"])
    colors = vertex_colors(body, pred, gt)
    assert colors.shape == (body.num_vertices, 4) and colors.dtype == np.uint8
    head, calf, chest = (region_vertex_mask(body, [x]) for x in ("head", "left calf", "chest"))
    assert (colors[head] == hex_to_rgba(PALETTE["true_positive"])).all()
    assert (colors[calf] == hex_to_rgba(PALETTE["false_positive"])).all()
    assert (colors[chest] == hex_to_rgba(PALETTE["missed"])).all()
    rest = ~(pred | gt)
    assert (colors[rest] == hex_to_rgba(PALETTE["body"])).all()
    only_pred = vertex_colors(body, pred)
    assert (only_pred[pred] == hex_to_rgba(PALETTE["predicted"])).all()
    only_gt = vertex_colors(body, None, gt)
    assert (only_gt[gt] == hex_to_rgba(PALETTE["truth"])).all()
    legend = dict((text, color) for text, color in color_legend(pred, gt))
    assert legend["hit (predicted and true)"] == PALETTE["true_positive"]
    assert len(set(PALETTE.values())) == len(PALETTE)  # every colour tells one thing


def test_turntable_renders_every_frame_to_mp4(body, tmp_path):
    _require_gl()
    from components.media import open_video

    colors = vertex_colors(body, region_vertex_mask(body, ["head"]))
    out = render_turntable(body, colors, tmp_path / "turn.mp4", frames=8, size=96)
    assert out.suffix == ".mp4" and out.stat().st_size > 0
    with open_video(out) as video:
        assert video.num_frames == 8
    views = render_views(body, colors, [0, 90, 180], size=64)
    # the body covers part of the image, the background the rest, and turning changes the view
    for image in views:
        background = (image.astype(int) - [247, 247, 250]).__abs__().max(axis=2) < 6
        assert 0.05 < (~background).mean() < 0.8
    assert np.abs(views[0].astype(int) - views[1].astype(int)).mean() > 2
    # the painted head (predicted colour) faces the camera at 0 degrees: blue-ish pixels present
    blue = hex_to_rgba(PALETTE["predicted"])[:3].astype(int)
    near = (np.abs(views[0].astype(int) - blue).max(axis=2) < 90) & (views[0][..., 2] > views[0][..., 0] + 40)
    assert near.sum() > 3


def test_gif_turntable(body, tmp_path):
    _require_gl()
    out = render_turntable(body, region_colors(body), tmp_path / "turn", frames=3, size=48, fmt="gif")
    assert out.suffix == ".gif" and out.read_bytes()[:3] == b"GIF"


_SCRIPT = """
import sys
import numpy as np
from components.impact import render
from components.impact.body import BodyModel
body = BodyModel(vertices=np.eye(3, dtype=np.float32), faces=np.array([[0, 1, 2]]),
                 vertex_region=np.zeros(3, dtype=np.int64), kind="mannequin", note="")
if sys.argv[1] == "probe":
    render.PLATFORMS = ("no-such-platform",)
try:
    render.render_views(body, np.full((3, 4), 200, dtype=np.uint8), [0], 32)
except render.RenderUnavailable as exc:
    print("UNAVAILABLE:", exc)
    sys.exit(0)
print("rendered")
sys.exit(1)
"""


@pytest.mark.parametrize("mode,env_value,expected", [
    ("env", "no-such-platform", "PYOPENGL_PLATFORM='no-such-platform'"),
    ("probe", None, "neither EGL nor OSMesa works here"),
])
def test_render_unavailable_gives_a_clear_message(mode, env_value, expected):
    env = {k: v for k, v in os.environ.items() if k != "PYOPENGL_PLATFORM"}
    if env_value:
        env["PYOPENGL_PLATFORM"] = env_value
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "UNAVAILABLE:" in done.stdout and expected in done.stdout
    assert "apt-get install" in done.stdout or "libosmesa6" in done.stdout


def test_renders_repeat_byte_for_byte(body):
    _require_gl()
    from components.impact.render import BodyScene

    colors = region_colors(body)
    orders, images = [], []
    for _ in range(3):
        with BodyScene(body.vertices, body.faces, colors, 64, 48) as scene:
            # pyrender sums the lights in the iteration order of a set: it must not vary by run
            orders.append([n.light.intensity for n in scene.scene.light_nodes])
            images.append(scene.render(rotation_y(0.4))[0])
    assert orders[0] == orders[1] == orders[2]
    assert len(set(orders[0])) > 1  # a real rig, several lights
    assert all(np.array_equal(images[0], image) for image in images[1:])
