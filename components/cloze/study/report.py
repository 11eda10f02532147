"""The researcher's view of a study (a typed report; the page renders its markdown and tables):
per-question coverage, per-annotator progress and time, Fleiss' kappa per dimension, the Human row
(a question correct only if every annotator who judged it chose GT) with 95 % bootstrap intervals
over stems beside the paper's row, attention checks apart from the score, and everything the
result files and the set folder gave cause to report."""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from components.cloze.metrics import human_results
from components.cloze.study.agreement import Kappa, fleiss_kappa
from components.cloze.study.cache import StudySet
from components.cloze.study.config import StudyConfig
from components.cloze.study.store import all_checks, all_records, annotators, store_for, unclaimed_released_files
from components.base.io import read_jsonl
from components.common.stats import Estimate, ratio_interval

#: the paper's Human row (Appendix C): S, A, P, overall, >=1, >=2, 3/3
PAPER_HUMAN = {"S": 96.0, "A": 98.0, "P": 97.0, "acc": 97.0, ">=1": 100.0, ">=2": 99.0, "3/3": 92.0}
ROW_KEYS = ("S", "A", "P", "acc", ">=1", ">=2", "3/3")
DIM_OF = {"S": "S", "A": "A", "P": "C"}
COVERAGE_ROWS = 1000   # the table lists the least-judged questions first, up to this many


def latest_by_annotator(records: list[dict]) -> dict[str, dict[tuple[str, str], dict]]:
    out: dict[str, dict[tuple[str, str], dict]] = {}
    for rec in records:
        if "stem" in rec and "dim" in rec:
            out.setdefault(str(rec.get("annotator")), {})[(rec["stem"], rec["dim"])] = rec
    return out


def chosen(rec: dict) -> str | None:
    return rec.get("chosen") or (rec.get("option_map") or {}).get(str(rec.get("answer")))


def kappa_by_dim(records: list[dict]) -> dict[str, Kappa]:
    """Fleiss' kappa per dimension (S, A, P) on the clip each annotator chose."""
    picks: dict[tuple[str, str], list[str | None]] = {}
    for answers in latest_by_annotator(records).values():
        for key, rec in answers.items():
            picks.setdefault(key, []).append(chosen(rec))
    return {col: fleiss_kappa(v for (_, dim), v in sorted(picks.items()) if dim == d)
            for col, d in DIM_OF.items()}


def human_row_intervals(records: list[dict]) -> dict[str, Estimate]:
    """The Human row's scores with 95 % bootstrap intervals, the stem as the unit
    (components/common/stats.py): per dimension correct / judged, overall all correct / all
    judged, and >=1 / >=2 / 3/3 over the stems whose three questions were all judged."""
    results = human_results(records) if records else {}
    stems = sorted(results)

    def col(num, den) -> Estimate:
        return ratio_interval(num, den).scaled(100.0)

    out = {}
    for key, dim in DIM_OF.items():
        out[key] = col([int(bool(results[s].get(dim, {}).get("correct"))) for s in stems],
                       [int(dim in results[s]) for s in stems])
    out["acc"] = col([sum(bool(e.get("correct")) for d, e in results[s].items() if d in DIM_OF.values())
                      for s in stems],
                     [sum(d in DIM_OF.values() for d in results[s]) for s in stems])
    full = [all(d in results[s] for d in DIM_OF.values()) for s in stems]
    right = [sum(bool(results[s][d].get("correct")) for d in DIM_OF.values() if d in results[s]) for s in stems]
    for key, k in ((">=1", 1), (">=2", 2), ("3/3", 3)):
        out[key] = col([int(f and r >= k) for f, r in zip(full, right)], [int(f) for f in full])
    return out


@dataclass
class AnnotatorRow:
    annotator: str
    answered: int
    total: int
    time_s: float            # the sum of elapsed_sec (thinking time)
    median_s: float | None
    median_load_s: float | None
    page_timed: int          # answers timed by the page (the others by the server)
    last: str
    checks: str              # "right/given" or "-"
    practice: str            # the practice question at the first try: "right", "wrong" or "-"


@dataclass
class CoverageRow:
    question: int            # 1-based position in the set's schedule
    stem: str
    dim: str
    judgments: int


