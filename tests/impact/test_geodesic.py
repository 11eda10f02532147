"""Geodesic distances: shortest paths on the mesh edge graph, hand-checked on tiny meshes."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.base.lru import SingleFlightLRU
from components.impact import geodesic
from components.impact.body import BodyModel, load_body, region_vertex_mask


def grid_mesh(n: int = 4, spacing: float = 0.1):
    """n x n vertices in the z=0 plane, each square split along its (+x,+y) diagonal."""
    vertices = np.array([[i * spacing, j * spacing, 0.0] for j in range(n) for i in range(n)])
    faces = []
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1
            faces += [[a, b, d], [a, d, c]]
    return vertices, np.array(faces)


def test_grid_distances_by_hand():
    vertices, faces = grid_mesh()
    graph = geodesic.mesh_edge_graph(vertices, faces)
    d = geodesic.distance_matrix(graph, indices=[0])[0]
    # vertex k = j*4 + i. Along an axis: 0.1 per step; the split diagonal is an edge (0.1*sqrt2)
    assert d[3] == pytest.approx(0.3)
    assert d[12] == pytest.approx(0.3)
    assert d[5] == pytest.approx(0.1 * math.sqrt(2))
    assert d[15] == pytest.approx(0.3 * math.sqrt(2))
    # (2, 1): one diagonal + one step along x
    assert d[6] == pytest.approx(0.1 * math.sqrt(2) + 0.1)
    # the other diagonal is not an edge: (1,0) -> (0,1) costs two steps
    d1 = geodesic.distance_matrix(graph, indices=[1])[0]
    assert d1[4] == pytest.approx(0.2)


def test_multi_source_gives_the_distance_to_the_nearest_source():
    vertices, faces = grid_mesh()
    graph = geodesic.mesh_edge_graph(vertices, faces)
    sources = np.zeros(16, dtype=bool)
    sources[[0, 15]] = True
    nearest = geodesic.distances_from(graph, sources)
    full = geodesic.distance_matrix(graph)
    np.testing.assert_allclose(nearest, full[[0, 15]].min(axis=0))
    assert nearest[3] == pytest.approx(0.3) and nearest[11] == pytest.approx(0.1)


def test_path_graph_and_bridging_of_separate_pieces():
    # two triangles 5 mm apart: joined by a bridge edge, so distances stay finite
    vertices = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0],
                         [0.105, 0, 0], [0.2, 0, 0], [0.105, 0.1, 0]], dtype=float)
    faces = np.array([[0, 1, 2], [3, 4, 5]])
    graph = geodesic.mesh_edge_graph(vertices, faces, bridge_radius=0.01)
    d = geodesic.distance_matrix(graph, indices=[0])[0]
    assert d[3] == pytest.approx(0.105)
    assert d[4] == pytest.approx(0.2)
    # far apart pieces are joined by their closest pair
    far = vertices.copy()
    far[3:] += [1.0, 0, 0]
    d = geodesic.distance_matrix(geodesic.mesh_edge_graph(far, faces), indices=[0])[0]
    assert np.isfinite(d).all() and d[3] == pytest.approx(1.105)


def test_mannequin_geodesics_are_finite_and_at_least_straight_line():
    body = load_body(prefer_smplx=False)
    head = region_vertex_mask(body, ["head"])
    dist = geodesic.nearest_distance(body, head)
    assert dist.shape == (body.num_vertices,) and np.isfinite(dist).all()
    assert (dist[head] == 0).all()
    feet = region_vertex_mask(body, ["left foot"])
    assert 1.2 < dist[feet].mean() < 2.0  # metres from the head down to a foot
    rng = np.random.default_rng(0)
    from scipy.spatial import cKDTree

    sample = rng.choice(body.num_vertices, 500, replace=False)
    euclid, _ = cKDTree(body.vertices[head]).query(body.vertices[sample])
    assert (dist[sample] >= euclid - 1e-4).all()  # a path on the surface is never shorter
    assert geodesic.nearest_distance(body, head) is dist  # cached per (body, GT mask)


def test_graph_is_stored_on_disk_per_body(tmp_path):
    vertices, faces = grid_mesh()
    body = BodyModel(vertices=vertices.astype(np.float32), faces=faces,
                     vertex_region=np.zeros(16, dtype=np.int64), kind="mannequin", note="")
    graph = geodesic.body_graph(body, cache_dir=tmp_path, memory=SingleFlightLRU(1))
    files = list((tmp_path / "geodesic").glob("*.npz"))
    assert len(files) == 1 and body.fingerprint() in files[0].name
    again = geodesic.body_graph(body, cache_dir=tmp_path, memory=SingleFlightLRU(1))   # a new process: from disk
    assert (again != graph).nnz == 0 and again is not graph
