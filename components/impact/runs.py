"""What every run answered on an Impact clip (docs/architecture.md, "Runs as a collection").

Run files are the outputs of `run impact --out DIR` (docs/formats.md): `temporal_pred.jsonl`
(QVHighlights lines: {"qid", "pred_relevant_windows": [[s, e, score]], "status"}) and
`spatial_pred.jsonl` ({"qid", "frame", "regions", "vertices", "error"}). A run is named by its
folder (`DIR/temporal_pred.jsonl` -> "DIR"); a file with another name is named by its stem and
read as temporal or spatial by its lines. A line holding no model answer (unparsed, a failed
call, a fallback) is shown with its status and scored as an empty answer, as eval does.

Per clip: each run's moments, and per annotated frame the regions each run named with "k of N
runs say <region>" counts. `eval impact-temporal --items` / `eval impact-spatial --items` write
the per-item scores (AP@0.3 per query, F1 per frame) whose means are the printed mAP@0.3 and F1.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.base.errors import DataFormatError
from components.common.runs import RunsLoader, ItemRow, RunReader, \
    with_scored
from components.impact.data import ImpactAnnotations, is_invalid_region_record, load_qv_pred, \
    load_spatial_pred
from components.impact.metrics.temporal import AS_MISS, LEAVE_OUT, MAP_THRESHOLD, average_precision, is_invalid, \
    scored_pairs

TASK_FILES = {"temporal_pred.jsonl": "temporal", "spatial_pred.jsonl": "spatial"}


def _kind_of(path: Path) -> str:
    kind = TASK_FILES.get(path.name)
    if kind:
        return kind
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                first = json.loads(line)
                if isinstance(first, dict) and "pred_relevant_windows" in first:
                    return "temporal"
                if isinstance(first, dict) and "frame" in first:
                    return "spatial"
                break
    raise DataFormatError("neither temporal lines ('pred_relevant_windows') nor spatial lines "
                          "('frame', 'regions'): not an Impact run file")


def read_impact_run(path: Path) -> dict:
    """{"kind": "temporal", "lines": [line, ...]} or {"kind": "spatial", "lines": {"qid#frame":
    line}}: the lines as the eval loaders accept them (a malformed file raises, naming the line)."""
    path = Path(path)
    try:
        kind = _kind_of(path)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFormatError(f"line 1 is not JSON ({exc})") from None
    if kind == "temporal":
        return {"kind": kind, "lines": load_qv_pred(path)}
    return {"kind": kind, "lines": {f"{qid}#{frame}": rec for (qid, frame), rec in load_spatial_pred(path).items()}}


def _run_name(path: Path) -> str:
    kind = TASK_FILES.get(path.name)
    return f"{path.parent.name}:{kind}" if kind else path.stem


def _not_a_run(path: Path) -> bool:
    return path.name == "temporal_gt.jsonl" or "trace" in path.name.lower()


#: runs folder: the data's `impact/runs/` (a folder per run, as `run impact --out` writes)
IMPACT_READER = RunReader(kind="impact", version=1, patterns=("*.jsonl", "*/*.jsonl"), read=read_impact_run,
                          name=_run_name, skip=_not_a_run, subfolders=("impact/runs",))


def impact_runs_loader(data_dir: str | Path | None, named: Sequence[str] = ()) -> RunsLoader:
    """The tab's loader (the table is built from `result().runs` with the annotations on screen)."""
    return IMPACT_READER.loader(data_dir, named)


def display_name(name: str, kind: str) -> str:
    """"DIR:temporal" -> "DIR" (a run folder's two files are one run)."""
    suffix = f":{kind}"
    return name[: -len(suffix)] if name.endswith(suffix) else name


def _by_display_name(runs: Mapping[str, dict], kind: str) -> dict[str, Any]:
    """The `kind` runs' lines by display name (a name another run already shows keeps its full
    name, so two files never merge into one run)."""
    out: dict[str, Any] = {}
    for name, value in sorted(runs.items()):
        if value["kind"] == kind:
            shown = display_name(name, kind)
            out[shown if shown not in out else name] = value["lines"]
    return out


@dataclass(frozen=True)
class RunMoments:
    run: str
    windows: list[tuple[float, float, float]]   # as listed ([] for an invalid answer)
    status: str                                  # "ok", "none", "unparsed", "error", "fallback:..."


@dataclass(frozen=True)
class RunRegions:
    run: str
    regions: list[str]   # [] for an invalid answer
    status: str          # "ok", "none", or the line's error / status


@dataclass(frozen=True)
class FrameRuns:
    frame: int
    truth: list[str]
    answers: list[RunRegions]

    def counts(self) -> dict[str, int]:
        """region -> how many runs named it, most named first (ties by name)."""
        counts = Counter(r for a in self.answers for r in dict.fromkeys(a.regions))
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self, region: str) -> str:
        return f"{self.counts().get(region, 0)} of {len(self.answers)} runs say {region}"


@dataclass(frozen=True)
class ClipRuns:
    qid: str
    moments: list[RunMoments]
    frames: dict[int, FrameRuns]


def _temporal_status(line: Mapping) -> str:
    return str(line.get("status") or "ok")


def _spatial_status(line: Mapping) -> str:
    if is_invalid_region_record(line):
        return str(line.get("status") or line.get("error") or "error")
    return "ok" if line.get("regions") else "none"


