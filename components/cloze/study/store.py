"""One annotator's answers in a configured study:

- `<annotator>.jsonl`, append-only and fsynced before the page confirms: the durable history;
- `<annotator>/set_N.json`, the released app's result file, read back and merged (merge.py) at
  Start and again before each write whenever someone else (the released app) wrote it since, then
  rewritten with the latest record per task; a file of another run is set aside as
  `set_N.legacy-<UTC>.json` (as released), and a file is never rewritten with fewer responses
  than it held unless a copy of it was kept first;
- `<annotator>.catch.jsonl` (attention checks) and `<annotator>.practice.jsonl` (the practice
  question), apart from the answers;
- `<annotator>.position.json`, the question last viewed (resume "last_viewed").

Kept in memory after the first read; every write goes to disk first."""
from __future__ import annotations

import threading
from datetime import datetime, UTC
from pathlib import Path

from components import datasource
from components.cloze.human import HubPush, push_lock, sanitise_annotator
from components.cloze.questions import Question
from components.cloze.study.config import StudyConfig
from components.cloze.study.merge import Conflict, conflicts, merge_file, resolve
from components.cloze.study.protocol import FLOW_ALIASES
from components.cloze.study.results_file import (copy_aside, file_stamp, matches, normalise_responses,
                                                 read_result_file, result_header, set_aside, write_result_file)
from components.cloze.study.timing import Timing
from components.base.errors import UserError
from components.base.io import append_jsonl, atomic_write_json, load_json, read_jsonl


