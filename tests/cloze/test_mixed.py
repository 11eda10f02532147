"""TempCloze-Mixed as released: `mixed/mixed_ids.json` (a bare JSON list) and the released mixed
evaluator's option order Random(f"{seed}:{stem}") over [GT, S, A, P]."""
import json
import shutil

import pytest

from components.cloze.data import load_dataset
from components.cloze.questions import build_set, make_question
from components.base.errors import UserError

# One record as the released files hold it: the item from mixed/mixed_ids.json and the option_map
# the released mixed evaluation recorded for it (mixed/eval_results/gemini-2.5-pro.json, seed 42).
RELEASED_ITEM = {"stem": "-lLfmzJrbA8.12_0", "S": "S/Rand3.mp4", "A": "A/Early.mp4", "P": "C/Shuffle.mp4"}
RELEASED_OPTION_MAP = {"A": "Shuffle", "B": "Early", "C": "Rand3", "D": "GT"}
RELEASED_EXPECTED = "D"


def test_released_mixed_record_is_reproduced():
    q = make_question(RELEASED_ITEM["stem"], "Mixed", 42, mixed=RELEASED_ITEM)
    assert q.option_map == RELEASED_OPTION_MAP
    assert q.expected == RELEASED_EXPECTED


def test_progression_pick_must_be_a_progression_clip():
    with pytest.raises(UserError, match="not one of Reverse, Shuffle, Loop"):
        make_question("x", "Mixed", 42, mixed={"stem": "x", "S": "S/Rand1.mp4", "A": "A/Wide.mp4",
                                               "P": "A/Early.mp4"})
    # the released evaluation script reads the key "C"; a file using it still works
    q = make_question("x", "Mixed", 42, mixed={"stem": "x", "S": "S/Rand1.mp4", "A": "A/Wide.mp4",
                                               "C": "C/Loop.mp4"})
    assert set(q.options) == {"GT", "Rand1", "Wide", "Loop"}


@pytest.fixture
def released_tree(cloze_copy):
    """The example data with one stem renamed to the released stem and the released mixed list."""
    first = sorted(p for p in (cloze_copy / "choices").iterdir())[0]
    shutil.move(first, cloze_copy / "choices" / RELEASED_ITEM["stem"])
    sets = json.loads((cloze_copy / "sets.json").read_text())
    sets.pop("mixed", None)
    (cloze_copy / "sets.json").write_text(json.dumps(sets))
    (cloze_copy / "mixed").mkdir()
    (cloze_copy / "mixed" / "mixed_ids.json").write_text(json.dumps([RELEASED_ITEM], indent=2))
    return cloze_copy


def test_mixed_ids_json_is_read_as_released(released_tree):
    ds = load_dataset(released_tree)
    assert ds.sets["mixed"] == [RELEASED_ITEM]
    qs = build_set(ds, "mixed")
    assert [q.option_map for q in qs.questions] == [RELEASED_OPTION_MAP]


def test_mixed_ids_conflicting_with_sets_json_is_an_error(released_tree):
    sets = json.loads((released_tree / "sets.json").read_text())
    sets["mixed"] = [{**RELEASED_ITEM, "S": "S/Rand1.mp4"}]
    (released_tree / "sets.json").write_text(json.dumps(sets))
    with pytest.raises(UserError, match="both define the set 'mixed'"):
        load_dataset(released_tree)


def test_malformed_mixed_ids_names_the_file(released_tree):
    (released_tree / "mixed" / "mixed_ids.json").write_text(json.dumps({"stem": "x"}))
    with pytest.raises(UserError, match="mixed_ids.json"):
        load_dataset(released_tree)
