"""The Compare panel: the leaderboard (every run the tab's run collection found: the data's
`cloze/results/`, the app's runs folder, `--runs`, APP_RUNS_DIR; this page's own runs; imported
files; the study's humans with the researcher token; the paper's rows), a run opened from its row,
and human vs model per question. Runs are read through components/common/runs.py, the same reader
and folders as the runs panels and `eval cloze --items`, so every view says the same numbers."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gradio as gr

from components.cloze.human import load_study_files, study_dir
from components.cloze import runs_view
from components.cloze.leaderboard import TIE_HEADER, board, comparability_note, reference_rows, \
    row_from_results, run_rows, tie_colour
from components.cloze.metrics import PAPER_KEYS, human_results
from components.cloze.runs import CLOZE_READER, ClozeRuns, loader_for
from components.cloze.study.config import researcher_allowed
from components.cloze.ui.views import LeaderboardView, RunOpened, RunPicked
from components.cloze.ui.session import ClozeResources, ClozeSession, ClozeTab
from components.base.admin import admin_mode
from components.common.runs import LoadedRuns, collect

from components.common.ui import markdown_safe

#: the leaderboard's first column marks the runs this app made: the shared runs folder's, and this
#: page's own (its visitors/ folder, on no other visitor's leaderboard)
OWN_MARK = "★ "
#: how long a leaderboard waits for the run collection before it shows what is read so far
BOARD_WAIT_S = 20.0
#: the Source column of a row from the run collection, and of this page's own runs
RUN_SOURCE, OWN_SOURCE = "run file", "this app"


def own_runs(res: ClozeResources) -> LoadedRuns:
    """This page's own runs (its `visitors/` folder: not in the shared collection, never shown
    to another visitor), read by the collection's reader; none with APP_ADMIN (they are shared)."""
    if admin_mode():
        return LoadedRuns()
    folders = [f for f in res.folders if f.parent.name == "visitors"]
    return collect(CLOZE_READER, folders) if folders else LoadedRuns()


def _runs_folder(data_dir: str) -> Path:
    """The app's shared runs folder (APP_CLOZE_RUNS_DIR, else <data>/cloze/runs), resolved."""
    from components.cloze.runs import cloze_runs_folders
    return Path(os.path.abspath(cloze_runs_folders(data_dir)[-1]))


def collection(session: ClozeSession, *, recheck: bool = False, wait: float = BOARD_WAIT_S) -> LoadedRuns | None:
    """The tab's run collection (the one the panels read), None while it is still being read."""
    return loader_for(session.data_dir, session.runs, recheck=recheck).wait(wait)


def _left_out(refusals) -> list[str]:
    """Each refused file as "name: what is wrong" (no server path on a visitor's page)."""
    return [f"{Path(r.path).name}: {r.reason.removeprefix('is ').rstrip('.')}" for r in refusals]


def _mark_own(rows: list[dict], runs_folder: Path) -> list[dict]:
    """The runs this app wrote to its shared runs folder: marked ★ and "this app", as this page's."""
    for row in rows:
        if Path(row.get("file", "")).parent == runs_folder and not row["name"].startswith(OWN_MARK):
            row["name"], row["source"] = f"{OWN_MARK}{row['name']}", OWN_SOURCE
    return rows


def set_aside_note(lines: list[str]) -> str:
    """The message line for run files left out of the leaderboard ("" when none)."""
    if not lines:
        return ""
    return markdown_safe("⚠ Left out of the leaderboard: " + "; ".join(lines)
                         + ". Remove the file or run the set again to rewrite it.")


def _import_loaded(files: list) -> tuple[LoadedRuns, list[dict]]:
    """Imported result files read by the collection's reader (human-study files as a Human row)."""
    paths = [Path(f if isinstance(f, str) else f.name) for f in files or []]
    humans = [row_from_results(f"Human ({p.stem})", human_results(load_study_files([p])), "imported")
              for p in paths if p.suffix == ".jsonl"]
    results = [p for p in paths if p.suffix != ".jsonl"]
    return (collect(CLOZE_READER, named=results) if results else LoadedRuns()), humans


def _study_results(data_dir: str) -> dict:
    folder = study_dir(data_dir)
    files = sorted(folder.glob("*.jsonl")) if folder.exists() else []
    return human_results(load_study_files(files)) if files else {}


def _human_vs_model(human: dict, table: ClozeRuns | None) -> Any:
    """The study's questions (with the researcher token), each with the clip every run chose."""
    names = table.names if table is not None else []
    rows = []
    for stem, dims in sorted(human.items()):
        for dim, h in sorted(dims.items()):
            paper = PAPER_KEYS.get(dim, dim)
            row = [stem, paper, "✓ GT" if h["correct"] else "✗ " + ", ".join(str(p) for p in h["picks"])]
            answers = {a.run: a for a in table.question(stem, paper).answers} if table is not None else {}
            for name in names:
                a = answers.get(name)
                row.append("-" if a is None else (a.mark + " " + (a.pick or a.status)))
            rows.append(row)
    headers = ["stem", "dim", "Human", *names] if rows else ["stem", "dim", "Human"]
    return gr.update(value=rows or [["-", "-", "-"]], headers=headers)


