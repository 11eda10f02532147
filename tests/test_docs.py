"""The repository's own docs: the prompt table matches assets/prompts/, and doc references resolve."""
from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.prompt_pins import PROMPT_DIR, documented_hashes, file_hash

ROOT = Path(__file__).resolve().parents[1]


def test_every_prompt_file_is_listed_with_its_hash():
    listed = documented_hashes()
    assert sorted(listed) == sorted(p.name for p in PROMPT_DIR.glob("*.txt"))
    changed = [name for name, sha in listed.items() if file_hash(name) != sha]
    assert not changed, f"changed since checked against the papers (docs/prompts.md): {changed}"


def test_docs_named_in_the_repository_exist():
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {m for path in texts for m in re.findall(r"docs/([\w.-]+\.md)", path.read_text(encoding="utf-8"))}
    assert named, "no docs/*.md reference found"
    missing = sorted(name for name in named if not (ROOT / "docs" / name).is_file())
    assert not missing, f"docs referred to but absent: {missing}"
