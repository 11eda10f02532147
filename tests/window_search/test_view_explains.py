"""The tab's pure views explain themselves: the checklist's header and before/after rows, the raw
reply of an unparsed step, the timeline's verdicts, expansion outline and time axis, the pair line
per backend, the benchmark table beside the paper's Table 3, and deep links."""
from __future__ import annotations

import html as html_lib
import json
import re
from urllib.parse import parse_qsl

import pytest

from components.window_search import links, view
from components.window_search.timeline import axis_step, timeline_html
from components.window_search.types import CandidateTrace, Chunk, InspectStep, SearchTrace, Statement, \
    StatementCheck


def _trace() -> SearchTrace:
    """Rank 1 rejected after an unparsed reply; rank 2 expanded twice then accepted; rank 3 ranked
    but never reached; chunk 4 not in the top K."""
    c1, c2, c3 = Chunk(2, 360, 540, 0.5, 1), Chunk(0, 0, 180, 0.4, 2), Chunk(1, 180, 360, 0.3, 3)
    t = SearchTrace(query='Lloyd says "hi" on a snowy street.', qid="p1_t", chunks=[c1, c2, c3], method="aws",
                    backend="openai:m", statements=[Statement("s1", "Lloyd appears"),
                                                    Statement("s2", 'he says "hi" on a snowy street')])
    unparsed = InspectStep(0, (360, 540), [], "REJECT", raw='{"statements": <b>"broken"</b>',
                           parse_error="no JSON object")
    rejected = CandidateTrace(1, c1, [unparsed], (360, 540), "rejected")
    accepted = CandidateTrace(2, c2, [
        InspectStep(0, (0, 180), [StatementCheck("s1", "true"), StatementCheck("s2", "cutoff", "snow at the edge")],
                    "EXPAND", expand_side="right", expand_seconds=40, applied_seconds=30),
        InspectStep(1, (0, 210), [StatementCheck("s1", "true"), StatementCheck("s2", "cutoff", "still cut")],
                    "EXPAND", expand_side="right", expand_seconds=20, applied_seconds=20),
        InspectStep(2, (0, 230), [StatementCheck("s1", "true"), StatementCheck("s2", "true", 'says "hi"')],
                    "EMIT", 0.9)], (0, 230), "accepted")
    t.candidates = [rejected, accepted]
    t.accepted_rank, t.window, t.prediction, t.ground_truth = 2, (0, 230), (165, 200), (165, 228)
    return t


def _text(fragment: str) -> str:
    """What a reader sees: tags dropped, entities decoded once."""
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def test_the_checklist_has_a_header_row_and_before_after_rows_for_an_expanded_window():
    out = view.checklist_html(_trace(), 2)
    assert "<th>statement</th><th>verdict</th><th>evidence</th>" in out
    assert "B1:" not in out
    rows = re.findall(r"<tr class='ws-before'.*?</tr>", out)
    assert len(rows) == 4                                    # 2 statements x 2 earlier steps
    s2_rows = [_text(r) for r in rows if "snow at the edge" in r or "still cut" in r]
    assert "before expansion [0:00 - 3:00]" in s2_rows[0] and "△ cutoff" in s2_rows[0]
    assert "after expansion 1 [0:00 - 3:30]" in s2_rows[1] and "still cut" in s2_rows[1]
    final = _text(re.findall(r"<tr class='ws-stmt'>.*?</tr>", out)[1])
    assert "✓ true" in final and 'says "hi"' in final
    assert "Window rank #2 of 3 · [0:00 - 3:50] · expanded · accepted (EMIT)" in _text(out)
    assert _text(out).index("right 30 s") < _text(out).index("right 20 s") < _text(out).index("EMIT ·")


def test_an_unparsed_step_shows_its_raw_reply_escaped_once():
    out = view.checklist_html(_trace(), 1)
    assert "could not be read (no JSON object)" in out
    raw = re.search(r"<pre class='ws-raw'[^>]*>(.*?)</pre>", out, re.S).group(1)
    assert html_lib.unescape(raw) == '{"statements": <b>"broken"</b>'   # shown as text, not markup
    assert "&amp;" not in out                                # nothing escaped twice


