"""The fourth tab's example data: a few items, each with a question and its answer."""
from __future__ import annotations

import json
from pathlib import Path

ITEMS = [{"id": f"item-{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(1, 4)]


def generate(out_dir: Path, seed: int = 0, progress=None) -> None:
    (Path(out_dir) / "items.json").write_text(json.dumps({"seed": seed, "items": ITEMS}), encoding="utf-8")
    if progress:
        progress(1.0)
