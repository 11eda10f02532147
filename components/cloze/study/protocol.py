"""The released study app's protocol (`human-eval/human_eval_app.py`, docs/tempcloze-upstream.md,
"Human-study record"): one folder per annotator set `choices_human/set_N/<stem>/...`, a per-set
derived seed, the task schedule, the option maps, and the `human_eval_results/set_N.json` result
file (one object, `responses` keyed by task index)."""
from __future__ import annotations

import hashlib
import json
import random
import shutil
from datetime import datetime, UTC
from pathlib import Path

from components import datasource
from components.cloze.human import load_study_files
from components.cloze.data import CONTEXT_CLIPS, DIM_CLIPS, ClozeDataset, Instance
from components.cloze.questions import ORDER_HUMAN, Question, make_question
from components.common.errors import DataFormatError, UserError
from components.common.io import atomic_write_bytes, fsync_dir, load_json

SEED_PREFIX = "temporal-cloze-human-eval-folder-v1"
SCHEDULE_POLICY = "single_folder_navigation_v1"
DIMS = ("S", "A", "C")
REQUIRED_CLIPS = (*CONTEXT_CLIPS, *[c for names in DIM_CLIPS.values() for c in names])
#: answer-flow values as the released app writes them; ours before it was reproduced -> released
FLOW_ALIASES = {"select_then_submit": "confirm"}


def set_seed(set_name: str) -> int:
    """The released per-set seed: `set_1` -> 8800808831473759713."""
    digest = hashlib.sha256(f"{SEED_PREFIX}:{set_name}".encode()).hexdigest()
    return int(digest[:16], 16)


def is_set_folder(path: Path) -> bool:
    """A released set folder holds stem folders directly (each with before/GT/after.mp4). Asked
    of a repository's folder, the listing answers (components/datasource)."""
    return datasource.is_dir(path) and any(datasource.is_file(p / "GT.mp4") or datasource.is_file(p / "before.mp4")
                                           for p in datasource.subfolders(path))


def set_folders(path: str | Path) -> dict[str, Path]:
    """Set name -> folder for `choices_human/set_N/` itself or for a root of several sets
    (`choices_human/` or its parent)."""
    path = datasource.open_data_dir(path)
    if not datasource.is_dir(path):
        raise UserError(f"No study folder at {path}: expected choices_human/set_N/<stem>/ folders.")
    if is_set_folder(path):
        return {path.name: path}
    for root in (path / "choices_human", path):
        if datasource.is_dir(root):
            found = {p.name: p for p in datasource.subfolders(root) if is_set_folder(p)}
            if found:
                return found
    raise UserError(f"No annotator set in {path}: expected choices_human/set_N/<stem>/ with "
                    "before.mp4, GT.mp4, after.mp4, S/, A/, C/ in each stem folder.")


def load_set_folder(folder: str | Path) -> tuple[ClozeDataset, list[str]]:
    """The set's stems as a dataset; a stem missing ANY required clip is dropped whole (as the
    released app does). Returns (dataset, reasons for the dropped stems)."""
    folder = Path(folder)
    instances, dropped = {}, []
    for sub in (p for p in datasource.subfolders(folder) if not p.name.startswith(".")):
        inst = Instance(sub.name, sub)
        gone = inst.missing(REQUIRED_CLIPS)
        if gone:
            dropped.append(f"{sub.name}: dropped, missing {', '.join(gone)}")
            continue
        instances[sub.name] = inst
    if not instances:
        raise UserError(f"{folder} holds no complete stem (every stem needs before, GT, after and "
                        "the nine distractors)." + (f" {dropped[0]}" if dropped else ""))
    return ClozeDataset(folder, instances, {}, {}), dropped


def schedule(stems: list[str], seed: int) -> list[tuple[str, str]]:
    """tasks = [(stem, dim) for stem in sorted stems for dim in S, A, C], shuffled by Random(seed)."""
    tasks = [(stem, dim) for stem in sorted(stems) for dim in DIMS]
    random.Random(seed).shuffle(tasks)
    return tasks


def released_questions(ds: ClozeDataset, set_name: str, seed: int | None = None) -> list[Question]:
    """The questions in schedule order, options by Random(f"{seed}:{stem}:{dim}:options")."""
    seed = set_seed(set_name) if seed is None else seed
    return [make_question(stem, dim, seed, ORDER_HUMAN) for stem, dim in schedule(list(ds.instances), seed)]


