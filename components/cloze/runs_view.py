"""HTML of the Cloze tab's run panels (pure; no gradio): "What the runs answered" on the question
on screen (a bar per letter A-D, the distractor each wrong letter is, "k of N runs chose the true
middle", each run's letter with ✓/✗ and its reason in a fold), the question list sorted by how
the runs did, and the runs-by-questions overview (a ✓/✗ grid; questions binned when there are
many). The tables come from components/cloze/runs.py."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import urlencode

from components.cloze.runs import LETTERS, ClozeRuns, QuestionRuns, QuestionStats, RunAnswer

#: the question list's orders: the link's `sort=` value -> (label, ClozeRuns.questions keywords)
SORTS: dict[str, tuple[str, dict]] = {
    "hardest": ("Hardest first (fewest runs right)", {"sort": "share_right"}),
    "easiest": ("Easiest first", {"sort": "share_right", "descending": True}),
    "disagree": ("Most disagreement first", {"sort": "disagreement", "descending": True}),
    "people": ("People right, every model wrong", {"sort": "share_right", "people_only": True}),
    "stem": ("By stem", {"sort": "stem"}),
}
DEFAULT_SORT = "hardest"
LIST_MAX = 200          # rows of the question list shown (the rest are counted)
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


def loading_html(files: int | None) -> str:
    what = f"{files} run files" if files is not None else "the run files"
    return f'<div class="runs-panel" data-state="loading">{_note(f"reading {what}…")}</div>'


def shut_html(*, blind: bool = False) -> str:
    """Practice: nothing about the runs until the player has answered this question, and nothing
    in a blind playthrough (the runs' answers would name the true middle)."""
    note = ("Blind playthrough: the runs' answers are not shown (they would give the answer away)."
            if blind else "Answer this question first: then the runs' answers are shown here.")
    return '<div class="runs-panel" data-state="shut">' + _note(note) + "</div>"


def _answer_row(a: RunAnswer, *, human: bool = False) -> str:
    letter = a.letter or ("missing" if a.status == "missing" else a.status)
    distractor = escape(a.distractor or "")
    reason = (f"<details><summary>reason</summary><div class='runs-reason'>{escape(a.reason)}</div></details>"
              if a.reason else "")
    cls = "runs-row runs-human" if human else "runs-row"
    return (f'<tr class="{cls}" data-run="{escape(a.run)}"><td class="runs-name">{escape(a.run)}</td>'
            f'<td class="runs-letter">{escape(letter)}</td><td class="runs-mark">{a.mark}</td>'
            f'<td class="runs-distractor">{distractor}</td><td>{reason}</td></tr>')


def question_html(qr: QuestionRuns, option_map: Mapping[str, str], refused: Sequence[str] = ()) -> str:
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
    rows = [_answer_row(a) for a in qr.answers]
    if qr.human is not None:
        rows.append(_answer_row(qr.human, human=True))
    return (f'<div class="runs-panel" data-state="ready" data-stem="{escape(qr.stem)}" data-dim="{escape(qr.dim)}">'
            f'<p class="runs-summary"><strong>{escape(qr.summary())}</strong></p>'
            f'<div class="runs-bars">{"".join(bars)}</div>'
            f'<div class="runs-table-wrap"><table class="runs-table"><thead><tr><th>Run</th><th>Letter</th><th></th>'
            f'<th>Distractor picked</th><th>Reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'{refusals_html(refused)}</div>')


def _share(s: QuestionStats) -> str:
    return "–" if s.share_right is None else f"{s.right}/{s.answered}"


def question_list_html(table: ClozeRuns, sort: str = DEFAULT_SORT) -> str:
    """The questions in the chosen order, each a link that opens it."""
    _label, kwargs = SORTS.get(sort, SORTS[DEFAULT_SORT])
    rows = table.questions(**kwargs)
    if not rows:
        what = "no question where people were right and every model wrong" if sort == "people" else "no question"
        return f'<div class="runs-list" data-sort="{escape(sort)}">{_note(f"The runs have {what}.")}</div>'
    body = "".join(
        f'<tr data-stem="{escape(s.stem)}" data-dim="{escape(s.dim)}"><td><a href="{escape(question_link(s.stem, s.dim, sort if sort in SORTS else DEFAULT_SORT))}">'
        f'{escape(s.stem)} · {escape(s.dim)}</a></td><td>{_share(s)}</td><td>{s.disagreement:.2f}</td>'
        f'<td>{"" if s.human_right is None else ("✓" if s.human_right else "✗")}</td></tr>'
        for s in rows[:LIST_MAX])
    more = _note(f"…and {len(rows) - LIST_MAX} more.") if len(rows) > LIST_MAX else ""
    return (f'<div class="runs-list runs-table-wrap" data-sort="{escape(sort)}"><table class="runs-table"><thead><tr>'
            f'<th>Question</th><th>Runs right</th><th>Disagreement</th><th>People</th></tr></thead>'
            f'<tbody>{body}</tbody></table>{more}</div>')


def _cell_colour(share: float | None) -> str:
    if share is None:
        return "#d0d0d0"
    # red (all wrong) to green (all right)
    return f"hsl({round(120 * share)}, 60%, 45%)"


def overview_html(table: ClozeRuns, columns_max: int = GRID_COLUMNS_MAX) -> str:
    """Runs (rows) by questions (columns): ✓/✗ cells, each a link to its question; with more
    questions than `columns_max`, consecutive questions share a column coloured by the share of
    their valid answers that are right (its title names the range)."""
    m = table.matrix()
    if not m.runs or not m.questions:
        return f'<div class="runs-overview">{_note("No runs to show.")}</div>'
    per = max(1, -(-len(m.questions) // columns_max))
    bins = [range(i, min(i + per, len(m.questions))) for i in range(0, len(m.questions), per)]
    head = (f'<p class="runs-note">{len(m.runs)} runs × {len(m.questions)} questions'
            + (f" (each column {per} questions)" if per > 1 else "") + "</p>")
    rows = []
    for r, name in enumerate(m.runs):
        cells = []
        for b in bins:
            values = [m.cells[r][i] for i in b]
            stem, dim = m.questions[b.start]
            href = escape(question_link(stem, dim))
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
        rows.append(f'<div class="runs-grid-row"><span class="runs-name">{escape(name)}</span>{"".join(cells)}</div>')
    return f'<div class="runs-overview">{head}<div class="runs-grid">{"".join(rows)}</div></div>'


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
.runs-cell{flex:0 0 14px;height:14px;font-size:10px;line-height:14px;text-align:center;color:#fff;text-decoration:none}
"""