class ImpactRuns:
    """The per-clip table of a set of runs ({name: compact}) on one annotation file."""

    def __init__(self, runs: Mapping[str, dict], annotations: ImpactAnnotations | None = None):
        self.annotations = annotations
        self.temporal = _by_display_name(runs, "temporal")
        self.spatial = _by_display_name(runs, "spatial")
        self._temporal_by_qid = {name: {str(line["qid"]): line for line in lines}
                                 for name, lines in self.temporal.items()}

    @property
    def names(self) -> list[str]:
        return sorted(set(self.temporal) | set(self.spatial))

    def clip(self, qid: str) -> ClipRuns:
        moments = []
        for name, by_qid in self._temporal_by_qid.items():
            line = by_qid.get(qid)
            if line is None:
                moments.append(RunMoments(name, [], "missing"))
                continue
            windows = [] if is_invalid(line) else [tuple(w[:3]) for w in line["pred_relevant_windows"]]
            moments.append(RunMoments(name, windows, _temporal_status(line)))
        item = self.annotations.by_qid().get(qid) if self.annotations else None
        frames: dict[int, FrameRuns] = {}
        frame_numbers = sorted(item.frames) if item is not None else sorted(
            {int(k.rsplit("#", 1)[1]) for lines in self.spatial.values() for k in lines
             if k.rsplit("#", 1)[0] == qid})
        for frame in frame_numbers:
            answers = []
            for name, lines in self.spatial.items():
                line = lines.get(f"{qid}#{frame}")
                if line is None:
                    answers.append(RunRegions(name, [], "missing"))
                    continue
                status = _spatial_status(line)
                answers.append(RunRegions(name, [] if is_invalid_region_record(line)
                                          else list(line.get("regions") or []), status))
            truth = list(item.frames[frame].regions) if item is not None and item.frames.get(frame) else []
            frames[frame] = FrameRuns(frame, truth, answers)
        return ClipRuns(qid, moments, frames)

    def temporal_item_rows(self, gt: Sequence[Mapping], no_prediction: str = LEAVE_OUT) -> list[ItemRow]:
        """`eval impact-temporal --items`: per (run, GT query with windows) the AP@0.3 eval
        averages into mAP@0.3 (a missing line: source "missing"); a query with no prediction has
        no score (None: left out, as eval leaves it) or AP 0 under `no_prediction=AS_MISS`."""
        rows = []
        for name, lines in self.temporal.items():
            by_qid = self._temporal_by_qid[name]
            for qid, g, p in scored_pairs(gt, lines, no_prediction=AS_MISS):
                line = by_qid.get(qid)
                ap = float(average_precision(g, p, [MAP_THRESHOLD])[0]) \
                    if p or no_prediction == AS_MISS else None
                answer = json.dumps([list(w[:2]) for w in p]) if p else ""
                rows.append(ItemRow(name, qid, answer, ap, "AP@0.3",
                                    "missing" if line is None else _temporal_status(line)))
        return rows

    def spatial_item_rows(self, split: str | None = None) -> list[ItemRow]:
        """`eval impact-spatial --items`: per (run, scored frame) the F1 eval averages (as a
        fraction; a missing line: nothing predicted, source "missing")."""
        from components.impact.body import load_body
        from components.impact.pipeline import spatial_frame_rows
        if self.annotations is None:
            raise ValueError("spatial rows need the annotations")
        body = load_body() if self.spatial else None
        rows = []
        for name, lines in self.spatial.items():
            preds = {(k.rsplit("#", 1)[0], int(k.rsplit("#", 1)[1])): v for k, v in lines.items()}
            keys, frame_rows, given = spatial_frame_rows(self.annotations, preds, split=split, body=body)
            for (qid, frame), row, line in zip(keys, frame_rows, given):
                rows.append(ItemRow(name, f"{qid}#{frame}", ", ".join(line.get("regions") or []) if line else "",
                                    row["F1"] / 100.0, "F1", "missing" if line is None else _spatial_status(line)))
        return rows


def write_eval_items(args: Any, task: str, scored: Any, *, gt: Sequence[Mapping] | None = None,
                     annotations: ImpactAnnotations | None = None, no_prediction: str = LEAVE_OUT) -> None:
    """`eval impact-temporal|impact-spatial --items OUT [RUN ...]`: the scored run (`scored`:
    the merged temporal lines, or the spatial {(qid, frame): line}) and every RUN of that task."""
    from components.common.runs import extra_runs, run_name, write_item_rows
    others = extra_runs(IMPACT_READER, args.runs, args.items)
    if args.items is None:
        return
    name = display_name(run_name(args.pred, IMPACT_READER), task)
    lines = scored if task == "temporal" else {f"{q}#{f}": v for (q, f), v in scored.items()}
    same_task = {display_name(n, task): v for n, v in others.runs.items() if v["kind"] == task}
    files = {display_name(n, task): others.files[n] for n in others.runs}
    runs = with_scored(name, {"kind": task, "lines": lines}, same_task, files)
    for other, value in others.runs.items():
        if value["kind"] != task:
            print(f"note: {others.files[other]} holds {value['kind']} answers; left out of the "
                  f"{task} table.", file=sys.stderr)
    table = ImpactRuns(runs, annotations)
    rows = table.temporal_item_rows(gt or [], no_prediction) if task == "temporal" else \
        table.spatial_item_rows(getattr(args, "split", None))
    write_item_rows(args.items, rows)
