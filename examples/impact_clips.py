"""Synthetic impact clips for the Impact tab (HAPACT-style annotations, exact by construction).

    generate(out_dir, seed=0) writes
      out_dir/clips/<qid>.mp4        24 fps, 320x240, 6-8 s: the mannequin struck by a ball, box
                                     or staff; the struck region flashes and the body tilts away
      out_dir/annotations.json       docs/formats.md impact layout (1-based inclusive moments)
      out_dir/temporal_gt.jsonl      QVHighlights-style GT (relevant_windows in seconds)
      out_dir/README.txt             what the data is and which renderer drew it

A moment [fs, fe] is the run of frames in which the object touches the body; every frame of a
moment is annotated with the struck regions. The body is rendered with pyrender offscreen once per
distinct (tilt, flash) state and re-used; the flying object is drawn in 2D per frame with a depth
test against the body's depth map. Without offscreen GL a numpy point-splat silhouette renderer
draws the body instead (said in README.txt and on stderr), so generation never fails.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path

import numpy as np

from components.impact.body import load_body, region_vertex_mask
from components.impact import render  # as a module: tests replace render.BodyScene
from components.media import write_frames
from examples.example_runs import write_impact_runs

FPS = 24
WIDTH, HEIGHT = 320, 240
BODY_RGB = "#d9b98f"       # light wood
FLASH_RGB = "#ff4020"
TILT_LEVELS = 4            # distinct reaction poses per clip (0 .. max tilt)
MAX_TILT_DEG = 9.0


@dataclass(frozen=True)
class Strike:
    contact: int               # first contact frame (1-based)
    length: int                # frames in contact
    approach: tuple[float, float, float]   # direction the object comes from (body-local)


@dataclass(frozen=True)
class ClipSpec:
    qid: str
    query: str
    regions: tuple[str, ...]
    obj: str                   # "ball" | "box" | "staff"
    yaw_deg: float             # which side of the body faces the camera
    seconds: float
    strikes: tuple[Strike, ...]
    split: str = "test"
    rgb: str = "#2f6fdf"


CLIPS: tuple[ClipSpec, ...] = (
    ClipSpec("h0001", "A man is struck in the head by a ball.", ("head",), "ball", 20.0, 6.0,
             (Strike(70, 3, (1.0, 0.25, 1.0)),), rgb="#2f6fdf"),
    ClipSpec("h0002", "A man is struck behind the knees by a staff.", ("left calf", "right calf"),
             "staff", 200.0, 6.5, (Strike(83, 4, (0.9, 0.0, -1.0)),), rgb="#6b4423"),
    ClipSpec("h0003", "A man is hit in the stomach by a ball twice.", ("chest",), "ball", 0.0, 7.0,
             (Strike(50, 2, (-0.8, 0.2, 1.0)), Strike(115, 2, (0.8, 0.1, 1.0))), rgb="#2f6fdf"),
    ClipSpec("h0004", "A man is pelted in the back by three boxes.", ("back",), "box", 180.0, 8.0,
             (Strike(40, 1, (0.7, 0.3, -1.0)), Strike(92, 2, (-0.7, 0.2, -1.0)),
              Strike(150, 5, (0.2, 0.5, -1.0))), rgb="#8a5a2b"),
    ClipSpec("h0005", "A ball smashes into a man's right hand.", ("right hand",), "ball", 0.0, 6.0,
             (Strike(60, 6, (-1.0, 0.4, 0.15)),), split="val", rgb="#1f9e4a"),
    ClipSpec("h0006", "A man is struck on the left shin by a box.", ("left calf",), "box", 30.0, 6.5,
             (Strike(95, 8, (1.0, 0.1, 1.0)),), rgb="#7d3fb5"),
    ClipSpec("h0007", "A man is knocked in the buttocks and then in the back of the head by a ball.",
             ("butt",), "ball", 180.0, 8.0,
             (Strike(45, 3, (0.8, 0.0, -1.0)), Strike(130, 2, (-0.6, 0.3, -1.0))), rgb="#e08a00"),
)
#: h0007's second strike hits the head: its regions per strike (default: the clip's regions).
STRIKE_REGIONS = {("h0007", 1): ("head",)}


def _rgba(hex_color: str) -> np.ndarray:
    hex_color = hex_color.lstrip("#")
    return np.array([int(hex_color[i:i + 2], 16) for i in (0, 2, 4)] + [255], dtype=np.uint8)


def _pose(yaw_deg: float, tilt_deg: float, tilt_axis: np.ndarray, foot_y: float) -> np.ndarray:
    """Body pose: tilt about a horizontal axis through the feet, then turn by yaw."""
    axis = np.asarray(tilt_axis, float)
    axis = axis / (np.linalg.norm(axis) + 1e-12)
    angle = np.radians(tilt_deg)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
    tilt = np.eye(4)
    tilt[:3, :3] = rot
    pivot = np.array([0.0, foot_y, 0.0])
    tilt[:3, 3] = pivot - rot @ pivot
    return render.rotation_y(np.radians(yaw_deg)) @ tilt


class _SilhouetteScene:
    """numpy fallback with BodyScene's interface: z-buffered point splats with Lambert shading."""

    def __init__(self, vertices, faces, colors, width, height, yfov_deg=30.0, elevation_deg=8.0,
                 margin=1.05):
        vertices = np.asarray(vertices, dtype=np.float64)
        self.centre = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
        self.points = vertices - self.centre
        self.radius = float(np.linalg.norm(self.points, axis=1).max())
        normals = np.zeros_like(self.points)
        tri = self.points[faces]
        face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        for j in range(3):
            np.add.at(normals, faces[:, j], face_n)
        self.normals = normals / (np.linalg.norm(normals, axis=1, keepdims=True) + 1e-12)
        self.variants = colors if isinstance(colors, (list, tuple)) else [colors]
        self.width, self.height = width, height
        self.yfov = np.radians(yfov_deg)
        half = min(self.yfov, 2 * np.arctan(np.tan(self.yfov / 2) * width / height)) / 2
        distance = margin * self.radius / np.sin(half)
        elev = np.radians(elevation_deg)
        self.eye = np.array([0.0, distance * np.sin(elev), distance * np.cos(elev)])
        self.camera_pose = render._look_at(self.eye, np.zeros(3))

    def project(self, points):
        points = np.atleast_2d(points)
        cam = (np.c_[points, np.ones(len(points))] @ np.linalg.inv(self.camera_pose).T)[:, :3]
        depth = -cam[:, 2]
        f = (self.height / 2) / np.tan(self.yfov / 2)
        return np.stack([self.width / 2 + f * cam[:, 0] / depth,
                         self.height / 2 - f * cam[:, 1] / depth], axis=1), depth

    def render(self, body_pose=None, variant=0):
        pose = np.eye(4) if body_pose is None else body_pose
        points = self.points @ pose[:3, :3].T + pose[:3, 3]
        normals = self.normals @ pose[:3, :3].T
        xy, depth = self.project(points)
        light = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8])
        shade = 0.45 + 0.55 * np.abs(normals @ light)
        rgb = self.variants[variant][:, :3].astype(np.float64) * shade[:, None]
        order = np.argsort(-depth)  # far first, near last (near wins)
        color = np.full((self.height, self.width, 3), 247, dtype=np.uint8)
        zbuf = np.zeros((self.height, self.width), dtype=np.float32)
        px = np.round(xy[order]).astype(int)
        for dx in (0, 1):
            for dy in (0, 1):
                x, y = px[:, 0] + dx, px[:, 1] + dy
                ok = (x >= 0) & (x < self.width) & (y >= 0) & (y < self.height)
                color[y[ok], x[ok]] = np.clip(rgb[order][ok], 0, 255).astype(np.uint8)
                zbuf[y[ok], x[ok]] = depth[order][ok]
        return color, zbuf

    def close(self):
        pass


