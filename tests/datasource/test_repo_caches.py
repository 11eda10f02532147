"""The repositories a process opened and listed: each opened once however many ask at once, and
no more kept than REPOS_KEPT (against the local Hub server, through the real huggingface_hub)."""
from __future__ import annotations

from components.datasource import repos
from components.datasource.spec import parse_spec
from tests.datasource.conftest import copy_tree
from tests.helpers.at_once import Held, asked_at_once


def test_a_repository_opened_by_several_visitors_at_once_is_listed_and_mounted_once(hub, cloze_repo,
                                                                                   monkeypatch):
    listing = Held(repos.hub.list_folder)
    monkeypatch.setattr(repos.hub, "list_folder", listing)
    opened = asked_at_once(lambda: repos.open_repo(cloze_repo), listing)
    assert listing.calls == 1 and all(o is opened[0] for o in opened)
    assert len(hub.calls("info")) == 2              # the commit and its files, each asked once
    assert repos.opened_repos() == [opened[0]]


def test_the_repositories_listed_are_bounded(hub, cloze_examples, tmp_path):
    folder = copy_tree(cloze_examples / "choices", tmp_path / "repo")
    branches = [f"b{i}" for i in range(repos.REPOS_KEPT + 1)]
    hub.add_repo("test/many", {name: folder for name in branches})
    for name in branches:
        repos.listed(parse_spec(f"hf://datasets/test/many@{name}"))
    assert len(repos._listed) == repos.REPOS_KEPT
    hub.reset_log()
    repos.listed(parse_spec("hf://datasets/test/many@b0"))        # pushed out: resolved again
    repos.listed(parse_spec(f"hf://datasets/test/many@{branches[-1]}"))   # kept: nothing asked
    assert len(hub.calls("info")) == 1
