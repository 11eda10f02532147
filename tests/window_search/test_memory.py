"""Character memory: docs/formats.md load/save, add/remove references atomically, name matching, and
offline name extraction from dialogue."""
from __future__ import annotations

import json

import pytest
from PIL import Image

from backends.config import ApiSettings
from backends.registry import resolve
from components.base.errors import DataFormatError, UserError
from components.media import Cue, DiskCache, load_subtitles
from components.window_search.memory import CharacterMemory, build_names_only, build_with_vlm, name_mentions
from components.window_search.movie import Movie
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.window_search.conftest import write_srt, write_test_video


def _memory_file(tmp_path):
    (tmp_path / "memory" / "m01").mkdir(parents=True)
    Image.new("RGB", (8, 8), (0, 0, 255)).save(tmp_path / "memory" / "m01" / "C1_r1.jpg")
    data = {"movie_id": "m01", "characters": [
        {"char_id": "C1", "display_name": "Lloyd Christmas", "names": ["Lloyd", "Lloyd Christmas"],
         "references": [{"ref_id": "C1:r1", "image": "m01/C1_r1.jpg", "time": 12.0}]},
        {"char_id": "C2", "display_name": "Harry", "names": ["Harry"], "references": []},
        {"char_id": "C3", "display_name": "Mary Swanson", "names": ["Mary", "Mary Swanson"], "references": []}]}
    path = tmp_path / "memory" / "m01.json"
    path.write_text(json.dumps(data))
    return path


def test_load_and_match_whole_word_case_insensitive(tmp_path):
    mem = CharacterMemory.load(_memory_file(tmp_path))
    ids = lambda q: [c.char_id for c in mem.match_characters(q)]  # noqa: E731
    assert ids("Lloyd and harry walk on a snowy street") == ["C1", "C2"]
    assert ids("LLOYD waves.") == ["C1"]
    assert ids("Harrys hat is on the floor") == []          # not a whole word
    assert ids("Marybeth sings") == []
    assert ids("Mary Swanson waves") == ["C3"]
    assert ids("A man walks his dog in the park.") == []    # names nobody
    ref = mem.characters[0].references[0]
    img = mem.load_reference_image(ref)
    assert img is not None and img.size == (8, 8)


def test_add_and_remove_reference_save_json_and_image(tmp_path):
    path = _memory_file(tmp_path)
    mem = CharacterMemory.load(path)
    ref = mem.add_reference("C2", Image.new("RGB", (10, 6), (255, 128, 0)), time=240.0)
    assert ref.ref_id == "C2:r1"
    assert (tmp_path / "memory" / "m01" / "C2_r1.jpg").is_file()
    on_disk = json.loads(path.read_text())
    stored = on_disk["characters"][1]["references"]
    assert stored == [{"ref_id": "C2:r1", "image": "m01/C2_r1.jpg", "time": 240.0}]
    again = CharacterMemory.load(path)
    assert again.load_reference_image(again.characters[1].references[0]).size == (10, 6)
    again.remove_reference("C2:r1")
    assert json.loads(path.read_text())["characters"][1]["references"] == []
    assert not (tmp_path / "memory" / "m01" / "C2_r1.jpg").exists()
    with pytest.raises(UserError, match="C9:r1"):
        again.remove_reference("C9:r1")
    with pytest.raises(UserError, match="C9"):
        again.add_reference("C9", Image.new("RGB", (4, 4)))
    assert not list((tmp_path / "memory").rglob(".tmp-*"))  # no temporary files left behind


def test_bad_memory_file_names_the_key(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"movie_id": "m01", "characters": [{"char_id": "C1"}]}))
    with pytest.raises(DataFormatError, match=r"characters\[0\] has no key 'names'"):
        CharacterMemory.load(path)


def test_offline_names_from_address_and_introductions():
    cues = [Cue(0, 1, "Good morning. I'm Lloyd."), Cue(2, 3, "Harry, are you coming?"),
            Cue(4, 5, "Keep walking, Lloyd."), Cue(6, 7, "Hey, I'm Harry. Wait for me!"),
            Cue(8, 9, "Yes! I made it!"), Cue(10, 11, "Finally, my own desk."),
            Cue(12, 13, "Hello there, I'm Mary."), Cue(14, 15, "We met Paris in Rome.")]
    found = name_mentions(cues)
    assert set(found) == {"Lloyd", "Harry", "Mary"}
    mem = build_names_only("m01", cues)
    assert [c.display_name for c in mem.characters] == ["Harry", "Lloyd"]  # Mary only once (< 2)
    assert all(c.references == [] for c in mem.characters)


def test_offline_memory_of_the_example_movie(grounding_examples):
    mem = build_names_only("m01", load_subtitles(grounding_examples / "movies" / "m01.srt"))
    assert sorted(c.display_name for c in mem.characters) == ["Harry", "Lloyd", "Mary"]


def test_vlm_memory_picks_frames_per_clip_over_http(tmp_path):
    """Reduced D.2 against a real HTTP server: one call per 30 s clip; a name is kept only with
    two supporting clips; an unparsable reply is retried then counted, never guessed."""
    video = write_test_video(tmp_path / "v.mp4", 120.0, fps=1.0, size=(32, 32))
    srt = write_srt(tmp_path / "v.srt", [(10, 12, "Harry, come here."), (70, 72, "Thanks, Harry."),
                                         (20, 22, "I'm Lloyd."), (25, 27, "Lloyd, stop.")])
    movie = Movie(video, srt, chunk_seconds=60, cache=DiskCache(tmp_path / "cache"))
    # Harry: clips at 11 s and 71 s (60 s apart) -> two calls, both confident -> kept.
    # Lloyd: lines 5 s apart -> a single clip -> not enough support -> dropped; its reply is junk
    # twice then valid (retries).
    script = ['{"frames": [2, 3], "confidence": 0.9}', '{"frames": [5], "confidence": 0.95}',
              "no idea", "still no json", '{"frames": [1], "confidence": 0.9}']
    with ScriptedOpenAIServer(script) as server:
        backend = resolve("openai:test-vlm", api=ApiSettings(base_url=server.url, api_key="sk-test"))
        mem, stats = build_with_vlm(movie, backend, tmp_path / "memory" / "v.json")
        assert len(server.requests) == 5
    assert stats == {"calls": 5, "unparsed": 0, "clips": 3, "kept": 1, "dropped": 1}
    assert [c.display_name for c in mem.characters] == ["Harry"]
    refs = mem.characters[0].references
    # clip 1 is [0, 30) (frames 2 and 3 are at 1 s and 2 s); clip 2 is [56, 86) (frame 5 at 60 s)
    assert [r.time for r in refs] == pytest.approx([1.0, 2.0, 60.0])
    again = CharacterMemory.load(tmp_path / "memory" / "v.json")
    assert all(again.load_reference_image(r) is not None for r in again.characters[0].references)
