"""Painting the body for a frame, as pure maths (no GL, no files): per-vertex colours from the
regions, the legend of those colours, the 3D view's camera facing a hit, and the turntable's
poses. render.py draws what this module computes; the UI's 3D view shows it.

Shapes: N vertices, F faces; colours are RGBA uint8, positions metres (y up, facing +z).
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING
from collections.abc import Sequence

import numpy as np

from components.base.lru import SingleFlightLRU
from components.impact.body import vertex_mask_from_annotation
from components.impact.metrics.spatial import prf
from components.impact.regions import LEGEND_TEXT, PALETTE

if TYPE_CHECKING:
    from components.impact.body import BodyModel
    from components.impact.data import ImpactItem


# ---------------------------------------------------------------- colours

def hex_to_rgba(color: str, alpha: int = 255) -> np.ndarray:
    """"#rrggbb" -> (4,) uint8 RGBA."""
    color = color.lstrip("#")
    return np.array([int(color[i:i + 2], 16) for i in (0, 2, 4)] + [alpha], dtype=np.uint8)


def color_legend(pred_mask: np.ndarray | None = None,
                 gt_mask: np.ndarray | None = None) -> list[tuple[str, str]]:
    """pred_mask, gt_mask: (N,) bool or None -> (text, "#rrggbb") entries for the colours
    `vertex_colors` uses with these inputs."""
    if pred_mask is not None and gt_mask is not None:
        keys = ("true_positive", "false_positive", "missed")
    elif gt_mask is not None:
        keys = ("truth",)
    else:
        keys = ("predicted",)
    return [("body", PALETTE["body"])] + [(LEGEND_TEXT[k], PALETTE[k]) for k in keys]


def vertex_colors(body: BodyModel, pred_mask: np.ndarray | None,
                  gt_mask: np.ndarray | None = None) -> np.ndarray:
    """pred_mask, gt_mask: (N,) bool or None -> (N, 4) uint8 RGBA: grey body; with only a
    prediction, predicted vertices in the 'predicted' colour; with only the truth, 'truth'; with
    both, true positive (hit), false positive (predicted only) and missed (truth only) colours.
    See `color_legend`."""
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


def paint_key(colors: np.ndarray, body_id: str) -> str:
    """colors: (N, 4) uint8 -> a 20-hex-digit name of the painting by what it looks like (its
    vertex colours on this body), not by its frame: frames painted alike share one turntable, and
    the page's 3D view skips a painting it shows."""
    digest = hashlib.sha256(body_id.encode())
    digest.update(np.ascontiguousarray(colors, dtype=np.uint8).tobytes())
    return digest.hexdigest()[:20]


# ---------------------------------------------------------------- camera of the 3D view

#: the 3D view's camera (alpha, beta in degrees, radius) facing the body's front. The view's orbit
#: camera (impact/ui/body_view.py) sits at target + r * (cos a sin b, cos b, sin a sin b): alpha 90,
#: beta 90 is on +z, where the body faces.
FRONT_CAMERA = (90.0, 90.0, 3.4)
_FRAMING = 3.3       # camera distance per metre of the body's bounding radius (whole body in view)
_MAX_TILT = 25.0     # degrees above / below the horizon for a hit on the head / the feet
_AMBIGUOUS = 0.08    # below this horizontal pull (a hit all around, e.g. the head) face the front


def vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """vertices: (N, 3) float, faces: (F, 3) int -> (N, 3) float64 unit normals: the area-weighted
    normals of the faces around each vertex."""
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
    """vertices: (N, 3), normals: (N, 3), painted: (N,) bool or None -> the 3D view's camera
    (alpha, beta in degrees, radius) facing the painted vertices.

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


# ---------------------------------------------------------------- poses (the turntable's maths)

def look_at(eye: np.ndarray, target: np.ndarray, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """eye, target: (3,) -> (4, 4) camera/light pose (OpenGL convention: looks along its local -z)."""
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
    """angle (radians) -> (4, 4) pose turning about the vertical (y) axis."""
    c, s = np.cos(angle), np.sin(angle)
    pose = np.eye(4)
    pose[0, 0], pose[0, 2], pose[2, 0], pose[2, 2] = c, s, -s, c
    return pose


def turntable_angles(frames: int) -> list[float]:
    """frames -> (frames,) angles in degrees: one full turn in equal steps, starting at 0."""
    return [360.0 * i / frames for i in range(frames)]


# ---------------------------------------------------------------- one frame's painting

class PaintedFrame:
    """Masks, colours and the camera facing the painted vertices of one (clip, frame, prediction)
    state; `key` names the painting by its colours (paint_key). colors: (N, 4) uint8; legend:
    (text, "#rrggbb") entries; camera: (alpha, beta, radius)."""

    def __init__(self, key: str, legend: list[tuple[str, str]], pred: list[str] | None,
                 truth: list[str] | None, f1: float | None, colors,
                 camera: tuple[float, float, float] = FRONT_CAMERA):
        self.key, self.legend = key, legend
        self.pred, self.truth, self.f1, self.colors, self.camera = pred, truth, f1, colors, camera


_NORMALS: SingleFlightLRU[str, np.ndarray] = SingleFlightLRU(4)


def body_normals(body) -> np.ndarray:
    """The body's vertex normals, (N, 3) float64, computed once per mesh."""
    return _NORMALS.get(body.fingerprint(), lambda: vertex_normals(body.vertices, body.faces))


def painted_mask(pred_mask: np.ndarray | None, gt_mask: np.ndarray | None) -> np.ndarray | None:
    """pred_mask, gt_mask: (N,) bool or None -> (N,) bool: every vertex painted in some colour
    (predicted and/or truth), None when nothing is."""
    masks = [np.asarray(m, dtype=bool) for m in (pred_mask, gt_mask) if m is not None]
    return np.logical_or.reduce(masks) if masks else None


def paint_frame(body: BodyModel, item: ImpactItem, frame: int, pred_labels: Sequence[str] | None,
                pred_vertices: Sequence[int] | None = None) -> PaintedFrame:
    """Paint the prediction and/or the truth of `frame`: TP/FP/missed when both exist, else the one
    there is. pred_vertices: (k,) vertex indices or None; the painting's colours are (N, 4)."""
    truth_ann = item.frames.get(frame)
    truth = list(truth_ann.regions) if truth_ann is not None else None
    pred = list(pred_labels) if pred_labels is not None else None
    gt_mask = (vertex_mask_from_annotation(body, truth_ann.regions, truth_ann.vertices)
               if truth_ann is not None else None)
    pred_mask = vertex_mask_from_annotation(body, pred, pred_vertices) if pred is not None else None
    f1 = prf(pred_mask, gt_mask)[2] if pred_mask is not None and gt_mask is not None else None
    colors = vertex_colors(body, pred_mask, gt_mask)
    legend = color_legend(pred_mask, gt_mask)
    key = paint_key(colors, getattr(body, "kind", "") + body.fingerprint())
    camera = camera_for(body.vertices, body_normals(body), painted_mask(pred_mask, gt_mask))
    return PaintedFrame(key, legend, pred, truth, f1, colors, camera)
