"""scripts/make_realsize.py at a small size: what it writes loads with the app's own loaders."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.cloze.data import load_dataset
from components.cloze.questions import build_set
from components.impact.data import load_annotations as load_impact
from components.media import open_video
from components.window_search.data import load_annotations as load_grounding

ROOT = Path(__file__).resolve().parents[2]
SIZES = ["--hours", "0.01", "--base-seconds", "10", "--movies", "4", "--queries", "20",
         "--stems", "9", "--clips", "11"]


def make(out: Path, examples: Path) -> dict:
    proc = subprocess.run([sys.executable, "scripts/make_realsize.py", "--out", str(out),
                           "--examples", str(examples), *SIZES], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def realsize(tmp_path_factory, example_data_dir) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("realsize")
    return out, make(out, example_data_dir)


def test_the_movie_is_720p_h264_of_the_asked_length(realsize):
    out, report = realsize
    video = open_video(out / "grounding" / "movies" / "m03.mp4")
    try:
        assert video.size == (1280, 720)
        # 36 s asked: whole 10 s GOPs, so 40 s
        assert video.duration == pytest.approx(40.0, abs=0.05)
        assert video.num_frames == 40 * 24
    finally:
        video.close()
    assert report["grounding"]["movie_seconds"] == pytest.approx(40.0)
    frames = video_frames_at(out / "grounding" / "movies" / "base.mp4", [0, 239, 240, 959])
    assert frames[0] == frames[2] and frames[1] != frames[2]  # the second GOP repeats the first


def video_frames_at(path: Path, indices: list[int]) -> list[bytes]:
    video = open_video(path)
    try:
        return [f.image.tobytes() for f in video.frames_at_indices(indices)]
    finally:
        video.close()


def test_grounding_annotations_load_with_every_movie_a_link_to_one_file(realsize):
    out, _ = realsize
    ann = load_grounding(out / "grounding" / "annotations.json", check_files=True,
                         durations={f"m{n:02d}": 40.0 for n in range(1, 5)})
    assert len(ann.movies) == 4 and len(ann.queries) == 20
    assert {q.movie_id for q in ann.queries} == set(ann.movies)
    base = (out / "grounding" / "movies" / "base.mp4").resolve()
    for movie in ann.movies.values():
        assert movie.video.is_symlink() and movie.video.resolve() == base
        assert movie.subtitles is not None and movie.subtitles.read_text().startswith("1\n")


def test_cloze_stems_are_hard_links_and_load_as_questions(realsize, example_data_dir):
    out, _ = realsize
    ds = load_dataset(out / "cloze")
    qs = build_set(ds, "all", ["S", "A", "C"])
    assert len(ds.instances) == 9 and len(qs.questions) == 27 and not qs.skipped
    gt = next(iter(ds.instances.values())).folder / "GT.mp4"
    assert os.stat(gt).st_nlink >= 2  # a hard link, not a copy per stem
    assert all(ds.instances[s].meta.get("gap_end") for s in ds.instances)


def test_impact_annotations_load_with_hard_linked_clips(realsize):
    out, _ = realsize
    ann = load_impact(out / "impact" / "annotations.json")
    assert len(ann.items) == 11 and len({it.qid for it in ann.items}) == 11
    assert all(Path(it.video).is_file() and os.stat(it.video).st_nlink >= 2 for it in ann.items)
    assert all(it.moments for it in ann.items)


def test_a_rerun_with_the_same_sizes_reuses_everything(realsize, example_data_dir):
    out, first = realsize
    movie = out / "grounding" / "movies" / "base.mp4"
    before = movie.stat().st_mtime_ns
    again = make(out, example_data_dir)
    assert again["reused"] is True and movie.stat().st_mtime_ns == before
    assert {k: again[k] for k in ("grounding", "cloze", "impact")} == \
        {k: first[k] for k in ("grounding", "cloze", "impact")}
