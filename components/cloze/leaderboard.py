"""Leaderboard: the paper's Table 2.2 rows (assets/cloze_reference_rows.json) beside imported
result files, human-study files and this app's own runs, all scored by metrics.score_results.

Every row names its data set and size ("TempCloze (paper), 1,521 videos"; "data folder 'cloze',
6 stems"): rows on different data are not comparable, and the table says so (`COMPARABILITY`).
Rows are grouped by data set: this app's runs first, then imported files and the study's humans,
the paper's rows last (`ordered`); best accuracy first within a group.

A row scored here carries every score's 95 % interval over stems (`intervals`) and its per-stem
counts; within a data set each such row is tested against the next one below it (`significance`):
a paired bootstrap of the accuracy difference over the stems they share, unpaired when they share
none; a difference that is not significant is marked "n.s." (docs/metrics.md "Intervals")."""
from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from collections.abc import Callable, Mapping, Sequence

from components.cloze.metrics import DIMS, as_released, score_results, stem_columns
from components.common import stats

ROWS_PATH = Path(__file__).resolve().parents[2] / "assets" / "cloze_reference_rows.json"
COLUMNS = ("S", "A", "P", "acc", ">=1", ">=2", "3/3")
PAPER_DATA = "TempCloze (paper)"
#: the leaderboard's column naming the rows whose accuracies cannot be told apart
TIE_HEADER = "≈"
#: row shading of such groups (alternating, so two neighbouring groups stay apart)
TIE_COLOURS = ("#fff1c2", "#dbeafe")


@lru_cache(maxsize=1)
def _doc() -> dict:
    return json.loads(ROWS_PATH.read_text(encoding="utf-8"))


def comparability_note() -> str:
    """The sentence the table carries: rows on different data are not comparable."""
    return _doc()["comparability"]