@dataclass
class ResearcherReport:
    config: StudyConfig
    total: int
    human: dict[str, Estimate]
    kappa: dict[str, Kappa]
    coverage: list[CoverageRow]
    annotators: list[AnnotatorRow]
    warnings: list[str] = field(default_factory=list)

    def coverage_counts(self) -> Counter:
        return Counter(r.judgments for r in self.coverage)

    def markdown(self) -> str:
        cfg = self.config
        routing = f"routing: {cfg.judgments} judgments per question" if cfg.routed else "routing off"
        lines = [f"**Study {cfg.study_id}** · set {cfg.set_name} (seed {cfg.seed}) · {self.total} questions · "
                 f"{len(self.annotators)} annotators · display {cfg.display} · flow {cfg.answer_flow} · "
                 f"blind {'on' if cfg.blind else 'off'} · access {cfg.access} · {routing}", ""]
        counts = self.coverage_counts()
        spread = ", ".join(f"{n}: {counts[n]}" for n in sorted(counts))
        lines.append(f"Judgments per question (judgments: questions): {spread}."
                     + (f" {sum(c for n, c in counts.items() if n < cfg.judgments)} questions still need "
                        "judgments." if cfg.routed else ""))
        lines += ["", "| | " + " | ".join(ROW_KEYS) + " |", "|---" * (len(ROW_KEYS) + 1) + "|",
                  "| Human (this study), 95 % interval over stems | "
                  + " | ".join(self.human[k].text(1) for k in ROW_KEYS) + " |",
                  "| Human (paper) | " + " | ".join(f"{PAPER_HUMAN[k]:.1f}" for k in ROW_KEYS) + " |", ""]
        any_est = next(iter(self.human.values()), None)
        if any_est is not None:
            lines.append(f"A question counts as correct only if every annotator who judged it chose the true "
                         f"middle. Intervals: {any_est.resamples} bootstrap resamples of the stems, seed "
                         f"{any_est.seed}.")
        kap = " · ".join(f"{k} {'-' if v.kappa is None else f'{v.kappa:.2f}'} ({v.questions} questions)"
                         for k, v in self.kappa.items())
        lines += ["", f"Agreement, Fleiss' kappa on the clip chosen, over questions judged by two or more: {kap}."]
        given = [a for a in self.annotators if a.checks != "-"]
        if given:
            lines += ["", "Attention checks (not part of the score): " +
                      ", ".join(f"{a.annotator} {a.checks}" for a in given) + "."]
        if self.warnings:
            lines += ["", "**To look at:**", *[f"- {w}" for w in self.warnings]]
        return "\n".join(lines)

    def coverage_table(self) -> tuple[list[str], list[list]]:
        rows = sorted(self.coverage, key=lambda r: (r.judgments, r.question))[:COVERAGE_ROWS]
        return (["question", "video", "dimension", "judgments"],
                [[r.question, r.stem, "P" if r.dim == "C" else r.dim, r.judgments] for r in rows])

    def annotator_table(self) -> tuple[list[str], list[list]]:
        def s(v):
            return "-" if v is None else round(v, 1)
        return (["annotator", "answered", "questions", "thinking time (s)", "median per question (s)",
                 "median load (s)", "timed in the page", "last answer (UTC)", "checks right", "practice"],
                [[a.annotator, a.answered, a.total, round(a.time_s, 1), s(a.median_s), s(a.median_load_s),
                  f"{a.page_timed}/{a.answered}", a.last, a.checks, a.practice] for a in self.annotators])


def _practice(cfg: StudyConfig, name: str) -> str:
    tries = read_jsonl(cfg.results / cfg.study_id / f"{name}.practice.jsonl")
    return "-" if not tries else ("right" if tries[0].get("correct") else "wrong")


def researcher_report(cfg: StudyConfig, sset: StudySet) -> ResearcherReport:
    warnings = [*sset.dropped, *sset.warnings]
    for name in annotators(cfg):
        try:
            store = store_for(cfg, name, sset.questions)
        except Exception as exc:  # noqa: BLE001 - a folder that is not an annotator's is reported, not fatal
            warnings.append(f"{name}: not read ({exc})")
            continue
        store.refresh()
        warnings += store.notes
        warnings += [f"{name}: {c.line()}" for c in store.conflicts()]
    for path in unclaimed_released_files(cfg):
        warnings.append(f"{path} is a released app's result file that belongs to no annotator here; to "
                        f"continue it: python -m components.cloze.study adopt {path} --annotator NAME")
    records = all_records(cfg)
    judged: Counter = Counter()
    by_who: dict[str, list[dict]] = {}
    for rec in records:
        judged[rec["task_index"]] += 1
        by_who.setdefault(str(rec["annotator"]), []).append(rec)
    coverage = [CoverageRow(i + 1, q.stem, q.dim, judged[i]) for i, q in enumerate(sset.questions)]
    checks = all_checks(cfg)
    rows = []
    for name in annotators(cfg):
        recs = by_who.get(name, [])
        times = [float(r["elapsed_sec"]) for r in recs if isinstance(r.get("elapsed_sec"), (int, float))]
        loads = [float(r["load_sec"]) for r in recs if isinstance(r.get("load_sec"), (int, float))]
        given = checks.get(name, [])
        rows.append(AnnotatorRow(name, len(recs), len(sset.questions), sum(times),
                                 statistics.median(times) if times else None,
                                 statistics.median(loads) if loads else None,
                                 sum(r.get("timing") == "page" for r in recs),
                                 max((str(r.get("answered_at_utc", "")) for r in recs), default=""),
                                 f"{sum(bool(c.get('correct')) for c in given)}/{len(given)}" if given else "-",
                                 _practice(cfg, name)))
    return ResearcherReport(cfg, len(sset.questions), human_row_intervals(records), kappa_by_dim(records),
                            coverage, rows, warnings)
