"""The prompt files' SHA-256 as docs/prompts.md lists them. The files were compared word for word
with the papers (docs/prompts.md says how); the pins keep them as checked, without the papers."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROMPT_DIR = ROOT / "assets" / "prompts"
PROMPTS_DOC = ROOT / "docs" / "prompts.md"
_ROW = re.compile(r"^\| `(?P<file>[^`/]+\.txt)` \|.*\| (?P<sha>[0-9a-f]{64}) \|$")


def documented_hashes() -> dict[str, str]:
    """File name -> SHA-256 from the table of docs/prompts.md (a file listed twice is an error)."""
    hashes: dict[str, str] = {}
    for line in PROMPTS_DOC.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line.strip())
        if row:
            assert row["file"] not in hashes, f"{row['file']} is listed twice in docs/prompts.md"
            hashes[row["file"]] = row["sha"]
    return hashes


def file_hash(name: str) -> str:
    return hashlib.sha256((PROMPT_DIR / name).read_bytes()).hexdigest()


def assert_pinned(name: str) -> None:
    """`name` (e.g. "cloze_eval.txt") is byte for byte the file docs/prompts.md lists."""
    listed = documented_hashes()
    assert name in listed, f"assets/prompts/{name} is not listed in docs/prompts.md"
    assert file_hash(name) == listed[name], (
        f"assets/prompts/{name} differs from the text checked against the paper (docs/prompts.md); "
        "check it against the paper again and update its SHA-256 there")
