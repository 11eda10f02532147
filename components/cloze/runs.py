"""What every run answered on a TempCloze question (docs/architecture.md, "Runs as a collection").

Run files are the upstream per-model result format (`run cloze` writes it; TempCloze's released
`eval_results_all/*.json` are in it): stem -> dimension -> {answer, correct, expected, reason,
option_map}. They are read as released, quirks included: dimension keys are the folder names (S,
A, C; the paper's P is C), a stem may hold no valid entry (or no entry), an entry may be an error
record (`answer` null, `error` "Cannot parse ..."): it is kept as an unparsed answer, never a pick.
Validity and correctness are the released analysis' own (components/cloze/metrics.py), so a run's
rows here add up to the scores `eval cloze` prints.

`ClozeRuns` is the table the tab's panels and `eval cloze --items` read: per question each run's
letter (on the option map of the question on screen), ✓/✗, the distractor of a wrong pick and the
reason; counts per letter; per question the share of runs right, the disagreement, and whether
people were right where every model was wrong; the runs-by-questions matrix.
"""
from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.cloze.spec import SPEC
from components.cloze.leaderboard import board_ahead
from components.cloze.metrics import DIMS, PAPER_KEYS, check_results, entry_correct, invalid_kind, scorable
from components.cloze.human import study_dir
from components.cloze.replies import normalise_recorded_answer
from components.cloze.questions import distractor_type
from components.cloze.study.results_file import load_human_files
from components.base.errors import DataFormatError, UserError
from components.common.runs import runs_loader, RunsLoader, ItemRow, LoadedRuns, Refusal, \
    RunReader, with_scored

LETTERS = ("A", "B", "C", "D")
QUESTION_DIMS = (*DIMS, "Mixed")
#: the human-study row's name in every table
HUMAN = "Human"

# compact entry: [own letter or None, picked clip or None, correct 1/0 or None, reason, status,
#                 the run's options in letter order ("GT|Rand2|Wide|Early") or "", detail]
# status: "answer" for a valid, scorable letter, else metrics.invalid_kind ("unparsed", "error",
# "unscorable", ...); detail: for an entry without a valid answer, [error text, raw reply] as the
# file has them (`raw`, else `raw_original`; cut at DETAIL_MAX characters), else None
Entry = list
DETAIL_MAX = 4000


def compact_results(results: Mapping[str, Mapping[str, Mapping]]) -> dict:
    """{"q": {stem: {paper dim: Entry}}, "data_set": name or None, "tally": ...} of an upstream
    result dict (dimensions other than S, A, C and Mixed are left out, as the released analysis
    does); a stem without entries is kept. The common case (a bare letter, a boolean `correct`) is
    read inline; anything else goes through the released analysis' own functions, so a letter that
    nothing scores (no `correct`, `expected` or GT option) is invalid ("unscorable") as `eval`
    counts it.

    The one scoring pass: each entry is scored here, once, and added to the run's `tally`, which
    every score of the run is made from (`RunScore`, the leaderboard's row): {"right": [S, A, P],
    "valid": [S, A, P], "invalid": n, "error": n (error records), "dims": the paper dimensions the
    file holds, "stems": {stem: [right, valid, S/A/P entries present]}}."""
    out: dict[str, dict[str, Entry]] = {}
    shared: dict[str, str] = {}   # one string object per option order (marshal keeps them shared)
    data_sets: Counter = Counter()
    right, valid = [0, 0, 0], [0, 0, 0]
    invalid = errors = 0
    stems: dict[str, list[int]] = {}
    held: set[str] = set()
    for stem, dims in results.items():
        row = out.setdefault(str(stem), {})
        per_stem = stems.setdefault(str(stem), [0, 0, 0])
        for dim, entry in dims.items():
            if dim not in _DIM_NAMES:
                continue
            answer = entry.get("answer")
            letter = answer if answer in _LETTER_SET else normalise_recorded_answer(answer)
            option_map = entry.get("option_map")
            pick = option_map.get(letter) if letter and isinstance(option_map, dict) else None
            flag = entry.get("correct")
            if letter is None or not (flag is True or flag is False or scorable(entry)):
                correct = None
            else:
                correct = int(flag) if flag is True or flag is False else int(entry_correct(entry, letter))
            reason = entry.get("reason")
            options = ""
            if isinstance(option_map, dict):
                options = "|".join(str(option_map.get(x, "")) for x in LETTERS)
                options = shared.setdefault(options, options)
            status = "answer" if correct is not None else invalid_kind(entry)
            detail = None if correct is not None else [_text(entry.get("error")),
                                                       _text(entry.get("raw") or entry.get("raw_original"))]
            if entry.get("data_set"):
                data_sets[str(entry["data_set"])] += 1
            paper = _DIM_NAMES[dim]
            row[paper] = [
                letter, pick if isinstance(pick, str) else None, correct,
                reason if isinstance(reason, str) else ("" if reason is None else json.dumps(reason)),
                status, options, detail]
            at = _PAPER_INDEX.get(paper)
            if at is not None:
                held.add(paper)
                per_stem[2] += 1
                if correct is not None:
                    right[at] += correct
                    valid[at] += 1
                    per_stem[0] += correct
                    per_stem[1] += 1
                elif status == "error":
                    errors += 1
                else:
                    invalid += 1
    tally = {"right": right, "valid": valid, "invalid": invalid, "error": errors,
             "dims": sorted(held, key=_PAPER_INDEX.get), "stems": stems}
    return {"q": out, "data_set": data_sets.most_common(1)[0][0] if data_sets else None, "tally": tally}


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= DETAIL_MAX else text[:DETAIL_MAX] + "…"


