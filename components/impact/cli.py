"""Command line of the Impact tab: `eval impact-temporal`, `eval impact-spatial`, `run impact`,
`compare impact-temporal`, `compare impact-spatial`.

Argument wiring only; the work is in pipeline.py, solvers.py and the metric modules. `--shard i/N`
splits the clips across machines (by qid; a clip's temporal and spatial answers stay together); the
evals take several files or folders (every shard's output folder) and merge them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from backends.base import VLMBackend
from backends.errors import BackendError
from components.common import compare, stats
from components.common.batch import run_resumable
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, backend_from_args, \
    stop_after_failures
from components.base.errors import UserError
from components.base.io import atomic_write_jsonl, read_jsonl
from components.common.shards import Shard, describe_selection, input_files, iter_pairs, merged_files
from components.common.tables import format_table, format_value
from components.common.stamps import backend_stamp, data_stamp, settings_stamp
from components.datasource import as_source, fetch_all
from components.impact.eval_inputs import spatial_input_report, temporal_input_report
from components.impact.data import ImpactAnnotations, ImpactItem, load_annotations, load_qv_gt, load_qv_pred, \
    load_spatial_pred
from components.impact.pipeline import ClipFrames, annotated_frames, evaluate_spatial, scored_frames, \
    select_regions, spatial_frame_rows
from components.impact.solvers import RegionSolver
from components.impact.runs import write_eval_items
from components.common.runs import add_items_option
from components.impact.solvers import solvers_for
from components.impact.metrics import spatial as spatial_metrics
from components.impact.metrics.temporal import AS_MISS, LEAVE_OUT, disagreements as temporal_disagreements, \
    evaluate_temporal, no_prediction_note, scored_pairs, unit_scores as temporal_unit_scores
from components.impact.body import load_body
from components.impact.solvers import TemporalSolver
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
    p.add_argument("--partial", action="store_true",
                   help="score a file that lacks some ground-truth queries (a run not finished, a "
                        "shard): those queries are left out, as QV-M2's match_number=False does; "
                        "unset, such a file is refused naming the queries, as QV-M2 refuses it")
    p.add_argument("--no-prediction-as-miss", action="store_true",
                   help="the stricter reading: a query with no prediction (an empty window list, "
                        "an unparsed or failed answer, with --partial a missing line) is scored as "
                        "a miss (AP 0, top-1 miss, in mR@k) instead of left out as QV-M2 leaves it; "
                        "the output says so")
    p.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    add_items_option(p, "query")
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
    add_items_option(s, "frame")
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


def add_compare_parsers(compare_sub: argparse._SubParsersAction) -> None:
    t = compare_sub.add_parser(
        "impact-temporal", formatter_class=HelpFormatter,
        help="two HAPACT temporal runs on the same ground truth: paired differences, disagreeing queries",
        description="Paired difference A - B of every temporal score (bootstrap over queries) with "
                    "its interval and p-value, and the queries whose AP@0.3 or top-1 hit differs.")
    t.add_argument("--gt", required=True, type=Path, nargs="+", help="ground truth JSONL of both runs "
                   "(several files or folders are merged, as eval)")
    compare.add_compare_arguments(t)
    t.set_defaults(func=compare_temporal_command)
    s = compare_sub.add_parser(
        "impact-spatial", formatter_class=HelpFormatter,
        help="two HAPACT spatial runs on the same annotations: paired differences, disagreeing frames",
        description="Paired difference A - B of every spatial score (bootstrap over queries, a "
                    "query's frames together) with its interval and p-value, and the frames whose "
                    "predicted regions differ.")
    s.add_argument("--annotations", required=True, type=Path, help="impact annotations JSON of both runs")
    s.add_argument("--split", default=None, help="score only this split (e.g. test); unset: all items")
    compare.add_compare_arguments(s)
    s.set_defaults(func=compare_spatial_command)


def compare_temporal_command(args: argparse.Namespace) -> int:
    gt = load_temporal_files(args.gt, gt=True)
    runs = [load_temporal_files(Path(args.a), gt=False), load_temporal_files(Path(args.b), gt=False)]
    qids = {g["qid"] for g in gt}
    for path, pred in zip((args.a, args.b), runs):
        compare.refuse_unknown(path, (p["qid"] for p in pred), qids, what="prediction(s) for qids",
                               against="the ground truth")
    # paired: both runs over the same queries, so a query with no prediction in a run is a miss
    # there (eval leaves it out, as QV-M2 does: its two scores can differ from these)
    pairs = [scored_pairs(gt, pred, no_prediction=AS_MISS) for pred in runs]
    missing = [len(qids - {p["qid"] for p in pred}) for pred in runs]
    empty = [sum(1 for _, _, p in run if not p) for run in pairs]
    notes = [f"{n} query(ies) with no prediction in {name} ({m} without a line): scored as misses so "
             "that both runs cover the same queries (`eval impact-temporal` leaves them out, as "
             "QV-M2 does)" for name, n, m in zip((args.a, args.b), empty, missing) if n]
    result = compare.Comparison(
        "impact-temporal", str(args.a), str(args.b), f"{len(pairs[0])} queries with ground-truth windows",
        stats.differences(temporal_unit_scores(pairs[0]), temporal_unit_scores(pairs[1])),
        temporal_disagreements(gt, *runs), len(pairs[0]), "queries", notes=notes)
    return compare.emit(result, as_json=args.json, shown=args.show)


def compare_spatial_command(args: argparse.Namespace) -> int:
    annotations = load_annotations(args.annotations)
    runs = [load_spatial_files(Path(args.a)), load_spatial_files(Path(args.b))]
    known = {(item.qid, frame) for item, frame in scored_frames(annotations, args.split)}
    for path, pred in zip((args.a, args.b), runs):
        compare.refuse_unknown(path, (f"{q}#{f}" for q, f in pred), {f"{q}#{f}" for q, f in known},
                               what="prediction(s) for qid#frame", against=f"{args.annotations}'s scored frames")
    body = load_body()
    (keys, rows_a, _), (_, rows_b, _) = (spatial_frame_rows(annotations, pred, split=args.split, body=body)
                                         for pred in runs)
    qids = [qid for qid, _ in keys]
    differing = [{"qid": qid, "frame": frame, "regions_a": ra["regions"], "regions_b": rb["regions"],
                  "truth": ra["truth"], "F1_a": round(ra["F1"], 2), "F1_b": round(rb["F1"], 2)}
                 for (qid, frame), ra, rb in zip(keys, rows_a, rows_b)
                 if sorted(ra["regions"]) != sorted(rb["regions"]) or abs(ra["F1"] - rb["F1"]) > 1e-9]
    differing.sort(key=lambda r: -abs(r["F1_a"] - r["F1_b"]))
    result = compare.Comparison(
        "impact-spatial", str(args.a), str(args.b),
        f"{args.annotations}{f' split {args.split}' if args.split else ''} ({len(set(qids))} queries, "
        f"{len(keys)} frames; body {body.kind})",
        stats.differences(spatial_metrics.unit_scores(rows_a, qids), spatial_metrics.unit_scores(rows_b, qids)),
        differing, len(keys), "frames")
    return compare.emit(result, as_json=args.json, shown=args.show)


# -- eval impact-temporal / impact-spatial ----------------------------------------------------------

def _as_list(paths: Path | Iterable[Path]) -> list[Path]:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


def load_temporal_files(paths: Path | Iterable[Path], *, gt: bool, lines: dict | None = None) -> list[dict]:
    """QVHighlights lines of every file (a folder: its temporal_gt / temporal_pred.jsonl files),
    ordered by qid so the scores do not depend on file order (float sums in one order). `lines`
    gets qid -> "<file> line <n>"."""
    name = "temporal_gt.jsonl" if gt else "temporal_pred.jsonl"
    what = "temporal ground truth" if gt else "temporal predictions"
    files = input_files(_as_list(paths), name, what, "--gt" if gt else "--pred")
    load = load_qv_gt if gt else load_qv_pred
    merged = merged_files(files, lambda p: iter_pairs(load(p, lines), lambda r: r["qid"]),
                          what="ground truth for qid" if gt else "prediction for qid")
    return [merged[qid] for qid in sorted(merged)]


def load_spatial_files(paths: Path | Iterable[Path], lines: dict | None = None) -> dict[tuple[str, int], dict]:
    files = input_files(_as_list(paths), "spatial_pred.jsonl", "spatial predictions", "--pred")
    return merged_files(files, lambda p: load_spatial_pred(p, lines).items(), what="prediction for",
                        name=lambda k: f"qid '{k[0]}' frame {k[1]}")


def _names(paths: Path | Iterable[Path]) -> str:
    return ", ".join(str(p) for p in _as_list(paths))


def evaluate_temporal_files(gt_path: Path | Iterable[Path], pred_path: Path | Iterable[Path],
                            fps: float = 24.0, *, partial: bool = False,
                            no_prediction: str = LEAVE_OUT) -> tuple[dict, list[dict], list[dict]]:
    """The temporal scores and what the inputs held beyond them (eval_inputs.py: lines ignored,
    windows before or past the clip, `notes`, the last one on the queries with no prediction),
    with the ground truth and predictions read. Refused: a prediction file none of whose qids is in
    the ground truth, and unless `partial` one that lacks a ground-truth query (as QV-M2)."""
    where: dict[str, str] = {}
    gt_where: dict[str, str] = {}
    gt = load_temporal_files(gt_path, gt=True, lines=gt_where)
    pred = load_temporal_files(pred_path, gt=False, lines=where)
    report = temporal_input_report(gt, pred, where, _names(pred_path), gt_where=gt_where, partial=partial)
    result = {**evaluate_temporal(gt, pred, fps=fps, no_prediction=no_prediction), **report}
    note = no_prediction_note(result)
    if note:
        result["notes"] = [*result["notes"], note]
    return result, gt, pred


def with_interval(key: str, result: dict) -> str:
    """'51.85  [12.00, 88.00] over 3 queries' (the value alone when it has no interval)."""
    ci = (result.get("intervals") or {}).get(key)
    value = format_value(result.get(key))
    if not ci or ci.get("low") is None:
        return value
    return f"{value}  [{ci['low']:.2f}, {ci['high']:.2f}] over {ci['units']} {ci['unit']}"


def interval_note(result: dict) -> str | None:
    cis = [ci for ci in (result.get("intervals") or {}).values() if ci.get("low") is not None]
    if not cis:
        return None
    return (f"[..]: {round(100 * cis[0]['level'])} % interval, percentile bootstrap over "
            f"{cis[0]['unit']}, {cis[0]['resamples']} resamples, seed {cis[0]['seed']} (the same "
            "files give the same interval)")


def _notes(result: dict) -> None:
    for note in result.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)


def _warn_temporal(result: dict) -> None:
    _notes(result)
    if result.get("gt_without_windows"):
        print(f"note: {result['gt_without_windows']} ground-truth line(s) have no window "
              "(relevant_windows []): nothing to find, left out of every average.", file=sys.stderr)


def eval_temporal_command(args: argparse.Namespace) -> int:
    rule = AS_MISS if args.no_prediction_as_miss else LEAVE_OUT
    result, gt, pred = evaluate_temporal_files(args.gt, args.pred, args.fps, partial=args.partial,
                                               no_prediction=rule)
    write_eval_items(args, "temporal", pred, gt=gt, no_prediction=rule)
    _warn_temporal(result)
    if args.json:
        print(json.dumps(result))
        return 0
    rows = [(k, with_interval(k, result)) for k in TEMPORAL_KEYS] + [("num_queries", result["num_queries"])]
    for name, summary in {**result["by_length"], **result["by_count"]}.items():
        rows.append((f"mAP@0.3 {name} ({summary['num_queries']} q)", summary["mAP@0.3"]))
    if rule == AS_MISS:
        rows.append(("queries with no prediction (scored as misses: --no-prediction-as-miss)",
                     result["scored_as_miss"]))
    else:
        rows.append(("queries with no prediction (left out, as QV-M2)", result["left_out"]))
    rows.append(("  of them without a prediction line (--partial)", result["queries_without_prediction"]))
    rows.append(("ground-truth lines without windows (left out)", result["gt_without_windows"]))
    rows.append(("invalid answers (unparsed/error/fallback: no prediction)", result["invalid"]))
    rows.append(("prediction lines for unknown qids (ignored)", result["ignored_unknown_items"]))
    rows.append(("windows starting before 0 s (scored as written)", result["windows_before_clip"]))
    rows.append(("windows ending after the clip (scored as written)", result["windows_beyond_clip"]))
    rows.append(("zero-length windows (scored as written)", result["zero_length_windows"]))
    rows.append(("ground-truth windows ending after the clip (scored as written)",
                 result["gt_windows_beyond_clip"]))
    rows += [(f"  {k}", result[k]) for k in ("unparsed", "errors", "fallbacks")]
    rows += [(f"mR@{k} queries (>= {k} GT and predicted windows)", result.get(f"mR@{k}_queries"))
             for k in (1, 2, 3)]
    rows.append(("@3+tgt queries (>= 3 GT windows)", result.get("@3+tgt_queries")))
    print(format_table(rows))
    note = interval_note(result)
    if note:
        print(note)
    return 0


def evaluate_spatial_files(annotations_path: Path | str, pred_path: Path | Iterable[Path],
                           split: str | None = None) -> tuple[dict, ImpactAnnotations, dict]:
    """The spatial scores and what the prediction lines held beyond them (eval_inputs.py), with
    the annotations and predictions read."""
    annotations = load_annotations(annotations_path)
    where: dict[tuple[str, int], str] = {}
    pred = load_spatial_files(pred_path, where)
    scored = [(item.qid, frame) for item, frame in scored_frames(annotations, split)]
    report = spatial_input_report(annotations, pred, where, _names(pred_path), split, scored)
    return {**evaluate_spatial(annotations, pred, split=split), **report}, annotations, pred


def eval_spatial_command(args: argparse.Namespace) -> int:
    result, annotations, pred = evaluate_spatial_files(args.annotations, args.pred, split=args.split)
    write_eval_items(args, "spatial", pred, annotations=annotations)
    _notes(result)
    if args.json:
        print(json.dumps(result, default=float))
        return 0
    rows = [(k, with_interval(k, result)) for k, v in result.items() if not isinstance(v, (dict, list))]
    print(format_table(rows))
    note = interval_note(result)
    if note:
        print(note)
    return 0


# -- run impact --------------------------------------------------------------------------------------

def temporal_work(solver: TemporalSolver):
    def work(item: ImpactItem) -> dict:
        # a clip that cannot be read (UserError) or a failed call: not written, the item counts as
        # failed (named on stderr, exit 1) and the next run asks again; eval scores it as missing
        pred = solver.localize(item)
        if pred.status == "error":
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
            raise BackendError(f"{item.qid}#{frame}: {answer.error}")
        record = {"key": f"{item.qid}#{frame}", "qid": item.qid, "frame": frame}
        record.update(answer.as_dict())
        return record
    return work


def run_impact(annotations_path: Path, backend: VLMBackend, out_dir: Path, *,
               split: str | None = None, tasks: Iterable[str] = TASKS, concurrency: int = 1,
               max_frames: int = 192, prompt_style: str = "auto", max_retries: int = 2,
               progress: bool = True, shard: Shard | None = None,
               stop_after_failures: int | None = None, adopt: bool = False) -> dict:
    """The `run impact` work, usable without argparse. Returns counts and the output paths.
    Every line holds the backend (and the temporal ones the prompt style and the frame budget);
    a resume that differs from the lines already there is refused (components/common/batch.py)."""
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
    solvers = solvers_for(backend, SessionSettings(backend=backend.backend_id, max_frames=max_frames),
                          style=prompt_style, max_retries=max_retries)
    out_dir = Path(out_dir)
    gt_path = atomic_write_jsonl(out_dir / "temporal_gt.jsonl",  # derived: rewritten each run
                                 [item.gt_record() for item in items])
    # what the answers depend on (docs/formats.md "Run stamps"): the data (its revision, or the
    # annotation file and the clips' names), the backend and what shapes its requests, the app
    # version; the temporal lines also the prompt style, the frame budget and the re-asks
    stamp = {**data_stamp(annotations.path, [annotations.path],
                          [Path(item.video).name for item in annotations.items]),
             **backend_stamp(backend), **settings_stamp()}
    style = getattr(solvers.temporal, "style", None)
    temporal_stamp = {**stamp, **({"prompt_style": style, "max_frames": str(max_frames),
                                   "max_retries": str(max_retries)} if style else {})}
    summary: dict[str, Any] = {"backend": backend.backend_id, "items": len(items),
                               "shard": str(shard) if shard else None,
                               "data_revision": stamp["data_revision"],
                               "temporal_gt": str(gt_path)}
    if "temporal" in tasks:
        pred_path = out_dir / "temporal_pred.jsonl"
        summary["temporal"] = run_resumable(items, key=lambda it: it.qid,
                                            work=temporal_work(solvers.temporal), out_path=pred_path,
                                            concurrency=concurrency, desc="impact temporal",
                                            progress=progress, stamp=temporal_stamp,
                                            stop_after_failures=stop_after_failures, adopt=adopt)
        summary["temporal_pred"] = str(pred_path)
        summary["temporal_method"] = solvers.temporal.method
        summary["temporal_answers"] = _status_counts(pred_path, "temporal")
    if "spatial" in tasks and (summary.get("temporal") or {}).get("gave_up"):
        print("spatial: not started (the temporal task stopped on failures in a row).", file=sys.stderr)
    elif "spatial" in tasks:
        units = [(item, frame) for item in items for frame in annotated_frames(item)]
        spatial_path = out_dir / "spatial_pred.jsonl"
        done = {str(r.get("key")) for r in read_jsonl(spatial_path)}
        pending = [(item, frame) for item, frame in units if f"{item.qid}#{frame}" not in done]
        with ClipFrames(pending if solvers.regions.needs_image else []) as frames:
            summary["spatial"] = run_resumable(
                units, key=lambda u: f"{u[0].qid}#{u[1]}",
                work=spatial_work(solvers.regions, frames),
                out_path=spatial_path, concurrency=concurrency, desc="impact spatial",
                key_field="key", progress=progress, stamp=stamp,
                stop_after_failures=stop_after_failures, adopt=adopt)
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
            scored = ("no prediction: left out of the scores, as QV-M2 leaves a query with no window"
                      if task == "temporal" else "scored as nothing predicted")
            print(f"{task}: {sum(bad.values())} answer(s) were not parsed "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(bad.items()))}); they are kept raw, "
                  f"never guessed ({scored}).", file=sys.stderr)


def run_impact_command(args: argparse.Namespace) -> int:
    summary = run_impact(args.annotations, backend_from_args(args), args.out, split=args.split,
                         tasks=args.tasks.split(","), concurrency=args.concurrency,
                         max_frames=args.max_frames, prompt_style=args.prompt_style,
                         max_retries=args.max_retries, progress=not args.no_progress,
                         shard=args.shard, stop_after_failures=stop_after_failures(args),
                         adopt=args.adopt)
    print(json.dumps(summary, indent=1))
    _report_invalid(summary)
    if summary.get("temporal_pred") and Path(summary["temporal_pred"]).exists():
        # partial: items that failed are not written (the run says so above); a query with no
        # prediction is left out as QV-M2 leaves it, and the note says how many
        result = evaluate_temporal_files(Path(summary["temporal_gt"]), Path(summary["temporal_pred"]),
                                         partial=True)[0]
        print(format_table([(k, result[k]) for k in TEMPORAL_KEYS]
                           + [("queries with no prediction (left out, as QV-M2)", result["left_out"]),
                              ("invalid answers (unparsed/error/fallback: no prediction)", result["invalid"])]))
        _notes(result)
    failed = {task: summary.get(task, {}).get("failed", 0) for task in TASKS}
    if any(failed.values()):
        detail = ", ".join(f"{n} {task}" for task, n in failed.items() if n)
        print(f"{sum(failed.values())} item(s) failed ({detail}; each reason is named above) and "
              "were not saved; rerun the same command to retry them.", file=sys.stderr)
        return 1
    return 0