class AnnotatorStore:
    def __init__(self, config: StudyConfig, annotator: str, questions: tuple[Question, ...]) -> None:
        self.config, self.annotator, self.questions = config, sanitise_annotator(annotator), questions
        folder = config.results / config.study_id
        self.path = folder / f"{self.annotator}.jsonl"
        self.catch_path = folder / f"{self.annotator}.catch.jsonl"
        self.practice_path = folder / f"{self.annotator}.practice.jsonl"
        self.position_path = folder / f"{self.annotator}.position.json"
        self.result_path = folder / self.annotator / f"{config.set_name}.json"
        self.lock = threading.Lock()
        self.history: list[dict] = [r for r in read_jsonl(self.path)
                                    if isinstance(r, dict) and isinstance(r.get("task_index"), int)]
        self.latest: dict[int, dict] = resolve(self.history)
        self.checks: list[dict] = [r for r in read_jsonl(self.catch_path) if isinstance(r, dict)]
        self.practised = bool(read_jsonl(self.practice_path))
        self.notes: list[str] = []           # what happened to the result file, for the researcher
        self._position = self._read_position()
        # hf://...@<commit> when the set comes from a dataset repository: in every record and the header
        self.data_revision = datasource.data_revision(config.set_folder)
        self._header = result_header(config.set_name, config.seed, config.set_folder, self.result_path,
                                     list(questions), data_revision=self.data_revision)
        self._header["annotator"] = self.annotator
        self._stamp: tuple | None = None     # the result file as this store last read or wrote it
        self._held: set[int] = set()         # task indices the file held when last read
        self._synced = False

    def _append(self, path: Path, rec: dict) -> None:
        """Append durably; while the study's Hub push uploads, wait (no half-written line is pushed)."""
        with push_lock(path.parent):
            append_jsonl(path, rec)

    # ---- the result file ---------------------------------------------------------------------
    def _sync(self) -> None:
        """Read the result file back if anyone wrote it since this store last did: answers in it
        that the history lacks are appended to the JSONL (source "result_file")."""
        stamp = file_stamp(self.result_path)
        if self._synced and stamp == self._stamp:
            return
        self._synced = True
        state = read_result_file(self.result_path, self._header)
        self._stamp, self._held = state.stamp, set()
        if state.kind == "absent":
            return
        if state.kind != "matching":
            kind = "legacy" if state.kind == "foreign" else "unreadable"
            moved = set_aside(self.result_path, kind)
            self.notes.append(f"{self.annotator}: {self.result_path.name} was {state.detail}, with "
                              f"{len(state.responses)} answers; moved aside as {moved.name}, nothing deleted")
            self._stamp = None
            return
        if state.data.get("started_at_utc"):      # the run began when the file's first writer began it
            self._header["started_at_utc"] = state.data["started_at_utc"]
        merged = merge_file(self.history, state.responses, self.questions)
        now = datetime.now(UTC).isoformat()
        for rec in merged.imported:
            rec = {**rec, "annotator": self.annotator, "source": "result_file", "imported_at_utc": now,
                   "set": self.config.set_name, "seed": self.config.seed, "study": self.config.study_id}
            self._append(self.path, rec)
            self.history.append(rec)
        self.latest = resolve(self.history)
        self._held = merged.held
        if merged.imported:
            self.notes.append(f"{self.annotator}: {len(merged.imported)} answers read back from "
                              f"{self.result_path.name} (written by another app)")
        if merged.remapped:
            self.notes.append(f"{self.annotator}: {merged.remapped} answers in {self.result_path.name} "
                              "were at another position of the schedule; placed by video and dimension")
        if merged.unmapped:
            copy = copy_aside(self.result_path, "legacy")
            self.notes.append(f"{self.annotator}: {len(merged.unmapped)} answers in {self.result_path.name} "
                              f"are to questions this set no longer has; the file is kept as {copy.name}")

    def _write(self) -> None:
        with push_lock(self.path.parent):
            self._rewrite()

    def _rewrite(self) -> None:
        responses = [self.latest[i] for i in sorted(self.latest)]
        if self._held - set(self.latest) and self.result_path.exists():   # never fewer than it held
            copy = copy_aside(self.result_path, "legacy")
            self.notes.append(f"{self.annotator}: kept {copy.name} before a rewrite with fewer answers")
        write_result_file(self.result_path, self._header, responses)
        self._stamp, self._held = file_stamp(self.result_path), set(self.latest)

    def open_run(self) -> None:
        """At Start, as the released app: read the file back (merging it) and write it."""
        with self.lock:
            self._sync()
            self._write()

    def refresh(self) -> None:
        """Merge what another writer put in the result file since (before a question is shown, and
        for the researcher view): one stat when nobody did."""
        with self.lock:
            self._sync()

    def conflicts(self) -> list[Conflict]:
        with self.lock:
            return conflicts(self.history)

    # ---- where the annotator is ---------------------------------------------------------------
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

    def resume_index(self, mode: str = "first_unanswered") -> int:
        """The released app opens at the first unanswered task (0 when all are answered);
        `last_viewed` opens where the annotator last was."""
        if mode == "last_viewed" and self._position is not None:
            return self._position
        nxt = self.first_unanswered()
        return 0 if nxt is None else nxt

    def save_position(self, index: int) -> None:
        if index != self._position:  # not fsynced: lost in a power cut, the resume is the first unanswered
            atomic_write_json(self.position_path, {"index": index}, durable=False)
            self._position = index

    # ---- answers -------------------------------------------------------------------------------
    def answer(self, index: int, letter: str, *, display: str, flow: str, timing: Timing | float,
               session: str, redo: bool = False) -> dict:
        """Append the answer durably, then rewrite the result file. A redo (`redo`: the annotator
        changed an answer they were shown) replaces the record and increments redo_count; an
        answer to a question shown as unanswered that another writer answered meanwhile counts
        from 0 (neither knew the other: a conflict, merge.py), and being later, it counts."""
        q = self.questions[index]
        letter = (letter or "").strip().upper()
        if letter not in q.option_map:
            raise UserError(f"Choose one of A, B, C, D (got {letter!r}).")
        if not isinstance(timing, Timing):
            seconds = round(max(0.0, float(timing)), 3)
            timing = Timing(seconds, None, "server", seconds)
        with self.lock:
            self._sync()
            prior = self.latest.get(index)
            rec = {"task_index": index, "stem": q.stem, "dim": q.dim, "answer": letter,
                   "expected": q.expected, "correct": letter == q.expected, "option_map": q.option_map,
                   "display_mode": "video" if display == "video" else "frames",
                   "answer_flow": FLOW_ALIASES.get(flow, flow), "elapsed_sec": timing.elapsed_sec,
                   "answered_at_utc": datetime.now(UTC).isoformat(),
                   "redo_count": int(prior.get("redo_count") or 0) + 1 if prior is not None and redo else 0,
                   "annotator": self.annotator, "session": session, "set": self.config.set_name,
                   "seed": self.config.seed, "study": self.config.study_id, "chosen": q.option_map[letter],
                   "backend": "human", "blind": self.config.blind,
                   "load_sec": timing.load_sec, "timing": timing.source,
                   "server_elapsed_sec": timing.server_elapsed_sec}
            if display != "video":  # the released values say "frames" for both of its frames views
                rec["frames_view"] = "grid16" if display == "frames16" else "edge"
            if self.data_revision:
                rec["data_revision"] = self.data_revision
            self._append(self.path, rec)
            self.history.append(rec)
            self.latest[index] = rec
            self._write()
        return rec

    def answer_check(self, check, letter: str, *, timing: Timing, session: str) -> dict:
        """An attention check's answer (catch.py), kept apart from the study's answers."""
        letter = (letter or "").strip().upper()
        if letter not in check.option_map:
            raise UserError(f"Choose one of A, B, C, D (got {letter!r}).")
        rec = {"catch": True, "number": check.number, "stem": check.stem, "others": list(check.others),
               "answer": letter, "expected": check.expected, "correct": letter == check.expected,
               "option_map": check.option_map, **timing.fields(),
               "answered_at_utc": datetime.now(UTC).isoformat(), "annotator": self.annotator,
               "session": session, "study": self.config.study_id}
        with self.lock:
            self._append(self.catch_path, rec)
            self.checks.append(rec)
        return rec

    def checked_stems(self) -> set[str]:
        """Videos shown in a check (their answers are final since)."""
        return {str(r.get("stem")) for r in self.checks}

    def practice(self, letter: str, correct: bool) -> None:
        self._append(self.practice_path, {"practice": True, "answer": letter, "correct": correct,
                                          "annotator": self.annotator,
                                          "answered_at_utc": datetime.now(UTC).isoformat()})
        self.practised = True


