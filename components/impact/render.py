"""Painting and rendering the body: per-vertex colours, the camera facing a hit, a turntable video.

Offscreen GL: pyrender needs PYOPENGL_PLATFORM set before it (and PyOpenGL) is imported. An
existing value is respected; otherwise EGL and then OSMesa are each tried in a short subprocess
(a failed GL start can crash a process). EGL wins on a GPU; when EGL only reaches Mesa's software
rasteriser (llvmpipe), OSMesa is preferred if it works (2-3x faster here). When neither works,
`RenderUnavailable` says what to install. pyrender 0.1.45 uses `np.infty` (gone in numpy 2): it
is aliased before the import. Colours passed to pyrender are floats (integers read as 0-255).

Speed: a turntable builds one scene and one OffscreenRenderer and only changes the body node's
pose between frames, so the mesh is uploaded once.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable, Sequence

import numpy as np

from components.base.errors import UserError
from components.impact.regions import LEGEND_TEXT, PALETTE, REGION_COLORS, REGION_LABELS
from components.media import write_frames

if TYPE_CHECKING:
    from components.impact.body import BodyModel

PLATFORMS = ("egl", "osmesa")
BACKGROUND = (0.97, 0.97, 0.98, 1.0)
_GL_LOCK = threading.RLock()      # OpenGL contexts are not thread-safe: one render at a time
_PLATFORM_CHOICE: dict[str, str] = {}


log = logging.getLogger(__name__)


class RenderUnavailable(UserError):
    """Offscreen rendering cannot run here (no EGL / OSMesa)."""


# ---------------------------------------------------------------- colours

def hex_to_rgba(color: str, alpha: int = 255) -> np.ndarray:
    color = color.lstrip("#")
    return np.array([int(color[i:i + 2], 16) for i in (0, 2, 4)] + [alpha], dtype=np.uint8)


def color_legend(pred_mask: np.ndarray | None = None,
                 gt_mask: np.ndarray | None = None) -> list[tuple[str, str]]:
    """(text, "#rrggbb") entries for the colours `vertex_colors` uses with these inputs."""
    if pred_mask is not None and gt_mask is not None:
        keys = ("true_positive", "false_positive", "missed")
    elif gt_mask is not None:
        keys = ("truth",)
    else:
        keys = ("predicted",)
    return [("body", PALETTE["body"])] + [(LEGEND_TEXT[k], PALETTE[k]) for k in keys]


def vertex_colors(body: BodyModel, pred_mask: np.ndarray | None,
                  gt_mask: np.ndarray | None = None) -> np.ndarray:
    """(N, 4) uint8 RGBA: grey body; with only a prediction, predicted vertices in the
    'predicted' colour; with only the truth, 'truth'; with both, true positive (hit), false
    positive (predicted only) and missed (truth only) colours. See `color_legend`."""
    n = body.num_vertices
    colors = np.tile(hex_to_rgba(PALETTE["body"]), (n, 1))
    pred = None if pred_mask is None else np.asarray(pred_mask, dtype=bool)
    gt = None if gt_mask is None else np.asarray(gt_mask, dtype=bool)
    for mask in (pred, gt):
        if mask is not None and mask.shape != (n,):
            raise ValueError(f"mask has shape {mask.shape}; the body has {n} vertices")
    if pred is not None and gt is not None:
        colors[pred & gt] = hex_to_rgba(PALETTE["true_positive"])
        colors[pred & ~gt] = hex_to_rgba(PALETTE["false_positive"])
        colors[~pred & gt] = hex_to_rgba(PALETTE["missed"])
    elif pred is not None:
        colors[pred] = hex_to_rgba(PALETTE["predicted"])
    elif gt is not None:
        colors[gt] = hex_to_rgba(PALETTE["truth"])
    return colors


def region_colors(body: BodyModel) -> np.ndarray:
    """(N, 4) uint8: each vertex in its region's colour (the 18-label map, Figure 13 style)."""
    table = np.stack([hex_to_rgba(REGION_COLORS[label]) for label in REGION_LABELS])
    return table[body.vertex_region]


# ---------------------------------------------------------------- camera of the 3D view

#: the 3D view's camera (alpha, beta in degrees, radius) facing the body's front. The view's orbit
#: camera (impact/ui/body_view.py) sits at target + r * (cos a sin b, cos b, sin a sin b): alpha 90,
#: beta 90 is on +z, where the body faces.
FRONT_CAMERA = (90.0, 90.0, 3.4)
_FRAMING = 3.3       # camera distance per metre of the body's bounding radius (whole body in view)
_MAX_TILT = 25.0     # degrees above / below the horizon for a hit on the head / the feet
_AMBIGUOUS = 0.08    # below this horizontal pull (a hit all around, e.g. the head) face the front


def vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(N, 3) unit normals: the area-weighted normals of the faces around each vertex."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    face_normals = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    normals = np.zeros_like(v)
    for corner in range(3):
        np.add.at(normals, f[:, corner], face_normals)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return normals / np.where(length > 0, length, 1.0)


def camera_for(vertices: np.ndarray, normals: np.ndarray,
               painted: np.ndarray | None) -> tuple[float, float, float]:
    """The 3D view's camera (alpha, beta in degrees, radius) facing the painted vertices.

    The side to look from is where the painted surface faces (its mean normal: a hit on the
    buttocks is seen from behind) plus where it sits off the body's vertical axis (a hand is seen
    from its side); a region that faces every way (the head) is seen from the front. The camera
    tilts up to `_MAX_TILT` towards a hit high or low on the body, and stays far enough to frame
    the whole body. Nothing painted: the front view."""
    v = np.asarray(vertices, dtype=np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    centre, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 1e-9)
    radius = round(_FRAMING * float(np.linalg.norm(v - centre, axis=1).max()), 2)
    mask = None if painted is None else np.asarray(painted, dtype=bool)
    if mask is None or not mask.any():
        return FRONT_CAMERA[0], FRONT_CAMERA[1], radius
    offset = v[mask].mean(axis=0) - centre
    pull = np.asarray(normals, dtype=np.float64)[mask].mean(axis=0) + offset / float(half.max())
    alpha = (float(np.degrees(np.arctan2(pull[2], pull[0]))) if np.hypot(pull[0], pull[2]) > _AMBIGUOUS
             else FRONT_CAMERA[0])
    tilt = _MAX_TILT * float(np.clip(offset[1] / half[1], -1.0, 1.0))
    return round(alpha % 360.0, 1), round(90.0 - tilt, 1), radius


# ---------------------------------------------------------------- offscreen GL

_PROBE = """
import numpy as np
if not hasattr(np, "infty"):
    np.infty = np.inf
import pyrender
r = pyrender.OffscreenRenderer(16, 16)
scene = pyrender.Scene(bg_color=(0.0, 0.0, 0.0, 1.0))
scene.add(pyrender.PerspectiveCamera(yfov=1.0))
r.render(scene)
from OpenGL import GL
print("ok", GL.glGetString(GL.GL_RENDERER).decode(errors="replace"))
r.delete()
"""
_SOFTWARE = ("llvmpipe", "softpipe", "swrast")


