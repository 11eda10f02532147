"""The released app's result file, `set_N.json`: one JSON object, `responses` keyed by task index
(docs/tempcloze-upstream.md, "Reading a result file back"). Read back as the released app reads it
(a list of responses becomes a dict; the run is reused when policy, dataset id and seed match),
set aside rather than overwritten when it belongs to another run, and never rewritten with fewer
responses than it held without a copy of it kept first."""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any
from collections.abc import Callable

from components.cloze.human import load_study_files
from components.cloze.questions import Question
from components.cloze.study.protocol import FLOW_ALIASES, SCHEDULE_POLICY
from components.base.errors import DataFormatError
from components.base.io import atomic_write_bytes, fsync_dir, load_json
from components.base.lru import SingleFlightLRU

#: what the released app (@e121dcf, `run_matches_config`) compares before it reuses a file; its
#: older version compared `choices_dir` instead of `dataset_id`, a path that differs per machine
MATCH_KEYS = ("schedule_policy", "dataset_id", "seed")
RECORD_KEYS = ("task_index", "stem", "dim", "answer", "expected", "correct", "option_map",
               "display_mode", "answer_flow", "elapsed_sec", "answered_at_utc", "redo_count")
READ_TRIES = 3          # the released app writes in place (not atomically): a read may catch it midway
READ_PAUSE_S = 0.05


def result_header(set_name: str, seed: int, choices_dir: str | Path, result_path: str | Path,
                  questions: list[Question] | tuple[Question, ...], *, data_revision: str | None = None) -> dict:
    """The released header; `data_revision` (hf://...@<commit>, this app's key) when the set comes
    from a dataset repository."""
    stems = sorted({q.stem for q in questions})
    header = {"dataset_id": set_name, "schedule_policy": SCHEDULE_POLICY, "seed": seed,
              "choices_dir": str(choices_dir), "result_path": str(result_path),
              "started_at_utc": datetime.now(UTC).isoformat(), "completed_at_utc": None,
              "stems": stems, "schedule": [{"stem": q.stem, "dim": q.dim} for q in questions],
              "responses": {}}
    if data_revision:
        header["data_revision"] = data_revision
    return header


def released_record(rec: dict) -> dict:
    """The upstream record keys of one of our records (answer_flow in the released spelling)."""
    out = {k: rec.get(k) for k in RECORD_KEYS}
    out["answer_flow"] = FLOW_ALIASES.get(out["answer_flow"], out["answer_flow"])
    return out


def matches(old: dict, header: dict) -> bool:
    """The same run: the released keys match, and (this app's key) the same data revision when the
    set comes from a dataset repository (a file of another commit is set aside)."""
    return all(old.get(k) == header[k] for k in MATCH_KEYS) and old.get("data_revision") == header.get("data_revision")


def normalise_responses(data: dict) -> dict[str, dict]:
    """The released `normalize_responses`: a list becomes a dict keyed by `str(task_index)`;
    anything else that is not a dict is no responses. Entries that are not objects are left out
    (the released app reads them as unanswered)."""
    responses = data.get("responses")
    if isinstance(responses, list):
        return {str(e.get("task_index")): e for e in responses
                if isinstance(e, dict) and e.get("task_index") is not None}
    if not isinstance(responses, dict):
        return {}
    return {str(k): v for k, v in responses.items() if isinstance(v, dict)}


