"""Body models behind one interface: SMPL-X when the user configures it, else the mannequin.

- SMPL-X (licensed, never shipped): `SMPLX_MODEL_DIR` (a folder holding `smplx/SMPLX_NEUTRAL.npz`,
  the `smplx` folder itself, or the .npz file), or `SMPLX_HF_REPO` (+ `HF_TOKEN`, optional
  `SMPLX_HF_FILENAME`, default `smplx/SMPLX_NEUTRAL.npz`) downloaded lazily with huggingface_hub.
  Loaded through `smplx.create(..., ext="npz")` in its rest pose.
- Otherwise the Apache-2.0 `mannequin-x` wooden mannequin (24,256 vertices, SMPL-X joint names).
  A missing or broken SMPL-X file falls back to it with the reason in `BodyModel.note`.

Both are y-up and face +z, so the body's own left is +x. The 18 regions are derived from each
body's skinning weights by the same pure function (`derive_regions`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from components.base.errors import DataFormatError
from components.base.lru import SingleFlightLRU
from components.impact.regions import REGION_LABELS

SMPLX_NUM_VERTICES = 10475
SMPLX_NUM_JOINTS = 55
FACING = np.array([0.0, 0.0, 1.0])  # both bodies face +z in their rest pose (y up)
MANNEQUIN_NOTE = ("Body: mannequin-x (Apache-2.0, license-clean). SMPL-X vertex-level annotations "
                  "are painted as their regions on it. Set SMPLX_MODEL_DIR (or SMPLX_HF_REPO + "
                  "HF_TOKEN) to use SMPL-X.")


@dataclass
class BodyModel:
    """A rest-pose body mesh with one region label per vertex."""

    vertices: np.ndarray        # (N, 3) float32, metres, y up, facing +z
    faces: np.ndarray           # (F, 3) int64
    vertex_region: np.ndarray   # (N,) int index into REGION_LABELS
    kind: str                   # "smplx" | "mannequin"
    note: str
    joints: np.ndarray = field(default=None, repr=False)       # (J, 3) rest joint positions
    joint_names: tuple[str, ...] = field(default=(), repr=False)

    @property
    def num_vertices(self) -> int:
        return int(self.vertices.shape[0])

    def joint(self, name: str) -> np.ndarray:
        return self.joints[self.joint_names.index(_normalise_joint(name))]

    def fingerprint(self) -> str:
        """Hash of the mesh geometry (vertices and faces): the key of on-disk caches."""
        import hashlib

        cached = self.__dict__.get("_fingerprint")
        if cached is None:  # the mesh is never modified after loading
            digest = hashlib.sha256()
            digest.update(np.ascontiguousarray(self.vertices, dtype=np.float32).tobytes())
            digest.update(np.ascontiguousarray(self.faces, dtype=np.int64).tobytes())
            cached = self.__dict__["_fingerprint"] = digest.hexdigest()[:16]
        return cached


# ---------------------------------------------------------------- region derivation (pure)

_FINGERS = ("index", "middle", "pinky", "ring", "thumb")


def _normalise_joint(name: str) -> str:
    """'L_Hip' / 'left_hip' -> 'left_hip'; 'Spine3' -> 'spine3'."""
    name = name.strip().lower()
    if name.startswith("l_"):
        name = "left_" + name[2:]
    elif name.startswith("r_"):
        name = "right_" + name[2:]
    return name


def joint_region(name: str) -> str:
    """SMPL-X joint name -> region label, or 'TORSO'/'PELVIS' for the two sides to split."""
    name = _normalise_joint(name)
    if name == "pelvis":
        return "PELVIS"
    if name.startswith("spine") or name.endswith("collar"):
        return "TORSO"
    if name == "neck":
        return "neck"
    if name in ("head", "jaw") or "eye" in name:
        return "head"
    side, _, part = name.partition("_")
    if side not in ("left", "right"):
        raise ValueError(f"no region for joint {name!r}")
    if part == "hip":
        return f"{side} thigh"
    if part == "knee":
        return f"{side} calf"
    if part in ("ankle", "foot", "toe") or part.startswith("toe"):
        return f"{side} foot"
    if part == "shoulder":
        return f"{side} upper arm"
    if part == "elbow":
        return f"{side} forearm"
    if part in ("wrist", "hand") or part.startswith(_FINGERS):
        return f"{side} hand"
    raise ValueError(f"no region for joint {name!r}")


def derive_regions(vertices: np.ndarray, joint_names: Sequence[str], skin_joints: np.ndarray,
                   skin_weights: np.ndarray, facing: np.ndarray = FACING,
                   bin_height: float = 0.02) -> np.ndarray:
    """Region index per vertex from skinning weights.

    vertices (N, 3); skin_joints (N, K) joint indices; skin_weights (N, K). Each vertex takes the
    region of its strongest joint. Torso (spine, collar) vertices are split into chest/back and
    pelvis vertices into hip/butt by the side of a plane normal to `facing` placed, per 2 cm
    height slice, halfway between the front-most and back-most torso/pelvis vertex of that slice.
    """
    vertices = np.asarray(vertices, dtype=np.float64)
    strongest = np.take_along_axis(np.asarray(skin_joints),
                                   np.argmax(skin_weights, axis=1)[:, None], axis=1)[:, 0]
    joint_labels = [joint_region(n) for n in joint_names]
    per_vertex = np.array(joint_labels, dtype=object)[strongest]
    index = {label: i for i, label in enumerate(REGION_LABELS)}
    region = np.full(len(vertices), -1, dtype=np.int64)
    for label, i in index.items():
        region[per_vertex == label] = i

    trunk = (per_vertex == "TORSO") | (per_vertex == "PELVIS")
    if trunk.any():
        depth = vertices @ (np.asarray(facing, float) / np.linalg.norm(facing))
        height = vertices[:, 1]
        bins = np.floor((height - height[trunk].min()) / bin_height).astype(np.int64)
        front = np.zeros(len(vertices), dtype=bool)
        for b in np.unique(bins[trunk]):
            members = trunk & (bins == b)
            middle = 0.5 * (depth[members].min() + depth[members].max())
            front[members] = depth[members] >= middle
        region[(per_vertex == "TORSO") & front] = index["chest"]
        region[(per_vertex == "TORSO") & ~front] = index["back"]
        region[(per_vertex == "PELVIS") & front] = index["hip"]
        region[(per_vertex == "PELVIS") & ~front] = index["butt"]
    if (region < 0).any():
        raise ValueError("some vertices got no region")
    return region


def region_vertex_mask(body: BodyModel, labels: Sequence[str]) -> np.ndarray:
    """Boolean (N,) mask of the vertices whose region is one of `labels`."""
    unknown = [label for label in labels if label not in REGION_LABELS]
    if unknown:
        raise DataFormatError(f"unknown body-region label(s) {unknown}; use the 18 labels: "
                              + ", ".join(REGION_LABELS))
    ids = [REGION_LABELS.index(label) for label in labels]
    return np.isin(body.vertex_region, ids)


def vertex_mask_from_annotation(body: BodyModel, regions: Sequence[str] | None,
                                vertices: Sequence[int] | None) -> np.ndarray:
    """Mask for one annotated/predicted frame.

    On SMPL-X, vertex ids are used when given (they are SMPL-X ids), else the regions are painted.
    On the mannequin, SMPL-X vertex ids mean nothing, so the regions are painted (`body.note` says
    so); a record with vertex ids but no regions then gives an empty mask.
    """
    if body.kind == "smplx" and vertices is not None and len(vertices) > 0:
        ids = np.asarray(list(vertices), dtype=np.int64)
        bad = ids[(ids < 0) | (ids >= body.num_vertices)]
        if bad.size:
            raise DataFormatError(f"vertex id {int(bad[0])} is outside SMPL-X's 0..{body.num_vertices - 1}"
                                  "; vertex ids must be SMPL-X vertex indices")
        mask = np.zeros(body.num_vertices, dtype=bool)
        mask[ids] = True
        return mask
    return region_vertex_mask(body, list(regions or []))


# ---------------------------------------------------------------- loaders

def _mannequin() -> BodyModel:
    from mannequin import Mannequin

    model = Mannequin("wooden")
    pose = model.rest_pose()
    vertices = np.asarray(model.vertices(pose), dtype=np.float32)
    joints = np.asarray(model.joint_transforms(pose)[:, :3, 3], dtype=np.float32)
    names = tuple(_normalise_joint(n) for n in model.joint_names)
    # The runtime skinning (top-4 weights; rigid torso pieces bound to one joint) is what moves
    # the vertices, so regions follow it. Private attributes of mannequin-x 0.3.0 (pinned).
    skin_joints = getattr(model, "_skin_joint_indices", None)
    skin_weights = getattr(model, "_skin_weights", None)
    if skin_joints is None or skin_weights is None:
        raise RuntimeError("mannequin-x has no skinning weights; install mannequin-x==0.3.0")
    region = derive_regions(vertices, names, skin_joints, skin_weights)
    return BodyModel(vertices=vertices, faces=np.asarray(model.faces, dtype=np.int64),
                     vertex_region=region, kind="mannequin", note=MANNEQUIN_NOTE, joints=joints,
                     joint_names=names)


def smplx_from_npz(path: str | Path) -> BodyModel:
    """Load SMPL-X from a `SMPLX_NEUTRAL.npz` (or a folder holding one) in its rest pose."""
    import torch  # noqa: F401  (smplx needs it)
    import smplx
    from smplx.joint_names import JOINT_NAMES

    path = Path(path)
    if path.is_file():
        npz = path
    else:
        candidates = [path / "smplx" / "SMPLX_NEUTRAL.npz", path / "SMPLX_NEUTRAL.npz"]
        npz = next((c for c in candidates if c.is_file()), None)
        if npz is None:
            raise FileNotFoundError(f"no SMPLX_NEUTRAL.npz in {path} (expected {candidates[0]})")
    model = smplx.create(str(npz), model_type="smplx", gender="neutral", ext="npz", use_pca=False)
    with torch.no_grad():
        output = model(return_verts=True)
    vertices = output.vertices[0].cpu().numpy().astype(np.float32)
    joints = output.joints[0, :SMPLX_NUM_JOINTS].cpu().numpy().astype(np.float32)
    if vertices.shape[0] != SMPLX_NUM_VERTICES:
        raise ValueError(f"{npz} has {vertices.shape[0]} vertices; SMPL-X has {SMPLX_NUM_VERTICES}")
    weights = model.lbs_weights.cpu().numpy()
    names = tuple(JOINT_NAMES[:weights.shape[1]])
    order = np.argsort(-weights, axis=1)[:, :4]
    region = derive_regions(vertices, names, order, np.take_along_axis(weights, order, axis=1))
    return BodyModel(vertices=vertices, faces=np.asarray(model.faces, dtype=np.int64),
                     vertex_region=region, kind="smplx",
                     note=f"Body: SMPL-X neutral ({npz.name}); annotations shown vertex by vertex.",
                     joints=joints, joint_names=tuple(_normalise_joint(n) for n in names))


def _smplx_source() -> tuple[str | None, str]:
    """-> (path or None, where it came from). Downloads only when SMPLX_HF_REPO is set."""
    folder = os.environ.get("SMPLX_MODEL_DIR", "").strip()
    if folder:
        return folder, "SMPLX_MODEL_DIR"
    repo = os.environ.get("SMPLX_HF_REPO", "").strip()
    if repo:
        from huggingface_hub import hf_hub_download

        filename = os.environ.get("SMPLX_HF_FILENAME", "smplx/SMPLX_NEUTRAL.npz")
        token = os.environ.get("HF_TOKEN") or None
        return hf_hub_download(repo_id=repo, filename=filename, token=token), "SMPLX_HF_REPO"
    return None, ""


#: loaded bodies by (prefer_smplx, SMPLX_MODEL_DIR, SMPLX_HF_REPO): one per config in practice
_BODIES: SingleFlightLRU[tuple, BodyModel] = SingleFlightLRU(4)


def load_body(prefer_smplx: bool = True) -> BodyModel:
    """SMPL-X when configured and loadable, else the mannequin (cached per process and config)."""
    key = (prefer_smplx, os.environ.get("SMPLX_MODEL_DIR", ""), os.environ.get("SMPLX_HF_REPO", ""))
    return _BODIES.get(key, lambda: _load_body(prefer_smplx))


def _load_body(prefer_smplx: bool) -> BodyModel:
    reason = ""
    if prefer_smplx:
        source = ("SMPLX_MODEL_DIR" if os.environ.get("SMPLX_MODEL_DIR", "").strip()
                  else "SMPLX_HF_REPO" if os.environ.get("SMPLX_HF_REPO", "").strip() else "")
        try:
            path, source = _smplx_source()
            if path is not None:
                return smplx_from_npz(path)
        except Exception as exc:  # noqa: BLE001 - any failure falls back, with the reason shown
            # never echo the token: only the exception type and its message (paths, shapes)
            message = str(exc).replace(os.environ.get("HF_TOKEN", "") or "\0", "***")
            reason = (f"SMPL-X from {source} could not be loaded ({type(exc).__name__}: "
                      f"{message[:300]}); showing the mannequin instead. ")
    body = _mannequin()
    if reason:
        body.note = reason + body.note
    return body


def clear_body_cache() -> None:
    _BODIES.clear()
