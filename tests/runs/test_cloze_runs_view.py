"""The Cloze run panels' HTML (components/cloze/runs_view.py), checked against the run files
themselves: counts per letter, "k of N", each run's letter and reason, the question list's order
and the overview's cells and links."""
from __future__ import annotations

import json
import re
from html import unescape

from components.cloze.runs import ClozeRuns, compact_results
from components.cloze import runs_view
from components.cloze.questions import distractor_type
from examples.released_runs import write_released_runs

STEMS = [f"stem{i:02d}" for i in range(8)]
SHOWN = {"A": "Rand2", "B": "GT", "C": "Rand1", "D": "Rand3"}   # the question on screen
SHOWN_A = {"A": "Wide", "B": "Early", "C": "GT", "D": "Late"}


def _table(tmp_path, runs=6, quirks=True):
    paths = write_released_runs(STEMS, tmp_path, runs, quirks=quirks)
    files = {p.stem: json.loads(p.read_text()) for p in paths}
    return files, ClozeRuns({name: compact_results(data) for name, data in files.items()})


def _expected_letters(files: dict, stem: str, dim: str) -> dict[str, str]:
    """Each run's pick put on SHOWN's letters, read straight from the files."""
    on_screen = {clip: letter for letter, clip in SHOWN.items()}
    out = {}
    for name, data in files.items():
        rec = data.get(stem, {}).get(dim)
        answer = (rec or {}).get("answer")
        if rec and answer in SHOWN:
            out[name] = on_screen[rec["option_map"][answer]]
    return out


def test_question_panel_counts_letters_and_reasons_as_the_files_say(tmp_path):
    files, table = _table(tmp_path, quirks=False)
    stem = STEMS[3]
    html = runs_view.question_html(table.question(stem, "S", SHOWN), SHOWN)
    expected = _expected_letters(files, stem, "S")
    for letter in "ABCD":
        count = sum(1 for v in expected.values() if v == letter)
        assert f'data-letter="{letter}" data-count="{count}"' in html
    right = sum(1 for v in expected.values() if v == "B")
    assert f"{right} of {len(expected)} runs chose the true middle" in html
    for name, letter in expected.items():
        row = re.search(rf'<tr class="runs-row" data-run="{name}"[^>]*>(.*?)</tr>', html).group(1)
        assert re.search(rf'<td class="runs-letter">{letter}( <span class="runs-own">[^<]*</span>)?</td>', row)
        assert ("✓" if letter == "B" else "✗") in row
        reason = files[name][stem]["S"]["reason"]
        assert "<details>" in row and reason in unescape(row)


def test_a_wrong_letter_names_its_distractor_and_an_error_record_no_letter(tmp_path):
    files, table = _table(tmp_path)
    # run 1's second stem holds error records only: no letter, no ✓/✗
    html = runs_view.question_html(table.question(STEMS[1], "S", SHOWN), SHOWN)
    row = re.search(r'<tr class="runs-row" data-run="model01_results"[^>]*>(.*?)</tr>', html).group(1)
    assert '<td class="runs-letter">error</td>' in row and "✓" not in row and "✗" not in row
    for stem in STEMS[5:]:
        html = runs_view.question_html(table.question(stem, "A", SHOWN_A), SHOWN_A)
        for name, data in files.items():
            rec = data[stem]["A"]
            if rec.get("answer") in SHOWN_A and not rec["correct"]:
                row = re.search(rf'<tr class="runs-row" data-run="{name}"[^>]*>(.*?)</tr>', html).group(1)
                picked = rec["option_map"][rec["answer"]]
                assert f'<td class="runs-distractor">{distractor_type(picked)}</td>' in unescape(row)
                assert picked in distractor_type(picked)


def test_a_question_no_run_answered_says_so(tmp_path):
    _files, table = _table(tmp_path)
    html = runs_view.question_html(table.question("no-such-stem", "S", SHOWN), SHOWN, ["run file x not loaded: y"])
    assert "No run answered this question." in html and "run file x not loaded: y" in html


def test_hardest_first_lists_the_questions_by_share_right(tmp_path):
    _files, table = _table(tmp_path, quirks=False)
    html = runs_view.question_list_html(table, "hardest")
    shares = [int(a) / int(b) for a, b in re.findall(r"<td>(\d+)/(\d+)</td>", html)]
    assert len(shares) == len(STEMS) * 3
    assert shares == sorted(shares)
    assert runs_view.question_link(STEMS[0], "S") in unescape(html)


def test_people_only_with_no_study_says_there_is_none(tmp_path):
    _files, table = _table(tmp_path)
    assert "people were right and every model wrong" in runs_view.question_list_html(table, "people")


def test_overview_has_a_cell_per_run_and_question_and_bins_many(tmp_path):
    files, table = _table(tmp_path, quirks=False)
    html = runs_view.overview_html(table)
    assert html.count('class="runs-cell"') == len(files) * len(STEMS) * 3
    assert html.count(">✓</a>") == sum(rec["correct"] for d in files.values() for s in d.values() for rec in s.values())
    binned = runs_view.overview_html(table, columns_max=5)
    assert binned.count('class="runs-cell"') == len(files) * 5
    assert "each column 5 questions" in binned


def test_the_study_answers_are_one_more_row_and_count_for_people_only(tmp_path):
    files, _ = _table(tmp_path, quirks=False)
    stem = STEMS[0]
    rec = files["model00_results"][stem]["S"]
    truth = next(letter for letter, clip in rec["option_map"].items() if clip == "GT")
    human = {stem: {"S": {**rec, "answer": truth, "correct": True}}}
    # every model wrong on this question: the people-only list names it
    wrong = {name: {s: {d: ({**r, "answer": next(x for x in "ABCD" if r["option_map"][x] != "GT"), "correct": False}
                            if (s, d) == (stem, "S") else r) for d, r in dims.items()} for s, dims in data.items()}
             for name, data in files.items()}
    table = ClozeRuns({n: compact_results(d) for n, d in wrong.items()}, compact_results(human))
    html = runs_view.question_html(table.question(stem, "S", SHOWN), SHOWN)
    row = re.search(r'<tr class="runs-row runs-human" data-run="Human"[^>]*>(.*?)</tr>', html).group(1)
    assert re.search(r'<td class="runs-letter">B( <span class="runs-own">[^<]*</span>)?</td>', row) and "✓" in row      # GT is B on the shown map
    assert f"0 of {len(files)} runs chose the true middle" in html      # the Human row is not a run
    listed = runs_view.question_list_html(table, "people")
    assert re.findall(r'<tr data-stem="([^"]+)" data-dim="([^"]+)">', listed) == [(stem, "S")]
