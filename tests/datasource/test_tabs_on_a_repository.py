"""Window search and impact data from a dataset repository holding a whole data folder
(grounding/, cloze/, impact/): opening fetches their annotation files only; a movie or a clip is
fetched when it is opened, and nothing else."""
from __future__ import annotations

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