def test_the_not_inspected_note_says_why():
    t = _trace()
    reached = view.not_inspected_html(t, 1, 180, 360)
    assert "Chunk 2 [3:00 - 6:00]: not inspected" in reached and "ranked it #3" in reached
    unranked = view.not_inspected_html(t, 4, 720, 880)
    assert "not among the top 3" in unranked
    assert view.candidate_at(t, 300) is None and view.candidate_at(t, 200) == 2
    assert view.chunk_at(300, 180, 880) == (1, 180, 360) and view.chunk_at(880, 180, 880) == (4, 720, 880)


def test_the_timeline_draws_verdicts_expansion_fallback_and_a_time_axis():
    t = _trace()
    out = timeline_html(t, 880, n_chunks=5, chunk_seconds=180, playhead=400, selected=2)
    assert out.count("data-start=") == 5 and out.count("data-rank=") == 3
    verdicts = dict(re.findall(r"data-chunk='(\d)' data-start='[\d.]+' data-verdict='(\w+)'", out))
    assert verdicts == {"0": "accepted", "1": "not_inspected", "2": "rejected", "3": "unranked", "4": "unranked"}
    box = re.search(r"class='ws-expanded'[^>]*style='([^']*)'", out).group(1)
    assert "2px dashed" in box and "width:26.136%" in box   # the real 0-230 s span, past the chunk
    ticks = re.findall(r"color:#57606a'>(\d+:\d\d)</div>", out)
    assert ticks[:3] == ["0:00", "2:00", "4:00"] and ticks[-1] == "14:00"
    t.accepted_rank, t.selected_rank = None, 2
    t.candidates[1].outcome = "selected"
    fallback = timeline_html(t, 880, n_chunks=5, chunk_seconds=180)
    style = re.search(r"data-verdict='selected'[^>]*style='([^']*)'", fallback).group(1)
    assert "repeating-linear-gradient" in style and "#2da44e" not in style
    assert "selected (fallback: every candidate was rejected)" in view.checklist_html(t, 2)
    assert axis_step(880) == 120 and axis_step(7200) == 900 and axis_step(60) == 10


def test_the_pair_line_names_the_backend_and_uses_no_html_entities():
    t = _trace()
    md = view.result_markdown(t, iou=0.6, partner=("p1_c", 'he says "bye"', None))
    assert "not run yet with `openai:m` · aws" in md and '"bye"' in md and "&quot;" not in md
    md2 = view.result_markdown(t, iou=0.6, partner=("p1_c", "x", 0.7))
    assert "pair (`openai:m` · aws): both ≥ 0.5 (partner p1_c IoU 0.70)" in md2


def test_the_benchmark_table_puts_this_run_beside_the_papers_table_3():
    paper = json.loads(view.REFERENCE_ROWS.read_text())
    table = view.bench_table(None)
    assert len(table) == len(paper["rows"]) == 9
    assert all(row[0] == "CoM2-Bench (3,014 queries, 1,507 pairs), paper Table 3" for row in table)
    aws = next(r for r in table if r[1] == "Movie RAG + AWS (27B)")
    assert aws[2:] == [15.0, 8.8, 3.7, 37.0, 28.2, 17.9, 26.8]
    metrics = {"PairSuccess@0.3": 42.857, "PairSuccess@0.5": 14.29, "PairSuccess@0.7": 0.0, "R@1@0.3": 50.0,
               "R@1@0.5": 35.714, "R@1@0.7": 7.14, "mIoU": 38.04, "num_queries": 14, "num_pairs": 7}
    mine = view.bench_table(metrics, data_set="examples (14 queries)", method="AWS · baseline")[-1]
    assert mine == ["examples (14 queries)", "AWS · baseline", 42.9, 14.3, 0.0, 50.0, 35.7, 7.1, 38.0]
    assert len(view.BENCH_HEADERS) == len(mine)


