"""The released layout, option/task orders, sets, missing clips and safe zip extraction."""
import hashlib
import json
import random
import zipfile

import pytest

from components.cloze.data import load_dataset, safe_extract_zip
from components.cloze.questions import build_set, make_question, schedule_seed_for
from components.base.errors import UserError


def test_example_data_is_in_the_released_layout(cloze_examples):
    ds = load_dataset(cloze_examples)
    assert len(ds.instances) >= 6
    for _stem, inst in ds.instances.items():
        assert inst.available_dims() == ["S", "A", "C"], inst.problems()
        for rel in ("before.mp4", "GT.mp4", "after.mp4", "S/Rand1.mp4", "S/Rand2.mp4", "S/Rand3.mp4",
                    "A/Early.mp4", "A/Late.mp4", "A/Wide.mp4", "C/Reverse.mp4", "C/Shuffle.mp4",
                    "C/Loop.mp4"):
            assert (inst.folder / rel).stat().st_size > 0
    meta = json.loads((cloze_examples / "meta.json").read_text())
    for name, entry in meta.items():
        assert name.endswith(".mp4")
        assert entry["gap_start"] == round(entry["gap_start"], 2) and entry["gap_end"] > entry["gap_start"]
        assert entry["seed"] == 0 and entry["flow"] > 1.0
        T = entry["duration"]
        assert 12 <= T <= 20
        assert 0.25 * T - 0.01 <= entry["gap_start"] and entry["gap_end"] <= 0.75 * T + 0.01


def test_eval_option_order_is_the_upstream_shuffle():
    q = make_question("J1pDNwlCiws.22_0", "A", 42)
    expected = ["GT", "Early", "Late", "Wide"]
    random.Random("42:J1pDNwlCiws.22_0:A").shuffle(expected)
    assert list(q.options) == expected
    assert q.option_map == dict(zip("ABCD", expected))
    assert q.option_map[q.expected] == "GT"
    # P is stored under the folder name C
    p = make_question("x", "P", 42)
    order = ["GT", "Reverse", "Shuffle", "Loop"]
    random.Random("42:x:C").shuffle(order)
    assert list(p.options) == order


def test_human_study_orders(cloze_examples):
    q = make_question("s", "S", 7, rule="human")
    opts = ["GT", "Rand1", "Rand2", "Rand3"]
    random.Random("7:s:S:options").shuffle(opts)
    assert list(q.options) == opts
    assert schedule_seed_for(7, "examples") == int(hashlib.sha256(b"7:examples").hexdigest()[:16], 16)
    ds = load_dataset(cloze_examples)
    plain = build_set(ds, "examples", ["S", "A", "C"], seed=7, rule="human").questions
    shuffled = build_set(ds, "examples", ["S", "A", "C"], seed=7, rule="human", shuffle_tasks=True).questions
    random.Random(schedule_seed_for(7, "examples")).shuffle(plain)
    assert [x.key for x in shuffled] == [x.key for x in plain]


def test_mixed_questions_take_one_clip_per_dimension(cloze_examples):
    ds = load_dataset(cloze_examples)
    qs = build_set(ds, "mixed")
    assert qs.questions and all(q.dim == "Mixed" for q in qs.questions)
    for q, item in zip(qs.questions, ds.sets["mixed"]):
        picks = {item[d].split("/")[-1][:-4] for d in ("S", "A", "P")}
        assert set(q.options) == {"GT"} | picks


def test_missing_distractor_skips_that_dimension_with_a_reason(cloze_copy):
    stem = sorted(p.name for p in (cloze_copy / "choices").iterdir())[0]
    (cloze_copy / "choices" / stem / "A" / "Wide.mp4").unlink()
    ds = load_dataset(cloze_copy)
    assert any("A/Wide.mp4" in p for p in ds.problems())
    qs = build_set(ds, "all", ["S", "A", "C"])
    keys = {q.key for q in qs.questions}
    assert f"{stem}:A" not in keys and f"{stem}:S" in keys
    assert any(stem in s and "Wide" in s for s in qs.skipped)


def test_empty_and_unknown_sets_are_clear_errors(cloze_copy):
    (cloze_copy / "sets.json").write_text(json.dumps({"empty": []}))
    ds = load_dataset(cloze_copy)
    with pytest.raises(UserError, match="empty"):
        build_set(ds, "empty")
    with pytest.raises(UserError, match="Unknown set"):
        build_set(ds, "nope")


def test_empty_choices_folder(tmp_path):
    (tmp_path / "choices").mkdir()
    with pytest.raises(UserError, match="empty"):
        load_dataset(tmp_path)
    with pytest.raises(UserError, match="choices"):
        load_dataset(tmp_path / "nothing-here")


def test_zip_upload_extracts_and_rejects_unsafe_names(cloze_examples, tmp_path):
    good = tmp_path / "good.zip"
    stem_dir = next((cloze_examples / "choices").iterdir())
    with zipfile.ZipFile(good, "w") as zf:
        for f in stem_dir.rglob("*.mp4"):
            zf.write(f, f"set/choices/{stem_dir.name}/{f.relative_to(stem_dir)}")
    out = safe_extract_zip(good, tmp_path / "x")
    ds = load_dataset(out)
    assert list(ds.instances) == [stem_dir.name]
    for bad_name in ("../evil.txt", "/abs/evil.txt", "a/../../evil.txt"):
        bad = tmp_path / "bad.zip"
        with zipfile.ZipFile(bad, "w") as zf:
            zf.writestr(bad_name, "x")
        with pytest.raises(UserError, match="unsafe"):
            safe_extract_zip(bad, tmp_path / "y")
        assert not (tmp_path / "evil.txt").exists()
    with pytest.raises(UserError, match="MiB"):
        safe_extract_zip(good, tmp_path / "z", max_bytes=1000)
    (tmp_path / "not.zip").write_text("nope")
    with pytest.raises(UserError, match="not a readable zip"):
        safe_extract_zip(tmp_path / "not.zip", tmp_path / "w")


def test_mixed_dimension_on_a_plain_set_says_where_mixed_items_live(cloze_examples):
    ds = load_dataset(cloze_examples)
    with pytest.raises(UserError, match="mixed items"):
        build_set(ds, "examples", ["Mixed"])