def _open_scene(body, variants):
    """(scene, renderer name): pyrender offscreen when it works, else the numpy silhouette."""
    try:
        scene = render.BodyScene(body.vertices, body.faces, variants, WIDTH, HEIGHT)
        return scene, f"pyrender offscreen ({os.environ.get('PYOPENGL_PLATFORM')})"
    except render.RenderUnavailable as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - any GL failure: fall back, never fail
        reason = f"{type(exc).__name__}: {exc}"
    print(f"impact examples: offscreen GL unavailable ({reason[:200]}); drawing the body with the "
          "numpy silhouette renderer instead", file=sys.stderr)
    return _SilhouetteScene(body.vertices, body.faces, variants, WIDTH, HEIGHT), \
        "numpy silhouette (offscreen GL unavailable)"


def _object_mask(obj: str, centre_xy, size_px: float, angle: float, xx, yy):
    dx, dy = xx - centre_xy[0], yy - centre_xy[1]
    if obj == "ball":
        return dx * dx + dy * dy <= size_px * size_px
    c, s = np.cos(angle), np.sin(angle)
    u, v = c * dx + s * dy, -s * dx + c * dy
    if obj == "box":
        return (np.abs(u) <= size_px) & (np.abs(v) <= size_px)
    return (np.abs(u) <= 4.2 * size_px) & (np.abs(v) <= 0.28 * size_px)  # staff: a long bar