_DIM_NAMES = {d: PAPER_KEYS.get(d, d) for d in QUESTION_DIMS}
_PAPER_DIMS = tuple(PAPER_KEYS[d] for d in DIMS)
_PAPER_INDEX = {d: i for i, d in enumerate(_PAPER_DIMS)}
_LETTER_SET = frozenset(LETTERS)


def _is_results_shape(data: Any) -> bool:
    """The upstream shape (stem -> dimension -> record object), checked fast; `check_results`
    names the first problem when it is not."""
    return isinstance(data, dict) and all(
        isinstance(dims, dict) and all(isinstance(e, dict) for e in dims.values()) for dims in data.values())


def read_cloze_run(path: Path) -> dict:
    """A result file as `compact_results`; a file that is not one raises, naming what is wrong."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFormatError(f"not valid JSON ({exc})") from None
    return compact_results(data if _is_results_shape(data) else check_results(data, str(path)))


#: runs folders: the data's `cloze/results/` and the app's runs folder (APP_CLOZE_RUNS_DIR, else
#: `<data>/cloze/runs`; its per-visitor `visitors/` folders are never read: one visitor's runs are
#: not shown to another)
CLOZE_READER = RunReader(kind="cloze", version=3, patterns=("*.json",), read=read_cloze_run,
                         subfolders=("cloze/results", "cloze/runs"), folder_env="APP_CLOZE_RUNS_DIR")


def cloze_runs_folders(data_dir: str | Path | None) -> list[Path]:
    """The tab's own runs folders (CLOZE_READER.folders)."""
    return CLOZE_READER.folders(data_dir)


def cloze_runs_loader(data_dir: str | Path | None, named: Sequence[str] = (),
                      study_folder: str | Path | None = None) -> RunsLoader:
    """The tab's loader, started: every run file read (disk cache under APP_CACHE_DIR), the study
    folder's answers as the Human row, and the `ClozeRuns` table with every question's figures
    computed, as `result().table` (the leaderboard's rows are made after it, `board_ahead`); the page
    asks `result()` and never waits."""
    def finish(loaded: LoadedRuns) -> LoadedRuns:
        human, refusals = study_run(study_folder)
        loaded.refusals += refusals
        loaded.table = ClozeRuns(loaded.runs, human).prepare()
        board_ahead(loaded)   # the leaderboard's rows, made behind the panels' table
        return loaded
    return CLOZE_READER.loader(data_dir, named, finish=finish)


def _study_folder(data_dir: str | Path | None) -> Path | None:
    try:
        return study_dir(data_dir) if data_dir is not None else None
    except Exception:  # noqa: BLE001 - no study folder: no Human row
        return None


