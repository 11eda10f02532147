"""End to end on the example movie with the offline baseline: retrieve -> window -> localize."""
from __future__ import annotations

import threading

import pytest

from backends.registry import resolve
from components.base.errors import UserError
from components.media import DiskCache
from components.window_search.data import load_annotations
from components.window_search.movie import Movie
from components.window_search.pipeline import MovieLibrary, SearchSettings, ground_query, prediction_record
from components.window_search.types import SearchTrace


@pytest.fixture(scope="module")
def example(grounding_examples, tmp_path_factory):
    ann = load_annotations(grounding_examples / "annotations.json")
    lib = MovieLibrary(memory_dir=grounding_examples / "memory")
    movie = lib.movie(ann.movie("m01"))
    movie.cache = DiskCache(tmp_path_factory.mktemp("ws-cache"))
    return ann, lib, movie


def test_aws_with_the_baseline_gives_a_labelled_trace_with_prediction(example):
    ann, lib, movie = example
    q = ann.query("p0001_t")
    updates: list[int] = []
    trace = ground_query(q.query, movie, resolve("baseline"), embedder=lib.embedder(), memory=lib.memory("m01"),
                         method="aws", settings=SearchSettings(k=3, m=1), ground_truth=q.interval, qid=q.qid,
                         on_update=lambda t: updates.append(len(t.candidates)))
    assert trace.text_only_baseline and trace.backend == "baseline"
    assert len(trace.chunks) == 3 and [c.rank for c in trace.chunks] == [1, 2, 3]
    assert trace.matched_characters == ["C1", "C2"]  # Lloyd and Harry from the example memory
    assert trace.window is not None and trace.prediction is not None
    w0, w1 = trace.window
    assert w0 <= trace.prediction[0] < trace.prediction[1] <= w1
    assert trace.ground_truth == (165.0, 228.0)
    assert trace.calls["localize"] == 1 and updates
    again = SearchTrace.from_dict(trace.to_dict())
    assert again.window == trace.window and again.prediction == trace.prediction
    rec = prediction_record(trace)
    assert rec["qid"] == "p0001_t" and rec["window"] == list(trace.window)


def test_rag_uses_the_top_chunk_and_oracle_the_largest_overlap(example):
    ann, lib, movie = example
    q = ann.query("p0006_t")  # Harry walks across the office, [320, 385]: straddles 360
    base = resolve("baseline")
    rag = ground_query(q.query, movie, base, embedder=lib.embedder(), method="rag", qid=q.qid)
    assert rag.window == (rag.chunks[0].start, rag.chunks[0].end)
    oracle = ground_query(q.query, movie, base, embedder=lib.embedder(), method="oracle-chunk",
                          ground_truth=q.interval, qid=q.qid)
    assert oracle.window == (180.0, 360.0)  # 40 s of overlap beats 25 s in [360, 540)
    with pytest.raises(UserError, match="ground truth"):
        ground_query(q.query, movie, base, embedder=lib.embedder(), method="oracle-chunk")


def test_a_set_stop_event_stops_before_localizing(example):
    ann, lib, movie = example
    stop = threading.Event()
    stop.set()
    trace = ground_query("Mary waves in the kitchen.", movie, resolve("baseline"), embedder=lib.embedder(),
                         stop=stop)
    assert trace.stopped and trace.prediction is None


def test_movie_without_subtitles_still_runs(grounding_examples, tmp_path):
    movie = Movie(grounding_examples / "movies" / "m01.mp4", None, cache=DiskCache(tmp_path))
    lib = MovieLibrary()
    trace = ground_query("Lloyd jumps.", movie, resolve("baseline"), embedder=lib.embedder(), method="rag")
    assert trace.window == (0.0, 180.0)  # no text anywhere: chunk order decides
    assert trace.prediction == (0.0, 180.0)  # nothing to match: the baseline returns the window