_stores: dict[tuple[str, str], AnnotatorStore] = {}
_stores_lock = threading.Lock()


def _spelled(config: StudyConfig, name: str) -> str:
    """`name` as the study first spelled it (held `_stores_lock`): ids compare without case, so
    `ann1` is the `Ann1` who already answers here (a store in memory, or answer files)."""
    folder = str(config.results / config.study_id)
    low = name.lower()
    for (where, who) in _stores:
        if where == folder and who.lower() == low:
            return who
    return next((who for who in annotators(config) if who.lower() == low), name)


def canonical_annotator(config: StudyConfig, annotator: str) -> str:
    """The study's spelling of `annotator` (`Ann1` for `ann1` when Ann1 came first); the id itself
    when nobody of that name answers here yet."""
    with _stores_lock:
        return _spelled(config, sanitise_annotator(annotator))


def store_for(config: StudyConfig, annotator: str, questions: tuple[Question, ...]) -> AnnotatorStore:
    """One store per (study, annotator) per process, so concurrent tabs share one lock. Ids compare
    without case: `ann1` opens the store of the `Ann1` who came first, under that spelling."""
    with _stores_lock:
        annotator = _spelled(config, sanitise_annotator(annotator))
        key = (str(config.results / config.study_id), annotator)
        store = _stores.get(key)
        if store is None or store.questions != questions or store.config != config:
            store = _stores[key] = AnnotatorStore(config, annotator, questions)
        return store