def _strike_track(strike: Strike, contact_point: np.ndarray, radius: float, total: int):
    """Object centre per frame (None when off-screen): flies in for 18 frames, holds during the
    contact frames, flies out for 18 frames along a bounced direction."""
    direction = np.asarray(strike.approach, float)
    direction /= np.linalg.norm(direction)
    rest = contact_point + direction * radius * 0.5  # overlaps the surface a little: a touch
    start = rest + direction * 2.2
    bounce = direction * np.array([1.0, -0.3, 1.0]) + np.array([0.0, 0.6, 0.0])
    bounce /= np.linalg.norm(bounce)
    end = rest + bounce * 2.2
    track = {}
    first, last = strike.contact, strike.contact + strike.length - 1
    for f in range(max(1, first - 18), first):
        t = (f - (first - 18)) / 18.0
        track[f] = start + (rest - start) * t
    for f in range(first, last + 1):
        track[f] = rest
    for f in range(last + 1, min(total, last + 18) + 1):
        t = (f - last) / 18.0
        track[f] = rest + (end - rest) * t
    return track


def _variant_table(body, clips) -> tuple[list[np.ndarray], dict[tuple[str, ...], int]]:
    """Body colourings: 0 = plain wood; one flash colouring per distinct set of struck regions."""
    base = np.tile(_rgba(BODY_RGB), (body.num_vertices, 1))
    variants, index = [base], {}
    for spec in clips:
        for k in range(len(spec.strikes)):
            regions = STRIKE_REGIONS.get((spec.qid, k), spec.regions)
            if regions not in index:
                flash = base.copy()
                flash[region_vertex_mask(body, list(regions))] = _rgba(FLASH_RGB)
                index[regions] = len(variants)
                variants.append(flash)
    return variants, index


