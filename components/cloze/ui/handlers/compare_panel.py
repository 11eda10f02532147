"""The Compare panel: the leaderboard (this app's runs first, then imported files, the study's
humans with the researcher token, the paper's rows) and human vs model per question."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from components.cloze.human import load_study_files, study_dir
from components.cloze import view
from components.cloze.leaderboard import comparability_note, reference_rows, row_from_results, significance, table
from components.cloze.metrics import check_results, human_results
from components.cloze.study.config import researcher_allowed
from components.cloze.ui.handlers.model_panel import runs_dir
from components.cloze.ui.views import LeaderboardView
from components.cloze.ui.session import ClozeResources, ClozeSession, ClozeTab
from components.base.admin import admin_mode
from components.base.errors import UserError
from components.base.io import load_json

from components.common.ui import markdown_safe

#: the leaderboard's first column marks this app's own runs
OWN_MARK = "★ "


def run_files(res: ClozeResources, data_dir: str) -> tuple[dict[str, dict], list[str]]:
    """The shared run result files and this page's own, by name, and one line for each file set
    aside (half-written or malformed: its name and what is wrong with it)."""
    runs, set_aside = {}, []
    folders = [runs_dir(data_dir)]
    if not admin_mode():
        folders += [f for f in res.folders if f.parent.name == "visitors"]
    for path in sorted(p for folder in folders for p in folder.glob("*.json")):
        try:
            runs[path.stem] = check_results(load_json(path, "result file"), str(path))
        except UserError as exc:
            why = _first_line(str(exc)).replace(str(path), path.name).removeprefix(path.name).lstrip(": ")
            set_aside.append(f"{path.name}: {why.removeprefix('is ').rstrip('.')}")
    return runs, set_aside


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unreadable"


def set_aside_note(set_aside: list[str]) -> str:
    """The message line for run files left out of the leaderboard ("" when none)."""
    if not set_aside:
        return ""
    files = "; ".join(set_aside)
    return markdown_safe(f"⚠ Left out of the leaderboard, not a readable result file: {files}. "
                         "Remove the file or run the set again to rewrite it.")


def _import_row(file) -> dict:
    path = Path(file if isinstance(file, str) else file.name)
    if path.suffix == ".jsonl":
        return row_from_results(f"Human ({path.stem})", human_results(load_study_files([path])), "imported")
    return row_from_results(path.stem, load_json(path, "result file"), "imported")


def _study_results(data_dir: str) -> dict:
    folder = study_dir(data_dir)
    files = sorted(folder.glob("*.jsonl")) if folder.exists() else []
    return human_results(load_study_files(files)) if files else {}


def _human_vs_model(human: dict, runs: dict[str, dict]) -> Any:
    keys = sorted({(s, d) for s, dd in human.items() for d in dd} |
                  {(s, d) for r in runs.values() for s, dd in r.items() for d in dd})
    rows = []
    for stem, dim in keys:
        h = human.get(stem, {}).get(dim)
        row = [stem, {"C": "P"}.get(dim, dim),
               "-" if h is None else ("✓ GT" if h["correct"] else "✗ " + ", ".join(str(p) for p in h["picks"]))]
        for run in runs.values():
            e = run.get(stem, {}).get(dim)
            pick = (e.get("option_map") or {}).get(e.get("answer") or "", "unparsed") if e else "-"
            row.append("-" if e is None else ("✓ " if e.get("correct") else "✗ ") + str(pick))
        rows.append(row)
    headers = ["stem", "dim", "Human", *runs] if rows else ["stem", "dim", "Human"]
    return gr.update(value=rows or [["-", "-", "-"]], headers=headers)


def refresh(tab: ClozeTab, res: ClozeResources, session: ClozeSession, imported: list | None, files: list | None,
            token: str | None = "") -> LeaderboardView:
    """This app's runs (marked ★, first), imported files, this study and the paper's rows, scored
    alike. The study's own answers (its row, the per-question human column) need the researcher
    token. A run file that cannot be read is named on the message line, with what is wrong."""
    runs, set_aside = run_files(res, session.data_dir)
    rows = [row_from_results(f"{OWN_MARK}{name}", results, "this app") for name, results in runs.items()]
    rows += list(imported or []) + [_import_row(f) for f in files or []]
    human = _study_results(session.data_dir) if researcher_allowed(token) else {}
    if human:
        rows.append(row_from_results("Human (this study)", human, "this study",
                                     data=f"human study in '{Path(session.data_dir).name}'"))
    rows += reference_rows()
    headers, body = table(rows)
    ties = view.tie_groups(significance(rows))
    headers, body = [headers[0], view.TIE_HEADER, *headers[1:]], [[r[0], t, *r[1:]] for r, t in zip(body, ties)]
    label = (f"Leaderboard: this app's runs (★) first. {comparability_note()} Rows marked alike in the "
             f"{view.TIE_HEADER} column (and shaded alike) cannot be told apart: their accuracies differ by "
             "less than chance would (paired bootstrap over stems, 95 %).")
    return LeaderboardView(leaderboard=gr.update(value=shaded(headers, body, ties), headers=headers, label=label),
                           human_vs_model=_human_vs_model(human, runs), message=set_aside_note(set_aside))


def shaded(headers: list[str], body: list[list], ties: list[str]) -> dict:
    """The table as gr.Dataframe takes it with cell styles: each tie group's rows shaded alike."""
    styling = [[f"background-color: {view.tie_colour(t)}" if t else "" for _ in row] for row, t in zip(body, ties)]
    shown = [["" if v is None else str(v) for v in row] for row in body]
    return {"headers": headers, "data": body, "metadata": {"styling": styling, "display_value": shown}}
