"""Retriever: cosine ranking of chunk texts, deterministic ties, low score without text, cache."""
from __future__ import annotations

import pytest

from backends.config import ApiSettings
from backends.registry import resolve, resolve_embedder
from components.window_search.movie import Movie
from components.window_search.retrieval import NO_TEXT_SCORE, caption_chunks, chunk_embeddings, oracle_chunk, \
    rank_scores, retrieve
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.window_search.conftest import write_srt

SUBS = [
    (1, 4, "It is snowing hard tonight, the street is frozen."),       # chunk 0
    (11, 14, "We drove across the hot desert road under the sun."),    # chunk 1
    # chunk 2 ([20, 25)) has no subtitles
]


@pytest.fixture
def movie(video_25s, cache, tmp_path):
    return Movie(video_25s, write_srt(tmp_path / "s.srt", SUBS), chunk_seconds=10, cache=cache)


def test_rank_scores_breaks_ties_by_chunk_index():
    assert rank_scores([0.2, 0.5, 0.5, 0.1, 0.5]) == [1, 2, 4, 0, 3]


def test_real_minilm_ranks_the_matching_chunk_first(movie):
    emb = resolve_embedder("minilm")
    top = retrieve("a snowy street at night", movie, emb, k=3)
    assert [c.index for c in top][:2] == [0, 1]
    assert [c.rank for c in top] == [1, 2, 3]
    assert top[0].score > top[1].score
    desert = retrieve("walking along a desert highway", movie, emb, k=1)
    assert [(c.index, c.start, c.end) for c in desert] == [(1, 10.0, 20.0)]
    # the chunk without subtitles cannot be scored by a text-only model: lowest score, last
    assert top[2].index == 2 and top[2].score == NO_TEXT_SCORE


def test_captions_give_a_chunk_without_subtitles_a_score(movie, bow):
    ranked = retrieve("penguins on ice", movie, bow, k=None, captions={2: "Penguins slide on the ice."})
    assert ranked[0].index == 2 and ranked[0].score > 0.5


def test_equal_chunks_tie_on_index(video_25s, cache, tmp_path, bow):
    srt = write_srt(tmp_path / "same.srt", [(1, 2, "hello there"), (11, 12, "hello there"), (21, 22, "hello there")])
    movie = Movie(video_25s, srt, chunk_seconds=10, cache=cache)
    ranked = retrieve("hello", movie, bow, k=None)
    assert [c.index for c in ranked] == [0, 1, 2]
    assert ranked[0].score == ranked[1].score == ranked[2].score


def test_embeddings_are_cached_per_movie_chunking_and_model(movie, video_25s, cache, bow, tmp_path):
    first = chunk_embeddings(movie, bow)
    calls = bow.calls
    again = chunk_embeddings(Movie(video_25s, movie.subtitles, chunk_seconds=10, cache=cache), bow)
    assert bow.calls == calls  # cache hit: the model was not asked again
    assert (first == again).all()
    chunk_embeddings(Movie(video_25s, movie.subtitles, chunk_seconds=5, cache=cache), bow)
    assert bow.calls == calls + 1  # another chunking: embedded again


def test_movie_without_subtitles_ranks_in_chunk_order(video_25s, cache, bow):
    movie = Movie(video_25s, None, chunk_seconds=10, cache=cache)
    ranked = retrieve("anything at all", movie, bow, k=5)
    assert [c.index for c in ranked] == [0, 1, 2]
    assert all(c.score == NO_TEXT_SCORE for c in ranked)


def test_oracle_chunk_is_the_largest_overlap(movie):
    assert oracle_chunk(movie, (8.0, 19.0)).index == 1
    assert oracle_chunk(movie, (5.0, 15.0)).index == 0  # equal overlap: earlier chunk


def test_vlm_captions_are_cached_and_score_chunks_without_subtitles(movie, bow, tmp_path):
    """One caption call per chunk over real HTTP, cached; the caption lets chunk 2 be retrieved."""
    script = ["A man walks in the snow.", "A car on a desert road.", "Penguins slide on the ice."]
    with ScriptedOpenAIServer(script) as server:
        backend = resolve("openai:test-vlm", api=ApiSettings(base_url=server.url, api_key="sk-test"))
        caps = caption_chunks(movie, backend, frames_per_chunk=4)
        again = caption_chunks(movie, backend, frames_per_chunk=4)
        assert len(server.requests) == 3  # the second call came from the cache
    assert caps == again == {0: script[0], 1: script[1], 2: script[2]}
    assert retrieve("penguins on ice", movie, bow, k=1, captions=caps)[0].index == 2