def loader_for(data_dir: str | Path | None, named: Sequence[str] = (), *, recheck: bool = False) -> RunsLoader:
    """The one loader of the tab's runs (these folders, the study's Human row) in this process,
    started on first use; `recheck`: read again when the files changed since."""
    folders = os.pathsep.join(map(str, CLOZE_READER.folders(data_dir)))   # APP_CLOZE_RUNS_DIR's too
    return runs_loader(SPEC.data, f"{data_dir}{os.pathsep}{folders}", tuple(named),
                       lambda: cloze_runs_loader(data_dir, named, study_folder=_study_folder(data_dir)),
                       recheck=recheck)


def human_run(records: Iterable[Mapping]) -> dict:
    """The human-study records (components/cloze/study/results_file.load_human_files) as one more
    run: a question counts as right only when every annotator chose the true middle (the paper's
    Human row)."""
    from components.cloze.metrics import human_results
    return compact_results(human_results(list(records)))


def study_run(folder: str | Path | None) -> tuple[dict | None, list[Refusal]]:
    """The Human row from a study folder's answer files (`<annotator>.jsonl`, as the explorer's
    playthrough (components/cloze/human.py `study_dir`) and the study page write them; the
    `.catch` / `.practice` files are no answers): (None, []) without answers; a folder whose
    files cannot be read gives a refusal line instead."""
    if folder is None or not Path(folder).is_dir():
        return None, []
    files = sorted(p for p in Path(folder).glob("*.jsonl") if p.name.count(".") == 1)
    if not files:
        return None, []
    try:
        records = load_human_files(files)
        return (human_run(records) if records else None), []
    except (UserError, ValueError) as exc:
        return None, [Refusal(str(folder), f"human-study answers not read: {exc}")]


# -- per question ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunAnswer:
    run: str
    letter: str | None        # on the shown question's option map (the run's own without one)
    own_letter: str | None    # as the run recorded it, on its own option order
    pick: str | None          # the clip chosen: "GT", "Rand2", "Wide", ...
    correct: bool | None      # None: no valid answer (or no entry)
    reason: str
    status: str               # "answer", an invalid kind ("unparsed", "error", ...), or "missing"
    options: tuple[str, ...] = ()   # the run's own option order: its clip per letter A-D
    error: str = ""           # an entry without a valid answer: the file's error text
    raw: str = ""             # ... and its raw reply (`raw`, else `raw_original`)

    def own_map(self, option_map: Mapping[str, str] | None) -> dict[str, str]:
        """The run's letters as the letters on screen ({its letter: your letter}) for the
        question shown with `option_map` (letter -> clip); {} without either map."""
        if not self.options or not option_map:
            return {}
        yours = {clip: letter for letter, clip in option_map.items()}
        return {own: yours[clip] for own, clip in zip(LETTERS, self.options) if clip in yours}

    @property
    def distractor(self) -> str | None:
        """A wrong pick's distractor type, e.g. 'Alignment (Wide)'."""
        return distractor_type(self.pick) if self.correct is False and self.pick else None

    @property
    def mark(self) -> str:
        return {True: "✓", False: "✗"}.get(self.correct, "–")


@dataclass(frozen=True)
class QuestionRuns:
    """Every run on one question; `human` is the study's row where there is one."""
    stem: str
    dim: str
    answers: list[RunAnswer]
    human: RunAnswer | None = None

    @property
    def answered(self) -> list[RunAnswer]:
        return [a for a in self.answers if a.correct is not None]

    @property
    def right(self) -> int:
        return sum(1 for a in self.answers if a.correct)

    def letter_counts(self) -> dict[str, int]:
        counts = Counter(a.letter for a in self.answers if a.letter)
        return {letter: counts.get(letter, 0) for letter in LETTERS}

    def summary(self) -> str:
        """'k of N runs chose the true middle' (N: the runs with a valid answer)."""
        return f"{self.right} of {len(self.answered)} runs chose the true middle"