def refresh(tab: ClozeTab, res: ClozeResources, session: ClozeSession, imported: list | None, files: list | None,
            token: str | None = "") -> LeaderboardView:
    """One row per run the collection found, this page's own runs (★), imported files, this study
    and the paper's rows, scored alike (as `eval cloze`). The study's own answers (its row, the
    per-question human column) need the researcher token. A run file that cannot be read is named
    on the message line, with what is wrong."""
    loaded = collection(session, recheck=True)
    rows, notes = [], []
    if loaded is None:
        notes.append("the run files are still being read; press Refresh leaderboard in a moment")
    else:
        rows += _mark_own(run_rows(loaded, RUN_SOURCE), _runs_folder(session.data_dir))
        notes += _left_out(loaded.refusals)
    own = own_runs(res)
    rows += [{**r, "name": f"{OWN_MARK}{r['name']}"} for r in run_rows(own, OWN_SOURCE)]
    notes += _left_out(own.refusals)
    imports, humans = _import_loaded(files)
    notes += _left_out(imports.refusals)
    rows += list(imported or []) + run_rows(imports, "imported") + humans
    human = _study_results(session.data_dir) if researcher_allowed(token) else {}
    if human:
        rows.append(row_from_results("Human (this study)", human, "this study",
                                     data=f"human study in '{Path(session.data_dir).name}'"))
    rows += reference_rows()
    headers, body, ties = board(rows)
    found = len(loaded.runs) if loaded is not None else 0
    label = (f"Leaderboard: {found} run(s) found (the data's cloze/results, the runs folder, --runs), "
             f"this page's own (★), imported files, then the paper's rows. Click a run's row to open its "
             f"answers. A paper row's interval is binomial over its N questions (its Stems, the paper's videos, x 3: "
             f"the paper gives no per-question answers). {comparability_note()} Rows marked alike in the {TIE_HEADER} column (and shaded "
             "alike) cannot be told apart: their accuracies differ by less than chance would (paired "
             "bootstrap over stems, 95 %).")
    return LeaderboardView(leaderboard=gr.update(value=shaded(headers, body, ties), headers=headers, label=label),
                           human_vs_model=_human_vs_model(human, loaded.table if loaded is not None else None),
                           message=set_aside_note(notes))


def open_run(data_dir: str, named: tuple, name: str, wrong_only: bool, page: int | float | None,
             imported_files: list | None = None, own: LoadedRuns | None = None) -> str:
    """The run named `name` (a leaderboard row's Model): every question it answered, its answer
    on its own letters, ✓/✗, the reason, the error text and raw reply of an entry without a valid
    answer; `wrong_only` keeps its wrong answers; `page` pages through them (runs_view.RUN_PAGE).
    A run of the collection, else this page's own run (`own`, its visitors/ folder), else an
    imported result file."""
    name = (name or "").removeprefix(OWN_MARK)
    if not name:
        return ""
    loaded = loader_for(data_dir, named).wait(BOARD_WAIT_S)
    if loaded is None:
        return runs_view.loading_html()
    table: ClozeRuns | None = loaded.table if name in loaded.table.names else None
    for extra in (own, _import_loaded(imported_files)[0] if imported_files else None):
        if table is None and extra is not None and name in extra.runs:
            table = ClozeRuns(extra.runs).prepare()
    if table is None:
        return runs_view.run_missing_html(name)
    return runs_view.run_html(table, name, wrong_only=bool(wrong_only), page=int(page or 1))


def pick_run(tab: ClozeTab, res: ClozeResources, row: list) -> RunPicked:
    """A leaderboard row clicked: its run (the row's Model) named, page 1; the name's change
    opens it (`show_run`)."""
    return RunPicked(run_name=str((row or [""])[0]), run_page=1, message=None)


def show_run(tab: ClozeTab, res: ClozeResources, session: ClozeSession, name: str, wrong_only: bool,
             page: int | float | None, files: list | None) -> RunOpened:
    """The leaderboard's opened run redrawn (a row clicked, Wrong only, a page): the collection's
    runs, this page's own (★) and the imported files alike."""
    return RunOpened(run_view=open_run(session.data_dir, tuple(session.runs or ()), name, wrong_only, page,
                                       files, own=own_runs(res)))


def shaded(headers: list[str], body: list[list], ties: list[str]) -> dict:
    """The table as gr.Dataframe takes it with cell styles: each tie group's rows shaded alike."""
    styling = [[f"background-color: {tie_colour(t)}" if t else "" for _ in row] for row, t in zip(body, ties)]
    shown = [["" if v is None else str(v) for v in row] for row in body]
    return {"headers": headers, "data": body, "metadata": {"styling": styling, "display_value": shown}}
