"""Body models: the mannequin, region derivation from skinning weights, SMPL-X through smplx."""
from __future__ import annotations

import numpy as np
import pytest

from components.base.errors import DataFormatError
from components.impact import body as body_mod
from components.impact.body import derive_regions, load_body, region_vertex_mask, \
    vertex_mask_from_annotation
from components.impact.regions import GROUPS, REGION_LABELS


@pytest.fixture(scope="module")
def mannequin():
    return load_body(prefer_smplx=False)


def _centroid(body, label):
    return body.vertices[region_vertex_mask(body, [label])].mean(axis=0)


def test_mannequin_loads_offline(mannequin):
    assert mannequin.kind == "mannequin"
    assert mannequin.num_vertices == 24256 and mannequin.faces.shape == (48396, 3)
    assert mannequin.vertices.dtype == np.float32 and mannequin.vertices.shape == (24256, 3)
    assert "mannequin" in mannequin.note and "SMPLX_MODEL_DIR" in mannequin.note
    height = mannequin.vertices[:, 1].max() - mannequin.vertices[:, 1].min()
    assert 1.5 < height < 2.0  # metres


def test_every_vertex_has_one_of_the_18_regions_and_every_region_has_vertices(mannequin):
    region = mannequin.vertex_region
    assert region.shape == (mannequin.num_vertices,)
    assert region.min() >= 0 and region.max() < 18
    counts = np.bincount(region, minlength=18)
    assert (counts > 100).all(), dict(zip(REGION_LABELS, counts))


def test_mannequin_faces_plus_z_and_its_left_is_plus_x(mannequin):
    # joints: the body's own left hip/shoulder lie at +x; the toes point forward (+z) of the ankles
    assert mannequin.joint("L_Hip")[0] > 0 > mannequin.joint("R_Hip")[0]
    assert mannequin.joint("L_Shoulder")[0] > 0 > mannequin.joint("R_Shoulder")[0]
    assert mannequin.joint("L_Foot")[2] > mannequin.joint("L_Ankle")[2]


@pytest.mark.parametrize("part", ["upper arm", "forearm", "hand", "thigh", "calf", "foot"])
def test_left_regions_are_on_the_bodys_left(mannequin, part):
    left, right = _centroid(mannequin, f"left {part}"), _centroid(mannequin, f"right {part}")
    assert left[0] > 0 > right[0]
    side = np.sign(mannequin.joint("left_hip")[0])
    assert np.sign(left[0]) == side


def test_chest_is_in_front_and_back_behind(mannequin):
    assert _centroid(mannequin, "chest")[2] > _centroid(mannequin, "back")[2]
    assert _centroid(mannequin, "hip")[2] > _centroid(mannequin, "butt")[2]
    # the split is per height slice: at every height the chest is ahead of the back
    chest = region_vertex_mask(mannequin, ["chest"])
    back = region_vertex_mask(mannequin, ["back"])
    assert mannequin.vertices[chest, 2].mean() - mannequin.vertices[back, 2].mean() > 0.05


def test_vertical_order_of_regions(mannequin):
    y = {label: _centroid(mannequin, label)[1] for label in REGION_LABELS}
    assert y["head"] > y["neck"] > y["chest"] > y["hip"] > y["left thigh"] > y["left calf"] > y["left foot"]


def test_derive_regions_on_a_hand_made_skeleton():
    names = ["pelvis", "spine1", "neck", "head", "left_hip", "right_knee", "left_index2", "right_toe"]
    vertices = np.array([[0, 0, 0.1], [0, 0, -0.1], [0, 0.5, 0.1], [0, 0.5, -0.1], [0, 0.7, 0],
                         [0, 0.9, 0], [0.1, -0.3, 0], [-0.1, -0.8, 0], [0.8, 0.5, 0],
                         [-0.1, -1.2, 0.1]], dtype=float)
    strongest = [0, 0, 1, 1, 2, 3, 4, 5, 6, 7]
    joints = np.array([[j, (j + 1) % 8] for j in strongest])
    weights = np.array([[0.7, 0.3]] * len(strongest))
    labels = [REGION_LABELS[i] for i in derive_regions(vertices, names, joints, weights)]
    assert labels == ["hip", "butt", "chest", "back", "neck", "head", "left thigh", "right calf",
                      "left hand", "right foot"]


def test_region_masks_and_annotation_masks(mannequin):
    calves = region_vertex_mask(mannequin, ["left calf", "right calf"])
    assert calves.sum() == (region_vertex_mask(mannequin, ["left calf"]).sum()
                            + region_vertex_mask(mannequin, ["right calf"]).sum())
    # SMPL-X vertex ids cannot be shown on the mannequin: its regions are painted instead
    painted = vertex_mask_from_annotation(mannequin, ["left calf", "right calf"], [4312, 4313])
    assert (painted == calves).all()
    with pytest.raises(DataFormatError, match="unknown body-region"):
        region_vertex_mask(mannequin, ["tail"])
    groups = sum(region_vertex_mask(mannequin, list(labels)).sum() for labels in GROUPS.values())
    assert groups == mannequin.num_vertices


# ---------------------------------------------------------------- SMPL-X through smplx.create

