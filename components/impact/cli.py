"""Command line of the Impact tab: `eval impact-temporal`, `eval impact-spatial`, `run impact`.

Argument wiring only; the work is in pipeline.py, solvers.py and the metric modules. `--shard i/N`
splits the clips across machines (by qid; a clip's temporal and spatial answers stay together); the
evals take several files or folders (every shard's output folder) and merge them.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from backends.base import VLMBackend
from backends.errors import BackendError
from components.common.batch import run_resumable
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, backend_from_args
from components.common.errors import UserError
from components.common.io import atomic_write_jsonl, read_jsonl
from components.common.shards import Shard, describe_selection, input_files, iter_pairs, merged_files
from components.datasource import as_source, data_revision, fetch_all
from components.impact.data import ImpactItem, load_annotations, load_qv_gt, load_qv_pred, \
    load_spatial_pred
from components.impact.pipeline import ClipFrames, annotated_frames, evaluate_spatial, select_regions
from components.impact.prompts.regions import RegionSolver
from components.impact.solvers import solvers_for
from components.impact.metrics.temporal import evaluate_temporal
from components.impact.temporal_solvers import TemporalSolver
from components.settings.session import SessionSettings

TEMPORAL_KEYS = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
SPATIAL_KEYS = ("F1", "precision", "recall", "geodesic_cm")
TASKS = ("temporal", "spatial")
ANNOTATIONS_HELP = ("impact annotations JSON (docs/formats.md), or one in a dataset repository: "
                    "hf://datasets/<owner>/<name>[@revision]/<path>/annotations.json")
PROMPT_STYLES = ["auto", "open", "gemini", "gpt", "vtimellm", "trace", "groundedvideollm", "unitime",
                 "timelens"]


def add_eval_parsers(eval_sub: argparse._SubParsersAction) -> None:
    p = eval_sub.add_parser("impact-temporal", formatter_class=HelpFormatter,
                            help="HAPACT temporal metrics of QVHighlights-style JSONL predictions "
                                 "(mAP@0.3, R1@0.3, G-mAP, @k_tgt, mR@k)")
    p.add_argument("--gt", required=True, type=Path, nargs="+", help="ground truth JSONL "
                   '({"qid", "relevant_windows": [[s, e], ...]} per line); several files or '
                   "folders (every temporal_gt.jsonl under them) are merged")
    p.add_argument("--pred", required=True, type=Path, nargs="+", help="predictions JSONL "
                   '({"qid", "pred_relevant_windows": [[s, e, score], ...]} per line); several '
                   "files or folders (every temporal_pred.jsonl under them, e.g. the --out folders "
                   "of `run impact --shard i/N`) are merged")
    p.add_argument("--fps", type=float, default=24.0,
                   help="frame rate for the moment-length breakdown (HAPACT: 24)")
    p.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    p.set_defaults(func=eval_temporal_command)

    s = eval_sub.add_parser("impact-spatial", formatter_class=HelpFormatter,
                            help="HAPACT spatial metrics (F1, precision, recall, geodesic cm, "
                                 "per-group F1) of per-frame region/vertex predictions")
    s.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    s.add_argument("--pred", required=True, type=Path, nargs="+", help='spatial predictions JSONL '
                   '({"qid", "frame", "regions": [...], "vertices": [...]} per line); several '
                   "files or folders (every spatial_pred.jsonl under them) are merged")
    s.add_argument("--split", default=None, help="score only this split (e.g. test); unset: all items")
    s.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    s.set_defaults(func=eval_spatial_command)


def add_run_parsers(run_sub: argparse._SubParsersAction) -> None:
    r = run_sub.add_parser("impact", formatter_class=HelpFormatter,
                           help="temporal + spatial predictions of a backend for a split (resumable; "
                                "writes temporal_pred.jsonl, temporal_gt.jsonl, spatial_pred.jsonl)")
    r.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    r.add_argument("--out", required=True, type=Path, help="output folder (rerun to resume)")
    r.add_argument("--split", default=None, help="only this split (e.g. test); unset: all items")
    r.add_argument("--tasks", default="temporal,spatial", help="comma list of temporal, spatial")
    r.add_argument("--max-frames", type=int, default=192,
                   help="frames sent per clip (at most the prompt style's count from the paper: "
                        "192, VTimeLLM 100, TRACE 128, Grounded-Video-LLM 96)")
    r.add_argument("--prompt-style", default="auto", choices=PROMPT_STYLES,
                   help="Table 7 prompt variant (auto: from the model name; vtimellm, trace, "
                        "groundedvideollm, unitime, timelens: those rows of Table 7, with the "
                        "paper's frame counts 100/128/96/192/192)")
    r.add_argument("--max-retries", type=int, default=2, help="re-asks after an unparsable answer")
    add_backend_options(r, items="clips")
    add_shard_option(r, by="clip qid")
    r.set_defaults(func=run_impact_command)


# -- formatting ----------------------------------------------------------------------------------

def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.2f}"
    return str(value)


def format_table(rows: Iterable[tuple[str, Any]]) -> str:
    rows = list(rows)
    width = max(len(k) for k, _ in rows) if rows else 0
    return "\n".join(f"{k.ljust(width)}  {_fmt(v)}" for k, v in rows)


# -- eval impact-temporal / impact-spatial ----------------------------------------------------------

def _as_list(paths: Path | Iterable[Path]) -> list[Path]:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


def load_temporal_files(paths: Path | Iterable[Path], *, gt: bool) -> list[dict]:
    """QVHighlights lines of every file (a folder: its temporal_gt / temporal_pred.jsonl files),
    ordered by qid so the scores do not depend on file order (float sums in one order)."""
    name = "temporal_gt.jsonl" if gt else "temporal_pred.jsonl"
    what = "temporal ground truth" if gt else "temporal predictions"
    files = input_files(_as_list(paths), name, what, "--gt" if gt else "--pred")
    load = load_qv_gt if gt else load_qv_pred
    merged = merged_files(files, lambda p: iter_pairs(load(p), lambda r: r["qid"]),
                          what="ground truth for qid" if gt else "prediction for qid")
    return [merged[qid] for qid in sorted(merged)]


def load_spatial_files(paths: Path | Iterable[Path]) -> dict[tuple[str, int], dict]:
    files = input_files(_as_list(paths), "spatial_pred.jsonl", "spatial predictions", "--pred")
    return merged_files(files, lambda p: load_spatial_pred(p).items(), what="prediction for",
                        name=lambda k: f"qid '{k[0]}' frame {k[1]}")


def evaluate_temporal_files(gt_path: Path | Iterable[Path], pred_path: Path | Iterable[Path],
                            fps: float = 24.0) -> dict:
    return evaluate_temporal(load_temporal_files(gt_path, gt=True),
                             load_temporal_files(pred_path, gt=False), fps=fps)


def eval_temporal_command(args: argparse.Namespace) -> int:
    result = evaluate_temporal_files(args.gt, args.pred, args.fps)
    if args.json:
        print(json.dumps(result))
        return 0
    rows = [(k, result[k]) for k in TEMPORAL_KEYS] + [("num_queries", result["num_queries"])]
    for name, summary in {**result["by_length"], **result["by_count"]}.items():
        rows.append((f"mAP@0.3 {name} ({summary['num_queries']} q)", summary["mAP@0.3"]))
    rows.append(("queries without prediction (left out)", result["queries_without_prediction"]))
    rows.append(("invalid answers (unparsed/error/fallback, scored as empty)", result["invalid"]))
    rows += [(f"  {k}", result[k]) for k in ("unparsed", "errors", "fallbacks")]
    rows += [(f"mR@{k} queries (>= {k} GT and predicted windows)", result.get(f"mR@{k}_queries"))
             for k in (1, 2, 3)]
    print(format_table(rows))
    return 0


def eval_spatial_command(args: argparse.Namespace) -> int:
    result = evaluate_spatial(load_annotations(args.annotations), load_spatial_files(args.pred),
                              split=args.split)
    if args.json:
        print(json.dumps(result, default=float))
        return 0
    rows = [(k, v) for k, v in result.items() if not isinstance(v, (dict, list))]
    print(format_table(rows))
    return 0


# -- run impact --------------------------------------------------------------------------------------

def temporal_work(solver: TemporalSolver):
    def work(item: ImpactItem) -> dict:
        try:
            pred = solver.localize(item)
        except UserError as exc:  # a bad clip is recorded and the run goes on
            return {"qid": item.qid, "pred_relevant_windows": [], "status": "error",
                    "error": str(exc), "method": solver.method}
        if pred.status == "error":  # not written: the next run asks again
            raise BackendError(f"{item.qid}: {pred.error}")
        return pred.to_record()
    return work


def spatial_work(region_solver: RegionSolver, frames: ClipFrames | None = None):
    """One (clip, frame) unit; `frames` decodes each clip's frames once for all its units."""
    def work(unit: tuple[ImpactItem, int]) -> dict:
        item, frame = unit
        images = None
        if frames is not None and region_solver.needs_image:
            images = {frame: frames.image(item, frame)}
        answer = select_regions(region_solver, item, [frame], images=images)[frame]
        if answer.backend_failed:  # not written: retried on the next run
            raise BackendError(f"{item.qid} frame {frame}: {answer.error}")
        record = {"key": f"{item.qid}#{frame}", "qid": item.qid, "frame": frame}
        record.update(answer.as_dict())
        return record
    return work


