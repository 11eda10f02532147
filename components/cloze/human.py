"""The explorer's Cloze practice playthrough: per-annotator JSONL records (upstream record format
+ our keys), resume from the file, redo, export, optional push to a Hugging Face dataset
repository. It is NOT the released human-study protocol (its task order is this app's own seeded
shuffle, not the released app's per-set schedule; an id is typed, not a credential): real studies
run on the study page (components/cloze/study/, `python -m components.cloze.study`).

Every answer is appended, flushed and fsynced (components.base.io.append_jsonl) before the UI
confirms it; the state (answered questions, next question, redo counts) is derived from the file.
`playthrough_blind` and `answer_feedback` decide what an answer may reveal: once an annotator has
answered blind, nothing reveals answers to them again."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path

from components.cloze.spec import SPEC
from components.base.io import append_jsonl, path_lock, read_jsonl
from components.cloze.data import ClozeDataset
from components.cloze.questions import (DEFAULT_SEED, ORDER_HUMAN, Question, QuestionSet, build_set,
                                        distractor_type, schedule_seed_for)
from components.base.errors import UserError

ANNOTATOR_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
DISPLAY_MODES = ("frames", "video")
ANSWER_FLOWS = ("immediate", "confirm", "select_then_submit")  # confirm: the released name


def sanitise_annotator(value: str | None) -> str:
    """A pseudonymous id usable as a file name: 1-64 of [A-Za-z0-9_-]."""
    value = (value or "").strip()
    if not ANNOTATOR_RE.fullmatch(value):
        raise UserError("Annotator id must be 1-64 letters, digits, '_' or '-' (a pseudonym such as "
                        f"'anon-17'); got {value[:40]!r}.")
    return value


def study_dir(data_dir: str | Path | None = None) -> Path:
    env = os.environ.get("APP_HUMAN_STUDY_DIR")
    if env:
        return Path(env)
    if data_dir is None:
        raise UserError("Set APP_HUMAN_STUDY_DIR or a data directory for human-study files.")
    return Path(data_dir) / SPEC.data / "human_study"


def annotator_file(folder: str | Path, annotator: str) -> Path:
    return Path(folder) / f"{sanitise_annotator(annotator)}.jsonl"


def study_questions(ds: ClozeDataset, set_name: str, seed: int = DEFAULT_SEED,
                    dims=("S", "A", "C")) -> QuestionSet:
    """The study app's order: task list shuffled with the SHA-256 schedule seed, options with
    Random(f"{seed}:{stem}:{dim}:options")."""
    return build_set(ds, set_name, dims, seed=seed, rule=ORDER_HUMAN, shuffle_tasks=True)


def latest_records(records: list[dict]) -> dict[tuple[str, str], dict]:
    """Latest record per (stem, dim): a redo replaces the earlier answer."""
    out: dict[tuple[str, str], dict] = {}
    for rec in records:
        if "stem" in rec and "dim" in rec:
            out[(rec["stem"], rec["dim"])] = rec
    return out


@dataclass
class Progress:
    answered: dict[tuple[str, str], dict] = field(default_factory=dict)
    next_index: int | None = None  # first unanswered question; None when all are done

    def answered_count(self, questions: list[Question]) -> int:
        return sum(1 for q in questions if (q.stem, q.dim) in self.answered)


def load_progress(path: str | Path, questions: list[Question]) -> Progress:
    answered = latest_records(read_jsonl(path))
    nxt = next((i for i, q in enumerate(questions) if (q.stem, q.dim) not in answered), None)
    return Progress(answered, nxt)


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def record_answer(path: str | Path, q: Question, *, task_index: int, answer: str, annotator: str,
                  session: str, set_name: str, order_seed: int, display_mode: str, answer_flow: str,
                  elapsed_sec: float, blind: bool = False, data_revision: str | None = None) -> dict:
    """Append one answer durably and return the record (upstream keys first, then ours).
    `data_revision` (`datasource.data_revision(folder)`: hf://...@<commit> for data from a dataset
    repository) is recorded when given."""
    path = Path(path)
    answer = (answer or "").strip().upper()
    if answer not in q.option_map:
        raise UserError(f"Choose one of A, B, C, D (got {answer!r}).")
    with path_lock(path), push_lock(path.parent):  # one step: redo count and append; no push mid-line
        prior = sum(1 for r in read_jsonl(path) if r.get("stem") == q.stem and r.get("dim") == q.dim)
        rec = {"task_index": task_index, "stem": q.stem, "dim": q.dim, "answer": answer,
               "expected": q.expected, "correct": answer == q.expected, "option_map": q.option_map,
               "display_mode": display_mode, "answer_flow": answer_flow,
               "elapsed_sec": round(float(elapsed_sec), 2),
               "answered_at_utc": datetime.now(UTC).isoformat(), "redo_count": prior,
               "annotator": annotator, "session": session, "set": set_name,
               "order_seed": order_seed, "task_order_seed": schedule_seed_for(order_seed, set_name),
               "option_order_rule": 'Random(f"{seed}:{stem}:{dim}:options")',
               "chosen": q.option_map[answer], "backend": "human", "blind": blind}
        if data_revision:
            rec["data_revision"] = data_revision
        append_jsonl(path, rec, lock=nullcontext())  # the path lock is already held
    return rec


PRACTICE_NOTE = ("Practice playthrough: answers are kept and resumable, but this is not a study (the "
                 "order is this app's own, and anyone who types an id answers as that id). Real "
                 "studies run on the study page.")


def playthrough_blind(records: list[dict], blind: bool) -> bool:
    """Blind for this answer: ticked now, or any earlier answer in the annotator's file was given
    blind (a reload that loses the tick, or unticking it, never turns reveals on for them)."""
    return bool(blind) or any(bool(r.get("blind")) for r in records if isinstance(r, dict))


def answer_feedback(number: int, rec: dict, *, blind: bool) -> str:
    """What the page says after an answer. Blind: only that it was saved (never the letter of the
    true middle, never right or wrong); otherwise the reveal."""
    if blind:
        return f"Question {number}: answer saved."
    if rec.get("correct"):
        return f"Question {number}: **Correct** - {rec['expected']} was the true middle."
    return (f"Question {number}: **Not quite** - {rec['expected']} was the true middle; you chose "
            f"{rec['answer']}: {distractor_type(rec['chosen'])}.")


def export_records(records: list[dict], fmt: str = "json") -> str:
    """Latest record per question, as JSON text or CSV text (option_map as JSON in one cell)."""
    latest = list(latest_records(records).values())
    if fmt == "json":
        return json.dumps(latest, indent=1, ensure_ascii=False)
    if fmt != "csv":
        raise UserError(f"Unknown export format {fmt!r}; use json or csv.")
    keys: list[str] = []
    for rec in latest:
        keys += [k for k in rec if k not in keys]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys)
    writer.writeheader()
    for rec in latest:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in rec.items()})
    return buf.getvalue()


def load_study_files(paths, *, strict: bool = False, annotator: str | None = None) -> list[dict]:
    """Records of several annotator files; an annotator id missing in a record comes from the name
    (or `annotator`). Each record's `_line` is where it was read (`<file> line <n>`), for errors
    and notes. `strict` (eval): a line that is not JSON (a torn last line included) is refused,
    naming the file and the line, instead of skipped as a live file's reader skips a line still
    being written (the lenient reader's line numbers then count the JSON lines only)."""
    out = []
    for p in paths:
        p = Path(p)
        for n, rec in (_strict_lines(p) if strict else enumerate(read_jsonl(p), 1)):
            if not isinstance(rec, dict):
                raise UserError(f"{p}: line {n}: every line of a human-study file must be a JSON object, "
                                f"got {rec!r:.60}.")
            rec.setdefault("annotator", annotator or p.stem)
            rec.setdefault("_line", f"{p} line {n}")
            out.append(rec)
    return out


def _strict_lines(path: Path):
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not a readable UTF-8 JSONL file ({exc}).") from None
    last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=0)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            torn = " (a torn last line: the file was cut while it was written)" if n == last else ""
            raise UserError(f"{path}: line {n} is not valid JSON{torn} ({exc.msg}); fix or remove the "
                            "line.") from None


