"""The study's caches (edge views, playable sources, the loaded set, encoded result headers) are
bounded and compute a value asked for by several visitors at once only once."""
from __future__ import annotations

import json
import os
from pathlib import Path

from components.base.lru import SingleFlightLRU
from components.cloze.study import cache, media, results_file
from components.cloze.study.config import load_config
from tests.cloze.test_study_flow import make_study
from tests.helpers.at_once import Held, asked_at_once


def test_an_edge_view_asked_for_by_several_visitors_at_once_is_drawn_once(tmp_path, monkeypatch):
    clips = [tmp_path / f"{name}.mp4" for name in ("before", "after", "A", "B", "C", "D")]
    for clip in clips:
        clip.write_bytes(b"clip " + clip.name.encode())
    drawn = Held(lambda paths: object())
    draw = media._draw_edge_view
    # only these clips' drawings are counted: a study test before this one may still be drawing
    # ahead in the background (prefetch_edge_view) with the same function
    monkeypatch.setattr(media, "_draw_edge_view", lambda paths: drawn(paths) if list(paths) == clips else draw(paths))
    own = SingleFlightLRU(media.EDGE_VIEWS_KEPT)
    views = asked_at_once(lambda: media.edge_view(clips, cache=own), drawn)
    assert drawn.calls == 1 and len(views) == 6 and all(v is views[0] for v in views)


def test_the_edge_views_kept_are_bounded_and_a_changed_clip_is_drawn_again(tmp_path, monkeypatch):
    monkeypatch.setattr(media, "_draw_edge_view", lambda paths: object())
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"one")
    own = SingleFlightLRU(media.EDGE_VIEWS_KEPT)
    first = media.edge_view([clip], cache=own)
    for i in range(media.EDGE_VIEWS_KEPT):
        media.edge_view([tmp_path / f"other-{i}.mp4"], cache=own)
    assert len(own) == media.EDGE_VIEWS_KEPT
    again = media.edge_view([clip], cache=own)
    assert again is not first                                   # pushed out: drawn anew
    assert media.edge_view([clip], cache=own) is again          # kept
    clip.write_bytes(b"a longer clip")                          # replaced: another size
    assert media.edge_view([clip], cache=own) is not again


def test_a_source_asked_for_by_several_visitors_at_once_is_probed_once(tmp_path, monkeypatch):
    src = tmp_path / "clip.mp4"
    src.write_bytes(b"not really a video")
    probed, probe = Held(lambda path: True), media.browser_playable
    monkeypatch.setattr(media, "browser_playable", lambda path: probed(path) if Path(path) == src else probe(path))
    own = SingleFlightLRU(media.PLAYABLE_KEPT)
    found = asked_at_once(lambda: media.playable_source(src, tmp_path / "cache", checked=own), probed)
    assert probed.calls == 1 and found == [src] * 6


def test_the_set_is_loaded_once_per_folder_state_and_the_sets_kept_are_bounded(cloze_examples, tmp_path,
                                                                               monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    cfg = load_config(str(make_study(cloze_examples, tmp_path)))
    sets = SingleFlightLRU(cache.SETS_KEPT)
    loads, real = [], cache.load_set
    monkeypatch.setattr(cache, "load_set", lambda folder: loads.append(folder) or real(folder))
    first = cache.study_set(cfg.set_folder, cfg.set_name, 0, cache=sets)
    for seed in range(1, cache.SETS_KEPT + 1):
        cache.study_set(cfg.set_folder, cfg.set_name, seed, cache=sets)
    assert len(sets) == cache.SETS_KEPT and len(loads) == cache.SETS_KEPT + 1
    assert cache.study_set(cfg.set_folder, cfg.set_name, 0, cache=sets) is not first   # seed 0 was pushed out
    kept = cache.study_set(cfg.set_folder, cfg.set_name, 1, cache=sets)
    stamp = os.stat(cfg.set_folder).st_mtime_ns
    os.utime(cfg.set_folder, ns=(stamp + 10**9, stamp + 10**9))                  # a stem folder added
    changed = cache.study_set(cfg.set_folder, cfg.set_name, 1, cache=sets)
    assert changed is not kept
    base = (str(Path(cfg.set_folder).resolve()), cfg.set_name, 1)
    assert [k for k in sets if k[:3] == base] == [(*base, stamp + 10**9)]   # the old one gone


def test_the_set_asked_for_by_several_annotators_at_once_is_loaded_once(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    cfg = load_config(str(make_study(cloze_examples, tmp_path)))
    loading, load = Held(cache.load_set), cache.load_set
    mine = Path(cfg.set_folder).resolve()
    monkeypatch.setattr(cache, "load_set", lambda folder: loading(folder) if Path(folder).resolve() == mine else load(folder))
    own = SingleFlightLRU(cache.SETS_KEPT)
    sets = asked_at_once(lambda: cache.study_set(cfg.set_folder, cfg.set_name, cfg.seed, cache=own), loading)
    assert loading.calls == 1 and all(s is sets[0] for s in sets)


def test_encoded_headers_kept_are_bounded_and_each_file_is_its_header_and_answers():
    tail = {"result_path": "r.json", "responses": {"0": {"answer": "A"}}, "completed_at_utc": None}
    headers = [{"dataset_id": "set_1", "seed": i, "schedule": [{"stem": "s", "dim": "d"}], "responses": {}}
               for i in range(results_file._HEADERS_KEPT + 20)]
    for header in headers:
        assert json.loads(results_file._encoded(header, tail)) == {**header, **tail}
    assert len(results_file._header_json) == results_file._HEADERS_KEPT
    headers[-1]["seed"] = 99                                    # a kept header changed: encoded anew
    assert json.loads(results_file._encoded(headers[-1], tail))["seed"] == 99


def test_an_invitation_file_read_by_several_visitors_at_once_is_parsed_once(cloze_examples, tmp_path,
                                                                           monkeypatch):
    import types

    from components.cloze.study import access

    monkeypatch.delenv(access.INVITES_ENV, raising=False)
    cfg = load_config(str(make_study(cloze_examples, tmp_path)))
    access.invite(cfg, ["ann1", "ann2"])
    parsed = Held(json.loads)
    monkeypatch.setattr(access, "json", types.SimpleNamespace(loads=parsed, dumps=json.dumps))
    found = asked_at_once(lambda: access._read_invites(cfg), parsed)
    assert parsed.calls == 1 and all(sorted(f) == ["ann1", "ann2"] for f in found)
