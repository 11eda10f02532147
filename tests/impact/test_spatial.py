"""Spatial metrics, hand-computed (docs/metrics.md "Spatial", DECO challenge code's special cases)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.impact.body import BodyModel, load_body, region_vertex_mask
from components.impact.regions import GROUPS, REGION_LABELS
from components.impact.metrics.spatial import frame_metrics, label_f1, label_metrics, prf, \
    spatial_metrics
from tests.impact.test_geodesic import grid_mesh


def mask(n, ids):
    m = np.zeros(n, dtype=bool)
    m[list(ids)] = True
    return m


@pytest.fixture(scope="module")
def grid_body():
    """4x4 grid (0.1 m spacing). Row j=0 is 'head', row 1 'chest', rows 2-3 'left hand'."""
    vertices, faces = grid_mesh()
    region = np.array([REGION_LABELS.index("head")] * 4 + [REGION_LABELS.index("chest")] * 4
                      + [REGION_LABELS.index("left hand")] * 8)
    return BodyModel(vertices=vertices.astype(np.float32), faces=faces, vertex_region=region,
                     kind="mannequin", note="test grid")


def test_prf_by_hand():
    p, r, f = prf(mask(10, [0, 1, 2, 3]), mask(10, [2, 3, 4]))
    assert (p, r) == (0.5, pytest.approx(2 / 3))
    assert f == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))


def test_deco_special_cases():
    assert prf(mask(5, []), mask(5, [1])) == (1.0, 0.0, 0.0)      # nothing predicted
    assert prf(mask(5, [1]), mask(5, [])) == (0.0, 1.0, 0.0)      # no ground truth
    assert prf(mask(5, []), mask(5, [])) == (1.0, 0.0, 0.0)       # both empty: "no pred" first
    assert prf(mask(5, [0]), mask(5, [1])) == (0.0, 0.0, 0.0)     # precision + recall = 0
    assert prf(mask(5, [0, 1]), mask(5, [0, 1])) == (1.0, 1.0, 1.0)


def test_frame_metrics_and_geodesic_by_hand(grid_body):
    # GT: vertex 0 (0,0). Pred: vertices 3 (0.3,0) and 5 (0.1,0.1): distances 0.3 and 0.1*sqrt2
    result = frame_metrics(mask(16, [3, 5]), mask(16, [0]), grid_body)
    assert result["precision"] == 0 and result["recall"] == 0 and result["F1"] == 0
    assert result["geodesic_cm"] == pytest.approx(100 * (0.3 + 0.1 * math.sqrt(2)) / 2)
    # per-group F1 only for groups with GT vertices (head here), restricted to the group
    assert set(k for k in result if k.startswith("F1_")) == {"F1_head"}
    assert result["F1_head"] == 0


def test_geodesic_fallbacks(grid_body):
    # nothing predicted: every vertex counts as predicted -> mean distance of all 16 to vertex 0
    from components.impact.geodesic import distance_matrix, mesh_edge_graph

    full = distance_matrix(mesh_edge_graph(grid_body.vertices, grid_body.faces), indices=[0])[0]
    result = frame_metrics(mask(16, []), mask(16, [0]), grid_body)
    assert result["geodesic_cm"] == pytest.approx(100 * full.mean(), rel=1e-5)
    assert (result["precision"], result["recall"], result["F1"]) == (100.0, 0.0, 0.0)
    # no GT: every vertex counts as GT -> 0 cm
    result = frame_metrics(mask(16, [7]), mask(16, []), grid_body)
    assert result["geodesic_cm"] == 0.0
    assert (result["precision"], result["recall"], result["F1"]) == (0.0, 100.0, 0.0)
    # perfect prediction
    result = frame_metrics(mask(16, [4, 5]), mask(16, [4, 5]), grid_body)
    assert result["geodesic_cm"] == 0.0 and result["F1"] == 100.0 and result["F1_torso"] == 100.0


def test_spatial_metrics_average_over_frames_and_group_frames(grid_body):
    preds = [mask(16, [0, 1]), mask(16, [4, 5, 8]), mask(16, [])]
    gts = [mask(16, [0, 1, 2, 3]), mask(16, [4, 5]), mask(16, [8, 9])]
    result = spatial_metrics(preds, gts, grid_body)
    # frame 1: P 1, R .5, F1 2/3; frame 2: P 2/3, R 1, F1 .8; frame 3: no pred -> P 1, R 0, F1 0
    assert result["precision"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3)
    assert result["recall"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    assert result["F1"] == pytest.approx(100 * (2 / 3 + 0.8 + 0) / 3)
    # head: only frame 1 has head GT; torso: frame 2 (pred 4,5 of 4..7 -> F1 1);
    # hands: frame 3 only (frame 2's prediction at vertex 8 has no hand GT there -> not scored)
    assert result["F1_head"] == pytest.approx(100 * 2 / 3) and result["frames_head"] == 1
    assert result["F1_torso"] == pytest.approx(100.0) and result["frames_torso"] == 1
    assert result["F1_hands"] == 0.0 and result["frames_hands"] == 1
    assert result["F1_feet"] is None and result["frames_feet"] == 0
    assert result["num_frames"] == 3
    for key in ["F1", "precision", "recall", "geodesic_cm"] + [f"F1_{g}" for g in GROUPS]:
        assert key in result


def test_spatial_metrics_on_the_mannequin_with_region_predictions():
    body = load_body(prefer_smplx=False)
    gt = [region_vertex_mask(body, ["left calf", "right calf"])]
    pred = [region_vertex_mask(body, ["left calf"])]
    result = spatial_metrics(pred, gt, body)
    n_left = pred[0].sum()
    n_both = gt[0].sum()
    assert result["precision"] == 100.0
    assert result["recall"] == pytest.approx(100 * n_left / n_both)
    assert result["geodesic_cm"] == 0.0  # every predicted vertex is a GT vertex
    assert result["F1_legs"] == pytest.approx(result["F1"])
    wrong = spatial_metrics([region_vertex_mask(body, ["head"])], gt, body)
    assert wrong["F1"] == 0 and wrong["geodesic_cm"] > 100  # head to calves: over a metre


def test_label_f1():
    assert label_f1(["left calf", "right calf"], ["left calf", "right calf"]) == 100.0
    assert label_f1(["left calf"], ["left calf", "right calf"]) == pytest.approx(100 * 2 / 3)
    assert label_f1([], ["head"]) == 0.0
    assert label_f1(["head"], []) == 0.0
    assert label_f1(["head", "neck", "back"], ["head"]) == pytest.approx(100 * 0.5)
    result = label_metrics([["head"], ["back", "butt"]], [["head", "neck"], ["back"]])
    assert result["label_F1"] == pytest.approx(100 * (2 / 3 + 2 / 3) / 2)
    assert result["per_label_F1"]["head"] == 100.0 and result["per_label_F1"]["neck"] == 0.0
    assert result["per_label_F1"]["butt"] == 0.0 and result["per_label_F1"]["left foot"] is None


def test_mask_size_is_checked(grid_body):
    with pytest.raises(ValueError, match="16 vertices"):
        frame_metrics(np.zeros(5, bool), np.zeros(16, bool), grid_body)


def test_metrics_from_records_paint_regions_and_count_missing_predictions():
    from components.impact.metrics.spatial import spatial_metrics_from_records

    body = load_body(prefer_smplx=False)
    gt = [{"regions": ["head"], "vertices": [1, 2, 3]}, {"regions": ["left calf", "right calf"]}]
    pred = [{"regions": ["head"]}, None]
    result = spatial_metrics_from_records(gt, pred, body)
    # frame 1 perfect (vertex ids are ignored on the mannequin: regions painted); frame 2 missing
    assert result["F1"] == pytest.approx(50.0) and result["precision"] == 100.0
    assert result["recall"] == pytest.approx(50.0)
    assert result["label_F1"] == pytest.approx(50.0)
    assert result["F1_head"] == 100.0 and result["F1_legs"] == 0.0
