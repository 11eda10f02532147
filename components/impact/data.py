"""HAPACT-style impact annotations (docs/formats.md) and the QVHighlights JSONL convention (docs/metrics.md).

Frames are 1-based and inclusive at `fps` (24 in HAPACT). Frame f covers [(f-1)/fps, f/fps], so a
moment [fs, fe] is the interval [(fs-1)/fps, fe/fps] in seconds. Every malformed record raises a
DataFormatError that names the file, the record and the key, and says how to fix it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo, field_validator, \
    model_validator

from components import datasource
from components.base.errors import DataFormatError
from components.common.paths import confined_path
from components.common.validate import validated_as
from components.impact.body import SMPLX_NUM_VERTICES as SMPLX_VERTICES
from components.impact.regions import REGION_LABELS

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


# -- loading and validating --------------------------------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _frame_range(moment: Any) -> tuple[int, int]:
    if not isinstance(moment, list) or len(moment) != 2 or not all(_is_int(v) for v in moment):
        raise ValueError(f"expected [start_frame, end_frame] as two integers, got {moment!r}.")
    fs, fe = moment
    if fs > fe:
        raise ValueError(f"start frame {fs} is after end frame {fe}; frames are 1-based and "
                         "inclusive, write [start, end].")
    return fs, fe


def _frame_key(key: Any) -> int:
    try:
        return int(key)
    except (TypeError, ValueError):
        raise ValueError('frame keys must be 1-based frame numbers like "84".') from None


class _FrameRecord(BaseModel):
    regions: list[str]
    vertices: list[int] | None = None

    @model_validator(mode="before")
    @classmethod
    def _has_regions(cls, value: Any) -> Any:
        if not isinstance(value, dict) or "regions" not in value:
            raise ValueError("missing required key 'regions' (a list of body-region labels).")
        return value

    @field_validator("regions", mode="before")
    @classmethod
    def _labels(cls, regions: Any) -> Any:
        if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
            raise ValueError(f"key 'regions' must be a list of strings, got {regions!r}.")
        unknown = [r for r in regions if r not in REGION_LABELS]
        if unknown:
            raise ValueError(f"unknown region label(s) {unknown}; use the 18 labels: "
                             f"{', '.join(REGION_LABELS)}.")
        return regions

    @field_validator("vertices", mode="before")
    @classmethod
    def _vertex_ids(cls, vertices: Any) -> Any:
        if vertices is not None and (not isinstance(vertices, list)
                                     or not all(_is_int(v) and 0 <= v < SMPLX_VERTICES for v in vertices)):
            raise ValueError(f"key 'vertices' must be a list of SMPL-X vertex ids 0..{SMPLX_VERTICES - 1} "
                             "(or be left out).")
        return vertices


class _ItemRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    qid: str
    video: str
    query: str
    num_frames: int
    moments: list[Annotated[tuple[int, int], BeforeValidator(_frame_range)]]
    split: str = ""
    movie: str = ""
    frames: dict[Annotated[int, BeforeValidator(_frame_key)], _FrameRecord] = {}

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {type(value).__name__}.")
        return value

    @field_validator("qid", "video", "query", mode="before")
    @classmethod
    def _non_empty(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"key '{info.field_name}' must be a non-empty string, got {value!r}.")
        return value

    @field_validator("split", "movie", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"key '{info.field_name}' must be a string, got {value!r}.")
        return value

    @field_validator("num_frames", mode="before")
    @classmethod
    def _positive(cls, value: Any) -> Any:
        if not _is_int(value) or value <= 0:
            raise ValueError(f"key 'num_frames' must be a positive integer, got {value!r}.")
        return value

    @field_validator("moments", mode="before")
    @classmethod
    def _moment_list(cls, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError("key 'moments' must be a list of [start_frame, end_frame] pairs.")
        return value

    @field_validator("frames", mode="before")
    @classmethod
    def _frame_map(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("key 'frames' must be an object mapping frame numbers to "
                             "{\"regions\": [...], \"vertices\": [...]}.")
        return value


class _AnnotationFile(BaseModel):
    fps: float = DEFAULT_FPS
    items: list[_ItemRecord]

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object with keys 'fps' and 'items', got "
                             f"{type(value).__name__}.")
        if "items" not in value:
            raise ValueError("missing required key 'items' (a list of clip records).")
        return value

    @field_validator("fps", mode="before")
    @classmethod
    def _positive(cls, fps: Any) -> Any:
        if not _is_number(fps) or fps <= 0:
            raise ValueError(f"must be a positive number (HAPACT uses 24), got {fps!r}.")
        return fps

    @field_validator("items", mode="before")
    @classmethod
    def _a_list(cls, items: Any) -> Any:
        if not isinstance(items, list):
            raise ValueError(f"must be a list, got {type(items).__name__}.")
        return items


def _item_label(raw: Any, index: int) -> str:
    """items[3] (qid 'h0004'): how messages name a record."""
    record = raw["items"][index] if isinstance(raw, dict) and isinstance(raw.get("items"), list) else None
    if isinstance(record, dict) and "qid" in record:
        return f"items[{index}] (qid '{record['qid']}')"
    return f"items[{index}]"


def _where(raw: Any, loc: tuple) -> str:
    """A pydantic location in the words of this file's messages (the key is in the message)."""
    if not loc:
        return "top level"
    if loc[0] != "items" or len(loc) == 1:
        return f"key '{loc[0]}'"
    where = _item_label(raw, loc[1])
    if len(loc) > 3 and loc[2] == "moments":
        where += f", moments[{loc[3]}]"
    elif len(loc) > 3 and loc[2] == "frames":
        where += f", frames['{loc[3]}']"
    return where


