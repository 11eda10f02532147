"""Rendering the painted body with offscreen GL: still views and the turntable video, kept on disk
(the colours, the camera and the poses are computed by painting.py, pure maths).

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
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable, Sequence

import numpy as np

from components.base.errors import UserError
from components.base.io import atomic_temp_path, commit_temp
# the poses are painting.py's maths; examples/impact_clips.py reaches them here too (render._look_at)
from components.impact.painting import look_at as _look_at, rotation_y, turntable_angles
from components.media import write_frames

if TYPE_CHECKING:
    from components.impact.body import BodyModel
    from components.impact.painting import PaintedFrame

PLATFORMS = ("egl", "osmesa")
BACKGROUND = (0.97, 0.97, 0.98, 1.0)
_GL_LOCK = threading.RLock()      # OpenGL contexts are not thread-safe: one render at a time
_PLATFORM_CHOICE: dict[str, str] = {}


log = logging.getLogger(__name__)


class RenderUnavailable(UserError):
    """Offscreen rendering cannot run here (no EGL / OSMesa)."""


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
    images = render_views(body, colors, turntable_angles(frames), size, on_frame)
    return Path(write_frames(images, out_path, fps))


# ---------------------------------------------------------------- the turntables kept on disk

#: frames in one turn of the rotating view
TURNTABLE_FRAMES = 36


def render_dir() -> Path:
    """Where the body's mesh file and the turntables are kept ($IMPACT_RENDER_DIR, else a temp
    folder)."""
    path = Path(os.environ.get("IMPACT_RENDER_DIR") or Path(tempfile.gettempdir()) / "impact-render")
    path.mkdir(parents=True, exist_ok=True)
    return path


def turntable_path(painted: PaintedFrame) -> Path:
    """Where the rotating view of a painting is kept (named by the painting's key)."""
    return render_dir() / f"{painted.key}-turntable.mp4"


def turntable_for(body: BodyModel, painted: PaintedFrame, frames: int = TURNTABLE_FRAMES, size: int = 384,
                  on_frame: Callable[[int, int], None] | None = None) -> Path:
    """The rotating view of a painted state (rendered once, then reused; `on_frame(done, frames)`
    while it is drawn). Raises RenderUnavailable."""
    out = turntable_path(painted)
    if not out.exists():
        # drawn under a temp name, then renamed: another visitor (or server) asking for the same
        # painting meanwhile never gets a half-written video
        tmp = atomic_temp_path(out)
        try:
            render_turntable(body, painted.colors, tmp, frames=frames, size=size, on_frame=on_frame)
            commit_temp(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    return out
