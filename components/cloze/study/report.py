"""The researcher's view of a study: per-annotator progress, inter-annotator agreement and the
Human row (a question correct only if every annotator who judged it chose GT) beside the paper's."""
from __future__ import annotations

from itertools import combinations
from typing import Any

from components.cloze.metrics import human_results, score_results
from components.cloze.study.cache import StudySet
from components.cloze.study.config import StudyConfig
from components.cloze.study.store import all_records

#: the paper's Human row (Appendix C): S, A, P, overall, >=1, >=2, 3/3
PAPER_HUMAN = {"S": 96.0, "A": 98.0, "P": 97.0, "acc": 97.0, ">=1": 100.0, ">=2": 99.0, "3/3": 92.0}
ROW_KEYS = ("S", "A", "P", "acc", ">=1", ">=2", "3/3")


def latest_by_annotator(records: list[dict]) -> dict[str, dict[tuple[str, str], dict]]:
    out: dict[str, dict[tuple[str, str], dict]] = {}
    for rec in records:
        if "stem" in rec and "dim" in rec:
            out.setdefault(str(rec.get("annotator")), {})[(rec["stem"], rec["dim"])] = rec
    return out


def agreement(latest: dict[str, dict[tuple[str, str], dict]]) -> dict:
    """Pairwise agreement on the chosen clip over questions two annotators both judged."""
    pairs = same = 0
    for a, b in combinations(sorted(latest), 2):
        for key in latest[a].keys() & latest[b].keys():
            pairs += 1
            same += latest[a][key].get("chosen") == latest[b][key].get("chosen")
    return {"pairs": pairs, "agree": same, "percent": round(100.0 * same / pairs, 2) if pairs else None}


def human_row(records: list[dict]) -> dict | None:
    return score_results(human_results(records)) if records else None


def researcher_summary(cfg: StudyConfig, sset: StudySet) -> tuple[str, Any]:
    import gradio as gr

    records = all_records(cfg)
    latest = latest_by_annotator(records)
    total = len(sset.questions)
    rows = [[who, len(answers), total, max((r.get("answered_at_utc", "") for r in answers.values()), default="")]
            for who, answers in sorted(latest.items())]
    m = human_row(records)
    agree = agreement(latest)

    def fmt(v) -> str:
        return "-" if v is None else f"{v:.1f}"

    lines = [f"**Study {cfg.study_id}** · set {cfg.set_name} (seed {cfg.seed}) · {total} questions · "
             f"{len(latest)} annotators · display {cfg.display} · flow {cfg.answer_flow} · "
             f"blind {'on' if cfg.blind else 'off'}" + (f" · {len(sset.dropped)} stems dropped (a clip missing)"
                                                      if sset.dropped else ""),
             "", "| | " + " | ".join(ROW_KEYS) + " |", "|---" * (len(ROW_KEYS) + 1) + "|",
             "| Human (this study) | " + " | ".join(fmt(m[k]) if m else "-" for k in ROW_KEYS) + " |",
             "| Human (paper) | " + " | ".join(fmt(PAPER_HUMAN[k]) for k in ROW_KEYS) + " |", "",
             f"Agreement (same clip chosen): {fmt(agree['percent'])}% over {agree['pairs']} annotator pairs "
             "of shared questions."]
    table = gr.update(value=rows or [["-", 0, total, ""]],
                      headers=["annotator", "answered", "questions", "last answer (UTC)"])
    return "\n".join(lines), table
