"""The fourth tab's one handler (pure: no gradio)."""
from __future__ import annotations

import json
from pathlib import Path


def read_items(data_dir: str | Path) -> dict[str, dict]:
    """The items of <data_dir>/fourth/items.json, by id."""
    data = json.loads((Path(data_dir) / "fourth" / "items.json").read_text(encoding="utf-8"))
    return {item["id"]: item for item in data["items"]}


def answer(data_dir: str, item_id: str) -> str:
    item = read_items(data_dir).get(item_id)
    if item is None:
        return "No such item."
    return f"{item['question']} {item['answer']}"
