"""HTML of the Cloze tab's run panels (pure; no gradio): "What the runs answered" on the question
on screen (a bar per letter A-D, the distractor each wrong letter is, "k of N runs chose the true
middle", each run's letter with ✓/✗ and its reason in a fold), the question list sorted by how
the runs did, and the runs-by-questions overview (a ✓/✗ grid; questions binned when there are
many). The tables come from components/cloze/runs.py."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import urlencode

from components.cloze.runs import DIM_ORDER, LETTERS, ClozeRuns, QuestionRuns, QuestionStats, RunAnswer, RunScore

#: the question list's orders: the link's `sort=` value -> (label, ClozeRuns.questions keywords)
SORTS: dict[str, tuple[str, dict]] = {
    "hardest": ("Hardest first (fewest runs right)", {"sort": "share_right"}),
    "easiest": ("Easiest first", {"sort": "share_right", "descending": True}),
    "disagree": ("Most disagreement first", {"sort": "disagreement", "descending": True}),
    "people": ("People right, every model wrong", {"sort": "share_right", "people_only": True}),
    "stem": ("By stem", {"sort": "stem"}),
}
DEFAULT_SORT = "hardest"
LIST_MAX = 200          # rows of the question list on one page (paged: every question can be reached)
RUN_PAGE = 200          # questions of an opened run on one page
DIMENSIONS = tuple(DIM_ORDER)   # the filter's dimensions, in the paper's order S, A, P, then Mixed
GRID_COLUMNS_MAX = 120  # the overview's columns; more questions are binned

PANEL_TITLE = "What the runs answered"


def question_link(stem: str, dim: str, sort: str = "") -> str:
    """The tab's deep link to a question in Model mode (`q` is the paper's dimension name), its
    navigator in the list's order `sort`."""
    return "?" + urlencode({"tab": "cloze", "mode": "model", "stem": stem, "q": dim, **({"sort": sort} if sort else {})})


def _note(text: str) -> str:
    return f'<p class="runs-note">{escape(text)}</p>'