def reference_rows() -> list[dict]:
    """The paper's rows; a model listed twice (thinking on and off) says which is which. Each row
    has `questions` (the N its acc is over, where the paper gives it: 1,521 videos x 3 for the
    models, 100 x 3 for the Human row) or `no_interval` (why it has no interval: Random)."""
    doc = _doc()
    names = Counter(r["name"] for r in doc["rows"])
    return [{**r, "name": _paper_name(r, names), "source": "paper", "data": r.get("data", doc["data"]),
             "size": r.get("size", doc["size"]),
             **({} if "no_interval" in r else {"questions": r.get("questions", doc["questions"]),
                                               "stems": r.get("questions", doc["questions"]) // 3})}
            for r in doc["rows"]]


#: the normal quantile of a two-sided 95 % interval
Z95 = 1.959963984540054


def binomial_interval(percent: float, n: int) -> tuple[float, float]:
    """The Wilson score 95 % interval (in %) of a share `percent` % of `n` independent questions:
    what a paper row's acc allows, given only its N (the paper gives no per-question answers)."""
    p, z2 = percent / 100.0, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return 100.0 * max(0.0, centre - half), 100.0 * min(1.0, centre + half)


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
    """A row scored as `eval cloze` scores the file (the released analysis: a score over nothing
    valid is 0, named in `nothing_valid`, its interval [0, 0])."""
    m = as_released(score_results(results))
    row = {"name": name, "source": source, **{k: m[k] for k in COLUMNS}}
    row["nothing_valid"] = m["nothing_valid"]
    row["stems"] = m["stems"]
    row["invalid"] = m["invalid_entries_skipped"]
    row["parse_rate"] = m["parse_rate"]
    row["data"] = data or data_name(results, f"{source} file")
    n = m["stems_total"]
    row["size"] = f"{n} stem" + ("" if n == 1 else "s")
    row["intervals"] = m["intervals"]
    cols = stem_columns(results)
    row["stem_acc"] = {stem: [sum(cols[f"{d}_correct"][i] for d in DIMS), sum(cols[f"{d}_valid"][i] for d in DIMS)]
                       for i, stem in enumerate(results)}
    return row


def run_rows(loaded, label: str = "run file") -> list[dict]:
    """One row per run of a collection (components/common/runs.py `LoadedRuns` of the Cloze
    reader), scored from what the collection read (`compact_row`): the numbers `eval cloze` prints
    for the file. Computed once per collection and kept with it."""
    with _ROWS_LOCK:
        rows = getattr(loaded, "board_rows", None)
        if rows is None:
            rows = []
            for name, compact in loaded.runs.items():
                folder = Path(loaded.files.get(name, "")).parent
                where = f"{folder.parent.name}/{folder.name}" if folder.name else "?"
                data = f"data folder '{compact['data_set']}'" if compact.get("data_set") else f"files in {where}"
                row = compact_row(name, compact["tally"], label, data)
                row["file"] = loaded.files.get(name, "")
                rows.append(row)
            loaded.board_rows = rows
        return rows


def board_ahead(loaded) -> threading.Thread:
    """`run_rows` of a collection and their paired tests against the next row (`warm_tests`),
    made on a low-priority thread once the collection is read (the loader calls it), so the first
    leaderboard a visitor opens finds them made: its `significance` reads them."""
    def work() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except (AttributeError, OSError):
            pass
        try:
            warm_tests(run_rows(loaded) + reference_rows())
        except Exception:  # noqa: BLE001 - only a head start: the leaderboard's own request reports
            pass
    thread = threading.Thread(target=work, name="leaderboard-ahead", daemon=True)
    thread.start()
    return thread


def compact_row(name: str, tally: Mapping, source: str, data: str) -> dict:
    """`row_from_results` of a run from the tally its entries were scored into as the collection
    read it (components/cloze/runs.py `compact_results`: per entry whether it is valid and right,
    as the released analysis decides), without going over the entries again: S, A, P and acc over
    valid entries, the cumulative scores over the stems whose three entries are all valid, 0 where
    nothing is valid (named in `nothing_valid`, its interval [0, 0]), the acc's bootstrap interval
    over the sorted stems (the unit and draw `eval` uses) and the per-stem counts the tests
    against the next row need."""
    paper = ("S", "A", "P")
    right = dict(zip(paper, tally["right"]))
    valid = dict(zip(paper, tally["valid"]))
    stem_acc = {stem: [c, v] for stem, (c, v, _) in tally["stems"].items()}
    per_stem = Counter(c for c, v in stem_acc.values() if v == 3)
    full_stems = sum(per_stem.values())
    entries = sum(s[2] for s in tally["stems"].values())
    row: dict = {"name": name, "source": source}
    empty = []

    def share(num: int, den: int, key: str) -> float:
        if den:
            return 100.0 * num / den
        empty.append(key)
        return 0.0

    for d in paper:
        row[d] = share(right[d], valid[d], d)
    row["acc"] = share(sum(right.values()), sum(valid.values()), "acc")
    for k in (3, 2, 1, 0):
        share(per_stem[k], full_stems, f"{k}/3")
    row["3/3"] = share(per_stem[3], full_stems, "3/3")
    row[">=1"] = share(per_stem[3] + per_stem[2] + per_stem[1], full_stems, ">=1")
    row[">=2"] = share(per_stem[3] + per_stem[2], full_stems, ">=2")
    row["nothing_valid"] = list(dict.fromkeys(empty))
    row["stems"] = full_stems
    row["invalid"] = tally["invalid"] + tally["error"]
    row["parse_rate"] = 100.0 * sum(valid.values()) / entries if entries else None
    row["data"] = data
    n = len(stem_acc)
    row["size"] = f"{n} stem" + ("" if n == 1 else "s")
    order = sorted(stem_acc)
    acc = stats.estimates([stats.ratio("acc", [stem_acc[s][0] for s in order], [stem_acc[s][1] for s in order],
                                       unit="stems", scale=100.0)])["acc"].to_json()
    if acc["value"] is None:
        acc.update(value=0.0, low=0.0, high=0.0, nothing_valid=True)
    row["intervals"] = {"acc": acc}
    row["stem_acc"] = stem_acc
    return row


_ROWS_LOCK = threading.Lock()


def _acc_score(row: Mapping, stems: list[str], name: str = "acc") -> stats.SumScore:
    counts = row["stem_acc"]
    return stats.ratio(name, [counts.get(s, [0, 0])[0] for s in stems],
                       [counts.get(s, [0, 0])[1] for s in stems], unit="stems", scale=100.0)


_DIFFERENCES: dict[tuple[int, int], tuple] = {}


def acc_difference(upper: Mapping, lower: Mapping) -> stats.Difference | None:
    """acc(upper) - acc(lower): paired over the union of their stems when they share any (a stem
    one row lacks adds nothing to that row), else unpaired. None without per-stem counts. Kept
    per pair of row objects (a collection's rows are made once: a page's refresh tests them once)."""
    if not upper.get("stem_acc") or not lower.get("stem_acc"):
        return None
    key = (id(upper["stem_acc"]), id(lower["stem_acc"]))
    hit = _DIFFERENCES.get(key)
    if hit is not None and hit[0] is upper["stem_acc"] and hit[1] is lower["stem_acc"]:
        return hit[2]
    diff = _acc_difference(upper, lower)
    _keep(upper, lower, diff)
    return diff


def _paired_at_once(pairs: list[tuple[Mapping, Mapping]]) -> None:
    """The paired tests of `pairs` not yet kept, those over the same stems resampled together
    (one draw, one product for all: 30 runs on one data set cost about what one pair did)."""
    groups: dict[tuple, list[tuple[Mapping, Mapping]]] = {}
    for upper, lower in pairs:
        a, b = upper.get("stem_acc"), lower.get("stem_acc")
        if not a or not b or not set(a) & set(b):
            continue
        hit = _DIFFERENCES.get((id(a), id(b)))
        if hit is not None and hit[0] is a and hit[1] is b:
            continue
        groups.setdefault(tuple(sorted(set(a) | set(b))), []).append((upper, lower))
    for stems, group in groups.items():
        if len(group) < 2:
            continue
        names = [f"pair {i}" for i in range(len(group))]
        diffs = stats.differences([_acc_score(u, list(stems), n) for (u, _), n in zip(group, names)],
                                  [_acc_score(v, list(stems), n) for (_, v), n in zip(group, names)])
        for (upper, lower), name in zip(group, names):
            _keep(upper, lower, diffs[name])


def _keep(upper: Mapping, lower: Mapping, diff: stats.Difference | None) -> None:
    if len(_DIFFERENCES) > 4096:
        _DIFFERENCES.clear()
    _DIFFERENCES[(id(upper["stem_acc"]), id(lower["stem_acc"]))] = (upper["stem_acc"], lower["stem_acc"], diff)


def _acc_difference(upper: Mapping, lower: Mapping) -> stats.Difference | None:
    a, b = set(upper["stem_acc"]), set(lower["stem_acc"])
    if a & b:
        stems = sorted(a | b)
        return stats.differences([_acc_score(upper, stems)], [_acc_score(lower, stems)])["acc"]
    return stats.unpaired_difference(_acc_score(upper, sorted(a)), _acc_score(lower, sorted(b)))


def ordered(rows: list[dict]) -> list[dict]:
    """The table's order: this app's runs first, the paper's rows last, each data set's best acc first."""
    return sorted(rows, key=lambda r: (*_group(r), -(r.get("acc") if r.get("acc") is not None else -1)))


def _neighbours(order: list[dict]) -> list[tuple[dict, dict]]:
    """Each row of `order` with the next row of its data set."""
    return [(row, order[i + 1]) for i, row in enumerate(order)
            if i + 1 < len(order) and _group(order[i + 1]) == _group(row)]


def warm_tests(rows: list[dict]) -> None:
    """The paired tests `significance(rows)` will read, made now (kept per pair of rows)."""
    _paired_at_once(_neighbours(ordered(rows)))


def significance(rows: list[dict]) -> list[dict | None]:
    """For each row of `ordered(rows)`: its accuracy against the next row of the same data set
    ({"next": name, "diff", "low", "high", "p_value", "significant", "paired", "stems"}), or None
    (the last row of a group, or a row without per-stem counts, e.g. the paper's)."""
    order = ordered(rows)
    _paired_at_once(_neighbours(order))
    out: list[dict | None] = []
    for i, row in enumerate(order):
        nxt = order[i + 1] if i + 1 < len(order) else None
        if nxt is None or _group(nxt) != _group(row):
            out.append(None)
            continue
        d = acc_difference(row, nxt)
        out.append(None if d is None or d.diff.value is None else {
            "next": nxt["name"], "diff": d.diff.value, "low": d.diff.low, "high": d.diff.high,
            "p_value": d.p_value, "significant": d.significant, "paired": d.paired,
            "stems": d.diff.units})
    return out


def _mark(test: dict | None) -> str:
    if test is None:
        return ""
    how = f"{'paired' if test['paired'] else 'unpaired'}, {test['stems']} stems"
    if test["significant"]:
        return f"above next (p {test['p_value']:.3f}, {how})"
    return f"n.s. vs next (p {test['p_value']:.2f}, {how})"


def _acc_interval(row: Mapping, ndigits: int) -> str:
    """The acc's 95 % interval: a scored row's bootstrap over stems; a paper row's binomial one
    from its N (marked "binomial"; its Stems column gives the paper's videos, N is 3 a video);
    otherwise a word why there is none."""
    if row.get("source") == "paper":
        if row.get("questions") and row.get("acc") is not None:
            low, high = binomial_interval(row["acc"], row["questions"])
            return f"[{round(low, ndigits)}, {round(high, ndigits)}] binomial"
        return row.get("no_interval") or "none: the paper gives no N"
    ci = (row.get("intervals") or {}).get("acc") or {}
    if ci.get("nothing_valid"):
        return "[0, 0] nothing valid"
    if ci.get("low") is None:
        return "none: no valid answer" if row.get("acc") is None else "none: too few stems"
    return f"[{round(ci['low'], ndigits)}, {round(ci['high'], ndigits)}]"


def _group(row: Mapping) -> tuple:
    """The runs found first, then imported files and the study's humans, the paper's rows last.
    The paper's rows are one group (its Human row, on the 100-video study subset, and Random
    included), so its Human row heads them, as the paper's ceiling, and shows without scrolling."""
    source = row.get("source")
    if source == "paper":
        return (2, PAPER_DATA)
    return (0 if source in ("this app", "run file") else 1, str(row.get("data", "")))


def table(rows: list[dict], *, ndigits: int = 2, tests: list[dict | None] | None = None) -> tuple[list[str], list[list]]:
    """Headers and display rows (rounded only here): this app's runs first, then the other rows
    of other data sets, the paper's rows last, each group sorted by acc, best first; every row
    shows its data set and size, the accuracy's 95 % interval over stems and its test against the
    next row (`significance`). The score and its interval come first, where a narrow window shows
    them; what only tells rows apart (data, source) comes last."""
    order = ordered(rows)
    body = [[column.cell(r, test, ndigits) for column in TABLE_COLUMNS]
            for r, test in zip(order, significance(rows) if tests is None else tests)]
    return [column.header for column in TABLE_COLUMNS], body


def board(rows: list[dict], *, ndigits: int = 2) -> tuple[list[str], list[list], list[str]]:
    """The leaderboard as shown: `table`'s headers and rows, the tie column (`TIE_HEADER`) after
    the name, and each row's tie group ("" for none). Each row is tested against the next one
    once, here (`significance`)."""
    tests = significance(rows)
    headers, body = table(rows, ndigits=ndigits, tests=tests)
    ties = tie_groups(tests)
    return [headers[0], TIE_HEADER, *headers[1:]], [[r[0], t, *r[1:]] for r, t in zip(body, ties)], ties


def _value(row: Mapping, key: str, ndigits: int) -> float | None:
    return None if row.get(key) is None else round(row[key], ndigits)


@dataclass(frozen=True)
class Column:
    """One column of the leaderboard: its header, its width in px at 1440 (the layout's
    `column_widths`) and its cell, `cell(row, test against the next row, ndigits)`. A new column
    is one row of `TABLE_COLUMNS`."""

    header: str
    width: int
    cell: Callable[[Mapping, dict | None, int], Any]


def _score(key: str) -> Column:
    return Column(key, 56, lambda r, test, nd: _value(r, key, nd))


#: the table's columns in order (`table`; `board` adds the tie column after Model): the score and
#: its interval first, what only tells rows apart last. 1,368 px in all with the tie column: at
#: 1440 px every header is on at most two lines in the page's proportional font (ui/style.css), and
#: the interval's column holds a paper row's "[87.62, 89.47] binomial" on one line
TABLE_COLUMNS: tuple[Column, ...] = (
    Column("Model", 200, lambda r, test, nd: r["name"]),
    _score("acc"),
    Column("acc 95 % CI", 188, lambda r, test, nd: _acc_interval(r, nd)),
    *(_score(k) for k in COLUMNS if k != "acc"),
    Column("Stems", 72, lambda r, test, nd: r.get("stems", "")),
    Column("acc vs next row", 144, lambda r, test, nd: _mark(test)),
    Column("Data (size)", 256, lambda r, test, nd: f"{r.get('data', '?')} ({r.get('size', '?')})"),
    Column("Source", 80, lambda r, test, nd: r.get("source", "")),
)
#: the columns after "Model", in the table's order
HEADERS = tuple(column.header for column in TABLE_COLUMNS[1:])
#: the tie column's width (`board`)
TIE_WIDTH = 36


def column_widths() -> list[int]:
    """The shown table's column widths in px (`board`'s columns: Model, the tie column, the rest)."""
    return [TABLE_COLUMNS[0].width, TIE_WIDTH, *(column.width for column in TABLE_COLUMNS[1:])]


def tie_groups(tests: Sequence[dict | None]) -> list[str]:
    """Per row of the ordered leaderboard (`leaderboard.significance`): a shared label ("≈1",
    "≈2", ...) for each run of rows whose accuracy differences to the next row are not
    significant, "" for a row that stands apart."""
    labels = [""] * len(tests)
    group = 0
    i = 0
    while i < len(tests):
        j = i
        while j < len(tests) and tests[j] is not None and not tests[j]["significant"]:
            j += 1
        if j > i:  # rows i..j cannot be told apart from their neighbours
            group += 1
            for k in range(i, j + 1):
                labels[k] = f"{TIE_HEADER}{group}"
            i = j + 1
        else:
            i += 1
    return labels


def tie_colour(label: str) -> str:
    """The background of a row in tie group `label` ('' for none)."""
    if not label:
        return ""
    return TIE_COLOURS[(int(label[len(TIE_HEADER):]) - 1) % len(TIE_COLOURS)]