def _fake_smplx(folder, seed=0):
    """Random arrays with the real SMPL-X shapes and every key smplx reads from the npz."""
    rng = np.random.default_rng(seed)
    nv, nf, nj = 10475, 20908, 55
    weights = rng.random((nv, nj)).astype(np.float32) ** 8
    weights /= weights.sum(axis=1, keepdims=True)
    kintree = np.stack([np.arange(-1, nj - 1), np.arange(nj)]).astype(np.int64)
    arrays = {
        "v_template": rng.normal(0, 0.3, (nv, 3)).astype(np.float32),
        "f": rng.integers(0, nv, (nf, 3)).astype(np.uint32),
        "shapedirs": (rng.standard_normal((nv, 3, 400), dtype=np.float32) * 1e-3),
        "posedirs": (rng.standard_normal((nv, 3, 486), dtype=np.float32) * 1e-3),
        "J_regressor": (rng.random((nj, nv)) / nv).astype(np.float32),
        "kintree_table": kintree,
        "weights": weights,
        "hands_componentsl": rng.normal(0, 0.1, (45, 45)).astype(np.float32),
        "hands_componentsr": rng.normal(0, 0.1, (45, 45)).astype(np.float32),
        "hands_meanl": np.zeros(45, np.float32), "hands_meanr": np.zeros(45, np.float32),
        "lmk_faces_idx": rng.integers(0, nf, 51).astype(np.int64),
        "lmk_bary_coords": np.full((51, 3), 1 / 3, np.float32),
        "dynamic_lmk_faces_idx": rng.integers(0, nf, (79, 17)).astype(np.int64),
        "dynamic_lmk_bary_coords": np.full((79, 17, 3), 1 / 3, np.float32),
    }
    target = folder / "smplx" / "SMPLX_NEUTRAL.npz"
    target.parent.mkdir(parents=True)
    np.savez(target, **arrays)
    return folder, arrays


@pytest.fixture(scope="module")
def fake_smplx_dir(tmp_path_factory):
    return _fake_smplx(tmp_path_factory.mktemp("smplx-models"))


@pytest.fixture
def clean_body_env(monkeypatch):
    for name in ("SMPLX_MODEL_DIR", "SMPLX_HF_REPO", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    body_mod.clear_body_cache()
    yield monkeypatch
    body_mod.clear_body_cache()


def test_smplx_loads_through_smplx_create(fake_smplx_dir, clean_body_env):
    folder, arrays = fake_smplx_dir
    clean_body_env.setenv("SMPLX_MODEL_DIR", str(folder))
    body = load_body()
    assert body.kind == "smplx" and "SMPL-X" in body.note
    assert body.num_vertices == 10475 and body.faces.shape == (20908, 3)
    # rest pose with zero betas/expression: smplx returns the template
    np.testing.assert_allclose(body.vertices, arrays["v_template"], atol=1e-5)
    assert len(body.joint_names) == 55 and body.joint_names[1] == "left_hip"
    # regions come from the strongest skinning weight (left_hip -> left thigh, ...)
    strongest = arrays["weights"].argmax(axis=1)
    assert (body.vertex_region[strongest == 1] == REGION_LABELS.index("left thigh")).all()
    assert (body.vertex_region[strongest == 15] == REGION_LABELS.index("head")).all()
    assert set(np.unique(body.vertex_region)) == set(range(18))
    assert load_body() is body  # cached per process
    # SMPL-X vertex ids are used as they are
    mask = vertex_mask_from_annotation(body, ["head"], [0, 5, 10474])
    assert np.flatnonzero(mask).tolist() == [0, 5, 10474]
    with pytest.raises(DataFormatError, match="outside SMPL-X"):
        vertex_mask_from_annotation(body, ["head"], [10475])


def test_broken_smplx_file_falls_back_to_the_mannequin_with_a_note(tmp_path, clean_body_env):
    broken = tmp_path / "smplx" / "SMPLX_NEUTRAL.npz"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not an npz at all")
    clean_body_env.setenv("SMPLX_MODEL_DIR", str(tmp_path))
    body = load_body()
    assert body.kind == "mannequin"
    assert body.note.startswith("SMPL-X from SMPLX_MODEL_DIR could not be loaded")
    assert "mannequin" in body.note


def test_missing_smplx_folder_falls_back(tmp_path, clean_body_env):
    clean_body_env.setenv("SMPLX_MODEL_DIR", str(tmp_path / "nowhere"))
    body = load_body()
    assert body.kind == "mannequin" and "no SMPLX_NEUTRAL.npz" in body.note


def test_hf_download_failure_never_shows_the_token(clean_body_env):
    clean_body_env.setenv("SMPLX_HF_REPO", "someone/private-smplx")
    clean_body_env.setenv("HF_TOKEN", "hf_secretvalue123")
    clean_body_env.setenv("HF_HUB_OFFLINE", "1")
    body = load_body()
    assert body.kind == "mannequin" and body.note.startswith("SMPL-X from SMPLX_HF_REPO could not")
    assert "hf_secretvalue123" not in body.note


def test_prefer_smplx_false_ignores_the_configuration(fake_smplx_dir, clean_body_env):
    clean_body_env.setenv("SMPLX_MODEL_DIR", str(fake_smplx_dir[0]))
    assert load_body(prefer_smplx=False).kind == "mannequin"
