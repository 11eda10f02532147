"""One clip end to end, shared by the Impact tab and the command line: which frames are scored, their
images, the region answers for them, and the spatial scores of a set; the batch over a split
(`run impact`: resumable, sharded) and the run files read and scored (`eval`, `compare`)."""
from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable, Mapping

from backends.base import EncodedImage, VLMBackend
from backends.errors import BackendError, GenerationStopped
from components.base.errors import DataFormatError, UserError
from components.base.io import atomic_write_jsonl, read_jsonl
from components.common import compare, stats
from components.common.batch import run_resumable
from components.common.sent_frames import sent_frames
from components.common.shards import Shard, describe_selection, input_files, iter_pairs, merged_files
from components.common.stamps import backend_stamp, data_stamp, settings_stamp
from components.datasource import fetch_all
from components.impact.body import BodyModel, load_body
from components.impact.data import ImpactAnnotations, ImpactItem, is_invalid_region_record, load_annotations, \
    load_qv_gt, load_qv_pred, load_spatial_pred
from components.impact.eval_inputs import spatial_input_report, temporal_input_report
from components.impact.metrics import spatial as spatial_metrics
from components.impact.metrics.spatial import frame_rows, summarise_rows
from components.impact.metrics.temporal import AS_MISS, LEAVE_OUT, disagreements as temporal_disagreements, \
    evaluate_temporal, no_prediction_note, scored_pairs, unit_scores as temporal_unit_scores
from components.impact.solvers import RegionAnswer, RegionSolver, TemporalSolver, solvers_for
from components.media import Frame, open_video
from components.media.video import check_file
from components.settings.session import SessionSettings

if TYPE_CHECKING:
    from PIL import Image

#: wraps the frame loop (e.g. a progress bar's tqdm)
Track = Callable[[Iterable[int]], Iterable[int]]


def annotated_frames(item: ImpactItem) -> list[int]:
    """Frames scored spatially: the annotated ones, else every frame inside the moments (A.6.3)."""
    if item.frames:
        return sorted(item.frames)
    return sorted({f for fs, fe in item.moments for f in range(fs, fe + 1)})


def frame_images(item: ImpactItem, frames: list[int]) -> dict[int, EncodedImage]:
    """1-based frame -> the picture the model is sent (the JPEG an API backend sends, made once
    and kept on disk: components.common.sent_frames). The clip's annotated frames are one entry
    (any of them asked reads it: a resumed run's pending frames too), other frames one more; a
    miss decodes the entry's frames in one pass over the clip."""
    wanted = sorted(set(frames))
    annotated = set(annotated_frames(item))
    out: dict[int, EncodedImage] = {}
    for group in (sorted(annotated) if annotated & set(wanted) else [],
                  [f for f in wanted if f not in annotated]):
        if group:
            out.update(_frame_entry(item, group))
    return {f: out[f] for f in wanted}


def _frame_entry(item: ImpactItem, frames: list[int]) -> dict[int, EncodedImage]:
    def decode() -> list[Frame]:
        source = open_video(item.video)
        try:
            return source.frames_at_indices([f - 1 for f in frames])
        finally:
            source.close()

    params = {"use": "impact-frames", "frames": frames, "decode": "full-size"}
    # keyed by the clip's content (a repository's clip fetched first; a missing one named)
    return {f: fr.image for f, fr in zip(frames, sent_frames(check_file(item.video), params, decode))}


