"""One annotator's answers in a configured study: an append-only JSONL (fsynced before the UI
confirms, the durable record), the released `set_N.json` rewritten after each answer, and the
question the annotator was on (so a reload resumes exactly there). Kept in memory after the first
read; every write goes to disk first."""
from __future__ import annotations

import threading
from datetime import datetime, UTC

from components import datasource
from components.cloze.human import sanitise_annotator
from components.cloze.questions import Question
from components.cloze.study.config import StudyConfig
from components.cloze.study.protocol import FLOW_ALIASES, result_header, write_result_file
from components.common.errors import UserError
from components.common.io import append_jsonl, atomic_write_json, load_json, read_jsonl


class AnnotatorStore:
    def __init__(self, config: StudyConfig, annotator: str, questions: tuple[Question, ...]) -> None:
        self.config, self.annotator, self.questions = config, sanitise_annotator(annotator), questions
        folder = config.results / config.study_id
        self.path = folder / f"{self.annotator}.jsonl"
        self.position_path = folder / f"{self.annotator}.position.json"
        self.result_path = folder / self.annotator / f"{config.set_name}.json"
        self.lock = threading.Lock()
        self.latest: dict[int, dict] = {}
        for rec in read_jsonl(self.path):
            if isinstance(rec, dict) and isinstance(rec.get("task_index"), int):
                self.latest[rec["task_index"]] = rec
        self._position = self._read_position()
        self._header: dict | None = None   # the set_N.json header, made (and the old file checked) once
        # hf://...@<commit> when the set comes from a dataset repository: in every record and the header
        self.data_revision = datasource.data_revision(config.set_folder)

    def _read_position(self) -> int | None:
        if not self.position_path.exists():
            return None
        try:
            value = load_json(self.position_path, "position file").get("index")
        except (UserError, AttributeError):
            return None
        return value if isinstance(value, int) and 0 <= value < len(self.questions) else None

    def first_unanswered(self, after: int = -1) -> int | None:
        n = len(self.questions)
        for k in range(1, n + 1):
            i = (after + k) % n
            if i not in self.latest:
                return i
        return None

    def resume_index(self) -> int:
        if self._position is not None:
            return self._position
        nxt = self.first_unanswered()
        return 0 if nxt is None else nxt

    def save_position(self, index: int) -> None:
        if index != self._position:  # not fsynced: lost in a power cut, the resume is the first unanswered
            atomic_write_json(self.position_path, {"index": index}, durable=False)
            self._position = index

    def answer(self, index: int, letter: str, *, display: str, flow: str, elapsed: float,
               session: str) -> dict:
        """Append the answer durably; a redo replaces the record and increments redo_count."""
        q = self.questions[index]
        letter = (letter or "").strip().upper()
        if letter not in q.option_map:
            raise UserError(f"Choose one of A, B, C, D (got {letter!r}).")
        with self.lock:
            prior = self.latest.get(index)
            rec = {"task_index": index, "stem": q.stem, "dim": q.dim, "answer": letter,
                   "expected": q.expected, "correct": letter == q.expected, "option_map": q.option_map,
                   "display_mode": "video" if display == "video" else "frames", "answer_flow": FLOW_ALIASES.get(flow, flow),
                   "elapsed_sec": round(float(elapsed), 2), "answered_at_utc": datetime.now(UTC).isoformat(),
                   "redo_count": 0 if prior is None else int(prior.get("redo_count", 0)) + 1,
                   "annotator": self.annotator, "session": session, "set": self.config.set_name,
                   "seed": self.config.seed, "study": self.config.study_id, "chosen": q.option_map[letter],
                   "backend": "human", "blind": self.config.blind}
            if display != "video":  # the released values say "frames" for both of its frames views
                rec["frames_view"] = "grid16" if display == "frames16" else "edge"
            if self.data_revision:
                rec["data_revision"] = self.data_revision
            append_jsonl(self.path, rec)
            self.latest[index] = rec
            first = self._header is None
            if first:
                self._header = result_header(self.config.set_name, self.config.seed, self.config.set_folder,
                                             self.result_path, list(self.questions),
                                             data_revision=self.data_revision)
                self._header["annotator"] = self.annotator
            write_result_file(self.result_path, self._header, [self.latest[i] for i in sorted(self.latest)],
                              check_existing=first)
        return rec


_stores: dict[tuple[str, str], AnnotatorStore] = {}
_stores_lock = threading.Lock()


def store_for(config: StudyConfig, annotator: str, questions: tuple[Question, ...]) -> AnnotatorStore:
    """One store per (study, annotator) per process, so concurrent tabs share one lock."""
    key = (str(config.results / config.study_id), sanitise_annotator(annotator))
    with _stores_lock:
        store = _stores.get(key)
        if store is None or store.questions != questions:
            store = _stores[key] = AnnotatorStore(config, annotator, questions)
        return store


def all_records(config: StudyConfig) -> list[dict]:
    """Every annotator's records of the study (for the researcher view)."""
    folder = config.results / config.study_id
    out = []
    for path in sorted(folder.glob("*.jsonl")) if folder.exists() else []:
        for rec in read_jsonl(path):
            if isinstance(rec, dict):
                rec.setdefault("annotator", path.stem)
                out.append(rec)
    return out
