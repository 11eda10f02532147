#!/usr/bin/env python
"""Data of the real benchmarks' size, made in minutes (for `make bench`; never committed).

    python scripts/make_realsize.py [--out data/realsize] [--examples data] [--small]

writes a data directory (`python app.py --data-dir data/realsize`) holding
  grounding/movies/base.mp4     a two-hour 1280x720 H.264 movie, 24 fps, a keyframe every 10 s:
                                `--base-seconds` are encoded once and their packets muxed again with
                                shifted timestamps (closed GOPs: it decodes like a full encode
                                whose picture repeats); base.srt, one subtitle every 6 s
  grounding/movies/mNN.mp4/.srt 46 symlinks to them (CoM2-Bench: 46 movies)
  grounding/annotations.json    1,507 confusable pairs = 3,014 queries over the 46 movies
  cloze/choices/<stem>/...      1,521 stems (TempCloze), each a hard-linked copy of one example stem
                                (its 12 clips), with meta.json and sets.json
  impact/annotations.json       433 clips (HAPACT), clips/hNNNN.mp4 hard links of the example clips
                                with their moments and annotated frames
The example data (`python -m examples.generate`) is the source of the cloze and impact clips; it is
generated into --examples when missing. A rerun with the same sizes reuses everything already made
(`realsize.json` records the sizes); --small makes a minutes-long movie and a few items of each.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT  # noqa: E402

WIDTH, HEIGHT, FPS, GOP = 1280, 720, 24, 240
FULL = {"hours": 2.0, "movies": 46, "queries": 3014, "stems": 1521, "clips": 433, "base_seconds": 60}
SMALL = {"hours": 2 / 60, "movies": 3, "queries": 12, "stems": 8, "clips": 9, "base_seconds": 20}

NAMES = ("Lloyd", "Harry", "Mary", "Joe", "Ada", "Rita")
PLACES = ("a snowy street", "a desert road", "a kitchen", "an office", "a train station", "a beach")
ACTIONS = ("walks", "sits down", "waves", "jumps", "argues", "laughs", "runs", "reads a letter")
LINES = ("{a}, wait for me!", "Did you see that, {a}?", "We should leave before dark.",
         "{a}, I told you about the money.", "This place again?", "Keep walking, {a}.",
         "I never said that.", "Where is {b}?", "{a} and {b}, over here!", "It's freezing out here.")


# -- the movie ---------------------------------------------------------------------------------------

def write_movie(path: Path, seconds: float, base_seconds: int) -> float:
    """The long movie (see the module doc); returns seconds taken, 0 when it exists already."""
    import av
    import numpy as np

    if path.exists():
        return 0.0
    t0 = time.perf_counter()
    total = int(round(seconds * FPS))
    base = min(total, base_seconds * FPS)
    base -= base % GOP if base >= GOP else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    # low-detail scenes (a colour field, a moving block, a band): cheap to encode, ~1 Mbit/s
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH]
    shade = ((xx // 8 + yy // 8) % 32).astype(np.uint8)
    tmp = path.with_suffix(".tmp.mp4")
    with av.open(str(tmp), "w", format="mp4", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.codec_context.gop_size = GOP
        stream.options = {"crf": "30", "preset": "veryfast",
                          "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0:open-gop=0"}
        kept: list = []

        def mux(packets) -> None:
            for p in packets:
                kept.append((bytes(p), p.pts, p.dts, p.time_base, p.is_keyframe))
                container.mux(p)

        rgb = np.empty((HEIGHT, WIDTH, 3), np.uint8)
        for i in range(base):
            scene = i // (10 * FPS)  # a new "scene" every 10 s
            rgb[..., 0] = 40 + (scene * 53) % 160 + shade
            rgb[..., 1] = 40 + (scene * 97) % 160
            rgb[..., 2] = 40 + (scene * 31) % 160 + shade // 2
            x = (i * 6) % (WIDTH - 160)
            rgb[300:460, x:x + 160] = (240, 240, 240)
            band = (i * 2) % HEIGHT
            rgb[band:band + 12] = 20
            mux(stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")))
        mux(stream.encode())
        _repeat_gops(container, stream, kept, base, total)
    tmp.rename(path)
    return time.perf_counter() - t0


def _repeat_gops(container, stream, packets: list, base_frames: int, total_frames: int) -> None:
    """Mux the encoded GOPs again, shifted in time, until `total_frames` (rounded up to a whole
    GOP; closed GOPs decode on their own)."""
    import av

    gops: list[list] = []
    for packet in packets:
        if packet[4] or not gops:
            gops.append([])
        gops[-1].append(packet)
    done = base_frames
    while done < total_frames:
        for n, gop in enumerate(gops):
            if done >= total_frames:
                break
            shift_s = (done - n * GOP) / FPS
            for data, pts, dts, tb, key in gop:
                shift = int(round(shift_s / tb))
                packet = av.Packet(data)
                packet.pts, packet.dts, packet.time_base, packet.stream = pts + shift, dts + shift, tb, stream
                packet.is_keyframe = key
                container.mux(packet)
            done += GOP


def _srt_time(s: float) -> str:
    ms = int(round(s * 1000))
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def write_subtitles(path: Path, seconds: float, rng: random.Random) -> None:
    cues = []
    for n, start in enumerate(range(1, int(seconds) - 4, 6), 1):
        a, b = rng.sample(NAMES, 2)
        text = rng.choice(LINES).format(a=a, b=b)
        cues.append(f"{n}\n{_srt_time(start)} --> {_srt_time(start + 4)}\n{text}\n")
    path.write_text("\n".join(cues), encoding="utf-8")


def _relink(link: Path, target: str) -> None:
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


def make_grounding(out: Path, sizes: dict, rng: random.Random) -> dict:
    movies_dir = out / "movies"
    seconds = movie_seconds(sizes["hours"] * 3600)
    took = write_movie(movies_dir / "base.mp4", seconds, sizes["base_seconds"])
    write_subtitles(movies_dir / "base.srt", seconds, rng)
    movies = []
    for n in range(1, sizes["movies"] + 1):
        mid = f"m{n:02d}"
        _relink(movies_dir / f"{mid}.mp4", "base.mp4")  # relative: the folder can be moved
        _relink(movies_dir / f"{mid}.srt", "base.srt")
        movies.append({"movie_id": mid, "video": f"movies/{mid}.mp4", "subtitles": f"movies/{mid}.srt"})
    pairs = []
    attributes = ("subject", "visual anchor", "core action", "motion", "interaction", "setting",
                  "temporal composition")
    for n in range(sizes["queries"] // 2):
        mid = movies[n % len(movies)]["movie_id"]
        name, other = rng.sample(NAMES, 2)
        action = rng.choice(ACTIONS)
        place, elsewhere = rng.sample(PLACES, 2)
        length = rng.uniform(min(8.0, seconds / 8), min(60.0, seconds / 4))
        t0 = rng.uniform(0, seconds / 2 - length)
        c0 = rng.uniform(seconds / 2, seconds - length)
        if rng.random() < 0.5:
            t0, c0 = c0, t0
        pid = f"p{n + 1:04d}"
        pairs.append({"pair_id": pid, "movie_id": mid, "contrast_attribute": attributes[n % len(attributes)],
                      "target": {"qid": f"{pid}_t", "query": f"{name} {action} in {place} while {other} watches.",
                                 "interval": [round(t0, 2), round(t0 + length, 2)]},
                      "confusable": {"qid": f"{pid}_c", "query": f"{name} {action} in {elsewhere} while {other} watches.",
                                     "interval": [round(c0, 2), round(c0 + length, 2)]}})
    (out / "annotations.json").write_text(json.dumps({"movies": movies, "pairs": pairs}) + "\n")
    return {"movie_seconds": seconds, "movie_encode_s": round(took, 1),
            "queries": 2 * len(pairs)}


def movie_seconds(seconds: float) -> float:
    """The movie's real length: whole GOPs (10 s)."""
    gops = -(-int(round(seconds * FPS)) // GOP)
    return gops * GOP / FPS


# -- cloze and impact: links of the example clips ------------------------------------------------------

def _link(src: Path, dst: Path, spare: Path) -> None:
    """Hard link `src` at `dst`; across file systems, link a copy kept under `spare`."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        copy = spare / src.parent.name / src.name
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy)
        os.link(copy, dst)


def make_cloze(out: Path, source: Path, stems: int) -> dict:
    meta = json.loads((source / "meta.json").read_text())
    base_stems = sorted(p.name for p in (source / "choices").iterdir() if p.is_dir())
    choices = out / "choices"
    if choices.exists():
        shutil.rmtree(choices)
    new_meta, names = {}, []
    for n in range(stems):
        base = base_stems[n % len(base_stems)]
        stem = f"{base}_{n:04d}"
        names.append(stem)
        for clip in sorted((source / "choices" / base).rglob("*.mp4")):
            _link(clip, choices / stem / clip.relative_to(source / "choices" / base), out / ".spare")
        if f"{base}.mp4" in meta:
            new_meta[f"{stem}.mp4"] = meta[f"{base}.mp4"]
    (out / "meta.json").write_text(json.dumps(new_meta) + "\n")
    (out / "sets.json").write_text(json.dumps({"first_100": names[:100]}) + "\n")
    return {"stems": stems}


def make_impact(out: Path, source: Path, clips: int) -> dict:
    raw = json.loads((source / "annotations.json").read_text())
    items = []
    for n in range(clips):
        base = raw["items"][n % len(raw["items"])]
        qid = f"h{n + 1:04d}"
        _link(source / base["video"], out / "clips" / f"{qid}.mp4", out / ".spare")
        items.append(dict(base, qid=qid, video=f"clips/{qid}.mp4", source_qid=base["qid"]))
    (out / "annotations.json").write_text(json.dumps(dict(raw, items=items)) + "\n")
    return {"clips": clips}


def ensure_examples(examples: Path) -> None:
    from examples.generate import is_complete

    missing = [p for p in ("cloze", "impact") if not is_complete(examples, p)]
    if missing:
        print(f"generating the example {', '.join(missing)} data in {examples} ...", flush=True)
        subprocess.run([sys.executable, "-m", "examples.generate", "--out", str(examples), "--only",
                        ",".join(missing)], cwd=ROOT, check=True)


def make_realsize(out: Path, examples: Path, sizes: dict, seed: int = 0) -> dict:
    """Write (or reuse) the whole data directory; returns what was made."""
    out = Path(out)
    stamp = out / "realsize.json"
    wanted = {"sizes": sizes, "seed": seed}
    if stamp.exists():
        done = json.loads(stamp.read_text())
        if {k: done.get(k) for k in wanted} == wanted:
            return {**done, "reused": True}
        movie = out / "grounding" / "movies" / "base.mp4"
        if done.get("sizes", {}).get("hours") != sizes["hours"] \
                or done.get("sizes", {}).get("base_seconds") != sizes["base_seconds"]:
            movie.unlink(missing_ok=True)
    ensure_examples(examples)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    report = {**wanted,
              "grounding": make_grounding(out / "grounding", sizes, rng),
              "cloze": make_cloze(out / "cloze", examples / "cloze", sizes["stems"]),
              "impact": make_impact(out / "impact", examples / "impact", sizes["clips"])}
    report["seconds"] = round(time.perf_counter() - t0, 1)
    stamp.write_text(json.dumps(report, indent=1) + "\n")
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="\n".join(__doc__.splitlines()[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "realsize", help="data directory to write")
    ap.add_argument("--examples", type=Path, default=ROOT / "data",
                    help="example data directory (cloze/, impact/): the clips' source")
    ap.add_argument("--small", action="store_true", help="a 2-minute movie and a few items of each")
    for key, value in FULL.items():
        ap.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=None,
                        help=f"override (full size {value}, --small {SMALL[key]})")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes = dict(SMALL if args.small else FULL)
    for key in FULL:
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    if sizes["queries"] % 2 or min(sizes["movies"], sizes["stems"], sizes["clips"]) < 1 or sizes["hours"] <= 0:
        ap.error("--queries must be even (pairs) and every size positive")
    report = make_realsize(args.out, args.examples, sizes, seed=args.seed)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
