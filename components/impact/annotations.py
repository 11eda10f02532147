"""HAPACT-style impact annotations (formats.md) and the QVHighlights JSONL convention (metrics.md).

Frames are 1-based and inclusive at `fps` (24 in HAPACT). Frame f covers [(f-1)/fps, f/fps], so a
moment [fs, fe] is the interval [(fs-1)/fps, fe/fps] in seconds. Every malformed record raises a
DataFormatError that names the file, the record and the key, and says how to fix it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from components.common.paths import confined_path
from components.common.errors import DataFormatError

DEFAULT_FPS = 24.0


@dataclass
class FrameAnnotation:
    """The body regions (18 labels) and optional SMPL-X vertex ids hit in one annotated frame."""

    regions: list[str]
    vertices: list[int] | None = None


@dataclass
class ImpactItem:
    qid: str
    video: Path  # resolved against the annotation file's folder
    query: str
    num_frames: int
    moments: list[tuple[int, int]]  # 1-based inclusive frame ranges
    fps: float = DEFAULT_FPS
    split: str = ""
    movie: str = ""
    frames: dict[int, FrameAnnotation] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return self.num_frames / self.fps

    def moments_seconds(self) -> list[tuple[float, float]]:
        return [moment_to_seconds(m, self.fps) for m in self.moments]

    def gt_record(self) -> dict:
        """The QVHighlights ground-truth line of this query."""
        return {"qid": self.qid, "query": self.query, "duration": self.duration,
                "relevant_windows": [list(w) for w in self.moments_seconds()]}


@dataclass
class ImpactAnnotations:
    path: Path
    fps: float
    items: list[ImpactItem]

    def by_qid(self) -> dict[str, ImpactItem]:
        return {item.qid: item for item in self.items}

    def split(self, name: str | None) -> list[ImpactItem]:
        if not name:
            return list(self.items)
        chosen = [item for item in self.items if item.split == name]
        if not chosen:
            have = sorted({item.split for item in self.items if item.split})
            raise DataFormatError(f"{self.path}: no item has split '{name}' "
                                  f"(splits present: {', '.join(have) or 'none'}).")
        return chosen


# -- frame <-> seconds ------------------------------------------------------------------------------

def moment_to_seconds(moment: Iterable[int], fps: float = DEFAULT_FPS) -> tuple[float, float]:
    """[fs, fe] (1-based, inclusive) -> [(fs-1)/fps, fe/fps]."""
    fs, fe = moment
    return ((fs - 1) / fps, fe / fps)


def frame_at_time(t: float, fps: float = DEFAULT_FPS) -> int:
    """The 1-based frame whose span [(f-1)/fps, f/fps) holds time t."""
    return int(math.floor(t * fps + 1e-9)) + 1


def frame_span_seconds(frame: int, fps: float = DEFAULT_FPS) -> tuple[float, float]:
    return ((frame - 1) / fps, frame / fps)


def window_frames(start: float, end: float, fps: float = DEFAULT_FPS) -> int:
    """How many frames an interval in seconds spans (used for the length breakdown)."""
    return int(round((end - start) * fps))


# -- loading and validating --------------------------------------------------------------------------

def _fail(path: Path, where: str, message: str) -> DataFormatError:
    return DataFormatError(f"{path}: {where}: {message}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_annotations(path: str | Path) -> ImpactAnnotations:
    """Read and validate an impact annotation file (formats.md, "Impact annotations")."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(f"Impact annotation file not found: {path} "
                              "(expected <data>/impact/annotations.json or pass --annotations).")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFormatError(f"{path} is not valid JSON ({exc}); fix the file or regenerate it.") from None
    return parse_annotations(data, path)


def parse_annotations(data: Any, path: str | Path = "<annotations>") -> ImpactAnnotations:
    path = Path(path)
    if not isinstance(data, dict):
        raise _fail(path, "top level", f"expected an object with keys 'fps' and 'items', got "
                    f"{type(data).__name__}.")
    fps = data.get("fps", DEFAULT_FPS)
    if not _is_number(fps) or fps <= 0:
        raise _fail(path, "key 'fps'", f"must be a positive number (HAPACT uses 24), got {fps!r}.")
    if "items" not in data:
        raise _fail(path, "top level", "missing required key 'items' (a list of clip records).")
    items_raw = data["items"]
    if not isinstance(items_raw, list):
        raise _fail(path, "key 'items'", f"must be a list, got {type(items_raw).__name__}.")
    items: list[ImpactItem] = []
    seen: dict[str, int] = {}
    for index, record in enumerate(items_raw):
        item = _parse_item(record, index, float(fps), path)
        if item.qid in seen:
            raise _fail(path, f"items[{index}] (qid '{item.qid}')",
                        f"duplicate qid; it is already used by items[{seen[item.qid]}]. "
                        "Give every query a unique qid.")
        seen[item.qid] = index
        items.append(item)
    return ImpactAnnotations(path=path, fps=float(fps), items=items)