def forget_stores() -> None:
    """Drop every annotator's store this process keeps (what a restarted server starts from: each
    is read again from its files on the next answer)."""
    with _stores_lock:
        _stores.clear()


def hub_push(config: StudyConfig) -> HubPush | None:
    """The study's answers pushed to the dataset named by APP_HUMAN_STUDY_REPO (a copy for the
    researcher, as the explorer's playthrough pushes its files): every annotator's JSONL files and
    set_N.json; never .access/ (invitation hashes, the pseudonym key), temp files or positions."""
    return HubPush.from_env(config.results / config.study_id, path_in_repo=f"study/{config.study_id}",
                            allow=("*.jsonl", "*.json"), ignore=(".*", "**/.*", "*.position.json"))


def annotators(config: StudyConfig) -> list[str]:
    """Every annotator with answers in the study: a JSONL or a result file folder."""
    folder = config.results / config.study_id
    if not folder.exists():
        return []
    names = {p.stem for p in folder.glob("*.jsonl") if "." not in p.stem}
    names |= {p.parent.name for p in folder.glob(f"*/{config.set_name}.json")}
    return sorted(n for n in names if not n.startswith("."))


def all_records(config: StudyConfig) -> list[dict]:
    """Every annotator's study answers, each annotator's in time order (so the last one per
    question is the one that counts), attention checks and practice left out."""
    folder = config.results / config.study_id
    people: dict[str, list[str]] = {}   # ids compare without case: files an older version split
    for name in annotators(config):
        people.setdefault(name.lower(), []).append(name)
    out = []
    for names in people.values():
        recs = [r for name in names for r in read_jsonl(folder / f"{name}.jsonl")
                if isinstance(r, dict) and not r.get("catch")]
        for rec in recs:
            rec["annotator"] = names[0]
        latest = resolve(recs)
        out += sorted(latest.values(), key=lambda r: r["task_index"])
    return out


def all_checks(config: StudyConfig) -> dict[str, list[dict]]:
    folder = config.results / config.study_id
    return {name: read_jsonl(folder / f"{name}.catch.jsonl") for name in annotators(config)}


def unclaimed_released_files(config: StudyConfig) -> list[Path]:
    """A released app's own result file at `<results>/set_N.json` belongs to no annotator here."""
    path = config.results / f"{config.set_name}.json"
    return [path] if path.is_file() else []


def adopt(config: StudyConfig, annotator: str, questions: tuple[Question, ...], source: str | Path
          ) -> tuple[AnnotatorStore, int]:
    """Continue a released-app run as `annotator`: the answers of its `set_N.json` are merged into
    the annotator's (whatever is at their result path already stays) and the file is written at
    their result path. The source file is left as it is. Returns the store and how many answers
    were new to it."""
    source = Path(source)
    data = load_json(source, "study result file")
    store = AnnotatorStore(config, canonical_annotator(config, annotator), questions)
    if not (isinstance(data, dict) and matches(data, store._header)):
        raise UserError(f"{source} is another run: its dataset_id, seed or schedule_policy differ from set "
                        f"{config.set_name} (seed {config.seed}); it cannot be continued here.")
    store.open_run()
    with store.lock:
        fresh = not store.history
        merged = merge_file(store.history, normalise_responses(data), questions)
        for rec in merged.imported:
            rec = {**rec, "annotator": store.annotator, "source": f"adopted:{source.name}",
                   "set": config.set_name, "seed": config.seed, "study": config.study_id}
            append_jsonl(store.path, rec)
            store.history.append(rec)
        store.latest = resolve(store.history)
        if fresh and data.get("started_at_utc"):   # the run began when the released app started it
            store._header["started_at_utc"] = data["started_at_utc"]
        store._write()
    with _stores_lock:
        _stores.pop((str(config.results / config.study_id), store.annotator), None)
    return store, len(merged.imported)
