"""The example generator: deterministic bytes, six instances, sets and the baseline result file."""
import json

from examples import cloze_data


def test_sources_are_byte_identical_when_regenerated(cloze_examples, tmp_path):
    i = 5
    kind = cloze_data.KINDS[i]
    meta = json.loads((cloze_examples / "meta.json").read_text())
    duration = meta[f"{kind}.mp4"]["duration"]
    cloze_data._write_source(kind, tmp_path / "again.mp4", duration, 0 * 1000 + i)
    assert (tmp_path / "again.mp4").read_bytes() == (cloze_examples / "sources" / f"{kind}.mp4").read_bytes()


def test_sets_and_results_files(cloze_examples):
    sets = json.loads((cloze_examples / "sets.json").read_text())
    assert len(sets["examples"]) >= 6 and len(sets["mixed"]) == len(sets["examples"])
    for item in sets["mixed"]:
        assert item["S"].startswith("S/") and item["A"].startswith("A/") and item["P"].startswith("C/")
    res = json.loads((cloze_examples / "results" / "edge1.json").read_text())
    assert set(res) == set(sets["examples"])
    assert all(set(d) == {"S", "A", "C"} for d in res.values())
    assert all(e["backend"] == "baseline:edge1" for d in res.values() for e in d.values())
