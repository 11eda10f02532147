"""Impact's process caches (the body's edge graph, its vertex normals) go through SingleFlightLRU:
a value several visitors ask for at once is made once."""
from __future__ import annotations

import numpy as np

from components.impact import geodesic, painting
from components.impact.body import BodyModel
from tests.helpers.at_once import Held, asked_at_once
from tests.impact.test_geodesic import grid_mesh


def _own_body(n: int) -> BodyModel:
    """A grid body no other test has (its own fingerprint, so the process caches hold nothing)."""
    vertices, faces = grid_mesh(n, spacing=0.01 * n)
    return BodyModel(vertices=vertices.astype(np.float32), faces=faces,
                     vertex_region=np.zeros(n * n, dtype=np.int64), kind="mannequin", note="")


def test_a_body_graph_asked_for_at_once_is_built_once(tmp_path, monkeypatch):
    body = _own_body(7)
    built = Held(geodesic.mesh_edge_graph)
    monkeypatch.setattr(geodesic, "mesh_edge_graph", built)
    graphs = asked_at_once(lambda: geodesic.body_graph(body, cache_dir=tmp_path), built)
    assert built.calls == 1 and len(graphs) == 6 and all(g is graphs[0] for g in graphs)
    assert len(list((tmp_path / "geodesic").glob("*.npz"))) == 1


def test_body_normals_asked_for_at_once_are_computed_once(monkeypatch):
    body = _own_body(9)
    computed = Held(painting.vertex_normals)
    monkeypatch.setattr(painting, "vertex_normals", computed)
    normals = asked_at_once(lambda: painting.body_normals(body), computed)
    assert computed.calls == 1 and all(n is normals[0] for n in normals)
    assert normals[0].shape == (81, 3)