def file_stamp(path: str | Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of the file, None when there is none: a write by anyone changes it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass
class FileState:
    """What is at the result path: `absent`, `unreadable` (not a JSON object), `foreign` (another
    run: policy, dataset id or seed differ) or `matching` (the released app would reuse it)."""

    kind: str
    stamp: tuple[int, int, int] | None = None
    data: dict = field(default_factory=dict)
    responses: dict[str, dict] = field(default_factory=dict)
    detail: str = ""


def read_result_file(path: str | Path, header: dict) -> FileState:
    path = Path(path)
    for attempt in range(READ_TRIES):
        stamp = file_stamp(path)
        if stamp is None:
            return FileState("absent")
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
            break
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            detail = f"not readable JSON ({exc})"
            if attempt + 1 < READ_TRIES:
                time.sleep(READ_PAUSE_S)
    else:
        return FileState("unreadable", stamp, detail=detail)
    if not isinstance(data, dict):
        return FileState("unreadable", stamp, detail=f"a JSON {type(data).__name__}, not an object")
    responses = normalise_responses(data)
    if not matches(data, header):
        theirs = ", ".join(f"{k} {data.get(k)!r}" for k in MATCH_KEYS if data.get(k) != header[k])
        return FileState("foreign", stamp, data, responses, f"another run ({theirs})")
    return FileState("matching", stamp, data, responses)


def _aside_name(path: Path, kind: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.stem}.{kind}-{stamp}{path.suffix}")
    n = 2
    while target.exists():   # two in one second: the released app's `replace` would overwrite the first
        target = path.with_name(f"{path.stem}.{kind}-{stamp}-{n}{path.suffix}")
        n += 1
    return target


def set_aside(path: str | Path, kind: str = "legacy") -> Path:
    """Move the file to `<name>.<kind>-<UTC stamp>.json` (the released app's legacy copy)."""
    return _aside(Path(path), kind, os.replace)


def copy_aside(path: str | Path, kind: str = "legacy") -> Path:
    """A copy of the file beside it, the original left in place (about to be rewritten)."""
    return _aside(Path(path), kind, shutil.copy2)


def _aside(path: Path, kind: str, put: Callable[[Path, Path], Any]) -> Path:
    target = _aside_name(path, kind)
    put(path, target)
    fsync_dir(path.parent)
    return target


def write_result_file(path: str | Path, header: dict, records: list[dict]) -> Path:
    """Rewrite `set_N.json`: the header, then the latest record per task index. The caller has
    read the file back first (and kept a copy if this write holds fewer responses than it did)."""
    path = Path(path)
    responses = {str(r["task_index"]): released_record(r) for r in records}
    done = len(responses) >= len(header["schedule"]) > 0
    tail = {"result_path": str(path), "responses": responses,
            "completed_at_utc": datetime.now(UTC).isoformat() if done else None}
    return atomic_write_bytes(path, _encoded(header, tail))


#: headers encoded, by the header object's id (checked against a copy: an id may be reused)
_HEADERS_KEPT = 256
_header_json: SingleFlightLRU[int, tuple[dict, list[str | None]]] = SingleFlightLRU(_HEADERS_KEPT)


def _encoded(header: dict, tail: dict) -> bytes:
    """`{**header, **tail}` as JSON, keys in that order. The header's own fields (the schedule of
    every question: 4,563 at the real size) are encoded once per header and kept; only the answers
    are encoded per write."""
    def encode() -> tuple[dict, list[str | None]]:
        return dict(header), [None if k in tail else f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
                              for k, v in header.items()]
    kept = _header_json.get(id(header), encode)
    if kept[0].keys() != header.keys() or any(kept[0][k] is not v for k, v in header.items()):
        kept = encode()
        _header_json.put(id(header), kept)
    keys = [*header, *(k for k in tail if k not in header)]
    pieces = [*kept[1], *([None] * (len(keys) - len(kept[1])))]
    body = ", ".join(piece if piece is not None else f"{json.dumps(k)}: {json.dumps(tail[k], ensure_ascii=False)}"
                     for k, piece in zip(keys, pieces))
    return ("{" + body + "}\n").encode("utf-8")


def is_result_file(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("responses"), (dict, list))


def records_from_result(data: dict, source: str = "result file") -> list[dict]:
    """The records of a released `set_N.json`, in task order, each with its annotator (the set)."""
    if not is_result_file(data):
        raise DataFormatError(f"{source}: a released study result is one JSON object with "
                              "'responses' keyed by task index.")
    who = str(data.get("annotator") or data.get("dataset_id") or Path(source).stem)
    raw = data["responses"]
    items = raw.items() if isinstance(raw, dict) else ((str(e.get("task_index")), e) for e in raw
                                                        if isinstance(e, dict))
    out = []
    schedule = data.get("schedule") if isinstance(data.get("schedule"), list) else None
    for key, rec in sorted(items, key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{source}: responses[{key!r}] must be an object, got {rec!r:.60}.")
        rec = dict(rec)
        rec.setdefault("task_index", int(key) if str(key).isdigit() else key)
        rec.setdefault("annotator", who)
        if schedule is not None:
            _check_scheduled(rec, schedule, f"{source}: responses[{key!r}]")
        out.append(rec)
    return out


def _check_scheduled(rec: dict, schedule: list, where: str) -> None:
    """A response's task_index names a question of the file's own schedule (0-based)."""
    index = rec.get("task_index")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(schedule):
        raise DataFormatError(f"{where} key 'task_index': {index!r} is not a question of the file's "
                              f"schedule (0-{len(schedule) - 1}); fix or remove the response.")


def check_human_records(records: list[dict]) -> list[str]:
    """What eval refuses in human-study records (docs/decisions.md "Eval inputs"): a task_index
    that is not a whole number >= 0, and one task_index naming two questions for one annotator.
    Annotator ids compare without case, as the study page and `invite` compare them: `ann1` is
    the `Ann1` met first, and its records are kept under that first spelling. Returns the notes
    saying which ids were joined."""
    by_lower: dict[str, tuple[str, str]] = {}
    joined: dict[tuple[str, str], str] = {}
    tasks: dict[tuple[str, int], tuple[tuple, str]] = {}
    for rec in records:
        where = str(rec.get("_line") or "a human-study record")
        who = str(rec.get("annotator"))
        first = by_lower.setdefault(who.lower(), (who, where))
        if first[0] != who:
            joined.setdefault((who, first[0]), where)
            rec["annotator"] = who = first[0]
        index = rec.get("task_index")
        if index is None:
            continue
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise DataFormatError(f"{where} key 'task_index': {index!r} is not a question number "
                                  "(a whole number from 0); fix or remove the record.")
        question = (rec.get("stem"), rec.get("dim"))
        seen = tasks.setdefault((who, index), (question, where))
        if seen[0] != question:
            raise DataFormatError(f"{where} key 'task_index': {index} names stem '{question[0]}' "
                                  f"{question[1]} here and stem '{seen[0][0]}' {seen[0][1]} at {seen[1]}; "
                                  "one task index is one question. Fix or remove the record.")
    return [f"annotator '{other}' ({where}) counted as '{first}': annotator ids compare without case "
            "(the first spelling is kept)." for (other, first), where in joined.items()]


#: the study page's files beside an annotator's answers that hold no study answer
PRACTICE_SUFFIX, CHECK_SUFFIX = ".practice.jsonl", ".catch.jsonl"


@dataclass
class HumanFiles:
    """What eval reads from human-study files: the answers, and what it left out and why."""

    records: list[dict] = field(default_factory=list)
    practice: int = 0        # practice answers (`<id>.practice.jsonl`, or a line marked practice)
    checks: int = 0          # attention-check answers (`<id>.catch.jsonl`, or a line marked catch)
    notes: list[str] = field(default_factory=list)


def read_human_files(paths) -> HumanFiles:
    """Records of human-study files of either kind, as eval reads them: our JSONL (one record a
    line; a line that is not JSON refused) or a released `set_N.json` (one object; a task_index
    outside its schedule refused). An annotator id missing in a record comes from the file. The
    study page's practice and attention-check answers (its `.practice.jsonl` / `.catch.jsonl`
    files, which a `<study>/*.jsonl` glob takes in) are not answers to the set's questions: left
    out and counted in a note."""
    out = HumanFiles()
    for p in map(Path, paths):
        if p.suffix == ".json":
            for rec in records_from_result(load_json(p, "study result file"), str(p)):
                out.records.append({**rec, "_line": f"{p} responses[{str(rec.get('task_index'))!r}]"})
            continue
        whole = p.name.endswith(PRACTICE_SUFFIX) or p.name.endswith(CHECK_SUFFIX)
        for rec in load_study_files([p], strict=True, annotator=p.name.split(".")[0] if whole else None):
            if p.name.endswith(PRACTICE_SUFFIX) or rec.get("practice") is True:
                out.practice += 1
            elif p.name.endswith(CHECK_SUFFIX) or rec.get("catch") is True:
                out.checks += 1
            else:
                out.records.append(rec)
    out.notes += check_human_records(out.records)
    if out.practice:
        out.notes.append(f"{out.practice} practice answers not scored (the practice question before the "
                         "study; `.practice.jsonl`).")
    if out.checks:
        out.notes.append(f"{out.checks} attention-check answers not scored (reported apart, in the "
                         "researcher view; `.catch.jsonl`).")
    return out


def load_human_files(paths) -> list[dict]:
    """The answers `read_human_files` keeps (practice and attention checks left out)."""
    return read_human_files(paths).records