@dataclass(frozen=True)
class QuestionStats:
    """One question across the runs: `share_right` (of runs with a valid answer), `entropy` of
    the picked clips (bits), `disagreement` = 1 - the largest share of one clip (0 when all
    agree), `human_right` (None without a study answer) and `people_only` (people right, every
    model that answered wrong)."""
    stem: str
    dim: str
    runs: int
    answered: int
    right: int
    share_right: float | None
    entropy: float
    disagreement: float
    human_right: bool | None
    people_only: bool


SORT_KEYS = ("share_right", "disagreement", "entropy", "answered", "stem")
#: the paper's order of the dimensions (S, A, P), then Mixed
DIM_ORDER = {d: i for i, d in enumerate((*(PAPER_KEYS[d] for d in DIMS), "Mixed"))}
#: per run, the released categories of its S / A / P entries
COUNT_KINDS = ("valid", "invalid", "error", "missing")


@dataclass(frozen=True)
class RunScore:
    """One run's released scores from the collection (acc and S / A / P as `eval cloze` prints
    them: correct / valid, 0 where nothing is valid, with `nothing_valid` saying so), its counts
    in the released categories (valid; invalid: no valid answer, not an error record; error: an
    error record; missing: a stem lacking a dimension the file's other stems have) and its rank
    by acc among the runs (ties share one)."""
    run: str
    acc: float
    dims: dict[str, float]
    counts: dict[str, int]
    nothing_valid: bool
    rank: int
    of: int

    def text(self) -> str:
        """'acc 61.4 · #3 of 30', or 'acc 0 (nothing valid) · #29 of 30'."""
        acc = "0 (nothing valid)" if self.nothing_valid else f"{self.acc:.1f}"
        return f"acc {acc} · #{self.rank} of {self.of}"


@dataclass(frozen=True)
class Matrix:
    """Runs (rows) by questions (columns): "✓", "✗", "–" (no valid answer) or "" (no entry)."""
    runs: list[str]
    questions: list[tuple[str, str]]
    cells: list[list[str]]


