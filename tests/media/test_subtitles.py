"""SRT / WebVTT loading (pysubs2), encodings, windows."""
from __future__ import annotations

import pytest

from components.base.errors import MediaError
from components.media import Cue, cues_in_window, load_subtitles

SRT = """1
00:00:01,000 --> 00:00:02,500
<i>Hello</i> there,
<b>General</b> Kenobi.

2
00:01:02,250 --> 00:01:04,000
{\\an8}Second cue

"""

VTT = """WEBVTT

00:00:01.000 --> 00:00:02.500
<v Obi-Wan>Hello there</v>

NOTE a comment block
over two lines

cue-2
00:00:03.000 --> 00:00:04.000 align:start
<c.yellow>Line one</c>
line two
"""


def test_srt_strips_tags_and_joins_lines(tmp_path):
    p = tmp_path / "a.srt"
    p.write_text(SRT, encoding="utf-8")
    assert load_subtitles(p) == [Cue(1.0, 2.5, "Hello there, General Kenobi."),
                                 Cue(62.25, 64.0, "Second cue")]


def test_vtt(tmp_path):
    p = tmp_path / "a.vtt"
    p.write_text(VTT, encoding="utf-8")
    assert load_subtitles(p) == [Cue(1.0, 2.5, "Hello there"), Cue(3.0, 4.0, "Line one line two")]


def test_utf8_bom_and_utf16_bom(tmp_path):
    text = SRT.replace("there", "thére")
    a = tmp_path / "bom.srt"
    a.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    b = tmp_path / "u16.srt"
    b.write_bytes(text.encode("utf-16"))  # with BOM
    assert load_subtitles(a)[0].text == load_subtitles(b)[0].text == "Hello thére, General Kenobi."


def test_cp1252_srt(tmp_path):
    p = tmp_path / "cp.srt"
    p.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nCafé “quoted” – ok\n".encode("cp1252"))
    assert load_subtitles(p) == [Cue(1.0, 2.0, "Café “quoted” – ok")]


def test_undecodable_subtitles_name_file_and_fix(tmp_path):
    p = tmp_path / "junk.srt"
    p.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(MediaError) as err:
        load_subtitles(p)
    assert "junk.srt" in str(err.value) and "re-save it as UTF-8" in str(err.value)


def test_text_without_cues_is_an_error(tmp_path):
    p = tmp_path / "notes.srt"
    p.write_text("just some notes, no timings\n", encoding="utf-8")
    with pytest.raises(MediaError, match=r"notes\.srt.*re-save it as UTF-8"):
        load_subtitles(p)


def test_missing_and_empty_subtitles(tmp_path):
    with pytest.raises(MediaError, match=r"subtitle file not found: .*nope\.srt"):
        load_subtitles(tmp_path / "nope.srt")
    (tmp_path / "empty.srt").write_bytes(b"")
    assert load_subtitles(tmp_path / "empty.srt") == []


def test_cues_in_window_overlap():
    cues = [Cue(0, 5, "a"), Cue(5, 10, "b"), Cue(9, 12, "c"), Cue(20, 21, "d"), Cue(7, 7, "z")]
    assert [c.text for c in cues_in_window(cues, 5, 9.5)] == ["b", "c", "z"]
    assert [c.text for c in cues_in_window(cues, 4.9, 5)] == ["a"]
    assert [c.text for c in cues_in_window(cues, 12, 20)] == []
    assert [c.text for c in cues_in_window(cues, 0, 100)] == ["a", "b", "c", "d", "z"]
