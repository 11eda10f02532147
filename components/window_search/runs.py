"""What every run answered on a grounding query (docs/architecture.md, "Runs as a collection").

Run files are predictions JSONL (`run grounding --out`, docs/formats.md): {"qid", "interval",
"source", "fallback_interval", ...} per line. A run's IoU on a query is `eval grounding`'s
(components/window_search/metrics.py): only a model answer is scored; a fallback keeps its
interval apart (`fallback_interval`), shown marked as a fallback and scored IoU 0, as eval does.

On a confusable pair, a run "puts the query on its partner's moment" when its scored interval
overlaps the partner's ground truth more than the query's own (IoU with the partner's GT greater
than with its own); `on_partner_05` counts the stricter case of an IoU with the partner's GT of at
least 0.5. A run that touches neither moment is on neither.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.base.errors import DataFormatError
from components.common.runs import RunsLoader, ItemRow, LoadedRuns, RunReader, \
    with_scored
from components.window_search.data import GroundingAnnotations, Prediction, load_predictions
from components.window_search.metrics import scored_interval, temporal_iou

REACH = 0.5


def read_grounding_run(path: Path) -> dict:
    """{"p": {qid: [interval, fallback_interval, source]}} of a predictions JSONL; a file none of
    whose lines has an "interval" is no predictions file (a search trace, say) and is refused."""
    preds = load_predictions(path)
    if preds and not any(isinstance(p.raw, dict) and "interval" in p.raw for p in preds.values()):
        raise DataFormatError("no line has an 'interval': not a predictions file (search traces "
                              "are read by 'Load trace', not as runs)")
    return {"p": {qid: [list(p.interval) if p.interval else None,
                        list(p.fallback_interval) if p.fallback_interval else None, p.source]
                  for qid, p in preds.items()}}


def _is_trace(path: Path) -> bool:
    return "trace" in path.name.lower()


#: runs folder: the data's `grounding/runs/` (or APP_GROUNDING_RUNS_DIR)
GROUNDING_READER = RunReader(kind="grounding", version=1, patterns=("*.jsonl",), read=read_grounding_run,
                             skip=_is_trace, subfolders=("grounding/runs",), folder_env="APP_GROUNDING_RUNS_DIR")


def grounding_runs_loader(data_dir: str | Path | None, named: Sequence[str] = ()) -> RunsLoader:
    """The tab's loader (the table is built from `result().runs` with the annotations on screen)."""
    return GROUNDING_READER.loader(data_dir, named)


def _prediction(qid: str, compact: list) -> Prediction:
    interval, fallback, source = compact
    return Prediction(qid, tuple(interval) if interval else None, source=source,
                      fallback_interval=tuple(fallback) if fallback else None)


@dataclass(frozen=True)
class RunInterval:
    run: str
    interval: tuple[float, float] | None   # what the run answered (a fallback's interval too)
    scored: bool                            # whether eval scores it (a model answer)
    iou: float                              # with the query's GT, as eval scores it
    iou_partner: float | None               # with the partner's GT (None without a partner)
    source: str                             # "emitted", "fallback:...", "unparsed", "missing", ...

    @property
    def fallback(self) -> bool:
        return self.source.startswith("fallback:")

    @property
    def on_partner(self) -> bool:
        return self.iou_partner is not None and self.iou_partner > self.iou


@dataclass(frozen=True)
class QueryRuns:
    qid: str
    gt: tuple[float, float]
    partner_qid: str | None
    partner_gt: tuple[float, float] | None
    answers: list[RunInterval]

    @property
    def reach(self) -> int:
        """Runs whose scored IoU is at least 0.5."""
        return sum(1 for a in self.answers if a.iou >= REACH)

    @property
    def on_partner(self) -> int:
        return sum(1 for a in self.answers if a.on_partner)

    @property
    def on_partner_05(self) -> int:
        return sum(1 for a in self.answers if a.iou_partner is not None and a.iou_partner >= REACH)

    def summary(self) -> str:
        text = f"{self.reach} of {len(self.answers)} runs reach IoU ≥ {REACH}"
        if self.partner_qid is not None:
            text += f"; {self.on_partner} put it on its partner's moment"
        return text


class GroundingRuns:
    """The per-query table of a set of runs ({name: compact}) on one annotation file."""

    def __init__(self, runs: Mapping[str, dict], annotations: GroundingAnnotations):
        self.names = sorted(runs)
        self._runs = {name: runs[name]["p"] for name in self.names}
        self.annotations = annotations
        self._queries = {q.qid: q for q in annotations.queries}

    def query(self, qid: str) -> QueryRuns:
        q = self._queries.get(qid)
        if q is None:
            raise KeyError(f"query '{qid}' is not in {self.annotations.path}")
        partner = self._queries.get(q.partner_qid) if q.partner_qid else None
        answers = []
        for name, preds in self._runs.items():
            compact = preds.get(qid)
            if compact is None:
                answers.append(RunInterval(name, None, False, 0.0, 0.0 if partner else None, "missing"))
                continue
            pred = _prediction(qid, compact)
            scored = scored_interval(pred)
            shown = pred.interval or pred.fallback_interval
            answers.append(RunInterval(
                name, shown, scored is not None, temporal_iou(scored, q.interval),
                temporal_iou(scored, partner.interval) if partner else None,
                str(pred.source or "(no source)")))
        return QueryRuns(qid, q.interval, partner.qid if partner else None,
                         partner.interval if partner else None, answers)

    def item_rows(self) -> list[ItemRow]:
        """`eval grounding --items`: one row per (run, query of the annotation file), IoU as
        eval scores it (a missing line: source "missing", IoU 0); the mean x 100 is mIoU."""
        rows = []
        for q in self.annotations.queries:
            for a in self.query(q.qid).answers:
                answer = "" if a.interval is None else f"[{a.interval[0]:g}, {a.interval[1]:g}]"
                rows.append(ItemRow(a.run, q.qid, answer, a.iou, "IoU", a.source))
        rows.sort(key=lambda r: r.run)  # stable: the annotation order within a run
        return rows


def eval_item_rows(name: str, predictions: Mapping[str, Prediction], annotations: GroundingAnnotations,
                   others: LoadedRuns) -> list[ItemRow]:
    scored = {"p": {qid: [list(p.interval) if p.interval else None,
                          list(p.fallback_interval) if p.fallback_interval else None, p.source]
                    for qid, p in predictions.items()}}
    return GroundingRuns(with_scored(name, scored, others.runs, others.files), annotations).item_rows()


def write_eval_items(args: Any, annotations: GroundingAnnotations, predictions: Mapping[str, Prediction]) -> None:
    """`eval grounding --items OUT [RUN ...]`."""
    from components.common.runs import extra_runs, run_name, write_item_rows
    others = extra_runs(GROUNDING_READER, args.runs, args.items)
    if args.items is not None:
        if getattr(args, "score_fallbacks", False):
            print("note: --items scores as eval does without --score-fallbacks (fallbacks IoU 0).",
                  file=sys.stderr)
        write_item_rows(args.items, eval_item_rows(run_name(args.predictions), predictions, annotations, others))
