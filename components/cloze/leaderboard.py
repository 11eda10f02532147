"""Leaderboard: the paper's Table 2.2 rows (assets/cloze_reference_rows.json) beside imported
result files, human-study files and this app's own runs, all scored by metrics.score_results.

Every row names its data set and size ("TempCloze (paper), 1,521 videos"; "data folder 'cloze',
6 stems"): rows on different data are not comparable, and the table says so (`COMPARABILITY`).
Rows are grouped by data set (the paper's first), best accuracy first within a group."""
from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from collections.abc import Mapping

from components.cloze.metrics import score_results

ROWS_PATH = Path(__file__).resolve().parents[2] / "assets" / "cloze_reference_rows.json"
COLUMNS = ("S", "A", "P", "acc", ">=1", ">=2", "3/3")
PAPER_DATA = "TempCloze (paper)"


@lru_cache(maxsize=1)
def _doc() -> dict:
    return json.loads(ROWS_PATH.read_text(encoding="utf-8"))


def comparability_note() -> str:
    """The sentence the table carries: rows on different data are not comparable."""
    return _doc()["comparability"]


def reference_rows() -> list[dict]:
    """The paper's rows; a model listed twice (thinking on and off) says which is which."""
    doc = _doc()
    names = Counter(r["name"] for r in doc["rows"])
    return [{**r, "name": _paper_name(r, names), "source": "paper", "data": r.get("data", doc["data"]),
             "size": r.get("size", doc["size"])} for r in doc["rows"]]


def _paper_name(row: Mapping, names: Counter) -> str:
    if names[row["name"]] < 2 or "think" not in row:
        return row["name"]
    return f"{row['name']} (thinking {'on' if row['think'] else 'off'})"


def data_name(results: Mapping, default: str) -> str:
    """The data set a result file was scored on: the `data_set` its records carry (this app's runs
    record their data folder's name), else `default` (e.g. "imported file")."""
    names = Counter(str(e["data_set"]) for dims in results.values() for e in dims.values()
                    if isinstance(e, Mapping) and e.get("data_set"))
    return f"data folder '{names.most_common(1)[0][0]}'" if names else default


def row_from_results(name: str, results: dict, source: str, data: str | None = None) -> dict:
    m = score_results(results)
    row = {"name": name, "source": source, **{k: m[k] for k in COLUMNS}}
    row["stems"] = m["stems"]
    row["invalid"] = m["invalid_entries_skipped"]
    row["parse_rate"] = m["parse_rate"]
    row["data"] = data or data_name(results, f"{source} file")
    n = m["stems_total"]
    row["size"] = f"{n} stem" + ("" if n == 1 else "s")
    return row


def _group(row: Mapping) -> tuple:
    """This app's runs first, then imported files and the study's humans, the paper's rows last."""
    source = row.get("source")
    return (0 if source == "this app" else 2 if source == "paper" else 1, str(row.get("data", "")))


def table(rows: list[dict], *, ndigits: int = 2) -> tuple[list[str], list[list]]:
    """Headers and display rows (rounded only here): this app's runs first, then the other rows
    of other data sets, the paper's rows last, each group sorted by acc, best first; every row
    shows its data set and size."""
    headers = ["Model", "Source", "Data (size)", *COLUMNS, "Stems"]
    order = sorted(rows, key=lambda r: (*_group(r), -(r.get("acc") if r.get("acc") is not None else -1)))
    body = [[r["name"], r.get("source", ""), f"{r.get('data', '?')} ({r.get('size', '?')})",
             *[None if r.get(k) is None else round(r[k], ndigits) for k in COLUMNS],
             r.get("stems", "")] for r in order]
    return headers, body
