"""Issue 28: a Hub download cut for good says one line, not huggingface_hub's retry narration
("Error while downloading from ...", "Trying to resume download...", 12 to 108 lines) before it.
A real local Hub server (tests/helpers/hub_server.py) cuts the file; the real client retries."""
from __future__ import annotations

import app
from tests.datasource.conftest import copy_tree


def test_eval_on_a_repository_file_cut_for_good_says_one_line(hub, impact_examples, tmp_path, capfd):
    hub.add_repo("test/hapact", copy_tree(impact_examples, tmp_path / "hapact"))
    pred = tmp_path / "spatial_pred.jsonl"
    pred.write_text("")
    hub.cut("annotations.json", at=100, times=100)
    capfd.readouterr()
    code = app.main(["eval", "impact-spatial", "--annotations", "hf://datasets/test/hapact/annotations.json",
                     "--pred", str(pred), "--json"])
    out, err = capfd.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("error: Could not download annotations.json") and "run again" in err
    assert hub.downloads().count("annotations.json") > 1            # the client did retry


def test_fetch_of_a_repository_with_a_file_cut_for_good_says_one_line(hub, cloze_repo, tmp_path, capfd):
    name = next(p for p in hub.repos["test/tempcloze"].revisions["main"].files if p.endswith(".mp4"))
    hub.cut(name, at=1000, times=100)
    capfd.readouterr()
    code = app.main(["fetch", "--data", cloze_repo, "--out", str(tmp_path / "mirror"), "--no-progress",
                     "--workers", "2"])
    out, err = capfd.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("error: Could not download") and "run again" in err
