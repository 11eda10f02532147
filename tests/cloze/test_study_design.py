"""Study design: K annotator sets, every question judged by exactly R annotators; exported and
materialised in the released layout, which the study protocol then loads."""
import json

import pytest

from components.cloze.data import load_dataset
from components.cloze.study.design import assign, coverage, export_assignment, materialise
from components.cloze.study.protocol import load_set_folder, released_questions, set_folders
from components.base.errors import UserError


def test_the_papers_design_100_videos_5_annotators_r2():
    stems = [f"v{i:03d}" for i in range(100)]
    sets = assign(stems, k=5, r=2, seed=7)
    assert len(sets) == 5 and all(len(v) == 40 for v in sets.values())      # 120 questions each
    assert set(coverage(sets).values()) == {2} and set(coverage(sets)) == set(stems)
    assert all(len(set(v)) == len(v) for v in sets.values())
    assert assign(stems, 5, 2, seed=7) == sets and assign(stems, 5, 2, seed=8) != sets


@pytest.mark.parametrize("n,k,r", [(7, 3, 2), (10, 4, 3), (5, 5, 5), (3, 1, 1)])
def test_every_stem_exactly_r_times_and_balanced(n, k, r):
    sets = assign([f"s{i}" for i in range(n)], k, r)
    assert set(coverage(sets).values()) == {r}
    sizes = [len(v) for v in sets.values()]
    assert max(sizes) - min(sizes) <= 1


def test_bad_r_is_refused():
    with pytest.raises(UserError):
        assign(["a"], k=2, r=3)


def test_materialised_sets_load_as_released_sets(cloze_examples, tmp_path):
    ds = load_dataset(cloze_examples)
    sets = assign(list(ds.instances), k=3, r=2, seed=1)
    out = export_assignment(sets, tmp_path / "assignment.json", k=3, r=2, seed=1)
    data = json.loads(out.read_text())
    assert data["sets"] == sets and data["questions_per_set"]["set_1"] == 3 * len(sets["set_1"])
    root = materialise(ds, sets, tmp_path)
    found = set_folders(root)
    assert sorted(found) == sorted(sets)
    for name, folder in found.items():
        set_ds, dropped = load_set_folder(folder)
        assert sorted(set_ds.instances) == sets[name] and not dropped
        assert len(released_questions(set_ds, name)) == 3 * len(sets[name])
