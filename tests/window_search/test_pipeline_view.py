"""The tab's views of a trace (pure HTML/Markdown): timeline blocks, checklist chips, result line."""
from __future__ import annotations

from components.window_search import view
from components.window_search.types import CandidateTrace, Chunk, InspectStep, SearchTrace, Statement, \
    StatementCheck


def _trace() -> SearchTrace:
    c1, c2 = Chunk(2, 360, 540, 0.5, 1), Chunk(0, 0, 180, 0.4, 2)
    t = SearchTrace(query="Lloyd and Harry walk on a snowy street.", qid="p1_t", chunks=[c1, c2],
                    statements=[Statement("s1", "Lloyd appears"), Statement("s2", "a snowy street")])
    rejected = CandidateTrace(1, c1, [InspectStep(0, (360, 540), [StatementCheck("s1", "true", "blue man"),
                                                                  StatementCheck("s2", "false", "desert")],
                                                  "REJECT", 0.8)], (360, 540), "rejected")
    accepted = CandidateTrace(2, c2, [
        InspectStep(0, (0, 180), [StatementCheck("s1", "true"), StatementCheck("s2", "cutoff")], "EXPAND",
                    expand_side="right", expand_seconds=40, applied_seconds=30),
        InspectStep(1, (0, 210), [StatementCheck("s1", "true"), StatementCheck("s2", "true", "snow")], "EMIT", 0.9)],
        (0, 210), "accepted")
    t.candidates = [rejected, accepted]
    t.accepted_rank, t.window, t.prediction, t.ground_truth = 2, (0, 210), (165, 200), (165, 228)
    return t


def test_timeline_marks_ranks_verdicts_expansion_and_bars():
    html = view.timeline_html(_trace(), 880, n_chunks=5, chunk_seconds=180, playhead=100, selected=2)
    assert html.count("data-rank=") == 2 and "#1" in html and "#2" in html
    assert "#2da44e" in html and "#8c959f" in html       # accepted green, rejected grey
    assert "0 0 0 3px #fb8500" in html                     # the selected window is highlighted
    assert "title='window" in html and "title='pred" in html and "title='GT" in html
    assert "ws-playhead" in html
    unselected = view.timeline_html(_trace(), 880, n_chunks=5, chunk_seconds=180)
    assert "2px dashed #0969da" in unselected.split("class='ws-expanded'")[1].split("</div>")[0]  # expanded


def test_checklist_shows_chips_notes_before_rows_and_decision():
    t = _trace()
    html = view.checklist_html(t, 2)
    assert "✓ true" in html and "before expansion [0:00 - 3:00]" in html and "EMIT" in html
    assert "confidence 0.90" in html
    assert "EXPAND" in html and "right 30" in html
    rej = view.checklist_html(t, 1)
    assert "✗ false" in rej and "desert" in rej and "REJECT" in rej
    assert view.candidate_at(t, 100) == 2 and view.candidate_at(t, 400) == 1
    assert view.candidate_at(t, 700) is None               # no inspected window there


def test_result_line_with_iou_and_pair_and_baseline_label():
    t = _trace()
    t.text_only_baseline = True
    md = view.result_markdown(t, iou=0.56, partner=("p1_c", "desert walk", 0.7), theta=0.5)
    assert view.BASELINE_LABEL in md and "IoU 0.56" in md and "pair: both ≥ 0.5" in md
    md2 = view.result_markdown(t, iou=0.56, partner=("p1_c", "desert walk", None))
    assert "not run yet" in md2
