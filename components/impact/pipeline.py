"""One clip end to end, shared by the Impact tab and `run impact` / `eval impact-spatial`: which
frames are scored, their images, the region answers for them, and the spatial scores of a set."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterable, Mapping

from backends.base import EncodedImage
from backends.errors import GenerationStopped
from components.base.errors import DataFormatError
from components.impact.data import ImpactAnnotations, ImpactItem, is_invalid_region_record
from components.impact.body import BodyModel, load_body
from components.impact.solvers import RegionAnswer, RegionSolver
from components.impact.metrics.spatial import frame_rows, summarise_rows
from components.common.sent_frames import sent_frames
from components.media import Frame, open_video
from components.media.video import check_file

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
