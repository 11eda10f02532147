"""What the page's 3D body view is sent (pure; no gradio): the body's mesh once, as a binary file,
and each painting as a small palette-coded payload.

The mesh file (`mesh_file`) is the body's vertex positions (float32 x, y, z, glTF axes: y up, the
body facing +z) followed by its triangles (uint16 when the body has fewer than 65,536 vertices,
else uint32), little-endian, written once per body into the render folder: the browser fetches it
once and keeps it. A painting (`painting_payload`) names each vertex's colour by its index in a
short palette, zlib-compressed and base64-encoded: a few KB per frame instead of a GLB of the
whole mesh (~1 MB for the mannequin) per painting.
"""
from __future__ import annotations

import base64
import zlib
from pathlib import Path

import numpy as np

from components.base.io import atomic_write_bytes

#: the palette index is one byte per vertex
MAX_COLOURS = 256


def index_type(num_vertices: int) -> str:
    """"u16" when every vertex index fits in 16 bits, else "u32"."""
    return "u16" if num_vertices < 65_536 else "u32"


def mesh_bytes(vertices: np.ndarray, faces: np.ndarray) -> bytes:
    """Positions (N, 3) float32 then triangles (F, 3) as `index_type(N)`, little-endian."""
    v = np.asarray(vertices, dtype="<f4")
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or f.ndim != 2 or f.shape[1] != 3:
        raise ValueError(f"a mesh needs (N, 3) vertices and (F, 3) faces, got {v.shape} and {f.shape}")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise ValueError(f"face indices must lie in [0, {len(v)})")
    dtype = "<u2" if index_type(len(v)) == "u16" else "<u4"
    return v.tobytes() + f.astype(dtype).tobytes()


def mesh_file(body, folder: Path) -> Path:
    """The body's mesh file in `folder`, written once per body (named by its fingerprint)."""
    path = Path(folder) / f"{getattr(body, 'kind', 'body')}-{body.fingerprint()}-mesh.bin"
    if not path.exists():
        atomic_write_bytes(path, mesh_bytes(body.vertices, body.faces))   # its temp name is per call
    return path


def painting_payload(colors: np.ndarray) -> dict:
    """{"palette": [[r, g, b], ...], "colors": base64(zlib(one palette index per vertex))} of
    (N, 3 or 4) uint8 vertex colours (alpha is dropped: the body is opaque)."""
    rgb = np.asarray(colors, dtype=np.uint8)[:, :3].astype(np.uint32)
    # one integer per colour: np.unique on rows (axis=0) is ~20x slower, on every frame event
    packed, index = np.unique((rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2], return_inverse=True)
    palette = np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255], axis=1)
    if len(palette) > MAX_COLOURS:
        raise ValueError(f"a painting has at most {MAX_COLOURS} colours, got {len(palette)}")
    packed = zlib.compress(index.reshape(-1).astype(np.uint8).tobytes(), 6)
    return {"palette": palette.tolist(), "colors": base64.b64encode(packed).decode("ascii")}