def refusals_html(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f'<details class="runs-refused"><summary>{len(lines)} run file(s) not loaded</summary><ul>{items}</ul></details>'


def loading_html(line: str = "Reading the run files…") -> str:
    """While the run files are read: `line` says how far (common/runs.py `reading_line`)."""
    return f'<div class="runs-panel" data-state="loading">{_note(line)}</div>'


def shut_html(*, blind: bool = False) -> str:
    """Practice: nothing about the runs until the player has answered this question, and nothing
    in a blind playthrough (the runs' answers would name the true middle)."""
    note = ("Blind playthrough: the runs' answers are not shown (they would give the answer away)."
            if blind else "Answer this question first: then the runs' answers are shown here.")
    return '<div class="runs-panel" data-state="shut">' + _note(note) + "</div>"


def own_letter_text(a: RunAnswer, option_map: Mapping[str, str] | None) -> str:
    """The run's own letter beside the one on screen: "its B = your D" (the run saw its own
    option order); "" when they are the same letter or either is unknown."""
    if not a.own_letter or not a.letter or a.own_letter == a.letter or not option_map:
        return ""
    return f"its {a.own_letter} = your {a.letter}"


def options_text(a: RunAnswer, option_map: Mapping[str, str] | None) -> str:
    """The run's option map in its letters, each with the clip and the letter on screen:
    "its A = your C (Rand2) · its B = your D (GT) · ..."."""
    if not a.options:
        return ""
    yours = a.own_map(option_map)
    return " · ".join(f"its {own} = " + (f"your {yours[own]} ({clip})" if own in yours else clip)
                      for own, clip in zip(LETTERS, a.options) if clip)


def _detail_html(a: RunAnswer, option_map: Mapping[str, str] | None) -> str:
    """The fold of a row: the run's own options (the letters its reason uses), its reason, and for
    an entry without a valid answer the file's error text and raw reply."""
    parts = []
    options = options_text(a, option_map)
    if options:
        parts.append(f"<div class='runs-options'>Its letters: {escape(options)}</div>")
    if a.reason:
        parts.append(f"<div class='runs-reason'>{escape(a.reason)}</div>")
    if a.error:
        parts.append(f"<div class='runs-error'>error: {escape(a.error)}</div>")
    if a.raw:
        parts.append(f"<div class='runs-raw'>raw reply: <pre>{escape(a.raw)}</pre></div>")
    if not parts:
        return ""
    label = "reason" if a.reason else ("error and raw reply" if a.error and a.raw else
                                       "error" if a.error else "raw reply" if a.raw else "its letters")
    return f"<details><summary>{label}</summary>{''.join(parts)}</details>"


def _letter_html(a: RunAnswer, option_map: Mapping[str, str] | None) -> str:
    letter = a.letter or ("missing" if a.status == "missing" else a.status)
    own = own_letter_text(a, option_map)
    return escape(letter) + (f' <span class="runs-own">({escape(own)})</span>' if own else "")


def _score_html(score: RunScore | None) -> str:
    if score is None:
        return ""
    counts = " · ".join(f"{k} {n:,}" for k, n in score.counts.items())
    return (f'<span class="runs-score" data-acc="{score.acc:.4f}" data-rank="{score.rank}" '
            f'title="its entries: {escape(counts)}">{escape(score.text())}</span>')


def _answer_row(a: RunAnswer, option_map: Mapping[str, str] | None = None, *, human: bool = False,
                score: RunScore | None = None) -> str:
    cls = "runs-row runs-human" if human else "runs-row"
    return (f'<tr class="{cls}" data-run="{escape(a.run)}" data-status="{escape(a.status)}">'
            f'<td class="runs-name">{escape(a.run)}<br>{_score_html(score)}</td>'
            f'<td class="runs-letter">{_letter_html(a, option_map)}</td><td class="runs-mark">{a.mark}</td>'
            f'<td class="runs-distractor">{escape(a.distractor or "")}</td><td>{_detail_html(a, option_map)}</td></tr>')


#: said once above the runs' rows: a reason is in the run's own letters
OWN_LETTERS_NOTE = ("Each run saw its own option order. The letter column is the clip it chose, on this "
                    "screen's letters; “its B = your D” names its own letter, and its reason uses its own "
                    "letters (the fold lists them).")


def question_html(qr: QuestionRuns, option_map: Mapping[str, str], refused: Sequence[str] = (),
                  scores: Mapping[str, RunScore] | None = None) -> str:
    """The panel on one question: the letter bars, the summary, a row per run (and the Human row)."""
    if not qr.answers and qr.human is None:
        return ('<div class="runs-panel" data-state="empty">' + _note("No run answered this question.")
                + refusals_html(refused) + "</div>")
    counts = qr.letter_counts()
    total = max(1, sum(counts.values()))
    bars = []
    for letter in LETTERS:
        clip = option_map.get(letter, "")
        n = counts[letter]
        true = clip == "GT"
        label = "true middle" if true else next((a.distractor for a in qr.answers
                                                 if a.letter == letter and a.distractor), "")
        width = round(100 * n / total)
        bars.append(f'<div class="runs-bar-row" data-letter="{letter}" data-count="{n}">'
                    f'<span class="runs-bar-letter">{letter}{" ✓" if true else ""}</span>'
                    f'<span class="runs-bar-track"><span class="runs-bar{" runs-bar-true" if true else ""}" '
                    f'style="width:{width}%"></span></span>'
                    f'<span class="runs-bar-count">{n}</span>'
                    f'<span class="runs-bar-label">{escape(label or "")}</span></div>')
    scores = scores or {}
    rows = [_answer_row(a, option_map, score=scores.get(a.run)) for a in qr.answers]
    if qr.human is not None:
        rows.append(_answer_row(qr.human, option_map, human=True))
    differs = any(own_letter_text(a, option_map) for a in qr.answers)
    return (f'<div class="runs-panel" data-state="ready" data-stem="{escape(qr.stem)}" data-dim="{escape(qr.dim)}">'
            f'<p class="runs-summary"><strong>{escape(qr.summary())}</strong></p>'
            f'<div class="runs-bars">{"".join(bars)}</div>'
            + (f'<p class="runs-note runs-own-note">{escape(OWN_LETTERS_NOTE)}</p>' if differs else "") +
            f'<div class="runs-table-wrap"><table class="runs-table"><thead><tr><th>Run</th><th>Letter</th><th></th>'
            f'<th>Distractor picked</th><th>Reason, error, raw reply</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'{refusals_html(refused)}</div>')


def _share(s: QuestionStats) -> str:
    return "–" if s.share_right is None else f"{s.right}/{s.answered}"


def list_rows(table: ClozeRuns, sort: str = DEFAULT_SORT, *, find: str = "", dim: str = "",
              right: int | None = None) -> list[QuestionStats]:
    """The question list's rows: in `sort`'s order, stems containing a word of `find`, one
    dimension (`dim`: S, A, P, Mixed; "" all), exactly `right` runs right (None: any)."""
    _label, kwargs = SORTS.get(sort, SORTS[DEFAULT_SORT])
    return table.questions(**kwargs, find=find or "", dim=dim if dim in DIMENSIONS else None, right=right)


def pages(total: int, size: int) -> int:
    return max(1, -(-total // size))


def _page_note(page: int, size: int, total: int, what: str) -> str:
    first = (page - 1) * size
    return _note(f"{what} {first + 1:,}–{min(total, first + size):,} of {total:,} · page {page} of "
                 f"{pages(total, size)}" if total else f"no {what}")


def question_list_html(table: ClozeRuns, sort: str = DEFAULT_SORT, *, find: str = "", dim: str = "",
                       right: int | None = None, page: int = 1) -> str:
    """The questions in the chosen order, filtered, one page of LIST_MAX, each a link that opens it."""
    rows = list_rows(table, sort, find=find, dim=dim, right=right)
    filtered = bool(find.strip() or dim in DIMENSIONS or right is not None)
    if not rows:
        what = ("no question where people were right and every model wrong" if sort == "people"
                else "no question that matches" if filtered else "no question")
        return f'<div class="runs-list" data-sort="{escape(sort)}" data-total="0">{_note(f"The runs have {what}.")}</div>'
    page = min(max(1, int(page or 1)), pages(len(rows), LIST_MAX))
    shown = rows[(page - 1) * LIST_MAX:page * LIST_MAX]
    link_sort = sort if sort in SORTS else DEFAULT_SORT
    body = "".join(
        f'<tr data-stem="{escape(s.stem)}" data-dim="{escape(s.dim)}"><td><a href="{escape(question_link(s.stem, s.dim, link_sort))}">'
        f'{escape(s.stem)} · {escape(s.dim)}</a></td><td>{_share(s)}</td><td>{s.disagreement:.2f}</td>'
        f'<td>{"" if s.human_right is None else ("✓" if s.human_right else "✗")}</td></tr>'
        for s in shown)
    return (f'<div class="runs-list runs-table-wrap" data-sort="{escape(sort)}" data-total="{len(rows)}" '
            f'data-page="{page}">{_page_note(page, LIST_MAX, len(rows), "questions")}'
            f'<table class="runs-table"><thead><tr>'
            f'<th>Question</th><th>Runs right</th><th>Disagreement</th><th>People</th></tr></thead>'
            f'<tbody>{body}</tbody></table></div>')


def _cell_colour(share: float | None) -> str:
    if share is None:
        return "#d0d0d0"
    # red (all wrong) to green (all right)
    return f"hsl({round(120 * share)}, 60%, 45%)"


def bin_link(stems: Sequence[str]) -> str:
    """The tab's link to the question list of some stems (an overview column's): the list by
    stem, filtered to them, with the overview open."""
    return "?" + urlencode({"tab": "cloze", "sort": "stem", "overview": "1", "find": " ".join(dict.fromkeys(stems))})


def overview_html(table: ClozeRuns, columns_max: int = GRID_COLUMNS_MAX) -> str:
    """Runs (rows, each with its acc and rank) by questions (columns): ✓/✗ cells, each a link to
    its question; with more questions than `columns_max`, consecutive questions share a column
    coloured by the share of their valid answers that are right (its title names the range), and
    its link opens the list of its questions."""
    m = table.matrix()
    if not m.runs or not m.questions:
        return f'<div class="runs-overview">{_note("No runs to show.")}</div>'
    per = max(1, -(-len(m.questions) // columns_max))
    bins = [range(i, min(i + per, len(m.questions))) for i in range(0, len(m.questions), per)]
    head = (f'<p class="runs-note">{len(m.runs)} runs × {len(m.questions)} questions'
            + (f" (each column {per} questions)" if per > 1 else "") + "</p>")
    rows = []
    scores = table.scores()
    for r, name in enumerate(m.runs):
        cells = []
        for b in bins:
            values = [m.cells[r][i] for i in b]
            stem, dim = m.questions[b.start]
            href = escape(question_link(stem, dim) if per == 1 else bin_link([m.questions[i][0] for i in b]))
            if per == 1:
                v = values[0]
                share = {"✓": 1.0, "✗": 0.0}.get(v)
                title = f"{name} on {stem} · {dim}: {v or 'no entry'}"
                text = v
            else:
                valid = [v for v in values if v in ("✓", "✗")]
                share = sum(v == "✓" for v in valid) / len(valid) if valid else None
                last = m.questions[b[-1]]
                title = (f"{name} on {stem} · {dim} … {last[0]} · {last[1]}: "
                         f"{sum(v == '✓' for v in valid)} of {len(valid)} right")
                text = ""
            cells.append(f'<a class="runs-cell" href="{href}" title="{escape(title)}" '
                         f'style="background:{_cell_colour(share)}">{text}</a>')
        score = scores.get(name)
        label = f"{name} · {score.text()}" if score else name
        rows.append(f'<div class="runs-grid-row" data-run="{escape(name)}"><span class="runs-name" title="{escape(label)}">'
                    f'{escape(name)}</span><span class="runs-grid-score">{_score_html(score)}</span>{"".join(cells)}</div>')
    return f'<div class="runs-overview">{head}<div class="runs-grid">{"".join(rows)}</div></div>'


def run_missing_html(name: str) -> str:
    note = _note(f"{name}: no answers to open here (a paper row or a study's Human row gives scores "
                 "only).")
    return f'<div class="runs-run" data-state="missing">{note}</div>'



def run_html(table: ClozeRuns, name: str, *, wrong_only: bool = False, page: int = 1) -> str:
    """One run opened whole: its score, rank and counts (valid, invalid, error, missing), then
    every question it answered (or its wrong answers only), one page of RUN_PAGE: the question (a
    link), its letter and options on its own order, ✓/✗, the distractor, the reason or the file's
    error text and raw reply."""
    score = table.scores()[name]
    answers = table.run_answers(name, wrong_only=wrong_only)
    counts = " · ".join(f"{k} {n:,}" for k, n in score.counts.items())
    head = (f'<p class="runs-summary"><strong>{escape(name)}</strong>: {escape(score.text())} · '
            f'S {score.dims["S"]:.1f} · A {score.dims["A"]:.1f} · P {score.dims["P"]:.1f} · {escape(counts)}'
            + (" · nothing valid: scored 0, as the released analysis does" if score.nothing_valid else "") + "</p>")
    page = min(max(1, int(page or 1)), pages(len(answers), RUN_PAGE))
    shown = answers[(page - 1) * RUN_PAGE:page * RUN_PAGE]
    body = "".join(
        f'<tr class="runs-row" data-stem="{escape(stem)}" data-dim="{escape(dim)}" data-status="{escape(a.status)}">'
        f'<td><a href="{escape(question_link(stem, dim))}">{escape(stem)} · {escape(dim)}</a></td>'
        f'<td class="runs-letter">{escape(a.own_letter or a.status)}</td><td class="runs-mark">{a.mark}</td>'
        f'<td class="runs-distractor">{escape(a.distractor or "")}</td><td>{_detail_html(a, None)}</td></tr>'
        for stem, dim, a in shown)
    what = "wrong answers" if wrong_only else "questions"
    return (f'<div class="runs-run" data-state="ready" data-run="{escape(name)}" data-total="{len(answers)}" '
            f'data-page="{page}">{head}{_page_note(page, RUN_PAGE, len(answers), what)}'
            f'<div class="runs-table-wrap"><table class="runs-table"><thead><tr><th>Question</th><th>Its letter</th>'
            f'<th></th><th>Distractor picked</th><th>Reason, error, raw reply</th></tr></thead><tbody>{body}'
            f'</tbody></table></div></div>')


CSS = """
.runs-bar-row{display:flex;align-items:center;gap:8px;margin:2px 0}
.runs-bar-letter{width:2.5em;font-weight:600}
.runs-bar-track{flex:0 0 min(420px,40%);height:14px;background:var(--block-background-fill,#eee);border:1px solid #bbb}
.runs-bar{display:block;height:100%;background:#8a8a8a}
.runs-bar-true{background:#2f8f46}
.runs-bar-count{width:2.5em;text-align:right}
.runs-table td,.runs-table th{padding:2px 8px;text-align:left;vertical-align:top}
.runs-table-wrap{max-width:100%;overflow-x:auto}
.runs-table .runs-name{word-break:break-word;min-width:6em}
.runs-overview{max-width:100%;overflow-x:auto}
@media (max-width:600px){.runs-bar-label{display:none}.runs-table td,.runs-table th{padding:2px 4px}}
.runs-human td{font-style:italic}
.runs-grid-row{display:flex;align-items:center;gap:1px;margin:1px 0}
.runs-grid-row .runs-name{flex:0 0 180px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.runs-own{color:var(--body-text-color-subdued,#666);font-weight:400;white-space:nowrap}
.runs-score{font-size:0.85em;color:var(--body-text-color-subdued,#666);white-space:nowrap}
.runs-grid-row .runs-grid-score{flex:0 0 150px;overflow:hidden;white-space:nowrap}
.runs-options{font-size:0.9em;margin-bottom:4px}
.runs-raw pre{white-space:pre-wrap;max-height:16em;overflow:auto;margin:2px 0}
.runs-error{color:#a33}
.runs-cell{flex:0 0 14px;height:14px;font-size:10px;line-height:14px;text-align:center;color:#fff;text-decoration:none}
"""
