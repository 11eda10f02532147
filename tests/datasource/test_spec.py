"""The hf:// form: what it names, and one clear line for what it cannot name."""
from __future__ import annotations

from pathlib import Path

import pytest

from components.base.errors import UserError
from components.datasource import as_source, is_hub_spec, parse_spec


def test_parts_of_a_spec():
    spec = parse_spec("hf://datasets/CedPei/TempCloze")
    assert (spec.repo_id, spec.revision, spec.subfolder) == ("CedPei/TempCloze", None, "")
    spec = parse_spec("hf://datasets/o/n@v1.0/data/cloze/")
    assert (spec.repo_id, spec.revision, spec.subfolder) == ("o/n", "v1.0", "data/cloze")
    assert str(spec) == "hf://datasets/o/n@v1.0/data/cloze"


def test_a_revision_with_a_slash_is_written_encoded():
    spec = parse_spec("hf://datasets/o/n@refs%2Fpr%2F3/x")
    assert spec.revision == "refs/pr/3" and spec.subfolder == "x"
    assert str(spec) == "hf://datasets/o/n@refs%2Fpr%2F3/x"


def test_a_commit_is_pinned_and_a_branch_is_not():
    assert parse_spec("hf://datasets/o/n@" + "a" * 40).pinned
    assert not parse_spec("hf://datasets/o/n@main").pinned


@pytest.mark.parametrize("text, words", [
    ("hf://models/o/n", "only dataset repositories"),
    ("hf://datasets/o", "only dataset repositories"),
    ("hf://datasets/o/n@", "nothing after '@'"),
    ("hf://datasets/o/n/../x", "'..'"),
    ("hf://datasets/o w/n", "not a repository name"),
])
def test_bad_specs_say_the_form(text, words):
    with pytest.raises(UserError) as info:
        parse_spec(text)
    message = str(info.value)
    assert words in message and "\n" not in message


def test_argparse_type_keeps_a_spec_and_makes_paths():
    assert as_source(" hf://datasets/o/n ") == "hf://datasets/o/n"
    assert as_source("data/cloze") == Path("data/cloze")
    assert is_hub_spec("hf://datasets/o/n") and not is_hub_spec(Path("hf:/datasets/o/n"))