def result_header(set_name: str, seed: int, choices_dir: str | Path, result_path: str | Path,
                  questions: list[Question], *, data_revision: str | None = None) -> dict:
    """The released header; `data_revision` (hf://...@<commit>, our key) when the set comes from
    a dataset repository."""
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
    keys = ("task_index", "stem", "dim", "answer", "expected", "correct", "option_map",
            "display_mode", "answer_flow", "elapsed_sec", "answered_at_utc", "redo_count")
    out = {k: rec.get(k) for k in keys}
    out["answer_flow"] = FLOW_ALIASES.get(out["answer_flow"], out["answer_flow"])
    return out


def _matches(old: dict, header: dict) -> bool:
    """The same schedule on the same data (a result file of another commit is moved aside)."""
    return all(old.get(k) == header.get(k) for k in ("schedule_policy", "seed", "choices_dir", "data_revision"))


def write_result_file(path: str | Path, header: dict, records: list[dict], *, check_existing: bool = True) -> Path:
    """Rewrite `set_N.json` with the latest record per task index. A file whose policy, seed or
    folder no longer match is moved aside as `set_N.legacy-<UTC stamp>.json`, never overwritten
    (`check_existing=False`: the caller already checked this file since it started)."""
    path = Path(path)
    if check_existing and path.exists():
        try:
            old = load_json(path, "study result file")
        except UserError:
            old = {}
        if not isinstance(old, dict) or not _matches(old, header):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            shutil.move(str(path), str(path.with_name(f"{path.stem}.legacy-{stamp}.json")))
            fsync_dir(path.parent)
        elif old.get("started_at_utc"):
            header["started_at_utc"] = old["started_at_utc"]  # kept in the caller's header too
    responses = {str(r["task_index"]): released_record(r) for r in records}
    done = len(responses) >= len(header["schedule"]) > 0
    tail = {"result_path": str(path), "responses": responses,
            "completed_at_utc": datetime.now(UTC).isoformat() if done else None}
    return atomic_write_bytes(path, _encoded(header, tail))


_header_json: dict[int, tuple[dict, list[str | None]]] = {}


def _encoded(header: dict, tail: dict) -> bytes:
    """`{**header, **tail}` as JSON, keys in that order. The header's own fields (the schedule of
    every question: 4,563 at the real size) are encoded once per header and kept; only the answers
    are encoded per write."""
    kept = _header_json.get(id(header))
    if kept is None or kept[0].keys() != header.keys() or any(kept[0][k] is not v for k, v in header.items()):
        pieces = [None if k in tail else f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
                  for k, v in header.items()]
        kept = _header_json[id(header)] = (dict(header), pieces)
        while len(_header_json) > 256:
            _header_json.pop(next(iter(_header_json)))
    keys = [*header, *(k for k in tail if k not in header)]
    pieces = [*kept[1], *([None] * (len(keys) - len(kept[1])))]
    body = ", ".join(piece if piece is not None else f"{json.dumps(k)}: {json.dumps(tail[k], ensure_ascii=False)}"
                     for k, piece in zip(keys, pieces))
    return ("{" + body + "}\n").encode("utf-8")


def is_result_file(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("responses"), dict)


def records_from_result(data: dict, source: str = "result file") -> list[dict]:
    """The records of a released `set_N.json`, in task order, each with its annotator (the set)."""
    if not is_result_file(data):
        raise DataFormatError(f"{source}: a released study result is one JSON object with "
                              "'responses' keyed by task index.")
    who = str(data.get("annotator") or data.get("dataset_id") or Path(source).stem)
    out = []
    for key, rec in sorted(data["responses"].items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{source}: responses[{key!r}] must be an object, got {rec!r:.60}.")
        rec = dict(rec)
        rec.setdefault("task_index", int(key) if str(key).isdigit() else key)
        rec.setdefault("annotator", who)
        out.append(rec)
    return out


def load_human_files(paths) -> list[dict]:
    """Records of human-study files of either kind: our JSONL (one record a line) or a released
    `set_N.json` (one object). An annotator id missing in a record comes from the file."""
    out = []
    for p in map(Path, paths):
        if p.suffix == ".json":
            out += records_from_result(load_json(p, "study result file"), str(p))
        else:
            out += load_study_files([p])
    return out