def _render_clip(spec: ClipSpec, body, rng: np.random.Generator, clips_dir: Path, scene,
                 variant_of: dict[tuple[str, ...], int]) -> dict:
    total = int(round(spec.seconds * FPS))
    regions_per_strike = [STRIKE_REGIONS.get((spec.qid, i), spec.regions)
                          for i in range(len(spec.strikes))]
    foot_y = float(body.vertices[:, 1].min() - scene.centre[1])
    centred = body.vertices.astype(np.float64) - scene.centre
    yaw_pose = _pose(spec.yaw_deg, 0.0, np.array([1.0, 0.0, 0.0]), foot_y)
    # per frame: (tilt level, variant) and object centres
    state = {f: [0, 0] for f in range(1, total + 1)}
    tracks = []
    tilt_axes = []
    obj_size = 0.07 if spec.obj != "staff" else 0.06
    for strike, regions in zip(spec.strikes, regions_per_strike):
        mask = region_vertex_mask(body, list(regions))
        world = centred[mask] @ yaw_pose[:3, :3].T
        # contact on the region's camera-facing side: mean of its nearest 15% of vertices
        near = world[np.argsort(-world[:, 2])[:max(1, len(world) * 15 // 100)]]
        contact = near.mean(axis=0)
        approach = np.asarray(strike.approach, float) @ yaw_pose[:3, :3].T
        approach[2] = max(approach[2], 0.15)  # always arrive from the camera's side
        approach = tuple(approach + rng.normal(0, 0.03, 3))
        tracks.append(_strike_track(Strike(strike.contact, strike.length, approach), contact,
                                    obj_size, total))
        push = -np.asarray(approach)  # the body tilts away from the object
        tilt_axes.append(np.cross([0.0, 1.0, 0.0], push))
        for f in range(strike.contact, strike.contact + strike.length):
            state[f][1] = variant_of[regions]
        for offset in range(0, strike.length + 14):
            f = strike.contact + offset
            if f > total:
                break
            rise = min(1.0, (offset + 1) / 3.0)
            decay = max(0.0, 1.0 - max(0, offset - strike.length) / 12.0)
            level = int(round(rise * decay * (TILT_LEVELS - 1)))
            state[f][0] = max(state[f][0], level) if state[f][0] else level
    cache: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
    active_axis = {}
    for k, strike in enumerate(spec.strikes):
        for f in range(strike.contact, min(total, strike.contact + strike.length + 14) + 1):
            active_axis[f] = k
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH]
    frames = []
    for f in range(1, total + 1):
        level, variant = state[f]
        axis_k = active_axis.get(f, 0)
        key = (level, variant, axis_k if level else 0)
        if key not in cache:
            tilt = MAX_TILT_DEG * level / (TILT_LEVELS - 1)
            # tilt in body-local axes, expressed before the yaw
            axis_local = tilt_axes[axis_k] @ yaw_pose[:3, :3] if tilt_axes else np.array([1.0, 0, 0])
            pose = _pose(spec.yaw_deg, tilt, axis_local, foot_y)
            cache[key] = scene.render(pose, variant=variant)
        color, depth = cache[key]
        image = color.copy()
        for track in tracks:
            if f in track:
                _draw_object(image, depth, np.asarray(track[f]), f, spec, scene, obj_size, xx, yy)
        frames.append(image)
    write_frames(frames, clips_dir / f"{spec.qid}.mp4", FPS)
    return _clip_record(spec, total, regions_per_strike)


def _draw_object(image: np.ndarray, depth: np.ndarray, centre: np.ndarray, f: int, spec: ClipSpec,
                 scene, obj_size: float, xx: np.ndarray, yy: np.ndarray) -> None:
    """Paint the striking object at `centre` into frame `f`, hidden where the body is in front."""
    xy, z = scene.project(centre[None])
    radius_px = obj_size * (HEIGHT / 2) / np.tan(scene.yfov / 2) / z[0]
    reach = radius_px * (4.5 if spec.obj == "staff" else 1.5) + 2
    x0, x1 = int(max(0, xy[0][0] - reach)), int(min(WIDTH, xy[0][0] + reach + 1))
    y0, y1 = int(max(0, xy[0][1] - reach)), int(min(HEIGHT, xy[0][1] + reach + 1))
    if x0 >= x1 or y0 >= y1:
        return  # off-screen
    win = (slice(y0, y1), slice(x0, x1))
    inside = _object_mask(spec.obj, xy[0], radius_px, 0.3 + 0.15 * f, xx[win], yy[win])
    visible = inside & ((depth[win] == 0) | (depth[win] > z[0] - obj_size))
    shade = 1.0 - 0.35 * np.clip(((xx[win] - xy[0][0]) ** 2 + (yy[win] - xy[0][1]) ** 2)
                                 / (radius_px * 2.0) ** 2, 0, 1)
    rgb = _rgba(spec.rgb)[:3].astype(np.float64)
    patch = image[win]
    patch[visible] = np.clip(rgb[None, :] * shade[visible][:, None], 0, 255).astype(np.uint8)


def _clip_record(spec: ClipSpec, total: int, regions_per_strike: list) -> dict:
    """The clip's annotation record: its moments and every annotated frame's regions."""
    moments = [[s.contact, s.contact + s.length - 1] for s in spec.strikes]
    annotated = {}
    for (fs, fe), regions in zip(moments, regions_per_strike):
        for f in range(fs, fe + 1):
            annotated[str(f)] = {"regions": list(regions)}
    return {"qid": spec.qid, "video": f"clips/{spec.qid}.mp4", "query": spec.query,
            "split": spec.split, "movie": "synthetic", "num_frames": total, "moments": moments,
            "frames": annotated}


def generate(out_dir: Path, seed: int = 0, *, qids: tuple[str, ...] | None = None,
             progress: Callable[[float], None] | None = None) -> None:
    """Write the clips (all, or only `qids`) and their annotations into out_dir; `progress(fraction)`
    after each clip."""
    out_dir = Path(out_dir)
    clips_dir = out_dir / "clips"
    clips_dir.mkdir(parents=True, exist_ok=True)
    body = load_body(prefer_smplx=False)
    chosen = [(i, spec) for i, spec in enumerate(CLIPS) if qids is None or spec.qid in qids]
    variants, variant_of = _variant_table(body, [spec for _, spec in chosen])
    scene, renderer = _open_scene(body, variants)
    try:
        items = []
        for k, (i, spec) in enumerate(chosen):
            items.append(_render_clip(spec, body, np.random.default_rng([seed, i]), clips_dir, scene, variant_of))
            if progress:
                progress(0.1 + 0.9 * (k + 1) / len(chosen))
    finally:
        scene.close()
    (out_dir / "annotations.json").write_text(json.dumps({"fps": FPS, "items": items}, indent=1) + "\n")
    with open(out_dir / "temporal_gt.jsonl", "w", encoding="utf-8") as handle:
        for item in items:
            windows = [[(fs - 1) / FPS, fe / FPS] for fs, fe in item["moments"]]
            handle.write(json.dumps({"qid": item["qid"], "query": item["query"], "vid": item["qid"],
                                     "duration": item["num_frames"] / FPS,
                                     "relevant_windows": windows}) + "\n")
    write_impact_runs(out_dir)   # runs/: what the tab's runs panel shows
    (out_dir / "README.txt").write_text(
        "Synthetic HAPACT-style impact clips (mannequin-x body, Apache-2.0). Moments are the frames\n"
        "in which the object touches the body (1-based, inclusive, 24 fps); regions are exact by\n"
        f"construction. Body drawn with: {renderer}.\n")
