"""Bad files -> a specific UserError (MediaError / DataFormatError) that names the file, never a
crash or a bare library message."""
from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.base.errors import DataFormatError, MediaError, UserError
from tests.robustness.media_files import SRT, png_bytes, write_audio_only, write_video

ROOT = Path(__file__).resolve().parents[2]


def _assert_names(exc: BaseException, *parts: str) -> str:
    msg = str(exc)
    for part in parts:
        assert part in msg, f"{part!r} not in {msg!r}"
    assert "Traceback" not in msg
    return msg


# -- media ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_video(tmp_path_factory) -> Path:
    return write_video(tmp_path_factory.mktemp("media") / "good.mp4")


@pytest.fixture(scope="module")
def bad_videos(tmp_path_factory, good_video) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("badmedia")
    data = good_video.read_bytes()
    files = {
        "zero-byte.mp4": b"",
        "truncated-half.mp4": data[: len(data) // 2],
        "truncated-head.mp4": data[:64],
        "subtitles-named.mp4": SRT.encode(),
        "png-named.mp4": png_bytes(),
        "garbage.mp4": bytes(range(256)) * 64,
        "nul.mp4": b"\x00" * 4096,
    }
    out = {}
    for name, content in files.items():
        (d / name).write_bytes(content)
        out[name] = d / name
    no_moov = write_video(d / "nomoov-src.mp4", faststart=False).read_bytes()
    (d / "truncated-nomoov.mp4").write_bytes(no_moov[: int(len(no_moov) * 0.7)])
    out["truncated-nomoov.mp4"] = d / "truncated-nomoov.mp4"
    out["audio-aac.mp4"] = write_audio_only(d / "audio-aac.mp4")
    out["audio.mp3"] = write_audio_only(d / "audio.mp3", codec="mp3", fmt="mp3")
    out["a-folder.mp4"] = d / "a-folder.mp4"
    out["a-folder.mp4"].mkdir()
    out["missing.mp4"] = d / "missing.mp4"
    return out


_VIDEO_HINTS = {"zero-byte.mp4": "empty", "audio-aac.mp4": "audio only", "audio.mp3": "audio only",
                "missing.mp4": "not found", "truncated-nomoov.mp4": "truncated"}


@pytest.mark.parametrize("name", ["zero-byte.mp4", "truncated-half.mp4", "truncated-head.mp4",
                                  "subtitles-named.mp4", "png-named.mp4", "garbage.mp4", "nul.mp4",
                                  "truncated-nomoov.mp4", "audio-aac.mp4", "audio.mp3", "a-folder.mp4",
                                  "missing.mp4"])
def test_bad_video_gives_media_error_naming_the_file(bad_videos, name):
    from components.media import open_video

    path = bad_videos[name]
    with pytest.raises(MediaError) as info:
        with open_video(path) as video:  # a half file may open: reading all frames must then fail
            video.frames_at_indices(range(video.num_frames), max_side=32)
    msg = _assert_names(info.value, name)
    if name in _VIDEO_HINTS:
        assert _VIDEO_HINTS[name] in msg, msg
    # the message says what to do, not only what the library said
    assert any(w in msg for w in ("copy", "give", "re-encode", "Check", "ffmpeg")), msg


_HUGE_SCRIPT = """
import resource, sys
sys.path.insert(0, {root!r})
from components.media import open_video
import decord, PIL.Image  # imports first: only the decoding is measured
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open_video({path!r}) as video:
    assert video.size == (4000, 3000), video.size
    frames = video.frames_at_indices([0, 1, 0, 1] * 8, max_side=256)
    assert [f.image.size for f in frames] == [(256, 192)] * 32, [f.image.size for f in frames]
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def test_huge_frames_are_sampled_without_blowing_memory(tmp_path):
    """4000x3000 frames (36 MB each as RGB): 32 samples at max_side=256 stay far below 32 x 36 MB."""
    path = write_video(tmp_path / "huge.mp4", frames=2, width=4000, height=3000, fps=2)
    proc = subprocess.run([sys.executable, "-c", _HUGE_SCRIPT.format(root=str(ROOT), path=str(path))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    grown_mib = float(proc.stdout.strip().splitlines()[-1])
    assert grown_mib < 400, f"peak memory grew by {grown_mib:.0f} MiB"


# -- subtitles ------------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "cp1252"])
def test_subtitles_in_other_encodings_decode(tmp_path, encoding):
    from components.media import load_subtitles

    path = tmp_path / f"subs-{encoding}.srt"
    path.write_bytes(SRT.encode(encoding))
    cues = load_subtitles(path)
    assert [c.text for c in cues] == ["Café au lait, naïve señor", "Second line"]
    assert (cues[0].start, cues[0].end) == (1.0, 2.5)


def test_shift_jis_subtitles_do_not_crash(tmp_path):
    from components.media import load_subtitles

    path = tmp_path / "sjis.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nこんにちは世界\n".encode("shift_jis"))
    try:
        cues = load_subtitles(path)
    except MediaError as exc:
        _assert_names(exc, "sjis.srt")
    else:  # read through the cp1252/latin-1 fallback: timing intact, text undecoded (mojibake)
        assert len(cues) == 1 and cues[0].start == 1.0


@pytest.mark.parametrize("content", [bytes(range(256)) * 8, b"\x00\x01\x02" * 100, png_bytes(),
                                     b"just some words with no timing at all\n" * 3,
                                     codecs.BOM_UTF16_LE + b"\x00\xd8" * 10])
def test_garbage_subtitles_give_media_error(tmp_path, content):
    from components.media import load_subtitles

    path = tmp_path / "garbage.srt"
    path.write_bytes(content)
    with pytest.raises(MediaError) as info:
        load_subtitles(path)
    _assert_names(info.value, "garbage.srt")


def test_missing_subtitles(tmp_path):
    from components.media import load_subtitles

    with pytest.raises(MediaError) as info:
        load_subtitles(tmp_path / "nope.srt")
    _assert_names(info.value, "nope.srt")


# -- grounding annotations ------------------------------------------------------------------------
def _grounding(**changes) -> dict:
    data = {"movies": [{"movie_id": "m1", "video": "m1.mp4", "subtitles": "m1.srt"}],
            "pairs": [{"pair_id": "p1", "movie_id": "m1", "contrast_attribute": "action",
                       "target": {"qid": "q1", "query": "a man runs", "interval": [1.0, 2.0]},
                       "confusable": {"qid": "q2", "query": "a man walks", "interval": [3.0, 4.0]}}]}
    for key, value in changes.items():
        exec(f"data{key} = value", {"data": data, "value": value})  # noqa: S102 - test data only
    return data


GROUNDING_BAD = [
    ({"['movies']": "m1"}, ["'movies'"]),
    ("['pairs'][0]['target']['interval']", None),
    ({"['pairs'][0]['target']['interval']": [2.0, 1.0]}, ["pairs[0]", "'interval'", "q1"]),
    ({"['pairs'][0]['target']['interval']": [-5.0, 1.0]}, ["pairs[0]", "'interval'"]),
    ({"['pairs'][0]['target']['interval']": ["a", "b"]}, ["pairs[0]", "'interval'"]),
    ({"['pairs'][0]['target']['interval']": [1e309, 2]}, ["pairs[0]", "'interval'"]),
    ({"['pairs'][0]['target']['interval']": [True, 2]}, ["pairs[0]", "'interval'"]),
    ({"['pairs'][0]['target']['interval']": None}, ["pairs[0]", "'interval'"]),
    ({"['pairs'][0]['confusable']['qid']": "q1"}, ["duplicate qid", "q1"]),
    ({"['pairs'][0]['movie_id']": "m9"}, ["pairs[0]", "'movie_id'", "m9"]),
    ({"['pairs'][0]['pair_id']": 7}, ["pairs[0]", "'pair_id'"]),
    ({"['movies'][0]['movie_id']": ""}, ["movies[0]", "'movie_id'"]),
    ({"['movies'][0]['video']": ["m1.mp4"]}, ["movies[0]", "'video'"]),
    ({"['movies'][0]['subtitles']": 3}, ["movies[0]", "'subtitles'"]),
    ({"['pairs'][0]['target']": "q1"}, ["pairs[0]", ").target"]),
    ({"['pairs'][0]['target']['query']": None}, ["pairs[0]", "'query'"]),
]


@pytest.mark.parametrize("case", range(len(GROUNDING_BAD)))
def test_grounding_annotations_bad_records(tmp_path, case):
    from components.window_search.data import load_annotations

    changes, expected = GROUNDING_BAD[case]
    if changes == "['pairs'][0]['target']['interval']":  # a missing key
        data = _grounding()
        del data["pairs"][0]["target"]["interval"]
        expected = ["pairs[0]", ").target", "'interval'"]
    else:
        data = _grounding(**changes)
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataFormatError) as info:
        load_annotations(path)
    _assert_names(info.value, str(path), *expected)


def test_grounding_duplicate_ids_and_out_of_movie_interval(tmp_path):
    from components.window_search.data import load_annotations

    data = _grounding()
    data["pairs"].append(dict(data["pairs"][0]))
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataFormatError) as info:
        load_annotations(path)
    _assert_names(info.value, "dup.json", "duplicate pair_id", "p1")
    path.write_text(json.dumps(_grounding()))
    with pytest.raises(DataFormatError) as info:
        load_annotations(path, durations={"m1": 3.5})
    _assert_names(info.value, "q2", "'interval'", "m1")


@pytest.mark.parametrize("content", [b"", b"{", b"[1, 2]", b"null", bytes(range(256)),
                                     "{\"movies\": []}".encode("utf-16")])
def test_grounding_unreadable_files(tmp_path, content):
    from components.window_search.data import load_annotations

    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(DataFormatError) as info:
        load_annotations(path)
    _assert_names(info.value, "broken.json")


def test_grounding_annotation_path_is_a_folder(tmp_path):
    from components.window_search.data import load_annotations

    with pytest.raises(UserError) as info:
        load_annotations(tmp_path)
    _assert_names(info.value, str(tmp_path))


@pytest.mark.parametrize("content", [b"not json\n", b'{"interval": [1, 2]}\n', b"[1]\n",
                                     b'{"qid": "q1"}\n{"qid": "q1"}\n', bytes(range(256))])
def test_grounding_bad_predictions(tmp_path, content):
    from components.window_search.data import load_predictions

    path = tmp_path / "pred.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataFormatError) as info:
        load_predictions(path)
    _assert_names(info.value, "pred.jsonl")


# -- impact annotations ---------------------------------------------------------------------------
def _impact(**item_changes) -> dict:
    item = {"qid": "h1", "video": "clip.mp4", "query": "a fall", "num_frames": 48,
            "moments": [[10, 20]], "frames": {"12": {"regions": ["head", "left hand"]}}}
    item.update(item_changes)
    return {"fps": 24, "items": [item]}


IMPACT_BAD = [
    (_impact(moments=[[20, 10]]), ["items[0]", "h1", "moments[0]"]),
    (_impact(moments=[[0, 10]]), ["moments[0]", "out of range"]),
    (_impact(moments=[[10, 4800]]), ["moments[0]", "out of range"]),
    (_impact(moments=[[1.5, 3]]), ["moments[0]"]),
    (_impact(moments="10-20"), ["'moments'"]),
    (_impact(num_frames="48"), ["'num_frames'"]),
    (_impact(num_frames=-1), ["'num_frames'"]),
    (_impact(qid=5), ["'qid'"]),
    (_impact(query=""), ["'query'"]),
    (_impact(frames={"x": {"regions": []}}), ["frames['x']"]),
    (_impact(frames={"99": {"regions": []}}), ["frames['99']", "out of range"]),
    (_impact(frames={"12": {"regions": ["left elbow"]}}), ["frames['12']", "left elbow"]),
    (_impact(frames={"12": {"regions": "head"}}), ["frames['12']", "'regions'"]),
    (_impact(frames={"12": {"vertices": [1]}}), ["frames['12']", "'regions'"]),
    (_impact(frames={"12": {"regions": [], "vertices": [-1]}}), ["frames['12']", "'vertices'"]),
    ({"fps": 24, "items": [_impact()["items"][0], _impact()["items"][0]]}, ["items[1]", "duplicate qid"]),
    ({"fps": "24", "items": []}, ["'fps'"]),
    ({"fps": 24}, ["'items'"]),
    ({"fps": 24, "items": {"h1": {}}}, ["'items'"]),
    ({"fps": 24, "items": [None]}, ["items[0]"]),
    ([1, 2], ["top level"]),
]


@pytest.mark.parametrize("case", range(len(IMPACT_BAD)))
def test_impact_annotations_bad_records(tmp_path, case):
    from components.impact.data import load_annotations

    data, expected = IMPACT_BAD[case]
    path = tmp_path / "impact.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataFormatError) as info:
        load_annotations(path)
    _assert_names(info.value, str(path), *expected)


def test_impact_missing_keys_each_named(tmp_path):
    from components.impact.data import load_annotations

    for key in ("qid", "video", "query", "num_frames", "moments"):
        data = _impact()
        del data["items"][0][key]
        path = tmp_path / f"missing-{key}.json"
        path.write_text(json.dumps(data))
        with pytest.raises(DataFormatError) as info:
            load_annotations(path)
        _assert_names(info.value, path.name, "items[0]", f"'{key}'")


@pytest.mark.parametrize("loader", ["load_annotations", "load_qv_gt", "load_qv_pred", "load_spatial_pred"])
@pytest.mark.parametrize("content", [b"", b"{oops", bytes(range(256)), b"\xff\xfe\x00\x00garbage"])
def test_impact_unreadable_files(tmp_path, loader, content):
    import components.impact.data as ann

    path = tmp_path / "broken.jsonl"
    path.write_bytes(content)
    if content == b"" and loader != "load_annotations":
        assert getattr(ann, loader)(path) in ([], {})  # an empty JSONL file is simply empty
        return
    with pytest.raises(DataFormatError) as info:
        getattr(ann, loader)(path)
    _assert_names(info.value, "broken.jsonl")


@pytest.mark.parametrize("line", ['{"qid": "h1", "pred_relevant_windows": [[1, 2]]}',
                                  '{"qid": "h1", "pred_relevant_windows": [[NaN, 2, 1]]}',
                                  '{"qid": "h1", "pred_relevant_windows": [[1e309, 2, 1]]}',
                                  '{"qid": "h1", "pred_relevant_windows": "1-2"}',
                                  '{"pred_relevant_windows": []}'])
def test_impact_bad_prediction_lines(tmp_path, line):
    from components.impact.data import load_qv_pred

    path = tmp_path / "pred.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(DataFormatError) as info:
        load_qv_pred(path)
    _assert_names(info.value, "pred.jsonl", "line 1")


# -- cloze layout ---------------------------------------------------------------------------------
def _cloze_tree(root: Path) -> Path:
    (root / "choices" / "stem1").mkdir(parents=True)
    return root


@pytest.mark.parametrize("case", ["no-choices", "empty-choices", "meta-garbage", "meta-list",
                                  "meta-missing-keys", "sets-garbage", "sets-list", "meta-utf16"])
def test_cloze_load_dataset_on_broken_trees(tmp_path, case):
    from components.cloze.data import load_dataset

    root = tmp_path / "data"
    root.mkdir()
    if case != "no-choices":
        (root / "choices").mkdir()
    if case not in ("no-choices", "empty-choices"):
        (root / "choices" / "stem1").mkdir()
    writes = {"meta-garbage": ("meta.json", bytes(range(256))), "meta-list": ("meta.json", b"[1]"),
              "meta-missing-keys": ("meta.json", b'{"stem1.mp4": {"gap_start": 1}}'),
              "sets-garbage": ("sets.json", b"{nope"), "sets-list": ("sets.json", b'["stem1"]'),
              "meta-utf16": ("meta.json", '{"stem1.mp4": {}}'.encode("utf-16"))}
    if case in writes:
        name, content = writes[case]
        (root / name).write_bytes(content)
    with pytest.raises(UserError) as info:
        load_dataset(root)
    msg = str(info.value)
    expected = {"no-choices": "choices", "empty-choices": "choices"}.get(case, writes.get(case, ("",))[0])
    assert expected in msg and str(root) in msg, msg


def test_cloze_stem_with_missing_clips_is_reported_not_crashed(tmp_path):
    from components.cloze.data import load_dataset

    root = tmp_path / "data"
    (root / "choices" / "stem1" / "S").mkdir(parents=True)
    (root / "choices" / "stem1" / "GT.mp4").write_bytes(b"")
    ds = load_dataset(root)
    problems = ds.problems()
    assert problems and all(isinstance(p, str) for p in problems)
    assert any("stem1" in p for p in problems), problems


# -- CLI ------------------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "app.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)


def _assert_clean_failure(proc: subprocess.CompletedProcess, *names: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for name in names:
        assert name in lines[0], lines[0]


def test_cli_bad_files_exit_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"movies": [{"movie_id": "m1"}], "pairs": []}')
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"qid": "q1", "interval": [1, 2]}\n')
    _assert_clean_failure(_cli("eval", "grounding", "--annotations", str(bad), "--predictions",
                               str(pred), "--json"), "bad.json", "'video'")
    garbage = tmp_path / "results.json"
    garbage.write_bytes(bytes(range(256)))
    _assert_clean_failure(_cli("eval", "cloze", "--results", str(garbage)), "results.json")
    gt = tmp_path / "gt.jsonl"
    gt.write_text('{"qid": "h1", "relevant_windows": [[1, 2]]}\n')
    badpred = tmp_path / "pred.jsonl"
    badpred.write_text('{"qid": "h1", "pred_relevant_windows": [[1, 2]]}\n')
    _assert_clean_failure(_cli("eval", "impact-temporal", "--gt", str(gt), "--pred", str(badpred),
                               "--json"), "pred.jsonl", "line 1")


@pytest.mark.parametrize("content", ['{"s": 5}', '{"s": {"S": "A"}}', '{"s": {"S": {"correct": "yes"}}}',
                                     "[1]", '{"s": {"S": {"answer": 1, "expected": ["B"]}}}',
                                     '{"s": {"Q": {}}}', "NaN", '{"s": null}', '{"s": {"S": null}}',
                                     '{"s": {"S": {"answer": "<A>", "option_map": 3}}}', "{}", '""'])
def test_cloze_result_files_with_wrong_types(tmp_path, content):
    from components.cloze.cli import load_results_file
    from components.cloze.metrics import score_results

    path = tmp_path / "results.json"
    path.write_text(content)
    try:
        metrics = score_results(load_results_file(path))
    except UserError as exc:
        _assert_names(exc, "results.json")
    else:
        assert isinstance(metrics, dict)
        json.dumps(metrics)  # serialisable for --json


@pytest.mark.parametrize("content", [bytes(range(256)) * 4, b"[1, 2]\n", b'"text"\n', b"\xff\xfe\x00x\n"])
def test_cli_human_study_files_that_are_not_records(tmp_path, content):
    path = tmp_path / "anon-1.jsonl"
    path.write_bytes(content)
    proc = _cli("eval", "cloze", "--human", "--results", str(path), "--json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr


def test_read_jsonl_skips_undecodable_lines(tmp_path):
    from components.base.io import read_jsonl

    path = tmp_path / "side.jsonl"
    path.write_bytes(b'{"key": "a"}\n' + bytes(range(128, 256)) + b'\n{"key": "b"}\n{"key": "\xe2\x82')
    assert read_jsonl(path) == [{"key": "a"}, {"key": "b"}]  # torn / garbage lines dropped, no crash


@pytest.mark.parametrize("content", [bytes(range(256)), b"[1]\n", b'{"key": "k"}\n', b"not json\n"])
def test_replay_trace_garbage_is_a_backend_error(tmp_path, content):
    from backends.errors import BackendError
    from backends.registry import resolve

    path = tmp_path / "trace.jsonl"
    path.write_bytes(content)
    with pytest.raises(BackendError) as info:
        resolve(f"replay:{path}")
    assert "trace.jsonl" in str(info.value)