# ---- optional push to a Hugging Face dataset repository ---------------------------------------
@dataclass
class HubPush:
    """Pushes the study folder with huggingface_hub.CommitScheduler when APP_HUMAN_STUDY_REPO is
    set. Nothing is imported or contacted until `start()`."""

    repo_id: str
    folder: Path
    every_minutes: float = 5.0
    path_in_repo: str = "human_study"
    scheduler: object | None = None
    allow: tuple[str, ...] = ("*.jsonl",)
    ignore: tuple[str, ...] = (".*", "**/.*")   # never a temp file, never the study page's .access/

    @classmethod
    def from_env(cls, folder: str | Path, **how) -> HubPush | None:
        repo = os.environ.get("APP_HUMAN_STUDY_REPO", "").strip()
        return cls(repo, Path(folder), **how) if repo else None

    def scheduler_kwargs(self) -> dict:
        return {"repo_id": self.repo_id, "repo_type": "dataset", "folder_path": str(self.folder),
                "path_in_repo": self.path_in_repo, "every": self.every_minutes,
                "allow_patterns": list(self.allow), "ignore_patterns": list(self.ignore)}

    @property
    def started(self) -> bool:
        return self.scheduler is not None

    def start(self):
        if self.scheduler is None:
            from huggingface_hub import CommitScheduler

            self.folder.mkdir(parents=True, exist_ok=True)
            self.scheduler = CommitScheduler(**self.scheduler_kwargs())
            _started[str(self.folder.resolve())] = self
        return self.scheduler


_started: dict[str, HubPush] = {}  # study folder -> its running push


def push_lock(folder: str | Path):
    """The running push's lock for `folder` (held while appending, so the scheduler never uploads
    a half-written line), or a no-op when nothing pushes that folder."""
    push = _started.get(str(Path(folder).resolve()))
    lock = getattr(push.scheduler, "lock", None) if push else None
    return lock if lock is not None else nullcontext()