def run_impact(annotations_path: Path, backend: VLMBackend, out_dir: Path, *,
               split: str | None = None, tasks: Iterable[str] = TASKS, concurrency: int = 1,
               max_frames: int = 192, prompt_style: str = "auto", max_retries: int = 2,
               progress: bool = True, shard: Shard | None = None) -> dict:
    """The `run impact` work, usable without argparse. Returns counts and the output paths."""
    tasks = [t.strip() for t in tasks if t.strip()]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise UserError(f"Unknown task(s) {unknown}; use --tasks temporal,spatial.")
    annotations = load_annotations(annotations_path)
    items = annotations.split(split)
    if shard is not None:
        total = len(items)
        items = shard.select(items, lambda it: it.qid)
        print(describe_selection(shard, len(items), total, "clips"), file=sys.stderr)
    fetch_all([item.video for item in items], progress=progress, desc="fetching clips")
    stamp = {"data_revision": data_revision(annotations.path)}
    solvers = solvers_for(backend, SessionSettings(backend=backend.backend_id, max_frames=max_frames),
                          style=prompt_style, max_retries=max_retries)
    out_dir = Path(out_dir)
    gt_path = atomic_write_jsonl(out_dir / "temporal_gt.jsonl",  # derived: rewritten each run
                                 [item.gt_record() for item in items])
    summary: dict[str, Any] = {"backend": backend.backend_id, "items": len(items),
                               "shard": str(shard) if shard else None,
                               "data_revision": stamp["data_revision"],
                               "temporal_gt": str(gt_path)}
    if "temporal" in tasks:
        pred_path = out_dir / "temporal_pred.jsonl"
        summary["temporal"] = run_resumable(items, key=lambda it: it.qid,
                                            work=temporal_work(solvers.temporal), out_path=pred_path,
                                            concurrency=concurrency, desc="impact temporal",
                                            progress=progress, stamp=stamp)
        summary["temporal_pred"] = str(pred_path)
        summary["temporal_method"] = solvers.temporal.method
        summary["temporal_answers"] = _status_counts(pred_path, "temporal")
    if "spatial" in tasks:
        units = [(item, frame) for item in items for frame in annotated_frames(item)]
        spatial_path = out_dir / "spatial_pred.jsonl"
        done = {str(r.get("key")) for r in read_jsonl(spatial_path)}
        pending = [(item, frame) for item, frame in units if f"{item.qid}#{frame}" not in done]
        with ClipFrames(pending if solvers.regions.needs_image else []) as frames:
            summary["spatial"] = run_resumable(
                units, key=lambda u: f"{u[0].qid}#{u[1]}",
                work=spatial_work(solvers.regions, frames),
                out_path=spatial_path, concurrency=concurrency, desc="impact spatial",
                key_field="key", progress=progress, stamp=stamp)
        summary["spatial_pred"] = str(spatial_path)
        summary["spatial_method"] = solvers.regions.name
        summary["spatial_answers"] = _status_counts(spatial_path, "spatial")
    return summary


