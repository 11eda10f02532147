"""Path traversal (zip upload, annotator ids, annotation paths) and upload / duration limits."""
from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest

from components.base.errors import DataFormatError, UserError


# -- cloze zip upload -----------------------------------------------------------------------------
def _zip(path: Path, entries: list[tuple[str, bytes]], *, symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "choices/../../x", "/abs/x", "/etc/passwd",
                                  "\\abs\\x", "..\\..\\x", "C:/x", "C:\\x", "choices/stem/../../../x"])
def test_zip_upload_refuses_escaping_names(tmp_path, name):
    from components.cloze.data import safe_extract_zip

    archive = _zip(tmp_path / "up.zip", [("choices/s1/GT.mp4", b"x"), (name, b"evil")])
    dest = tmp_path / "dest"
    with pytest.raises(UserError) as info:
        safe_extract_zip(archive, dest)
    assert "up.zip" in str(info.value)
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()
    assert not any(dest.rglob("*")) if dest.exists() else True  # nothing extracted at all


def test_zip_upload_refuses_symlinks(tmp_path):
    from components.cloze.data import safe_extract_zip

    archive = _zip(tmp_path / "up.zip", [("choices/s1/GT.mp4", b"x")], symlink="choices/s1/link")
    with pytest.raises(UserError) as info:
        safe_extract_zip(archive, tmp_path / "dest")
    assert "symbolic link" in str(info.value)


def test_zip_upload_limits_and_garbage(tmp_path):
    from components.cloze.data import safe_extract_zip

    archive = _zip(tmp_path / "many.zip", [(f"choices/s{i}/GT.mp4", b"x") for i in range(5)])
    with pytest.raises(UserError, match="limit"):
        safe_extract_zip(archive, tmp_path / "d1", max_files=3)
    big = _zip(tmp_path / "big.zip", [("choices/s1/GT.mp4", b"\x00" * 50_000)])
    with pytest.raises(UserError, match="MiB"):
        safe_extract_zip(big, tmp_path / "d2", max_bytes=10_000)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(UserError, match="junk.zip"):
        safe_extract_zip(junk, tmp_path / "d3")
    ok = _zip(tmp_path / "ok.zip", [("choices/s1/GT.mp4", b"x")])
    assert (safe_extract_zip(ok, tmp_path / "d4") / "choices" / "s1" / "GT.mp4").read_bytes() == b"x"


# -- human-study annotator ids --------------------------------------------------------------------
@pytest.mark.parametrize("value", ["../../etc/passwd", "..", ".", "/etc/passwd", "a/b", "a\\b", "",
                                   "   ", None, "x" * 65, "anon\x00", "an\non", "ànon", "anon 17",
                                   "\u202eanon", "CON:", "~root", "$HOME", "a;rm -rf"])
def test_annotator_ids_are_confined(tmp_path, value):
    from components.cloze.human import annotator_file, sanitise_annotator

    with pytest.raises(UserError):
        sanitise_annotator(value)
    with pytest.raises(UserError):
        annotator_file(tmp_path, value)


def test_valid_annotator_file_stays_in_its_folder(tmp_path):
    from components.cloze.human import annotator_file

    for value in ("anon-17", "A_b-9", "x" * 64, " anon-17 "):
        path = annotator_file(tmp_path, value).resolve()
        assert path.parent == tmp_path.resolve() and path.suffix == ".jsonl"


# -- annotation paths outside the annotation file's folder ----------------------------------------
ESCAPES = ["../../../../etc/passwd", "/etc/passwd"]


def _confined_or_refused(load, path: Path, video_of) -> None:
    """Either a clear DataFormatError naming the key, or a path inside the file's folder."""
    try:
        result = load(path)
    except DataFormatError as exc:
        assert "video" in str(exc) and path.name in str(exc), str(exc)
        return
    resolved = Path(video_of(result)).resolve()
    root = path.parent.resolve()
    assert resolved == root or root in resolved.parents, \
        f"{path.name}: video path {resolved} lies outside {root}"


@pytest.mark.parametrize("video", ESCAPES)
def test_grounding_annotation_video_paths_are_confined(tmp_path, video):
    from components.window_search.data import load_annotations

    data = {"movies": [{"movie_id": "m1", "video": video}], "pairs": [{
        "pair_id": "p1", "movie_id": "m1", "contrast_attribute": "action",
        "target": {"qid": "q1", "query": "x", "interval": [1, 2]},
        "confusable": {"qid": "q2", "query": "y", "interval": [3, 4]}}]}
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "ann.json"
    path.write_text(json.dumps(data))
    _confined_or_refused(load_annotations, path, lambda a: a.movie("m1").video)


@pytest.mark.parametrize("video", ESCAPES)
def test_impact_annotation_video_paths_are_confined(tmp_path, video):
    from components.impact.data import load_annotations

    data = {"fps": 24, "items": [{"qid": "h1", "video": video, "query": "x", "num_frames": 10,
                                  "moments": [[1, 2]]}]}
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "impact.json"
    path.write_text(json.dumps(data))
    _confined_or_refused(load_annotations, path, lambda a: a.items[0].video)


# -- limits ---------------------------------------------------------------------------------------
def test_upload_size_limit_is_configured(monkeypatch):
    from components.common.uploads import max_upload

    monkeypatch.delenv("APP_MAX_UPLOAD", raising=False)

    source = (Path(__file__).resolve().parents[2] / "app.py").read_text(encoding="utf-8")
    assert "max_file_size=max_upload()" in source
    assert max_upload() == "2gb"
    monkeypatch.setenv("APP_MAX_UPLOAD", "500mb")
    assert max_upload() == "500mb"


@pytest.mark.parametrize("duration,ok", [(11.99, False), (12.0, True), (45.0, True), (90.0, True),
                                         (90.01, False), (0.0, False), (float("inf"), False)])
def test_cloze_build_duration_rule(duration, ok):
    from components.cloze.gaps import duration_problem

    problem = duration_problem(duration)
    assert (problem is None) == ok, problem
    if not ok:
        assert "12" in problem or "90" in problem, problem


@pytest.mark.parametrize("stem", ["..", "../escape"])
def test_cloze_build_stem_cannot_leave_choices(tmp_path, stem):
    """The UI names an instance after the uploaded file (`_safe_name` keeps dots, so "...mp4" gives
    the stem ".."): build_instance must refuse such a stem or keep the clips in choices/<stem>/."""
    from components.cloze.build import build_instance
    from tests.robustness.media_files import write_video

    video = write_video(tmp_path / "src.mp4", frames=12 * 13, fps=12)
    out_root = tmp_path / "data" / "cloze"
    try:
        build_instance(video, out_root, stem=stem, gap=(4.0, 7.0), seed=0)
    except UserError as exc:
        assert stem in str(exc) or "stem" in str(exc), str(exc)
        return
    choices = (out_root / "choices").resolve()
    written = [p.resolve() for p in tmp_path.rglob("*.mp4") if p.name != "src.mp4"]
    assert written and all(choices in p.parents and p.parent != choices for p in written), \
        [str(p) for p in written if choices not in p.parents or p.parent == choices]