class ClipFrames:
    """Frame images shared by the per-frame units of a batch run. Each clip's pending frames are
    decoded together, once (one read of the clip), and the clips ahead are decoded in the
    background meanwhile: at least the next `lookahead` clips and enough of them to hold the next
    `ahead_units` units, so that with many units in flight (a clip has a few frames, `--concurrency`
    workers take units in order) the workers at the front rarely wait for a decode. A clip's
    images are dropped when its last pending frame was taken, so memory holds only the clips in
    flight and ahead."""

    def __init__(self, units: Iterable[tuple[ImpactItem, int]], *, lookahead: int = 2,
                 ahead_units: int = 32):
        self._order: list[str] = []
        self._items: dict[str, ImpactItem] = {}
        self._frames: dict[str, list[int]] = {}
        for item, frame in units:
            if item.qid not in self._items:
                self._order.append(item.qid)
                self._items[item.qid] = item
                self._frames[item.qid] = []
            self._frames[item.qid].append(frame)
        self._position = {qid: n for n, qid in enumerate(self._order)}
        self._lookahead = max(0, lookahead)
        self._ahead_units = max(0, ahead_units)
        self._clips: dict[str, _Clip] = {}
        self._started: set[str] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, self._lookahead), thread_name_prefix="clip-frames")

    def __enter__(self) -> ClipFrames:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self, qid: str) -> _Clip | None:  # under self._lock
        if qid in self._started:
            return self._clips.get(qid)
        self._started.add(qid)
        item, frames = self._items[qid], sorted(set(self._frames[qid]))
        clip = self._clips[qid] = _Clip(frames, self._pool.submit(frame_images, item, frames))
        return clip

    def _start_ahead(self, at: int) -> None:  # under self._lock
        """Start the clips after position `at`: `lookahead` clips, and more until they hold
        `ahead_units` units."""
        units = 0
        for pos in range(at + 1, len(self._order)):
            if pos - at > self._lookahead and units >= self._ahead_units:
                return
            qid = self._order[pos]
            self._start(qid)
            units += len(self._frames[qid])

    def image(self, item: ImpactItem, frame: int) -> EncodedImage:
        with self._lock:
            if item.qid not in self._items or frame not in self._frames[item.qid]:
                clip = None  # not a pending unit: decoded on its own
            else:
                clip = self._start(item.qid)
                self._start_ahead(self._position[item.qid])
        if clip is None:
            return frame_images(item, [frame])[frame]
        try:
            return clip.future.result()[frame]  # every unit of a broken clip gets its error
        finally:
            with self._lock:
                clip.taken.add(frame)
                if clip.taken >= set(clip.frames):
                    self._clips.pop(item.qid, None)


class _Clip:
    def __init__(self, frames: list[int], future: Future):
        self.frames = frames
        self.future = future
        self.taken: set[int] = set()


def check_stop(cancel: threading.Event | None) -> None:
    """Raise GenerationStopped once the stop event is set (between clips or frames)."""
    if cancel is not None and cancel.is_set():
        raise GenerationStopped("stopped by the user")


def select_regions(solver: RegionSolver, item: ImpactItem, frames: list[int], *,
                   cancel: threading.Event | None = None, track: Track | None = None,
                   images: Mapping[int, Image.Image | EncodedImage] | None = None) -> dict[int, RegionAnswer]:
    """The solver's answer for each frame (its image only decoded when the solver reads it;
    `images` when the caller decoded them already)."""
    if images is None:
        images = frame_images(item, frames) if frames and solver.needs_image else {}
    answers = {}
    for frame in (track(frames) if track is not None else frames):
        check_stop(cancel)
        answers[frame] = solver.select(images.get(frame), item.query, ref=f"{item.qid}#{frame}",
                                       cancel=cancel)
    return answers


#: what an unparsed or failed answer is scored as: nothing predicted (precision 1, recall 0, F1 0)
EMPTY_PREDICTION: dict = {"regions": [], "vertices": []}


def scored_frames(annotations: ImpactAnnotations, split: str | None = None) -> list[tuple[ImpactItem, int]]:
    """The (item, frame) units spatial scoring covers: annotated frames that carry regions."""
    return [(item, frame) for item in annotations.split(split) for frame in annotated_frames(item)
            if item.frames.get(frame) is not None]


def spatial_frame_rows(annotations: ImpactAnnotations, predictions: Mapping[tuple[str, int], dict],
                       *, split: str | None = None, body: BodyModel | None = None
                       ) -> tuple[list[tuple[str, int]], list[dict], list[dict | None]]:
    """(keys, per-frame metric rows, the prediction lines as given) over `scored_frames`; an
    unparsed or failed answer is scored as nothing predicted."""
    body = body or load_body()
    units = scored_frames(annotations, split)
    if not units:
        raise DataFormatError(f"{annotations.path}: no annotated frame with regions to score "
                              "(add 'frames' with 'regions' to the items).")
    given = [predictions.get((item.qid, frame)) for item, frame in units]
    scored = [EMPTY_PREDICTION if p is not None and is_invalid_region_record(p) else p for p in given]
    gt_records = [{"regions": item.frames[frame].regions, "vertices": item.frames[frame].vertices}
                  for item, frame in units]
    return [(item.qid, frame) for item, frame in units], frame_rows(gt_records, scored, body), given