def _status_counts(path: Path, task: str) -> dict[str, int]:
    """How the answers written so far were obtained: parsed ("ok"), "none", "unparsed", "error"."""
    counts: dict[str, int] = {}
    if not path.exists():
        return counts
    for record in read_jsonl(path):
        if task == "temporal":
            status = str(record.get("status") or "ok")
        elif record.get("error"):
            status = "unparsed" if str(record["error"]).startswith("unparsed") else "error"
        else:
            status = "ok" if record.get("regions") else "none"
        counts[status] = counts.get(status, 0) + 1
    return counts


def _report_invalid(summary: dict) -> None:
    for task in TASKS:
        counts = summary.get(f"{task}_answers") or {}
        bad = {k: v for k, v in counts.items() if k not in ("ok", "none")}
        if bad:
            print(f"{task}: {sum(bad.values())} answer(s) were not parsed "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(bad.items()))}); they are kept raw and "
                  "scored as empty predictions.", file=sys.stderr)


def run_impact_command(args: argparse.Namespace) -> int:
    summary = run_impact(args.annotations, backend_from_args(args), args.out, split=args.split,
                         tasks=args.tasks.split(","), concurrency=args.concurrency,
                         max_frames=args.max_frames, prompt_style=args.prompt_style,
                         max_retries=args.max_retries, progress=not args.no_progress,
                         shard=args.shard)
    print(json.dumps(summary, indent=1))
    _report_invalid(summary)
    if summary.get("temporal_pred") and Path(summary["temporal_pred"]).exists():
        result = evaluate_temporal_files(Path(summary["temporal_gt"]), Path(summary["temporal_pred"]))
        print(format_table([(k, result[k]) for k in TEMPORAL_KEYS]
                           + [("invalid answers (scored as empty)", result["invalid"])]))
    failed = sum(summary.get(task, {}).get("failed", 0) for task in TASKS)
    if failed:
        print(f"{failed} item(s) failed and were not saved; rerun the same command to retry them.",
              file=sys.stderr)
        return 1
    return 0