def _probe_all(platforms: Sequence[str], timeout: float = 60.0) -> dict[str, tuple[bool, str]]:
    """Try each platform in its own subprocess, all at once -> {platform: (works, GL renderer
    name or the last error line)}."""
    running = {}
    for platform in platforms:
        env = dict(os.environ, PYOPENGL_PLATFORM=platform)
        try:
            running[platform] = subprocess.Popen([sys.executable, "-c", _PROBE], env=env, text=True,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            running[platform] = exc
    results = {}
    for platform, proc in running.items():
        if isinstance(proc, OSError):
            results[platform] = (False, str(proc))
            continue
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            results[platform] = (False, f"no answer within {timeout:.0f} s")
            continue
        lines = [line for line in out.splitlines() if line.startswith("ok")]
        if proc.returncode == 0 and lines:
            results[platform] = (True, lines[-1][2:].strip())
        else:
            results[platform] = (False, (err.strip().splitlines() or [""])[-1])
    return results


def ensure_gl_platform() -> str:
    """Set PYOPENGL_PLATFORM (respecting a value already set) and return it."""
    current = os.environ.get("PYOPENGL_PLATFORM", "").strip()
    if current:
        return current
    if "chosen" in _PLATFORM_CHOICE:
        os.environ["PYOPENGL_PLATFORM"] = _PLATFORM_CHOICE["chosen"]
        return _PLATFORM_CHOICE["chosen"]
    results = _probe_all(PLATFORMS)
    working = [p for p in PLATFORMS if results[p][0]]
    reasons = [f"{p}: {results[p][1] or 'failed'}" for p in PLATFORMS if not results[p][0]]
    # EGL (first in PLATFORMS) wins on a GPU. EGL on Mesa's software rasteriser measured 2-3x
    # slower than OSMesa on the same CPU, so a working OSMesa is preferred then.
    hardware = [p for p in working if not any(n in results[p][1].lower() for n in _SOFTWARE)]
    if working:
        chosen = (hardware or working[-1:])[0]
        _PLATFORM_CHOICE["chosen"] = chosen
        os.environ["PYOPENGL_PLATFORM"] = chosen
        return chosen
    log.warning("offscreen GL unavailable: %s", "; ".join(reasons))
    raise RenderUnavailable(
        "Offscreen 3D rendering is unavailable: neither EGL nor OSMesa works here (the server log "
        "says why). Install the system GL libraries (apt-get install -y libegl1 "
        "libgl1-mesa-dri libosmesa6) and PyOpenGL 3.1.10, or set PYOPENGL_PLATFORM. The "
        "interactive 3D view still works.")


def _pyrender():
    platform = ensure_gl_platform()
    if not hasattr(np, "infty"):
        np.infty = np.inf  # pyrender 0.1.45 still uses it
    try:
        import pyrender
    except Exception as exc:  # noqa: BLE001
        log.warning("pyrender import failed with PYOPENGL_PLATFORM=%r: %r", platform, exc)
        raise RenderUnavailable(f"pyrender could not be loaded with PYOPENGL_PLATFORM={platform!r} "
                                "(the server log says why); use egl or osmesa and install libegl1 / "
                                "libosmesa6.") from exc
    return pyrender


_NODE_CLASS: dict[str, type] = {}


def _ordered_node_class(pyrender):
    """pyrender keeps nodes in sets and sums the lights in set order; default hashes follow memory
    addresses, so the order (and the last bit of a pixel) changed from run to run. Nodes hashed by
    their creation number within the scene make renders repeatable byte for byte."""
    if "cls" not in _NODE_CLASS:
        class OrderedNode(pyrender.Node):
            def __init__(self, sequence: int, **kwargs):
                super().__init__(**kwargs)
                self._sequence = sequence

            def __hash__(self) -> int:
                return self._sequence

            def __eq__(self, other) -> bool:
                return self is other

        _NODE_CLASS["cls"] = OrderedNode
    return _NODE_CLASS["cls"]


def _look_at(eye: np.ndarray, target: np.ndarray, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """Camera/light pose (OpenGL convention: looks along its local -z)."""
    forward = np.asarray(target, float) - np.asarray(eye, float)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    if np.linalg.norm(right) < 1e-6:
        right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = right, true_up, -forward, eye
    return pose


def rotation_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    pose = np.eye(4)
    pose[0, 0], pose[0, 2], pose[2, 0], pose[2, 2] = c, s, -s, c
    return pose


class BodyScene:
    """One pyrender scene + one OffscreenRenderer: a body (centred at the origin), a fixed camera
    framing its bounding sphere from slightly above, and a five-light rig (key, two fills, rim,
    under-light) plus ambient light, so every side is lit while the body turns.

    Use as a context manager; `render(pose)` -> (H, W, 3) uint8 colour and (H, W) depth (metres,
    0 = background). Must be used from the thread that created it.
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray, colors: np.ndarray,
                 width: int = 512, height: int = 512, yfov_deg: float = 30.0,
                 elevation_deg: float = 8.0, background=BACKGROUND, margin: float = 1.05):
        self._lock_held = False
        _GL_LOCK.acquire()
        self._lock_held = True
        try:
            pyrender = _pyrender()
            import trimesh

            vertices = np.asarray(vertices, dtype=np.float64)
            self.centre = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
            centred = vertices - self.centre
            self.radius = float(np.linalg.norm(centred, axis=1).max())
            self.scene = pyrender.Scene(bg_color=np.asarray(background, dtype=np.float64),
                                        ambient_light=np.array([0.35, 0.35, 0.35]))
            # `colors` may be a list of colourings: each is a body variant (e.g. a flash), all
            # uploaded once and switched by visibility in `render(variant=...)`.
            variants = colors if isinstance(colors, (list, tuple)) else [colors]
            self._node_class = _ordered_node_class(pyrender)
            self._sequence = 0
            self.body_nodes = []
            for variant in variants:
                mesh = trimesh.Trimesh(vertices=centred, faces=np.asarray(faces), process=False,
                                       vertex_colors=np.asarray(variant, dtype=np.uint8))
                self.body_nodes.append(self._add(mesh=pyrender.Mesh.from_trimesh(mesh, smooth=True)))
            self.body_node = self.body_nodes[0]
            aspect = width / height
            yfov = np.radians(yfov_deg)
            half = min(yfov, 2 * np.arctan(np.tan(yfov / 2) * aspect)) / 2
            distance = margin * self.radius / np.sin(half)
            elev = np.radians(elevation_deg)
            self.eye = np.array([0.0, distance * np.sin(elev), distance * np.cos(elev)])
            self.camera_pose = _look_at(self.eye, np.zeros(3))
            self.yfov, self.aspect, self.width, self.height = yfov, aspect, width, height
            self._add(camera=pyrender.PerspectiveCamera(yfov=yfov, aspectRatio=aspect, znear=0.05,
                                                        zfar=distance + 3 * self.radius),
                      matrix=self.camera_pose)
            rig = [((1.0, 1.5, 2.0), 3.0), ((-2.0, 0.5, 1.0), 1.6), ((2.0, 0.5, 1.0), 1.6),
                   ((0.0, 1.0, -2.0), 2.0), ((0.0, -2.0, 0.5), 0.8)]
            for direction, intensity in rig:
                eye = np.asarray(direction, float) * 3.0
                self._add(light=pyrender.DirectionalLight(color=np.ones(3), intensity=intensity),
                          matrix=_look_at(eye, np.zeros(3)))
            self.flags = pyrender.RenderFlags.SKIP_CULL_FACES
            try:
                self.renderer = pyrender.OffscreenRenderer(width, height)
            except Exception as exc:  # noqa: BLE001
                log.warning("offscreen renderer failed to start: %r", exc)
                raise RenderUnavailable(
                    f"the offscreen renderer could not start with PYOPENGL_PLATFORM="
                    f"{os.environ.get('PYOPENGL_PLATFORM')!r} (the server log says why); unset it "
                    "to let the app probe egl/osmesa, or install libegl1/libosmesa6.") from exc
            self._pyrender = pyrender
        except BaseException:
            self._release()
            raise

    def _add(self, **kwargs):
        node = self._node_class(self._sequence, **kwargs)
        self._sequence += 1
        self.scene.add_node(node)
        return node

    def _release(self) -> None:
        if self._lock_held:
            self._lock_held = False
            _GL_LOCK.release()

    def render(self, body_pose: np.ndarray | None = None,
               variant: int = 0) -> tuple[np.ndarray, np.ndarray]:
        for i, node in enumerate(self.body_nodes):
            node.mesh.is_visible = i == variant
            if body_pose is not None:
                self.scene.set_pose(node, body_pose)
        color, depth = self.renderer.render(self.scene, flags=self.flags)
        return np.ascontiguousarray(color[..., :3]), depth

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World (body-centred) points -> pixel (x, y) and camera depth, for overlays."""
        points = np.atleast_2d(points)
        view = np.linalg.inv(self.camera_pose)
        cam = (np.c_[points, np.ones(len(points))] @ view.T)[:, :3]
        depth = -cam[:, 2]
        f = (self.height / 2) / np.tan(self.yfov / 2)
        x = self.width / 2 + f * cam[:, 0] / depth
        y = self.height / 2 - f * cam[:, 1] / depth
        return np.stack([x, y], axis=1), depth

    def close(self) -> None:
        try:
            if getattr(self, "renderer", None) is not None:
                self.renderer.delete()
                self.renderer = None
        finally:
            self._release()

    def __enter__(self) -> BodyScene:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render_views(body: BodyModel, colors: np.ndarray, angles_deg: Sequence[float],
                 size: int = 512, on_frame: Callable[[int, int], None] | None = None) -> list[np.ndarray]:
    """Still images of the body turned by each angle (degrees about the vertical axis);
    `on_frame(done, total)` after each."""
    images = []
    with BodyScene(body.vertices, body.faces, colors, size, size) as scene:
        for a in angles_deg:
            images.append(scene.render(rotation_y(np.radians(a)))[0])
            if on_frame is not None:
                on_frame(len(images), len(angles_deg))
    return images


def render_turntable(body: BodyModel, colors: np.ndarray, out_path: str | Path,
                     frames: int = 36, size: int = 512, fmt: str | None = None,
                     fps: float = 12.0, on_frame: Callable[[int, int], None] | None = None) -> Path:
    """A full turn of the body in `frames` steps -> MP4 (H.264) or GIF (by `fmt` or the suffix);
    `on_frame(done, frames)` after each frame is drawn."""
    out_path = Path(out_path)
    fmt = (fmt or out_path.suffix.lstrip(".") or "mp4").lower()
    if fmt not in ("mp4", "gif"):
        raise UserError(f"turntable format {fmt!r} is not supported; use mp4 or gif")
    out_path = out_path.with_suffix(f".{fmt}")
    if frames < 1:
        raise UserError("a turntable needs at least one frame")
    images = render_views(body, colors, [360.0 * i / frames for i in range(frames)], size, on_frame)
    return Path(write_frames(images, out_path, fps))


def time_turntable(body: BodyModel, colors: np.ndarray, out_path: str | Path, frames: int = 36,
                   size: int = 512) -> dict:
    """Timing helper for the report: one turntable vs `frames` single-frame renders (each with its
    own scene + renderer)."""
    start = time.perf_counter()
    render_turntable(body, colors, out_path, frames=frames, size=size)
    turntable = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(frames):
        render_views(body, colors, [360.0 * i / frames], size)
    singles = time.perf_counter() - start
    with BodyScene(body.vertices, body.faces, colors, size, size) as scene:
        scene.render()
        start = time.perf_counter()
        for i in range(frames):
            scene.render(rotation_y(2 * np.pi * i / frames))
        warm = time.perf_counter() - start
    return {"turntable_s": turntable, "single_frames_s": singles, "warm_frames_s": warm,
            "frames": frames, "size": size}