def load_annotations(path: str | Path) -> ImpactAnnotations:
    """Read and validate an impact annotation file (docs/formats.md, "Impact annotations"). `path`
    may name a file of a dataset repository (`hf://datasets/...`): it is fetched; its clips are
    fetched when they are opened (components/datasource)."""
    path = datasource.open_data_path(path)
    if not datasource.is_file(path):
        raise DataFormatError(f"Impact annotation file not found: {path} "
                              "(expected <data>/impact/annotations.json or pass --annotations).")
    try:
        data = json.loads(datasource.local(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFormatError(f"{path} is not valid JSON ({exc}); fix the file or regenerate it.") from None
    return parse_annotations(data, path)


def parse_annotations(data: Any, path: str | Path = "<annotations>") -> ImpactAnnotations:
    """Validate parsed JSON: the schema (types, keys) first, then each clip against its length."""
    path = Path(path)
    parsed = validated_as(_AnnotationFile, data, file=path, where=lambda loc: _where(data, loc))
    items: list[ImpactItem] = []
    seen: dict[str, int] = {}
    for index, record in enumerate(parsed.items):
        where = _item_label(data, index)
        if record.qid in seen:
            raise _fail(path, where, f"duplicate qid; it is already used by items[{seen[record.qid]}]. "
                        "Give every query a unique qid.")
        seen[record.qid] = index
        items.append(_item(record, float(parsed.fps), path, where))
    return ImpactAnnotations(path=path, fps=float(parsed.fps), items=items)


def _fail(path: Path, where: str, message: str) -> DataFormatError:
    return DataFormatError(f"{path}: {where}: {message}")


def _item(record: _ItemRecord, fps: float, path: Path, where: str) -> ImpactItem:
    """The clip, once its moments and annotated frames are checked against its num_frames."""
    n = record.num_frames
    for m_index, (fs, fe) in enumerate(record.moments):
        if fs < 1 or fe > n:
            raise _fail(path, f"{where}, moments[{m_index}]", f"frames {[fs, fe]} out of range: frames "
                        f"are 1-based and the clip has num_frames={n}.")
    for frame in record.frames:
        if frame < 1 or frame > n:
            raise _fail(path, f"{where}, frames['{frame}']",
                        f"frame {frame} out of range 1..{n} (num_frames).")
    video = confined_path(path.parent, record.video, file=path, where=where, key="video")
    frames = {f: FrameAnnotation(regions=list(a.regions), vertices=a.vertices)
              for f, a in sorted(record.frames.items())}
    return ImpactItem(qid=record.qid, video=video, query=record.query, num_frames=n,
                      moments=list(record.moments), fps=fps, split=record.split, movie=record.movie,
                      frames=frames, extra=dict(record.model_extra or {}))


# -- QVHighlights JSONL ----------------------------------------------------------------------------

def gt_records(items: Iterable[ImpactItem]) -> list[dict]:
    return [item.gt_record() for item in items]


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


def _windows(value: Any, key: str, width: int) -> list[list[float]]:
    if not isinstance(value, list):
        raise ValueError(f"key '{key}' must be a list of windows.")
    for w in value:
        if not isinstance(w, list) or len(w) < width or not all(_is_number(v) for v in w[:width]):
            shape = "[start, end]" if width == 2 else "[start, end, score]"
            raise ValueError(f"each entry of '{key}' must be {shape} in seconds, finite numbers, "
                             f"got {w!r}; fix or remove the line.")
    return [[float(v) for v in w[:width]] for w in value]


class _GtLine(BaseModel):
    qid: Any
    relevant_windows: list[list[float]]

    @field_validator("relevant_windows", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> list[list[float]]:
        windows = _windows(value, "relevant_windows", 2)
        for i, (start, end) in enumerate(windows):
            # a reversed or negative moment is no moment: scoring it would change the AP silently
            if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
                raise ValueError(f"window {i} of 'relevant_windows' is {[start, end]}: a ground-truth "
                                 "moment is [start, end] seconds with 0 <= start < end.")
        return windows


#: the `status` values a temporal prediction line may carry (docs/decisions.md "Eval inputs");
#: absent means "ok", and "fallback:<why>" names how a fallback was made
PRED_STATUSES = ("ok", "none", "unparsed", "error")


def _known_status(value: Any) -> Any:
    if value is None or (isinstance(value, str) and (value in PRED_STATUSES or value.startswith("fallback"))):
        return value
    raise ValueError(f"unknown status {value!r}; a status is one of {', '.join(PRED_STATUSES)} or "
                     "fallback:<why> (or no key: ok); fix or remove the line.")


class _PredLine(BaseModel):
    qid: Any
    pred_relevant_windows: list[list[float]]
    status: Any = None

    @field_validator("pred_relevant_windows", mode="before")
    @classmethod
    def _scored(cls, value: Any) -> list[list[float]]:
        # only what the reference (QV-M2) cannot score is refused: a non-number or non-finite value
        # (in `_windows`) and a reversed window; a start before 0 s, an end past the clip and a
        # zero-length window are scored as written and counted (eval_inputs.py)
        windows = _windows(value, "pred_relevant_windows", 3)
        for i, (start, end, _score) in enumerate(windows):
            if end < start:
                raise ValueError(f"window {i} {[start, end]} ends before it starts; fix or remove the line.")
        return windows

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> Any:
        return _known_status(value)


class _SpatialLine(BaseModel):
    qid: Any
    frame: int
    regions: list[str] = []
    vertices: list[int] | None = None

    @field_validator("frame", mode="before")
    @classmethod
    def _frame_number(cls, value: Any) -> Any:
        if not _is_int(value):
            raise ValueError("key 'frame' must be an integer (1-based).")
        if value < 1:
            raise ValueError(f"frame {value} is no frame: frames are 1-based; fix or remove the line.")
        return value

    @field_validator("regions", mode="before")
    @classmethod
    def _labels(cls, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
            raise ValueError("key 'regions' must be a list of strings.")
        return value

    @field_validator("vertices", mode="before")
    @classmethod
    def _vertex_ids(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, list) or not all(_is_int(v) for v in value)):
            raise ValueError("key 'vertices' must be a list of integers.")
        outside = [v for v in value or [] if not 0 <= v < SMPLX_VERTICES]
        if outside:
            # painted on no vertex (the mannequin reads no ids at all), an id outside the body
            # would change F1 without a word
            raise ValueError(f"vertex id {outside[0]} is outside SMPL-X's 0..{SMPLX_VERTICES - 1}"
                             f"{f' ({len(outside)} such ids)' if len(outside) > 1 else ''}; vertex ids "
                             "are SMPL-X vertex indices: fix or remove them.")
        return value

    @model_validator(mode="after")
    def _something_predicted(self) -> _SpatialLine:
        if not {"regions", "vertices"} & self.model_fields_set:
            raise ValueError("needs 'regions' or 'vertices'.")
        return self


def _line_key(line_no: int, loc: tuple) -> str:
    """'line 3, key 'pred_relevant_windows'' (the line alone for a problem of the whole line)."""
    return f"line {line_no}, key '{loc[0]}'" if loc and isinstance(loc[0], str) else f"line {line_no}"


def _lines(path: Path, schema: type[BaseModel]) -> Iterator[tuple[int, dict, Any]]:
    """(line number, raw record, validated line) for every record of a JSONL file."""
    for line_no, record in _read_jsonl_strict(path):
        yield line_no, record, validated_as(schema, record, file=path,
                                            where=lambda loc, n=line_no: _line_key(n, loc))


def _gt_inside_clip(path: Path, line_no: int, record: dict, windows: list[list[float]]) -> None:
    """A ground-truth window that starts at or after the clip's end (the line's `duration`, when it
    has one) lies wholly outside the clip: no model shown the clip can find it, and it would lower
    every score silently (seconds given in frames, or the wrong clip's line). Refused; one that
    only ends past the clip is scored as written and counted (eval_inputs.py)."""
    duration = record.get("duration")
    if not _is_number(duration):
        return
    for i, (start, end) in enumerate(windows):
        if start >= duration:
            raise DataFormatError(
                f"{path}: line {line_no}, key 'relevant_windows': window {i} {[start, end]} starts at "
                f"or after the clip's end (duration {duration:g} s), so nothing of it is in the clip; "
                "windows are in seconds (frames / fps). Fix the window or the line's 'duration'.")


def _load_qv(path: str | Path, schema: type[BaseModel], key: str, duplicate_hint: str = "",
             lines: dict | None = None) -> list[dict]:
    path = Path(path)
    out, seen = [], set()
    for line_no, record, line in _lines(path, schema):
        qid = str(line.qid)
        if qid in seen:
            raise DataFormatError(f"{path}: line {line_no}: duplicate qid '{qid}'{duplicate_hint}.")
        if schema is _GtLine:
            _gt_inside_clip(path, line_no, record, line.relevant_windows)
        seen.add(qid)
        out.append({**record, "qid": qid, key: getattr(line, key)})
        if lines is not None:
            lines.setdefault(qid, f"{path} line {line_no}")
    return out


def load_qv_gt(path: str | Path, lines: dict | None = None) -> list[dict]:
    """QVHighlights ground truth: {"qid", "relevant_windows": [[s, e], ...]} per line. `lines`,
    when given, gets qid -> "<file> line <n>" (for notes that name the line)."""
    return _load_qv(path, _GtLine, "relevant_windows", lines=lines)


def load_qv_pred(path: str | Path, lines: dict | None = None) -> list[dict]:
    """QVHighlights predictions: {"qid", "pred_relevant_windows": [[s, e, score], ...]} per line;
    a window that is not finite numbers or ends before it starts, and an unknown `status`, are
    refused (file, line, key); every other window is scored as written."""
    return _load_qv(path, _PredLine, "pred_relevant_windows", " (one line per query)", lines=lines)


def is_invalid_region_record(record: dict) -> bool:
    """A spatial prediction line that holds no parsed model answer (an unparsed reply, a failed
    call, a fallback): its regions are never scored (docs/metrics.md)."""
    status = str(record.get("status") or "")
    return bool(record.get("error")) or status in ("unparsed", "error") or status.startswith("fallback")


def load_spatial_pred(path: str | Path, lines: dict | None = None) -> dict[tuple[str, int], dict]:
    """Spatial predictions JSONL: {"qid", "frame", "regions": [...], "vertices": [...]} per line.
    A (qid, frame) given twice is refused (either copy could be the one scored); a region label
    that is not one of the 18 is refused naming the line, unless the line records an error (an
    unparsed or failed answer, scored as nothing predicted whatever it lists)."""
    path = Path(path)
    out: dict[tuple[str, int], dict] = {}
    seen_on: dict[tuple[str, int], int] = {}
    for line_no, record, line in _lines(path, _SpatialLine):
        key = (str(line.qid), line.frame)
        if key in out:
            raise DataFormatError(f"{path}: line {line_no}: duplicate prediction for qid '{key[0]}' "
                                  f"frame {key[1]} (first on line {seen_on[key]}); keep one line per "
                                  "(qid, frame).")
        unknown = [r for r in line.regions if r not in REGION_LABELS]
        if unknown and not is_invalid_region_record(record):
            raise DataFormatError(f"{path}: line {line_no} key 'regions': unknown region label "
                                  f"'{unknown[0]}'; labels are: {', '.join(REGION_LABELS)}.")
        out[key] = record
        seen_on[key] = line_no
        if lines is not None:
            lines.setdefault(key, f"{path} line {line_no}")
    return out
