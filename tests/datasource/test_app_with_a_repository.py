"""app.py with a dataset repository as its data folder: opened before serving outside a Space
(a bad one is one line and exit 2, no server), opened in the background on a Space (the folder to
serve is known at once), and the Hub cache folder allowed to be served."""
from __future__ import annotations

import sys

import app
from components.common import preparing
from components.datasource import storage_folder
from tests.common.test_preparing import CHILD


def test_outside_a_space_the_repository_opens_before_serving(hub, cloze_repo, monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    root = app.ensure_example_data(cloze_repo)
    assert (root / "cloze").is_dir()
    assert len(hub.calls("info")) == 2   # resolved and listed
    assert str(storage_folder("test/tempcloze").resolve()) in app.served_paths(cloze_repo, root)


def test_a_bad_repository_is_one_line_and_no_server(hub, monkeypatch, capsys):
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert app.main(["--data-dir", "hf://datasets/test/missing", "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: hf://datasets/test/missing was not found") and len(err.splitlines()) == 1


def test_on_a_space_the_folder_to_serve_comes_at_once(hub, cloze_repo, monkeypatch, tmp_path):
    go = tmp_path / "go"
    go.write_text("go")
    monkeypatch.setenv("SPACE_ID", "user/space")
    monkeypatch.setattr(preparing, "generator_command", lambda part, root, progress: [
        sys.executable, "-c", CHILD, str(root), part, str(progress), str(go)])
    root = app.ensure_example_data(cloze_repo)
    assert root.name == "test--tempcloze"
    current = preparing._current
    assert current is not None and current.wait(60)
    assert preparing.status("cloze").ready and preparing.status("cloze").source.startswith(
        "hf://datasets/test/tempcloze@")
    assert preparing.status("grounding").ready and preparing.status("grounding").source == "examples"
