"""The 3D view's data: the body's mesh file (once per body) and a painting's palette-coded colours."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from components.impact.body import load_body, region_vertex_mask
from components.impact.body_mesh import index_type, mesh_bytes, mesh_file, painting_payload
from components.impact.painting import vertex_colors


@pytest.fixture(scope="module")
def body():
    return load_body()


def test_the_mesh_file_holds_the_positions_then_the_triangles(body, tmp_path):
    path = mesh_file(body, tmp_path)
    raw = path.read_bytes()
    n, f = body.num_vertices, len(body.faces)
    assert index_type(n) == "u16" and len(raw) == n * 12 + f * 3 * 2
    positions = np.frombuffer(raw, dtype="<f4", count=n * 3).reshape(n, 3)
    triangles = np.frombuffer(raw, dtype="<u2", offset=n * 12).reshape(f, 3)
    np.testing.assert_allclose(positions, body.vertices, atol=1e-6)
    np.testing.assert_array_equal(triangles, body.faces)


def test_a_large_mesh_takes_32_bit_indices_and_bad_faces_are_refused():
    vertices = np.zeros((70_000, 3))
    faces = np.array([[0, 1, 69_999]])
    assert index_type(70_000) == "u32"
    raw = mesh_bytes(vertices, faces)
    assert np.frombuffer(raw, dtype="<u4", offset=70_000 * 12).tolist() == [0, 1, 69_999]
    with pytest.raises(ValueError, match="face indices"):
        mesh_bytes(vertices[:3], faces)


def test_the_mesh_is_written_once_even_when_pages_ask_at_once(body, tmp_path):
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: mesh_file(body, tmp_path), range(8)))
    assert len(set(paths)) == 1 and [p.name for p in tmp_path.iterdir()] == [paths[0].name]
    mtime = paths[0].stat().st_mtime_ns
    assert mesh_file(body, tmp_path).stat().st_mtime_ns == mtime


def painting_colors(payload: dict) -> np.ndarray:
    """(N, 3) uint8: the vertex colours a payload stands for, decoded as the page's script does
    (base64, zlib, one palette index per vertex)."""
    import base64
    import zlib

    index = np.frombuffer(zlib.decompress(base64.b64decode(payload["colors"])), dtype=np.uint8)
    return np.asarray(payload["palette"], dtype=np.uint8).reshape(-1, 3)[index]


def test_a_painting_round_trips_and_is_small(body):
    colors = vertex_colors(body, region_vertex_mask(body, ["right hand", "back"]),
                           region_vertex_mask(body, ["back", "butt"]))
    payload = painting_payload(colors)
    np.testing.assert_array_equal(painting_colors(payload), colors[:, :3])
    assert len(payload["palette"]) == 4   # body, hit, predicted only, missed
    assert len(payload["colors"]) < body.num_vertices // 4   # a few KB, not a byte per vertex


def test_more_colours_than_one_byte_can_name_are_refused():
    colors = np.zeros((300, 4), dtype=np.uint8)
    colors[:, 0] = np.arange(300) % 256
    colors[:, 1] = np.arange(300) // 256
    with pytest.raises(ValueError, match="at most 256"):
        painting_payload(colors)
