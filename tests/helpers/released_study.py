"""The released human-eval app's handling of its result file, written out from its description
(docs/tempcloze-upstream.md, "Reading a result file back"; `human-eval/human_eval_app.py` @e121dcf)
and independently of the code under test, to play the other writer in tests:

- Start: if `<results>/<set>.json` exists, its responses are normalised (a list becomes a dict
  keyed by task index) and it is reused when schedule_policy, dataset_id and seed match; its
  machine-specific `choices_dir` / `result_path` are dropped and the file is written back at once.
  Otherwise it is renamed `<set>.legacy-<UTC stamp>.json` and a fresh run is written at Start.
- It keeps the run in memory from then on; an answer replaces the task's record (redo_count from
  the record it holds) and rewrites the whole file in place (`write_text`, indent 2), so answers
  another writer added since its Start are dropped from the file by its next write.
- Stems: every sub-folder in which all twelve files exist by name, sorted.
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from datetime import UTC, datetime
from pathlib import Path

POLICY = "single_folder_navigation_v1"
DIMS = {"S": ["S/Rand1.mp4", "S/Rand2.mp4", "S/Rand3.mp4"], "A": ["A/Early.mp4", "A/Late.mp4", "A/Wide.mp4"],
        "C": ["C/Reverse.mp4", "C/Shuffle.mp4", "C/Loop.mp4"]}
REQUIRED = ["before.mp4", "after.mp4", "GT.mp4", *[r for v in DIMS.values() for r in v]]


def folder_seed(name: str) -> int:
    return int(hashlib.sha256(f"temporal-cloze-human-eval-folder-v1:{name}".encode()).hexdigest()[:16], 16)


def released_stems(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and all((p / r).exists() for r in REQUIRED))


def released_schedule(stems: list[str], seed: int) -> list[dict]:
    tasks = [{"stem": s, "dim": d} for s in stems for d in DIMS]
    random.Random(seed).shuffle(tasks)
    return tasks


def options(stem: str, dim: str, seed: int) -> tuple[str, dict[str, str]]:
    opts = [("GT.mp4", True), *((r, False) for r in DIMS[dim])]
    random.Random(f"{seed}:{stem}:{dim}:options").shuffle(opts)
    letters = "ABCD"
    expected = next(letters[i] for i, (_, gt) in enumerate(opts) if gt)
    return expected, {letters[i]: Path(r).stem for i, (r, _) in enumerate(opts)}


class ReleasedApp:
    def __init__(self, choice_dir: Path, results_dir: Path, display: str = "frames", flow: str = "confirm") -> None:
        self.choice_dir, self.results_dir = Path(choice_dir).resolve(), Path(results_dir)
        self.name = self.choice_dir.name
        self.path = self.results_dir / f"{self.name}.json"
        self.display, self.flow = display, flow
        self.data: dict = {}
        self.index = 0
        self.started = 0.0

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=2, ensure_ascii=False), encoding="utf-8")

    def start(self) -> ReleasedApp:
        seed = folder_seed(self.name)
        if self.path.exists():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            responses = data.get("responses")
            if isinstance(responses, list):
                data["responses"] = {str(e.get("task_index")): e for e in responses
                                     if isinstance(e, dict) and e.get("task_index") is not None}
            elif not isinstance(responses, dict):
                data["responses"] = {}
            if (data.get("schedule_policy") == POLICY and data.get("dataset_id") == self.name
                    and data.get("seed") == seed):
                data.pop("choices_dir", None)
                data.pop("result_path", None)
                self.data = data
                self._write()
                self._open()
                return self
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            self.path.replace(self.path.with_name(f"{self.path.stem}.legacy-{stamp}{self.path.suffix}"))
        stems = released_stems(self.choice_dir)
        self.data = {"dataset_id": self.name, "schedule_policy": POLICY, "seed": seed,
                     "started_at_utc": datetime.now(UTC).isoformat(), "completed_at_utc": None,
                     "stems": stems, "schedule": released_schedule(stems, seed), "responses": {}}
        self._write()
        self._open()
        return self

    def _open(self) -> None:
        total = len(self.data["schedule"])
        self.index = next((i for i in range(total) if str(i) not in self.data["responses"]), 0)
        self.started = time.time()

    def answer(self, letter: str, index: int | None = None) -> dict:
        """Answer the current task (or `index`, as the navigator's redo does)."""
        idx = self.index if index is None else index
        task = self.data["schedule"][idx]
        expected, option_map = options(task["stem"], task["dim"], self.data["seed"])
        previous = self.data["responses"].get(str(idx))
        rec = {"task_index": idx, "stem": task["stem"], "dim": task["dim"], "answer": letter,
               "expected": expected, "correct": letter == expected, "option_map": option_map,
               "display_mode": self.display, "answer_flow": self.flow,
               "elapsed_sec": round(time.time() - self.started, 3),
               "answered_at_utc": datetime.now(UTC).isoformat(),
               "redo_count": int(previous.get("redo_count", 0)) + 1 if previous else 0}
        self.data["responses"][str(idx)] = rec
        total = len(self.data["schedule"])
        self.data["completed_at_utc"] = (datetime.now(UTC).isoformat()
                                         if len(self.data["responses"]) >= total else None)
        self._write()
        self.index = next(((idx + k) % total for k in range(1, total + 1)
                           if str((idx + k) % total) not in self.data["responses"]), min(idx + 1, total - 1))
        self.started = time.time()
        return rec