def evaluate_spatial(annotations: ImpactAnnotations, predictions: Mapping[tuple[str, int], dict],
                     *, split: str | None = None, body: BodyModel | None = None) -> dict:
    """Per annotated frame: GT and prediction painted on the body, then the body engineer's metrics.
    A frame with no prediction line counts as nothing predicted (precision 1, recall 0, F1 0), and
    so does an unparsed or failed answer, whatever regions its line lists (counted in `invalid`).
    `intervals`: each score's 95 % bootstrap interval over queries (a query's frames together)."""
    body = body or load_body()
    keys, rows, given = spatial_frame_rows(annotations, predictions, split=split, body=body)
    invalid = [p for p in given if p is not None and is_invalid_region_record(p)]
    result = summarise_rows(rows, [qid for qid, _ in keys])
    result["num_frames"] = len(rows)
    result["frames_without_prediction"] = sum(1 for p in given if p is None)
    result["invalid"] = len(invalid)  # unparsed or failed answers, scored as nothing predicted
    result["unparsed"] = sum(1 for p in invalid if str(p.get("error") or "").startswith("unparsed")
                             or p.get("status") == "unparsed")
    result["body"] = body.kind
    return result


# -- the batch: `run impact` ---------------------------------------------------------------------

TASKS = ("temporal", "spatial")


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
        summary["temporal_answers"] = status_counts(pred_path, "temporal")
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
        summary["spatial_answers"] = status_counts(spatial_path, "spatial")
    return summary


def status_counts(path: Path, task: str) -> dict[str, int]:
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


# -- run files read and scored: `eval` and `compare` ------------------------------------------------

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


def compare_temporal(gt_paths: Path | Iterable[Path], a: Path | str, b: Path | str) -> compare.Comparison:
    """`compare impact-temporal`: run A against run B on the same ground truth, paired by query."""
    gt = load_temporal_files(gt_paths, gt=True)
    runs = [load_temporal_files(Path(a), gt=False), load_temporal_files(Path(b), gt=False)]
    qids = {g["qid"] for g in gt}
    for path, pred in zip((a, b), runs):
        compare.refuse_unknown(path, (p["qid"] for p in pred), qids, what="prediction(s) for qids",
                               against="the ground truth")
    # paired: both runs over the same queries, so a query with no prediction in a run is a miss
    # there (eval leaves it out, as QV-M2 does: its two scores can differ from these)
    pairs = [scored_pairs(gt, pred, no_prediction=AS_MISS) for pred in runs]
    missing = [len(qids - {p["qid"] for p in pred}) for pred in runs]
    empty = [sum(1 for _, _, p in run if not p) for run in pairs]
    notes = [f"{n} query(ies) with no prediction in {name} ({m} without a line): scored as misses so "
             "that both runs cover the same queries (`eval impact-temporal` leaves them out, as "
             "QV-M2 does)" for name, n, m in zip((a, b), empty, missing) if n]
    result = compare.Comparison(
        "impact-temporal", str(a), str(b), f"{len(pairs[0])} queries with ground-truth windows",
        stats.differences(temporal_unit_scores(pairs[0]), temporal_unit_scores(pairs[1])),
        temporal_disagreements(gt, *runs), len(pairs[0]), "queries", notes=notes)
    return result


def compare_spatial(annotations_path: Path | str, a: Path | str, b: Path | str, *,
                    split: str | None = None) -> compare.Comparison:
    """`compare impact-spatial`: run A against run B on the same annotations, paired by frame."""
    annotations = load_annotations(annotations_path)
    runs = [load_spatial_files(Path(a)), load_spatial_files(Path(b))]
    known = {(item.qid, frame) for item, frame in scored_frames(annotations, split)}
    for path, pred in zip((a, b), runs):
        compare.refuse_unknown(path, (f"{q}#{f}" for q, f in pred), {f"{q}#{f}" for q, f in known},
                               what="prediction(s) for qid#frame", against=f"{annotations_path}'s scored frames")
    body = load_body()
    (keys, rows_a, _), (_, rows_b, _) = (spatial_frame_rows(annotations, pred, split=split, body=body)
                                         for pred in runs)
    qids = [qid for qid, _ in keys]
    differing = [{"qid": qid, "frame": frame, "regions_a": ra["regions"], "regions_b": rb["regions"],
                  "truth": ra["truth"], "F1_a": round(ra["F1"], 2), "F1_b": round(rb["F1"], 2)}
                 for (qid, frame), ra, rb in zip(keys, rows_a, rows_b)
                 if sorted(ra["regions"]) != sorted(rb["regions"]) or abs(ra["F1"] - rb["F1"]) > 1e-9]
    differing.sort(key=lambda r: -abs(r["F1_a"] - r["F1_b"]))
    result = compare.Comparison(
        "impact-spatial", str(a), str(b),
        f"{annotations_path}{f' split {split}' if split else ''} ({len(set(qids))} queries, "
        f"{len(keys)} frames; body {body.kind})",
        stats.differences(spatial_metrics.unit_scores(rows_a, qids), spatial_metrics.unit_scores(rows_b, qids)),
        differing, len(keys), "frames")
    return result
