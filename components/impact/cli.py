"""Command line of the Impact tab: `eval impact-temporal`, `eval impact-spatial`, `run impact`.

Heavy imports stay inside the handlers so `python app.py --help` stays fast.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from components.impact.annotations import ImpactAnnotations, ImpactItem

TEMPORAL_KEYS = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
SPATIAL_KEYS = ("F1", "precision", "recall", "geodesic_cm")


def add_eval_parsers(eval_sub: argparse._SubParsersAction) -> None:
    p = eval_sub.add_parser("impact-temporal", help="HAPACT temporal metrics of QVHighlights-style "
                            "JSONL predictions (mAP@0.3, R1@0.3, G-mAP, @k_tgt, mR@k)")
    p.add_argument("--gt", required=True, type=Path, help="ground truth JSONL "
                   '({"qid", "relevant_windows": [[s, e], ...]} per line)')
    p.add_argument("--pred", required=True, type=Path, help="predictions JSONL "
                   '({"qid", "pred_relevant_windows": [[s, e, score], ...]} per line)')
    p.add_argument("--fps", type=float, default=24.0, help="frame rate for the moment-length "
                   "breakdown (default 24, HAPACT)")
    p.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    p.set_defaults(func=eval_temporal_command)

    s = eval_sub.add_parser("impact-spatial", help="HAPACT spatial metrics (F1, precision, recall, "
                            "geodesic cm, per-group F1) of per-frame region/vertex predictions")
    s.add_argument("--annotations", required=True, type=Path, help="impact annotations JSON (formats.md)")
    s.add_argument("--pred", required=True, type=Path, help='spatial predictions JSONL '
                   '({"qid", "frame", "regions": [...], "vertices": [...]} per line)')
    s.add_argument("--split", default=None, help="score only this split (e.g. test)")
    s.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    s.set_defaults(func=eval_spatial_command)


def add_run_parsers(run_sub: argparse._SubParsersAction) -> None:
    r = run_sub.add_parser("impact", help="temporal + spatial predictions of a backend for a split "
                           "(resumable; writes temporal_pred.jsonl, temporal_gt.jsonl, spatial_pred.jsonl)")
    r.add_argument("--annotations", required=True, type=Path, help="impact annotations JSON (formats.md)")
    r.add_argument("--backend", dest="impact_backend", default=None,
                   help="baseline | openai:<model> | hf:<id or dir> | replay:<trace.jsonl> "
                        "(default: the global --backend)")
    r.add_argument("--out", required=True, type=Path, help="output folder (rerun to resume)")
    r.add_argument("--split", default=None, help="only this split (e.g. test); default all items")
    r.add_argument("--tasks", default="temporal,spatial",
                   help="comma list of temporal, spatial (default both)")
    r.add_argument("--concurrency", type=int, default=1, help="parallel requests for API backends")
    r.add_argument("--max-frames", type=int, default=192,
                   help="frames sent per clip (at most 192, the paper's budget)")
    r.add_argument("--prompt-style", default="auto", choices=["auto", "open", "gemini", "gpt"],
                   help="Table 7 prompt variant (auto: from the model name)")
    r.add_argument("--max-retries", type=int, default=2,
                   help="re-asks after an unparsable answer (default 2)")
    r.add_argument("--base-url", default=None, help="OpenAI-compatible server (default $OPENAI_BASE_URL; "
                   "the key comes from $OPENAI_API_KEY)")
    r.add_argument("--record", type=Path, default=None, help="record every model call to this trace JSONL")
    r.add_argument("--no-progress", action="store_true", help="hide the progress bar")
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


# -- eval impact-temporal -------------------------------------------------------------------------

def evaluate_temporal_files(gt_path: Path, pred_path: Path, fps: float = 24.0) -> dict:
    from components.impact.annotations import load_qv_gt, load_qv_pred
    from components.impact.temporal_metrics import evaluate_temporal

    return evaluate_temporal(load_qv_gt(gt_path), load_qv_pred(pred_path), fps=fps)


def eval_temporal_command(args: argparse.Namespace) -> int:
    result = evaluate_temporal_files(args.gt, args.pred, args.fps)
    if args.json:
        print(json.dumps(result))
        return 0
    rows = [(k, result[k]) for k in TEMPORAL_KEYS] + [("num_queries", result["num_queries"])]
    for name, summary in {**result["by_length"], **result["by_count"]}.items():
        rows.append((f"mAP@0.3 {name} ({summary['num_queries']} q)", summary["mAP@0.3"]))
    rows.append(("queries without prediction (left out)", result["queries_without_prediction"]))
    print(format_table(rows))
    return 0


# -- eval impact-spatial --------------------------------------------------------------------------

def annotated_frames(item: "ImpactItem") -> list[int]:
    """Frames scored spatially: the annotated ones, else every frame inside the moments (A.6.3)."""
    if item.frames:
        return sorted(item.frames)
    return sorted({f for fs, fe in item.moments for f in range(fs, fe + 1)})


def evaluate_spatial(annotations: "ImpactAnnotations", predictions: dict[tuple[str, int], dict],
                     *, split: str | None = None, body=None) -> dict:
    """Per annotated frame: GT and prediction painted on the body, then the body engineer's metrics.
    A frame with no prediction line counts as nothing predicted (precision 1, recall 0, F1 0)."""
    from components.impact.body import load_body, vertex_mask_from_annotation
    from components.impact.spatial_metrics import label_metrics, spatial_metrics

    body = body or load_body()
    pred_masks, gt_masks, pred_labels, gt_labels = [], [], [], []
    missing = 0
    for item in annotations.split(split):
        for frame in annotated_frames(item):
            gt = item.frames.get(frame)
            if gt is None:
                continue
            pred = predictions.get((item.qid, frame))
            if pred is None:
                missing += 1
                pred = {"regions": [], "vertices": None}
            gt_masks.append(vertex_mask_from_annotation(body, gt.regions, gt.vertices))
            pred_masks.append(vertex_mask_from_annotation(body, pred.get("regions", []),
                                                          pred.get("vertices")))
            pred_labels.append(list(pred.get("regions", [])))
            gt_labels.append(list(gt.regions))
    if not gt_masks:
        from components.common.errors import DataFormatError

        raise DataFormatError(f"{annotations.path}: no annotated frame with regions to score "
                              "(add 'frames' with 'regions' to the items).")
    result = dict(spatial_metrics(pred_masks, gt_masks, body))
    labels = label_metrics(pred_labels, gt_labels)
    result["label_F1"] = labels["label_F1"]
    result["per_label_F1"] = labels["per_label_F1"]
    result["num_frames"] = len(gt_masks)
    result["frames_without_prediction"] = missing
    result["body"] = body.kind
    return result


def eval_spatial_command(args: argparse.Namespace) -> int:
    from components.impact.annotations import load_annotations, load_spatial_pred

    result = evaluate_spatial(load_annotations(args.annotations), load_spatial_pred(args.pred),
                              split=args.split)
    if args.json:
        print(json.dumps(result, default=float))
        return 0
    rows = [(k, v) for k, v in result.items() if not isinstance(v, (dict, list))]
    print(format_table(rows))
    return 0


# -- run impact --------------------------------------------------------------------------------------

def temporal_work(solver):
    def work(item: "ImpactItem") -> dict:
        from components.common.errors import UserError

        from backends.errors import BackendError

        try:
            pred = solver.localize(item)
        except UserError as exc:  # a bad clip is recorded and the run goes on
            return {"qid": item.qid, "pred_relevant_windows": [], "status": "error",
                    "error": str(exc), "method": solver.method}
        if pred.status == "error":  # not written: the next run asks again
            raise BackendError(f"{item.qid}: {pred.error}")
        return pred.to_record()
    return work


def spatial_work(region_solver, *, needs_image: bool):
    def work(unit: tuple["ImpactItem", int]) -> dict:
        item, frame = unit
        image = None
        if needs_image:
            from components.media import open_video

            source = open_video(item.video)
            try:
                image = source.frames_at_indices([frame - 1])[0].image
            finally:
                source.close()
        answer = region_solver.select(image, item.query, ref=f"{item.qid}#{frame}")
        if answer.error and answer.error.startswith("backend error"):
            from backends.errors import BackendError

            raise BackendError(f"{item.qid} frame {frame}: {answer.error}")  # retried on the next run
        record = {"key": f"{item.qid}#{frame}", "qid": item.qid, "frame": frame}
        record.update(answer.as_dict())
        return record
    return work


def run_impact(annotations_path: Path, backend_spec: str, out_dir: Path, *, split: str | None = None,
               tasks: Iterable[str] = ("temporal", "spatial"), concurrency: int = 1,
               max_frames: int = 192, prompt_style: str = "auto", max_retries: int = 2,
               base_url: str | None = None, record_to: Path | None = None,
               progress: bool = True) -> dict:
    """The `run impact` work, usable without argparse. Returns counts and the output paths."""
    from backends.config import ApiSettings
    from backends.registry import resolve
    from components.common.batch import run_resumable
    from components.common.errors import UserError
    from components.impact.annotations import load_annotations
    from components.impact.region_prompt import region_solver_for
    from components.impact.temporal_solvers import make_temporal_solver

    tasks = [t.strip() for t in tasks if t.strip()]
    unknown = [t for t in tasks if t not in ("temporal", "spatial")]
    if unknown:
        raise UserError(f"Unknown task(s) {unknown}; use --tasks temporal,spatial.")
    annotations = load_annotations(annotations_path)
    items = annotations.split(split)
    backend = resolve(backend_spec, api=ApiSettings(base_url=base_url), record_to=record_to)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    gt_path = out_dir / "temporal_gt.jsonl"
    with open(gt_path, "w", encoding="utf-8") as fh:  # derived from the annotations: rewritten each run
        for item in items:
            fh.write(json.dumps(item.gt_record()) + "\n")
    summary: dict[str, Any] = {"backend": backend.backend_id, "items": len(items),
                               "temporal_gt": str(gt_path)}
    if "temporal" in tasks:
        solver = make_temporal_solver(backend, style=prompt_style, max_frames=max_frames,
                                      max_retries=max_retries)
        pred_path = out_dir / "temporal_pred.jsonl"
        summary["temporal"] = run_resumable(items, key=lambda it: it.qid, work=temporal_work(solver),
                                            out_path=pred_path, concurrency=concurrency,
                                            desc="impact temporal", progress=progress)
        summary["temporal_pred"] = str(pred_path)
        summary["temporal_method"] = solver.method
    if "spatial" in tasks:
        region_solver = region_solver_for(backend)
        units = [(item, frame) for item in items for frame in annotated_frames(item)]
        spatial_path = out_dir / "spatial_pred.jsonl"
        summary["spatial"] = run_resumable(
            units, key=lambda u: f"{u[0].qid}#{u[1]}",
            work=spatial_work(region_solver, needs_image=not backend.is_baseline),
            out_path=spatial_path, concurrency=concurrency, desc="impact spatial",
            key_field="key", progress=progress)
        summary["spatial_pred"] = str(spatial_path)
        summary["spatial_method"] = region_solver.name
    return summary


def run_impact_command(args: argparse.Namespace) -> int:
    spec = args.impact_backend or getattr(args, "backend", None) or "baseline"
    summary = run_impact(args.annotations, spec, args.out, split=args.split,
                         tasks=args.tasks.split(","), concurrency=args.concurrency,
                         max_frames=args.max_frames, prompt_style=args.prompt_style,
                         max_retries=args.max_retries, base_url=args.base_url,
                         record_to=args.record, progress=not args.no_progress)
    print(json.dumps(summary, indent=1))
    if summary.get("temporal_pred") and Path(summary["temporal_pred"]).exists():
        result = evaluate_temporal_files(Path(summary["temporal_gt"]), Path(summary["temporal_pred"]))
        print(format_table([(k, result[k]) for k in TEMPORAL_KEYS]))
    failed = sum(summary.get(task, {}).get("failed", 0) for task in ("temporal", "spatial"))
    if failed:
        import sys

        print(f"{failed} item(s) failed and were not saved; rerun the same command to retry them.",
              file=sys.stderr)
        return 1
    return 0