class ClozeRuns:
    """The per-item table of a set of runs ({name: compact}), with the human row optional."""

    def __init__(self, runs: Mapping[str, dict], human: dict | None = None):
        self.names = sorted(runs)
        self._runs = {name: runs[name]["q"] for name in self.names}
        self._tallies = {name: runs[name]["tally"] for name in self.names}
        self._human = human["q"] if human else None
        self._stats: list[QuestionStats] | None = None
        self._scores: dict[str, RunScore] | None = None
        # dims every run's file holds somewhere: a stem lacking one is a missing entry
        self._expected = {name: {d for dims in q.values() for d in dims} for name, q in self._runs.items()}

    def question_keys(self) -> list[tuple[str, str]]:
        keys = {(stem, d) for q in self._runs.values() for stem, dims in q.items() for d in dims}
        return sorted(keys, key=lambda k: (k[0], DIM_ORDER.get(k[1], 9), k[1]))

    def scores(self) -> dict[str, RunScore]:
        """Every run's `RunScore` (computed once), by name."""
        if self._scores is None:
            raw = {}
            for name, t in self._tallies.items():   # made as the file was read (compact_results)
                right, valid = t["right"], t["valid"]
                n = sum(valid)
                acc = 100.0 * sum(right) / n if n else 0.0
                counts = {"valid": n, "invalid": t["invalid"], "error": t["error"],
                          "missing": sum(len(t["dims"]) - s[2] for s in t["stems"].values())}
                raw[name] = (acc, {d: 100.0 * right[i] / valid[i] if valid[i] else 0.0
                                   for i, d in enumerate(_PAPER_DIMS)}, counts, n == 0)
            accs = sorted((v[0] for v in raw.values()), reverse=True)
            self._scores = {name: RunScore(name, acc, dims, counts, empty, 1 + sum(a > acc for a in accs), len(raw))
                            for name, (acc, dims, counts, empty) in raw.items()}
        return self._scores

    def run_answers(self, name: str, *, wrong_only: bool = False) -> list[tuple[str, str, RunAnswer]]:
        """Every question of one run in the stems' order (S, A, P, Mixed within a stem): (stem, dim,
        its answer on its own letters), a missing entry as "missing"; `wrong_only`: the wrong
        valid answers alone."""
        q = self._runs[name]
        out = []
        for stem in sorted(q):
            dims = q[stem]
            if not dims:
                continue
            for dim in sorted({*dims, *(d for d in self._expected[name] if d in _PAPER_DIMS)},
                              key=lambda d: DIM_ORDER.get(d, 9)):
                answer = self._answer(name, q, stem, dim, None) or RunAnswer(name, None, None, None, None, "", "missing")
                if not wrong_only or answer.correct is False:
                    out.append((stem, dim, answer))
        return out

    def _answer(self, name: str, q: dict, stem: str, dim: str,
                letters: Mapping[str, str] | None) -> RunAnswer | None:
        dims = q.get(stem)
        entry = dims.get(dim) if dims is not None else None
        if entry is None:
            return None
        own, pick, correct, reason, status = entry[:5]
        options = tuple(entry[5].split("|")) if len(entry) > 5 and entry[5] else ()
        error, raw = (entry[6] or ("", "")) if len(entry) > 6 else ("", "")
        letter = letters.get(pick) if letters is not None and pick else own
        return RunAnswer(name, letter, own, pick, None if correct is None else bool(correct), reason, status,
                         options, error, raw)

    def question(self, stem: str, dim: str, option_map: Mapping[str, str] | None = None) -> QuestionRuns:
        """Every run's answer on (stem, paper dimension S/A/P/Mixed); `option_map` (letter -> clip)
        of the question on screen puts every run's pick on its letters. A run whose file holds the
        stem's other dimensions but not this one shows as "missing"; a stem with no entry at all
        is no answer of that run (as `eval cloze`, which never sees such a stem)."""
        letters = {clip: letter for letter, clip in option_map.items()} if option_map else None
        answers = []
        for name, q in self._runs.items():
            answer = self._answer(name, q, stem, dim, letters)
            if answer is None and q.get(stem) and dim in self._expected[name]:
                answer = RunAnswer(name, None, None, None, None, "", "missing")
            if answer is not None:
                answers.append(answer)
        human = self._answer(HUMAN, self._human, stem, dim, letters) if self._human else None
        return QuestionRuns(stem, dim, answers, human)

    def prepare(self) -> ClozeRuns:
        """Compute every question's figures now (call it on the loading thread: the question
        list then costs a page no more than a sort)."""
        self.stats()
        self.scores()
        return self

    def stats(self) -> list[QuestionStats]:
        """Every question's figures (computed once, in one pass over the runs)."""
        if self._stats is None:
            tallies: dict[str, dict[str, list]] = {}
            for q in self._runs.values():
                for stem, dims in q.items():
                    per = tallies.get(stem)
                    if per is None:
                        per = tallies[stem] = {}
                    for dim, entry in dims.items():
                        t = per.get(dim)
                        if t is None:
                            t = per[dim] = [0, 0, 0, {}]
                        t[0] += 1
                        if entry[2] is not None:
                            t[1] += 1
                            t[2] += entry[2]
                            picks = t[3]
                            picks[entry[1]] = picks.get(entry[1], 0) + 1
            self._stats = [self._question_stats(stem, dim, *tallies[stem][dim])
                           for stem, dim in self.question_keys()]
        return self._stats

    def _question_stats(self, stem: str, dim: str, runs: int, answered: int, right: int,
                        picks: dict) -> QuestionStats:
        entropy = -sum(n / answered * math.log2(n / answered) for n in picks.values()) if answered else 0.0
        disagreement = 1.0 - max(picks.values()) / answered if answered else 0.0
        human = (self._human.get(stem) or {}).get(dim) if self._human else None
        human_right = None if human is None or human[2] is None else bool(human[2])
        return QuestionStats(stem, dim, runs, answered, right, right / answered if answered else None,
                             abs(entropy), disagreement, human_right,
                             bool(human_right) and answered > 0 and right == 0)

    def questions(self, sort: str = "share_right", *, descending: bool = False, dim: str | None = None,
                  people_only: bool = False, stems: Iterable[str] | None = None,
                  min_answered: int = 0, find: str = "", right: int | None = None) -> list[QuestionStats]:
        """The questions' figures, filtered (one dimension, the people-only ones, some stems, at
        least `min_answered` runs, stems containing `find` (any of its words), exactly `right` runs
        right) and sorted by `sort` (SORT_KEYS; ties by stem, then the dimensions in the paper's
        order S, A, P; a question no run answered sorts last)."""
        if sort not in SORT_KEYS:
            raise ValueError(f"sort by one of {', '.join(SORT_KEYS)}, not {sort!r}")
        wanted = set(stems) if stems is not None else None
        words = [w.lower() for w in find.split()]
        rows = [s for s in self.stats()
                if (dim is None or s.dim == dim) and (not people_only or s.people_only)
                and (wanted is None or s.stem in wanted) and s.answered >= min_answered
                and (not words or any(w in s.stem.lower() for w in words))
                and (right is None or s.right == right)]
        rows.sort(key=lambda s: (s.stem, DIM_ORDER.get(s.dim, 9), s.dim))
        if sort != "stem":
            present = [s for s in rows if getattr(s, sort) is not None]
            absent = [s for s in rows if getattr(s, sort) is None]
            present.sort(key=lambda s: getattr(s, sort), reverse=descending)
            rows = present + absent
        elif descending:
            rows.reverse()
        return rows

    def matrix(self, questions: Sequence[tuple[str, str]] | None = None) -> Matrix:
        keys = list(questions) if questions is not None else self.question_keys()
        cells = []
        for name in self.names:
            q = self._runs[name]
            row = []
            for stem, dim in keys:
                entry = (q.get(stem) or {}).get(dim)
                row.append("" if entry is None else {1: "✓", 0: "✗"}.get(entry[2], "–"))
            cells.append(row)
        return Matrix(list(self.names), keys, cells)

    def item_rows(self) -> list[ItemRow]:
        """`eval cloze --items`: one row per (run, question) in the file, plus one per missing
        entry (a stem with no entry at all has none, as eval leaves it out). `score` 1/0 for a valid answer (mean x 100 over a run's "correct" rows = `acc`),
        None for an invalid answer or a missing entry (`source` says which; the released scores
        leave them out); Mixed rows have the metric "Mixed correct"."""
        rows = []
        scores = self.scores()
        for name in self.names:
            q = self._runs[name]
            # a run with no valid answer scores 0 as released (eval's acc 0, `nothing_valid`): its
            # rows score 0, so their mean is the acc printed, never undefined
            zero = 0.0 if scores[name].nothing_valid else None
            for stem in sorted(q):
                dims = q[stem]
                if not dims:
                    continue
                for dim in [*(PAPER_KEYS[d] for d in DIMS), "Mixed"]:
                    entry = dims.get(dim)
                    metric = "Mixed correct" if dim == "Mixed" else "correct"
                    if entry is None:
                        if dim != "Mixed" and dim in self._expected[name]:
                            rows.append(ItemRow(name, f"{stem}/{dim}", "", None, metric, "missing"))
                        continue
                    if entry[2] is None:
                        nothing = zero is not None and dim != "Mixed"
                        rows.append(ItemRow(name, f"{stem}/{dim}", entry[0] or "", zero if nothing else None,
                                            metric, f"{entry[4]} (nothing_valid: 0)" if nothing else entry[4]))
                        continue
                    rows.append(ItemRow(name, f"{stem}/{dim}", entry[0] or "", float(entry[2]), metric,
                                        entry[1] or "answer"))
        return rows


def eval_item_rows(name: str, results: Mapping[str, Mapping[str, Mapping]],
                   others: LoadedRuns) -> list[ItemRow]:
    """The rows of `eval cloze --items`: the run it scored (`results`) and the RUN files."""
    return ClozeRuns(with_scored(name, compact_results(results), others.runs, others.files)).item_rows()


def write_eval_items(args: Any, results: Mapping[str, Mapping[str, Mapping]]) -> None:
    """`eval cloze --items OUT [RUN ...]`: the scored run's rows, then every RUN's."""
    from components.common.runs import extra_runs, run_name, write_item_rows
    others = extra_runs(CLOZE_READER, args.runs, args.items)
    if args.items is not None:
        name = HUMAN if getattr(args, "human", False) else run_name(args.results, CLOZE_READER)
        write_item_rows(args.items, eval_item_rows(name, results, others))
