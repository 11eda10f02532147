"""Leaderboard: the paper's Table 2.2 rows (assets/cloze_reference_rows.json) beside imported
result files, human-study files and this app's own runs, all scored by scoring.score_results."""
from __future__ import annotations

import json
from pathlib import Path

from components.cloze.scoring import score_results

ROWS_PATH = Path(__file__).resolve().parents[2] / "assets" / "cloze_reference_rows.json"
COLUMNS = ("S", "A", "P", "acc", ">=1", ">=2", "3/3")


def reference_rows() -> list[dict]:
    doc = json.loads(ROWS_PATH.read_text(encoding="utf-8"))
    return [{**r, "source": "paper"} for r in doc["rows"]]


def row_from_results(name: str, results: dict, source: str) -> dict:
    m = score_results(results)
    row = {"name": name, "source": source, **{k: m[k] for k in COLUMNS}}
    row["stems"] = m["stems"]
    row["invalid"] = m["invalid_entries_skipped"]
    row["parse_rate"] = m["parse_rate"]
    return row


def table(rows: list[dict], *, ndigits: int = 2) -> tuple[list[str], list[list]]:
    """Headers and display rows (rounded only here), sorted by acc, best first."""
    headers = ["Model", "Source", *COLUMNS, "Stems"]
    order = sorted(rows, key=lambda r: -(r.get("acc") if r.get("acc") is not None else -1))
    body = [[r["name"], r.get("source", ""),
             *[None if r.get(k) is None else round(r[k], ndigits) for k in COLUMNS],
             r.get("stems", "")] for r in order]
    return headers, body
