"""The players' files: a video probed once per version of the file, the data folder's files served
where they lie (no whole-file hash and copy per request), a non-browser format still converted."""
from __future__ import annotations

import os
from pathlib import Path

import gradio as gr
import pytest
from gradio import processing_utils

from components.common import players
from tests.media.ffmpeg_videos import require_ffmpeg, write_format
from tests.media.videos import write_index_video


@pytest.fixture
def counted_probe(monkeypatch):
    """gradio's own probe (it runs ffprobe), counting the files it is run on."""
    require_ffmpeg()
    runs: list[str] = []
    real = players._PROBE

    def probe(path: str) -> bool:
        runs.append(path)
        return real(path)

    monkeypatch.setattr(players, "_PROBE", probe)
    players._VERDICTS.clear()
    return runs


def test_a_file_is_probed_once_until_it_changes(tmp_path, counted_probe):
    movie = write_index_video(tmp_path / "m.mp4", 24)
    assert players.playable(str(movie)) is True
    assert players.playable(str(movie)) is True
    assert counted_probe == [str(movie)]
    write_index_video(movie, 48)                       # the same name, another file
    os.utime(movie, ns=(1, 1))                           # a distinct mtime even on a coarse clock
    assert players.playable(str(movie)) is True
    assert len(counted_probe) == 2


def test_a_format_browsers_cannot_play_is_said_so(tmp_path, counted_probe):
    avi = write_format(tmp_path, "mpeg4_avi")
    assert players.playable(str(avi)) is False
    assert players.playable(str(avi)) is False
    assert counted_probe == [str(avi)]


def test_the_data_folders_files_are_served_where_they_lie(tmp_path, counted_probe, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    movie = write_index_video(data / "m.mp4", 24)
    monkeypatch.setattr(processing_utils, "video_is_playable", processing_utils.video_is_playable)
    hashed: list[str] = []
    real_hash = processing_utils.hash_file
    monkeypatch.setattr(processing_utils, "hash_file", lambda p, *a, **k: hashed.append(str(p)) or real_hash(p, *a, **k))
    players.serve_in_place([str(data), str(data)])
    video = gr.Video(interactive=False)
    for _ in range(3):
        sent = processing_utils.move_files_to_cache(video.postprocess(str(movie)), video, postprocess=True)
        assert Path(sent["path"]).resolve() == movie.resolve()   # not a copy in gradio's cache
    assert hashed == []                  # no whole-file hash on any request
    players.serve_in_place([str(data)])  # a second launch over the same folder adds nothing
    from gradio.data_classes import _StaticFiles
    assert _StaticFiles.all_paths.count(data.resolve()) == 1
    assert counted_probe == [str(movie)]  # one probe for three sends


def test_an_image_sent_again_leaves_the_file_a_page_may_be_reading(tmp_path, monkeypatch):
    """gradio rewrote the cached file of an image (truncated, then written) each time the same
    image was sent: a browser reading it meanwhile got a broken image (the Cloze question's clips
    on a loaded machine). The file is written once, by a rename, and left alone after."""
    from PIL import Image

    monkeypatch.setattr(processing_utils, "save_pil_to_cache", processing_utils.save_pil_to_cache)
    monkeypatch.setattr(processing_utils, "video_is_playable", processing_utils.video_is_playable)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    players.probe_videos_once()
    picture = Image.new("RGB", (64, 48), (200, 30, 30))
    image = gr.Image(type="pil", format="jpeg")
    first = Path(image.postprocess(picture).path)
    os.utime(first, ns=(1, 1))                          # a distinct mtime even on a coarse clock
    before = first.stat()
    second = Path(image.postprocess(picture).path)
    assert second == first
    after = first.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, 1, before.st_size)
    whole = first.read_bytes()
    first.write_bytes(whole[:10])                        # a file cut short (a write that was killed)
    assert Path(image.postprocess(picture).path).read_bytes() == whole
    assert not [p.name for p in first.parent.iterdir() if p.name != first.name]   # no temp file left


def test_a_kept_image_is_encoded_once_and_forgotten_with_it(tmp_path, monkeypatch):
    """A Cloze clip's frame grid, kept by the frame cache, is sent on every view of its question:
    encoded once (gradio encodes every image it sends only to name its file), into the same file.
    Any other image is encoded each time (it may have changed); a kept one's entry goes with it."""
    import gc

    from PIL import Image

    from components.media import mark_kept

    monkeypatch.setattr(processing_utils, "save_pil_to_cache", processing_utils.save_pil_to_cache)
    monkeypatch.setattr(processing_utils, "video_is_playable", processing_utils.video_is_playable)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    players.probe_videos_once()
    encoded = []
    encode = processing_utils.encode_pil_to_bytes
    monkeypatch.setattr(processing_utils, "encode_pil_to_bytes", lambda im, fmt="png": encoded.append(im) or encode(im, fmt))
    image = gr.Image(type="pil", format="jpeg")
    grid = mark_kept(Image.new("RGB", (64, 48), (20, 130, 30)))
    first = image.postprocess(grid).path
    assert image.postprocess(grid).path == first and len(encoded) == 1
    Path(first).write_bytes(b"cut")                      # the file damaged: written again, whole
    assert image.postprocess(grid).path == first and len(encoded) == 2
    assert Path(first).stat().st_size > 100
    plain = Image.new("RGB", (64, 48), (20, 30, 130))
    image.postprocess(plain)
    image.postprocess(plain)
    assert len(encoded) == 4
    before = len(players._SENT)
    del grid, encoded[:]
    gc.collect()
    assert len(players._SENT) == before - 1