def test_the_benchmark_notes_and_interval_row_carry_each_scores_interval(tmp_path):
    from components.window_search.data import load_annotations, load_predictions
    from components.window_search.metrics import evaluate

    pairs = [{"pair_id": f"p{k}", "movie_id": "m", "contrast_attribute": "setting",
              "target": {"qid": f"t{k}", "query": "q", "interval": [10 * k, 10 * k + 5]},
              "confusable": {"qid": f"c{k}", "query": "q", "interval": [200 + k, 205 + k]}} for k in range(5)]
    (tmp_path / "a.json").write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": pairs}))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"qid": f"t{k}", "interval": [10 * k, 10 * k + 4 + k % 2]})
                                              + "\n" for k in range(5)))
    metrics = evaluate(load_annotations(tmp_path / "a.json"), load_predictions(tmp_path / "p.jsonl"))
    notes = view.bench_notes(metrics)
    ci = metrics["intervals"]["mIoU"]
    assert f"mIoU [{ci['low']:.1f}, {ci['high']:.1f}] over 10 queries" in notes
    assert "PairSuccess@0.5 [0.0, 0.0] over 5 pairs" in notes and "2000 resamples, seed 0" in notes
    row = view.bench_interval_row(metrics, data_set="d", method="m")
    assert len(row) == len(view.BENCH_HEADERS) and row[:2] == ["d", "m 95 % interval"]
    assert row[view.BENCH_HEADERS.index("mIoU")] == f"[{ci['low']:.1f}, {ci['high']:.1f}]"


def test_view_link_is_sorted_and_url_encoded():
    q = links.view_link(tab="window-search", qid="p0005_t", movie="m 01&x", t=400.0, extra=None)
    assert q == "movie=m+01%26x&qid=p0005_t&t=400&tab=window-search"
    assert dict(parse_qsl(q)) == {"movie": "m 01&x", "qid": "p0005_t", "t": "400", "tab": "window-search"}


@pytest.mark.parametrize("params, want", [
    ({"tab": "window-search", "movie": "m01", "qid": "p0005_t", "t": "400"}, ("m01", "p0005_t", "400", [])),
    ({"qid": "p0005_t"}, ("m01", "p0005_t", None, [])),
    ({"tab": "window-search", "qid": "p9999"}, ("m01", None, None, ["qid `p9999` is not in this data"])),
    ({"tab": "window-search", "movie": "m99", "qid": "p0005_t"}, ("m01", "p0005_t", None, ["movie `m99`"])),
    ({"tab": "window-search", "movie": "m02", "qid": "p0005_t"}, ("m01", "p0005_t", None, ["belongs to movie `m01`"])),
])
def test_read_link_checks_each_value(params, want):
    req = links.read_link(params, ["m01", "m02"], {"p0005_t": "m01", "p0005_c": "m01"}, "m01")
    movie, qid, t, problems = want
    assert (req.movie, req.qid, req.t) == (movie, qid, t)
    assert len(req.problems) == len(problems) and all(p in got for p, got in zip(problems, req.problems))


def test_a_link_is_for_this_tab_only_when_it_says_so_or_names_no_tab():
    assert links.is_for_this_tab({"tab": "window-search"}) and links.is_for_this_tab({"qid": "x"})
    assert not links.is_for_this_tab({"tab": "impact", "clip": "x"}) and not links.is_for_this_tab({})


@pytest.mark.parametrize("raw, seconds, problem", [
    ("400", 400.0, None), ("12.5s", 12.5, None), (None, None, None),
    ("abc", None, "is not a time in seconds"), ("-3", None, "is not a time"), ("nan", None, "is not a time"),
    ("5000", None, "past the end of the movie (880 s)"),
])
def test_read_time_keeps_the_playhead_inside_the_movie(raw, seconds, problem):
    t, why = links.read_time(raw, 880.0)
    assert t == seconds
    assert (why is None) if problem is None else (problem in why)
