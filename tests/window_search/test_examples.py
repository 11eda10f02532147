"""The example movie: long enough, deterministic, exact intervals, confusable pairs, memory."""
from __future__ import annotations

import json

from components.window_search.data import CONTRAST_ATTRIBUTES, load_annotations
from components.window_search.memory import CharacterMemory
from examples import movie as example


def test_script_and_annotations_are_consistent(grounding_examples):
    ann = load_annotations(grounding_examples / "annotations.json", durations={"m01": example.DURATION},
                           check_files=True)
    assert example.DURATION >= 12 * 60
    assert len(ann.pairs) >= 6
    starts = {s.start: s for s in example.SCRIPT}
    for pair in ann.pairs:
        assert pair.contrast_attribute in CONTRAST_ATTRIBUTES
        for q in (pair.target, pair.confusable):
            scene = starts[q.interval[0]]  # exact by construction: a scene's own bounds
            assert q.interval == (scene.start, scene.end)
        assert pair.target.query != pair.confusable.query
    # some queried events straddle a 180 s chunk edge
    assert any(q.interval[0] < edge < q.interval[1] for q in ann.queries for edge in (180, 360, 540, 720))
    # scenes tile the movie without gaps
    assert all(a.end == b.start for a, b in zip(example.SCRIPT, example.SCRIPT[1:]))


def test_rendering_is_deterministic_and_characters_differ():
    import numpy as np

    bgs, flakes = example._backgrounds(0)
    bgs2, flakes2 = example._backgrounds(0)
    scene = example.scene_at(200.0)
    assert np.array_equal(example.render_frame(scene, 200.0, bgs, flakes),
                          example.render_frame(scene, 200.0, bgs2, flakes2))
    assert example.LOOKS["Lloyd"].body != example.LOOKS["Harry"].body != example.LOOKS["Mary"].body


def test_files_and_memory(grounding_examples):
    assert (grounding_examples / "movies" / "m01.mp4").stat().st_size > 100_000
    srt = (grounding_examples / "movies" / "m01.srt").read_text()
    assert "Harry, " in srt and "I'm Lloyd" in srt
    mem = CharacterMemory.load(grounding_examples / "memory" / "m01.json")
    assert [c.display_name for c in mem.characters] == ["Lloyd", "Harry", "Mary"]
    for c in mem.characters:
        assert len(c.references) == 2
        assert all(mem.load_reference_image(r).size == (320, 180) for r in c.references)
    assert json.loads((grounding_examples / "annotations.json").read_text())["movies"][0]["video"] == "movies/m01.mp4"