_KNOWN_KEYS = {"qid", "video", "query", "split", "movie", "num_frames", "moments", "frames"}


def _parse_item(record: Any, index: int, fps: float, path: Path) -> ImpactItem:
    where = f"items[{index}]"
    if not isinstance(record, dict):
        raise _fail(path, where, f"expected an object, got {type(record).__name__}.")
    if "qid" in record:
        where = f"items[{index}] (qid '{record['qid']}')"
    for key in ("qid", "video", "query", "num_frames", "moments"):
        if key not in record:
            raise _fail(path, where, f"missing required key '{key}'.")
    for key in ("qid", "video", "query"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise _fail(path, where, f"key '{key}' must be a non-empty string, got {record[key]!r}.")
    for key in ("split", "movie"):
        if key in record and not isinstance(record[key], str):
            raise _fail(path, where, f"key '{key}' must be a string, got {record[key]!r}.")
    num_frames = record["num_frames"]
    if not _is_int(num_frames) or num_frames <= 0:
        raise _fail(path, where, f"key 'num_frames' must be a positive integer, got {num_frames!r}.")
    moments_raw = record["moments"]
    if not isinstance(moments_raw, list):
        raise _fail(path, where, "key 'moments' must be a list of [start_frame, end_frame] pairs.")
    moments: list[tuple[int, int]] = []
    for m_index, moment in enumerate(moments_raw):
        m_where = f"{where}, moments[{m_index}]"
        if (not isinstance(moment, list) or len(moment) != 2
                or not all(_is_int(v) for v in moment)):
            raise _fail(path, m_where, f"expected [start_frame, end_frame] as two integers, got {moment!r}.")
        fs, fe = moment
        if fs > fe:
            raise _fail(path, m_where, f"start frame {fs} is after end frame {fe}; frames are "
                        "1-based and inclusive, write [start, end].")
        if fs < 1 or fe > num_frames:
            raise _fail(path, m_where, f"frames {moment} out of range: frames are 1-based and the "
                        f"clip has num_frames={num_frames}.")
        moments.append((fs, fe))
    frames: dict[int, FrameAnnotation] = {}
    frames_raw = record.get("frames", {})
    if not isinstance(frames_raw, dict):
        raise _fail(path, where, "key 'frames' must be an object mapping frame numbers to "
                    "{\"regions\": [...], \"vertices\": [...]}.")
    for key, value in frames_raw.items():
        f_where = f"{where}, frames['{key}']"
        try:
            frame = int(key)
        except (TypeError, ValueError):
            raise _fail(path, f_where, "frame keys must be 1-based frame numbers like \"84\".") from None
        if frame < 1 or frame > num_frames:
            raise _fail(path, f_where, f"frame {frame} out of range 1..{num_frames} (num_frames).")
        if not isinstance(value, dict) or "regions" not in value:
            raise _fail(path, f_where, "missing required key 'regions' (a list of body-region labels).")
        regions = value["regions"]
        if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
            raise _fail(path, f_where, f"key 'regions' must be a list of strings, got {regions!r}.")
        _check_region_labels(regions, path, f_where)
        vertices = value.get("vertices")
        if vertices is not None and (not isinstance(vertices, list)
                                     or not all(_is_int(v) and v >= 0 for v in vertices)):
            raise _fail(path, f_where, "key 'vertices' must be a list of non-negative integer "
                        "SMPL-X vertex ids (or be left out).")
        frames[frame] = FrameAnnotation(regions=list(regions),
                                        vertices=list(vertices) if vertices is not None else None)
    video = confined_path(path.parent, record["video"], file=path, where=where, key="video")
    return ImpactItem(qid=record["qid"], video=video, query=record["query"], num_frames=num_frames,
                      moments=moments, fps=fps, split=record.get("split", ""),
                      movie=record.get("movie", ""), frames=dict(sorted(frames.items())),
                      extra={k: v for k, v in record.items() if k not in _KNOWN_KEYS})


def _check_region_labels(regions: list[str], path: Path, where: str) -> None:
    try:
        from components.impact.regions import REGION_LABELS
    except ImportError:  # the region vocabulary module is optional for temporal-only use
        return
    unknown = [r for r in regions if r not in REGION_LABELS]
    if unknown:
        raise _fail(path, where, f"unknown region label(s) {unknown}; use the 18 labels: "
                    f"{', '.join(REGION_LABELS)}.")


# -- QVHighlights JSONL ----------------------------------------------------------------------------

def gt_records(items: Iterable[ImpactItem]) -> list[dict]:
    return [item.gt_record() for item in items]


def pred_record(qid: str, windows: Iterable[Iterable[float]], **extra: Any) -> dict:
    """A QVHighlights prediction line; `windows` are [start_s, end_s, score] in ranked order."""
    record = {"qid": qid, "pred_relevant_windows": [[float(v) for v in w] for w in windows]}
    record.update(extra)
    return record


def _read_jsonl_strict(path: Path) -> list[tuple[int, dict]]:
    if not path.exists():
        raise DataFormatError(f"File not found: {path}")
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (UnicodeDecodeError, OSError) as exc:
        raise DataFormatError(f"{path} is not a readable UTF-8 JSONL file ({exc}).") from None
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{path}: line {line_no} is not valid JSON ({exc.msg}).") from None
        if not isinstance(record, dict):
            raise DataFormatError(f"{path}: line {line_no} must be a JSON object.")
        rows.append((line_no, record))
    return rows


def _windows(value: Any, path: Path, line_no: int, key: str, width: int) -> list[list[float]]:
    if not isinstance(value, list):
        raise DataFormatError(f"{path}: line {line_no}: key '{key}' must be a list of windows.")
    out = []
    for w in value:
        if (not isinstance(w, list) or len(w) < width or not all(_is_number(v) for v in w[:width])):
            shape = "[start, end]" if width == 2 else "[start, end, score]"
            raise DataFormatError(f"{path}: line {line_no}: each entry of '{key}' must be {shape} "
                                  f"in seconds, got {w!r}.")
        out.append([float(v) for v in w[:width]])
    return out


def _load_qv(path: str | Path, key: str, width: int, duplicate_hint: str = "") -> list[dict]:
    path = Path(path)
    out, seen = [], set()
    for line_no, record in _read_jsonl_strict(path):
        for required in ("qid", key):
            if required not in record:
                raise DataFormatError(f"{path}: line {line_no}: missing required key '{required}'.")
        qid = str(record["qid"])
        if qid in seen:
            raise DataFormatError(f"{path}: line {line_no}: duplicate qid '{qid}'{duplicate_hint}.")
        seen.add(qid)
        out.append({**record, "qid": qid, key: _windows(record[key], path, line_no, key, width)})
    return out


def load_qv_gt(path: str | Path) -> list[dict]:
    """QVHighlights ground truth: {"qid", "relevant_windows": [[s, e], ...]} per line."""
    return _load_qv(path, "relevant_windows", 2)


def load_qv_pred(path: str | Path) -> list[dict]:
    """QVHighlights predictions: {"qid", "pred_relevant_windows": [[s, e, score], ...]} per line."""
    return _load_qv(path, "pred_relevant_windows", 3, " (one line per query)")


def load_spatial_pred(path: str | Path) -> dict[tuple[str, int], dict]:
    """Spatial predictions JSONL: {"qid", "frame", "regions": [...], "vertices": [...]} per line."""
    path = Path(path)
    out: dict[tuple[str, int], dict] = {}
    for line_no, record in _read_jsonl_strict(path):
        for key in ("qid", "frame"):
            if key not in record:
                raise DataFormatError(f"{path}: line {line_no}: missing required key '{key}'.")
        if not _is_int(record["frame"]):
            raise DataFormatError(f"{path}: line {line_no}: key 'frame' must be an integer (1-based).")
        if "regions" not in record and "vertices" not in record:
            raise DataFormatError(f"{path}: line {line_no}: needs 'regions' or 'vertices'.")
        regions = record.get("regions", [])
        if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
            raise DataFormatError(f"{path}: line {line_no}: key 'regions' must be a list of strings.")
        vertices = record.get("vertices")
        if vertices is not None and (not isinstance(vertices, list)
                                     or not all(_is_int(v) for v in vertices)):
            raise DataFormatError(f"{path}: line {line_no}: key 'vertices' must be a list of integers.")
        out[(str(record["qid"]), record["frame"])] = record
    return out
