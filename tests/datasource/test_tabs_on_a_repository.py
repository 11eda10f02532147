"""Window search and impact data from a dataset repository holding a whole data folder
(grounding/, cloze/, impact/): opening fetches their annotation files only; a movie or a clip is
fetched when it is opened, and nothing else."""
from __future__ import annotations

import os

import pytest

from components.datasource import open_data_dir
from components.impact.data import load_annotations as load_impact
from components.media import open_video
from components.window_search.data import load_annotations as load_grounding
from components.window_search.movie import Movie
from tests.datasource.conftest import copy_tree


def test_window_search_and_impact_from_a_data_folder_repository(hub, example_data_dir, tmp_path):
    hub.add_repo("test/bench", copy_tree(example_data_dir, tmp_path / "bench"))
    root = open_data_dir("hf://datasets/test/bench")
    assert sorted(hub.downloads()) == ["grounding/annotations.json", "impact/annotations.json"]
    assert (root / "grounding" / "annotations.json").is_file()      # where a local folder has it

    ann = load_grounding(root / "grounding" / "annotations.json", check_files=True)
    entry = next(iter(ann.movies.values()))
    hub.reset_log()
    movie = Movie(entry.video, entry.subtitles, movie_id=entry.movie_id)
    assert movie.duration > 0 and movie.has_subtitles
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    assert sorted(hub.downloads()) == sorted([rel(entry.video), rel(entry.subtitles)])

    impact = load_impact(root / "impact" / "annotations.json")
    item = impact.items[0]
    hub.reset_log()
    assert open_video(item.video).num_frames == item.num_frames
    assert hub.downloads() == [rel(item.video)]

    named = load_grounding("hf://datasets/test/bench/grounding/annotations.json")   # one file named
    assert [q.qid for q in named.queries] == [q.qid for q in ann.queries]


def test_the_cloze_tab_opens_the_apps_own_repository_and_refuses_another(cloze_repo, hub, tmp_path, monkeypatch):
    """The Cloze folder box takes the app's own dataset repository (APP_DATA_DIR) as typed, shows
    a question from it, and refuses another repository unless APP_ADMIN=1 (a stranger could make
    the server list and fetch any repository)."""
    from components.cloze.ui import handlers as h
    from components.cloze.ui.session import ClozeSession, ClozeTab
    from components.base.errors import UserError
    from components.common.sessions import Resources

    monkeypatch.setenv("APP_DATA_DIR", cloze_repo)
    monkeypatch.delenv("APP_ADMIN", raising=False)
    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "practice"))
    tab, res, session = ClozeTab(str(tmp_path)), Resources(), ClozeSession(data_dir=str(tmp_path))
    opened = h.load_root(tab, res, session, cloze_repo)
    assert "stems" in opened.status
    shown = h.start(tab, res, session, "model", cloze_repo, "all", "S", 42, "", "video")
    videos = [c["value"] for c in shown.question.clips if c.get("value")]
    assert shown.session.root == cloze_repo and len(videos) == 6 and all(os.path.isfile(v) for v in videos)
    with pytest.raises(UserError, match="APP_ADMIN=1"):    # refused before anything is asked of the Hub
        h.load_root(tab, res, session, "hf://datasets/someone/else")
