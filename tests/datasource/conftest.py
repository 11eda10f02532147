"""Fixtures of the data-source tests: the local Hub server (tests/helpers/hub_server.py) serving a
copy of the example data in the released layouts, and the environment pointing the real
huggingface_hub client at it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.hub_server import HubServer, hub_env


def copy_tree(src: Path, dest: Path) -> Path:
    """A plain copy (links followed, dot files left out): a repository's contents."""
    shutil.copytree(src, dest, symlinks=False, ignore=shutil.ignore_patterns(".*"))
    return dest


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with HubServer() as server:
        hub_env(monkeypatch, server, tmp_path / "client")
        yield server


@pytest.fixture
def cloze_repo(hub, cloze_examples, tmp_path) -> str:
    """`test/tempcloze`: the example TempCloze stems at the repository's root (as CedPei/TempCloze
    holds them); branch main."""
    hub.add_repo("test/tempcloze", copy_tree(cloze_examples, tmp_path / "repo-cloze"))
    return "hf://datasets/test/tempcloze"
