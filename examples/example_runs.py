"""Run files for the example data's window-search and Impact parts, so the tabs' "What the runs
answered" panels have content out of the box (the Cloze part's are examples/released_runs.py's).
Deterministic; derived from the part's own annotations:

- grounding/runs/*.jsonl (docs/formats.md predictions): "example-close" (every ground truth shifted
  a little), "example-partner" (every query answered with its confusable partner's moment) and
  "example-fallback" (a fallback on the first query, an unparsed line on the second, the rest
  shifted by half their length);
- impact/runs/<run>/temporal_pred.jsonl and spatial_pred.jsonl (`run impact --out`):
  "example-exact" (the annotated moments and regions), "example-partial" (moments cut short, the
  first region of each frame only) and "example-wrong" (moments moved, a region on the other side).
"""
from __future__ import annotations

import json
from pathlib import Path

from components.impact.regions import REGION_LABELS


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def write_grounding_runs(grounding_dir: Path) -> list[Path]:
    """The three grounding runs in `grounding_dir`/runs, from its annotations.json."""
    data = json.loads((Path(grounding_dir) / "annotations.json").read_text(encoding="utf-8"))
    queries, partner = [], {}
    for pair in data["pairs"]:
        t, c = pair["target"], pair["confusable"]
        queries += [t, c]
        partner[t["qid"]], partner[c["qid"]] = c, t
    runs: dict[str, list[dict]] = {"example-close": [], "example-partner": [], "example-fallback": []}
    for i, q in enumerate(queries):
        s, e = q["interval"]
        length = e - s
        runs["example-close"].append({"qid": q["qid"], "interval": [round(s + 0.1 * length, 2), round(e + 0.1 * length, 2)],
                                      "source": "emitted"})
        runs["example-partner"].append({"qid": q["qid"], "interval": partner[q["qid"]]["interval"],
                                        "source": "selected"})
        if i == 0:
            line = {"qid": q["qid"], "interval": None, "fallback_interval": [s, e],
                    "source": "fallback:localizer-unparsed"}
        elif i == 1:
            line = {"qid": q["qid"], "interval": None, "source": "unparsed"}
        else:
            line = {"qid": q["qid"], "interval": [round(s + length / 2, 2), round(e + length / 2, 2)],
                    "source": "emitted"}
        runs["example-fallback"].append(line)
    paths = []
    for name, rows in runs.items():
        path = Path(grounding_dir) / "runs" / f"{name}.jsonl"
        _write_jsonl(path, rows)
        paths.append(path)
    return paths


def _other_side(region: str) -> str:
    for a, b in (("left", "right"), ("right", "left")):
        if region.startswith(a):
            flipped = b + region[len(a):]
            if flipped in REGION_LABELS:
                return flipped
    return next(r for r in REGION_LABELS if r != region)


def write_impact_runs(impact_dir: Path) -> list[Path]:
    """The three Impact runs in `impact_dir`/runs/<run>/, from its annotations.json."""
    data = json.loads((Path(impact_dir) / "annotations.json").read_text(encoding="utf-8"))
    fps = float(data.get("fps", 24))
    temporal: dict[str, list[dict]] = {"example-exact": [], "example-partial": [], "example-wrong": []}
    spatial: dict[str, list[dict]] = {name: [] for name in temporal}
    for item in data["items"]:
        qid, duration = item["qid"], item["num_frames"] / fps
        windows = [((fs - 1) / fps, fe / fps) for fs, fe in item["moments"]]
        temporal["example-exact"].append({"qid": qid, "pred_relevant_windows": [[round(s, 3), round(e, 3), 1.0]
                                                                                for s, e in windows]})
        temporal["example-partial"].append({"qid": qid, "pred_relevant_windows": [
            [round(s, 3), round(s + (e - s) / 2, 3), 0.8] for s, e in windows]})
        temporal["example-wrong"].append({"qid": qid, "pred_relevant_windows": [
            [round(min(duration - 0.1, e + 0.5), 3), round(min(duration, e + 1.0), 3), 0.5] for s, e in windows]})
        for frame, rec in sorted(item.get("frames", {}).items(), key=lambda kv: int(kv[0])):
            regions = list(rec.get("regions") or [])
            spatial["example-exact"].append({"qid": qid, "frame": int(frame), "regions": regions})
            spatial["example-partial"].append({"qid": qid, "frame": int(frame), "regions": regions[:1]})
            spatial["example-wrong"].append({"qid": qid, "frame": int(frame),
                                             "regions": [_other_side(r) for r in regions[:1]]})
    paths = []
    for name in temporal:
        folder = Path(impact_dir) / "runs" / name
        _write_jsonl(folder / "temporal_pred.jsonl", temporal[name])
        _write_jsonl(folder / "spatial_pred.jsonl", spatial[name])
        paths += [folder / "temporal_pred.jsonl", folder / "spatial_pred.jsonl"]
    return paths
