"""Cloze tab: Human study / Model / Compare (design/ui.md). Layout and short handlers only; the
logic lives in the sibling modules. Per-session state is a gr.State dict."""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

import gradio as gr

from components.common.ui import TabContext, user_errors

LETTERS = ("A", "B", "C", "D")
DIM_CHOICES = ["S, A, P", "S", "A", "P", "Mixed"]
CODE_NOTE = ("Follows the released TempCloze code where it differs from the paper: 16 bin-centred "
             "frames per clip (first/last frame skipped), frames <= 360 px high, JPEG 85, option order "
             "`random.Random(f\"{seed}:{stem}:{dim}\")`, folder `C` for the paper's Progression (P), "
             "and the released analysis for the scores (invalid answers skipped; strict variant shown too).")


# ---- helpers (no gradio in the logic modules) --------------------------------------------------
def _dims(choice: str) -> list[str]:
    return ["Mixed"] if choice == "Mixed" else [d.strip() for d in choice.split(",")]


def _dataset(root: str):
    from components.cloze.layout import load_dataset

    return load_dataset(root)


def _questions(st: dict):
    from components.cloze.human import study_questions
    from components.cloze.questions import build_set

    ds = _dataset(st["root"])
    set_name = "mixed" if st["dims"] == ["Mixed"] and "mixed" in ds.sets and st["set"] == "all" else st["set"]
    if st["mode"] == "human":
        qs = study_questions(ds, set_name, st["seed"], st["dims"])
    else:
        qs = build_set(ds, set_name, st["dims"], seed=st["seed"])
    return ds, qs


def _clip_views(ds, q, display: str):
    """(before, after, [A..D]) as grid images or video paths."""
    from components.cloze.frames import clip_frames, frame_grid

    inst = ds.instance(q.stem)
    names = ["before", "after", *q.options]
    if display == "video":
        return [str(inst.clip_path(n)) for n in names]
    return [frame_grid(clip_frames(inst.clip_path(n), 16, jpeg=False)) for n in names]


def _mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


def _runs_dir(data_dir: Path) -> Path:
    path = Path(os.environ.get("APP_CLOZE_RUNS_DIR") or Path(data_dir) / "cloze" / "runs")
    try:
        path.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        fallback = Path(tempfile.gettempdir()) / "cloze-runs"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def _frame_cap(settings: dict | None) -> int:
    """Frames per clip: the paper's 16, lowered by the session's max-frames setting."""
    try:
        return max(1, min(16, int((settings or {}).get("max_frames") or 16)))
    except (TypeError, ValueError):
        return 16


def _default_root(data_dir: Path) -> str:
    return str(Path(data_dir) / "cloze")


# ---- tab ---------------------------------------------------------------------------------------
def build_tab(ctx: TabContext) -> None:
    from components.cloze.human import study_dir

    data_dir = Path(ctx.data_dir)
    gr.Markdown("### Cloze: which clip is the missing middle?\n" + CODE_NOTE, elem_id="cloze-intro")
    state = gr.State({})
    with gr.Row():
        mode = gr.Radio(["Human study", "Model", "Compare"], value="Human study", label="Mode",
                        elem_id="cloze-mode")
        root = gr.Textbox(_default_root(data_dir), label="Data folder (holds choices/)",
                          elem_id="cloze-root")
        upload = gr.File(label="…or upload a zip in the released layout", file_types=[".zip"],
                         elem_id="cloze-upload")
    with gr.Row():
        set_name = gr.Dropdown(["all"], value="all", label="Set", allow_custom_value=True,
                               elem_id="cloze-set")
        dims = gr.Dropdown(DIM_CHOICES, value="S, A, P", label="Dimension", elem_id="cloze-dims")
        seed = gr.Number(42, precision=0, label="Seed", elem_id="cloze-seed")
        status = gr.Markdown("", elem_id="cloze-status")

    with gr.Accordion("Build an instance from your own video (12-90 s)", open=False,
                      elem_id="cloze-build-panel"):
        with gr.Row():
            build_video = gr.File(label="Video", file_types=["video"], elem_id="cloze-build-video")
            gap_s = gr.Number(None, label="Gap start (s, empty = automatic)", elem_id="cloze-gap-start")
            gap_e = gr.Number(None, label="Gap end (s)", elem_id="cloze-gap-end")
            build_seed = gr.Number(0, precision=0, label="Distractor seed", elem_id="cloze-build-seed")
            build_btn = gr.Button("Build instance", elem_id="cloze-build")
        build_out = gr.Markdown("Automatic gaps follow the released rules: 20-40% of the video inside "
                                "its middle 50%, mean Farneback flow > 1.0, up to 3 tries.",
                                elem_id="cloze-build-out")

    # -- shared question view --
    with gr.Group(visible=True, elem_id="cloze-question") as qgroup:
        with gr.Row():
            annotator = gr.Textbox("", label="Annotator id (pseudonym)", placeholder="anon-17",
                                   elem_id="cloze-annotator")
            start = gr.Button("Start / resume", variant="primary", elem_id="cloze-start")
            display = gr.Radio([("16 frames", "frames"), ("Video", "video")], value="frames",
                               label="Display", elem_id="cloze-display")
            flow = gr.Radio([("Choose submits", "immediate"), ("Select then submit", "select_then_submit")],
                            value="immediate", label="Answer flow", elem_id="cloze-flow")
            blind = gr.Checkbox(False, label="Blind (no answer reveal)", elem_id="cloze-blind")
        progress = gr.Markdown("Enter an annotator id and press Start / resume.", elem_id="cloze-progress")
        with gr.Row():
            ctx_img = [gr.Image(label=lbl, type="pil", interactive=False, elem_id=f"cloze-{lbl.lower()}-img")
                       for lbl in ("BEGINNING", "END")]
            ctx_vid = [gr.Video(label=lbl, interactive=False, visible=False, elem_id=f"cloze-{lbl.lower()}-video")
                       for lbl in ("BEGINNING", "END")]
        cand_img, cand_vid = [], []
        for pair in ((0, 1), (2, 3)):
            with gr.Row():
                for i in pair:
                    cand_img.append(gr.Image(label=f"Candidate {LETTERS[i]}", type="pil", interactive=False,
                                             elem_id=f"cloze-cand-{LETTERS[i]}-img"))
                    cand_vid.append(gr.Video(label=f"Candidate {LETTERS[i]}", interactive=False,
                                             visible=False, elem_id=f"cloze-cand-{LETTERS[i]}-video"))
        with gr.Row() as answer_row:
            choice_btns = [gr.Button(l, elem_id=f"cloze-choice-{l}") for l in LETTERS]
            submit = gr.Button("Submit", variant="primary", elem_id="cloze-submit")
        with gr.Row():
            prev_btn = gr.Button("◀ Previous", elem_id="cloze-prev")
            next_btn = gr.Button("Next ▶", elem_id="cloze-next")
            navigator = gr.Dropdown([], label="Go to question (✓ answered)", elem_id="cloze-navigator")
        feedback = gr.Markdown("", elem_id="cloze-feedback")
        with gr.Row() as export_row:
            export_json = gr.Button("Export session (JSON)", elem_id="cloze-export-json")
            export_csv = gr.Button("Export session (CSV)", elem_id="cloze-export-csv")
            export_file = gr.File(label="Export", interactive=False, elem_id="cloze-export-file")

    with gr.Group(visible=False, elem_id="cloze-model") as mgroup:
        with gr.Row():
            run_one = gr.Button("Run this question", variant="primary", elem_id="cloze-run-one")
            run_all = gr.Button("Run the set", elem_id="cloze-run-set")
            edge = gr.Radio([("Edge-1", "edge1"), ("Edge-4", "edge4")], value="edge1",
                            label="Baseline (when the backend is 'baseline')", elem_id="cloze-edge")
            strict = gr.Checkbox(False, label="Strict parsing", elem_id="cloze-strict")
        with gr.Row():
            raw = gr.Textbox(label="Raw answer", lines=4, elem_id="cloze-raw")
            parsed = gr.Textbox(label="Parsed letter", elem_id="cloze-parsed")
            reason = gr.Textbox(label="Reason / parse problem", lines=3, elem_id="cloze-reason")
            option_map = gr.JSON(label="Option map", elem_id="cloze-option-map")
        model_summary = gr.Markdown("", elem_id="cloze-model-summary")
        results_file = gr.File(label="Result file (upstream format)", interactive=False,
                               elem_id="cloze-results-file")

    with gr.Group(visible=False, elem_id="cloze-compare") as cgroup:
        with gr.Row():
            imports = gr.File(label="Import result files (.json) or human-study files (.jsonl)",
                              file_count="multiple", elem_id="cloze-import")
            refresh = gr.Button("Refresh leaderboard", elem_id="cloze-refresh")
        leaderboard = gr.Dataframe(label="Leaderboard (paper Table 2.2 rows, imports, this app's runs, this study)",
                                   interactive=False, elem_id="cloze-leaderboard")
        hvm = gr.Dataframe(label="Human vs model, per question (chosen clip)", interactive=False,
                           elem_id="cloze-hvm")
        with gr.Row():
            k_orders = gr.Number(4, precision=0, label="Orders k", elem_id="cloze-order-k")
            order_limit = gr.Number(6, precision=0, label="Questions", elem_id="cloze-order-n")
            order_run = gr.Button("Run order sensitivity", elem_id="cloze-order-run")
        order_out = gr.Markdown("", elem_id="cloze-order-out")
    timer = gr.Timer(1.0, active=False)
    imported = gr.State([])

    views = [*ctx_img, *ctx_vid, *cand_img, *cand_vid]

    # -- handlers --
    def _state(st, mode_v, root_v, set_v, dims_v, seed_v):
        st = dict(st or {})
        st.update(mode="human" if mode_v == "Human study" else "model", root=root_v, set=set_v or "all",
                  dims=_dims(dims_v), seed=int(seed_v if seed_v is not None else 42))
        return st

    def _render(st, display_v):
        """Outputs for views + progress + navigator for the current question."""
        from components.common.io import read_jsonl
        from components.cloze.human import latest_records

        ds, qs = _questions(st)
        qlist = qs.questions
        idx = min(max(0, st.get("index", 0)), len(qlist) - 1)
        st["index"] = idx
        q = qlist[idx]
        st["shown_at"] = time.time()
        st["selected"] = None
        vals = _clip_views(ds, q, display_v)
        is_video = display_v == "video"
        out = []
        for i in range(2):
            out.append(gr.update(value=None if is_video else vals[i], visible=not is_video))
        for i in range(2):
            out.append(gr.update(value=vals[i] if is_video else None, visible=is_video))
        for i in range(4):
            out.append(gr.update(value=None if is_video else vals[2 + i], visible=not is_video))
        for i in range(4):
            out.append(gr.update(value=vals[2 + i] if is_video else None, visible=is_video))
        answered = latest_records(read_jsonl(st["file"])) if st.get("file") else {}
        marks = [f"{i + 1} ✓" if (x.stem, x.dim) in answered else f"{i + 1}" for i, x in enumerate(qlist)]
        done = sum(1 for x in qlist if (x.stem, x.dim) in answered)
        nav = gr.update(choices=marks, value=marks[idx])
        prog = f"**Question {idx + 1} of {len(qlist)} · 00:00** · answered {done}/{len(qlist)}"
        return st, out, prog, nav

    @user_errors
    def on_start(st, mode_v, root_v, set_v, dims_v, seed_v, ann_v, display_v):
        from components.cloze.human import (annotator_file, load_progress, new_session_id,
                                            sanitise_annotator)

        st = _state(st, mode_v, root_v, set_v, dims_v, seed_v)
        if st["mode"] == "human":
            ann = sanitise_annotator(ann_v)
            folder = study_dir(data_dir)
            st.update(annotator=ann, file=str(annotator_file(folder, ann)), session=new_session_id())
            _push_for(folder)
            _, qs = _questions(st)
            prog = load_progress(st["file"], qs.questions)
            st["index"] = prog.next_index if prog.next_index is not None else len(qs.questions) - 1
            msg = (f"Resumed: {prog.answered_count(qs.questions)} of {len(qs.questions)} already answered."
                   if prog.answered_count(qs.questions) else f"New session for {ann}.")
            if prog.next_index is None:
                msg = f"All {len(qs.questions)} questions are answered; use the navigator to review or redo."
        else:
            st.update(file=None, index=0)
            msg = ""
        st, out, prog_md, nav = _render(st, display_v)
        return [st, *out, prog_md, nav, msg, gr.Timer(active=st["mode"] == "human")]

    def on_tick(st):
        if not st or "shown_at" not in st:
            return gr.update()
        try:
            n = len(_questions(st)[1].questions)
        except Exception:  # noqa: BLE001 - a tick never raises
            return gr.update()
        return f"**Question {st['index'] + 1} of {n} · {_mmss(time.time() - st['shown_at'])}**"

    @user_errors
    def on_goto(st, display_v, target):
        if not st or "root" not in st:
            return [st, *[gr.update()] * 12, gr.update(), gr.update()]
        st = dict(st)
        st["index"] = target
        st, out, prog_md, nav = _render(st, display_v)
        return [st, *out, prog_md, nav]

    def _answer(st, letter, display_v, flow_v, blind_v):
        from components.cloze.human import record_answer

        if not st or not st.get("file"):
            raise gr.Error("Press Start / resume first (with an annotator id).")
        ds, qs = _questions(st)
        q = qs.questions[st["index"]]
        rec = record_answer(st["file"], q, task_index=st["index"], answer=letter,
                            annotator=st["annotator"], session=st["session"], set_name=qs.name,
                            order_seed=st["seed"], display_mode=display_v, answer_flow=flow_v,
                            elapsed_sec=time.time() - st.get("shown_at", time.time()), blind=bool(blind_v))
        from components.cloze.questions import distractor_type

        n = st["index"] + 1
        if blind_v:
            fb = f"Question {n}: answer saved."
        elif rec["correct"]:
            fb = f"Question {n}: **Correct** - {rec['expected']} was the true middle."
        else:
            fb = (f"Question {n}: **Not quite** - {rec['expected']} was the true middle; you chose "
                  f"{letter}: {distractor_type(rec['chosen'])}.")
        from components.cloze.human import load_progress

        prog = load_progress(st["file"], qs.questions)
        st = dict(st)
        if prog.next_index is not None:
            later = [i for i in range(st["index"] + 1, len(qs.questions))
                     if (qs.questions[i].stem, qs.questions[i].dim) not in prog.answered]
            st["index"] = later[0] if later else prog.next_index
        else:
            fb += f" All {len(qs.questions)} questions answered - thank you."
        st, out, prog_md, nav = _render(st, display_v)
        return [st, *out, prog_md, nav, fb]

    @user_errors
    def on_choice(st, letter, display_v, flow_v, blind_v):
        if flow_v == "immediate":
            return _answer(st, letter, display_v, flow_v, blind_v)
        st = dict(st or {})
        st["selected"] = letter
        return [st, *[gr.update()] * 12, gr.update(), gr.update(), f"Selected {letter}; press Submit."]

    @user_errors
    def on_submit(st, display_v, flow_v, blind_v):
        if not st or not st.get("selected"):
            raise gr.Error("Select A, B, C or D first.")
        return _answer(st, st["selected"], display_v, flow_v, blind_v)

    @user_errors
    def on_export(st, fmt):
        from components.common.io import read_jsonl
        from components.cloze.human import export_records

        if not st or not st.get("file"):
            raise gr.Error("Start a session first; its answers are exported.")
        text = export_records(read_jsonl(st["file"]), fmt)
        out = Path(tempfile.mkdtemp(prefix="cloze-export-")) / f"{st['annotator']}.{fmt}"
        out.write_text(text, encoding="utf-8")
        return str(out)

    @user_errors
    def on_upload(file):
        from components.cloze.layout import find_root, safe_extract_zip

        if file is None:
            return gr.update(), gr.update()
        path = Path(file if isinstance(file, str) else file.name)
        base = Path(data_dir) / "cloze" / "uploads"
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError:
            base = Path(tempfile.gettempdir()) / "cloze-uploads"
        dest = base / f"{_safe_name(path.stem)}-{int(time.time())}"
        safe_extract_zip(path, dest)
        r = find_root(dest)
        ds = _dataset(str(r))
        return str(r), f"Loaded {len(ds.instances)} stems from {path.name}."

    @user_errors
    def on_root(root_v):
        from components.cloze.questions import set_names

        ds = _dataset(root_v)
        probs = ds.problems()
        note = f"{len(ds.instances)} stems." + (f" Problems: {'; '.join(probs[:4])}" if probs else "")
        return gr.update(choices=set_names(ds), value="all"), note

    @user_errors
    def on_mode(mode_v):
        human = mode_v == "Human study"
        return (gr.update(visible=mode_v != "Compare"), gr.update(visible=mode_v == "Model"),
                gr.update(visible=mode_v == "Compare"), gr.update(visible=human),
                gr.update(visible=human), gr.update(visible=human), gr.update(visible=human),
                gr.update(value="Start / resume" if human else "Load the question set"))

    @user_errors
    def on_run_one(st, settings, mode_v, root_v, set_v, dims_v, seed_v, edge_v, strict_v):
        from components.cloze.runner import answer_safely
        from components.cloze.solver import solver_for
        from components.settings.session import backend_for

        st = _state(st, "Model", root_v, set_v, dims_v, seed_v)
        ds, qs = _questions(st)
        q = qs.questions[min(st.get("index", 0), len(qs.questions) - 1)]
        solver = solver_for(backend_for(settings), edge_variant=edge_v, strict=bool(strict_v),
                            max_frames=_frame_cap(settings))
        rec = answer_safely(solver, ds, q)
        letter = rec.get("answer") or "(unparsed)"
        why = rec.get("reason") or rec.get("error") or ""
        verdict = "correct" if rec["correct"] else ("unparsed - counted as unparsed, not guessed"
                                                    if not rec.get("answer") else "wrong")
        summary = (f"{q.stem} · {q.dim} · expected {q.expected} · {verdict} · frames per clip "
                   f"{rec.get('used_num_frames', '-')} · attempts {rec.get('attempts', '-')}")
        return rec.get("raw", ""), letter, why, rec["option_map"], summary

    @user_errors
    def on_run_set(st, settings, root_v, set_v, dims_v, seed_v, edge_v, strict_v, progress=gr.Progress()):
        from components.cloze.runner import run_set
        from components.cloze.scoring import score_results
        from components.cloze.solver import solver_for
        from components.settings.session import backend_for

        st = _state(st, "Model", root_v, set_v, dims_v, seed_v)
        ds, qs = _questions(st)
        solver = solver_for(backend_for(settings), edge_variant=edge_v, strict=bool(strict_v),
                            max_frames=_frame_cap(settings))
        name = _safe_name(f"{solver.name}-{qs.name}-seed{st['seed']}")
        out = _runs_dir(data_dir) / f"{name}.json"
        total = len(qs.questions)
        seen = {"n": 0}

        def tick(_rec):
            seen["n"] += 1
            progress((seen["n"], total), desc="cloze questions")

        progress((0, total), desc="cloze questions")
        res = run_set(solver, ds, qs.questions, out, progress=False, on_result=tick)
        m = score_results(res["results"])
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        md = (f"**{solver.name}** on {qs.name}: S {fmt(m['S'])} · A {fmt(m['A'])} · P {fmt(m['P'])} · "
              f"acc {fmt(m['acc'])} · 3/3 {fmt(m['3/3'])} · parse rate {fmt(m['parse_rate'])} · "
              f"unparsed {m['invalid_entries_skipped']} · {res['counts']['done']} new, "
              f"{res['counts']['skipped']} resumed"
              + (f" · {res['counts']['failed']} failed (backend error; run again to retry)"
                 if res['counts'].get('failed') else ""))
        return md, str(out)

    @user_errors
    def on_refresh(imported_v, files):
        from components.cloze.leaderboard import reference_rows, row_from_results, table

        rows = reference_rows() + list(imported_v or [])
        for f in files or []:
            rows.append(_import_row(f))
        for p in sorted(_runs_dir(data_dir).glob("*.json")):
            try:
                rows.append(row_from_results(p.stem, json.loads(p.read_text()), "this app"))
            except Exception:  # noqa: BLE001 - a half-written file is skipped
                continue
        human = _human_results()
        if human:
            rows.append(row_from_results("Human (this study)", human, "this study"))
        headers, body = table(rows)
        return gr.update(value=body, headers=headers), _hvm_table(human)

    def _import_row(f):
        from components.cloze.human import load_study_files
        from components.cloze.leaderboard import row_from_results
        from components.cloze.scoring import human_results
        from components.common.io import load_json

        path = Path(f if isinstance(f, str) else f.name)
        if path.suffix == ".jsonl":
            return row_from_results(f"Human ({path.stem})", human_results(load_study_files([path])), "imported")
        return row_from_results(path.stem, load_json(path, "result file"), "imported")

    def _human_results():
        from components.cloze.human import load_study_files
        from components.cloze.scoring import human_results

        folder = study_dir(data_dir)
        files = sorted(folder.glob("*.jsonl")) if folder.exists() else []
        return human_results(load_study_files(files)) if files else {}

    def _hvm_table(human):
        runs = {}
        for p in sorted(_runs_dir(data_dir).glob("*.json")):
            try:
                runs[p.stem] = json.loads(p.read_text())
            except Exception:  # noqa: BLE001
                continue
        keys = sorted({(s, d) for s, dd in human.items() for d in dd} |
                      {(s, d) for r in runs.values() for s, dd in r.items() for d in dd})
        rows = []
        for stem, dim in keys:
            h = human.get(stem, {}).get(dim)
            row = [stem, {"C": "P"}.get(dim, dim),
                   "-" if h is None else ("✓ GT" if h["correct"] else "✗ " + ", ".join(str(p) for p in h["picks"]))]
            for r in runs.values():
                e = r.get(stem, {}).get(dim)
                pick = (e.get("option_map") or {}).get(e.get("answer") or "", "unparsed") if e else "-"
                row.append("-" if e is None else ("✓ " if e.get("correct") else "✗ ") + str(pick))
            rows.append(row)
        return gr.update(value=rows or [["-", "-", "-"]], headers=["stem", "dim", "Human", *runs] if rows else ["stem", "dim", "Human"])

    @user_errors
    def on_orders(st, settings, root_v, set_v, dims_v, seed_v, edge_v, k_v, n_v, progress=gr.Progress()):
        from components.cloze.runner import run_orders
        from components.cloze.solver import solver_for
        from components.settings.session import backend_for

        st = _state(st, "Model", root_v, set_v, dims_v, seed_v)
        ds, qs = _questions(st)
        questions = qs.questions[:max(1, int(n_v or 1))]
        solver = solver_for(backend_for(settings), edge_variant=edge_v)
        res = run_orders(solver, ds, questions, max(2, int(k_v or 4)),
                         on_step=lambda i, t: progress((i, t), desc="orders"))
        m = res["metrics"]
        return (f"**{solver.name}**, {m['questions']} questions × {m['orders']} orders: "
                f"FR {m['FR']:.1f} · CFR {m['CFR']:.1f} · Range {m['Range']:.1f} · Disp. {m['Disp']:.2f} · "
                f"accuracy per order {', '.join(f'{a:.1f}' for a in m['per_order_acc'])}")

    @user_errors
    def on_build(file, gs, ge, seed_v, progress=gr.Progress()):
        from components.cloze.build import build_instance
        from components.common.errors import UserError

        if file is None:
            raise UserError("Upload a video first.")
        path = Path(file if isinstance(file, str) else file.name)
        gap = None
        if gs is not None or ge is not None:
            if gs is None or ge is None:
                raise UserError("Give both gap start and gap end, or leave both empty for an automatic gap.")
            gap = (float(gs), float(ge))
        out_root = Path(data_dir) / "cloze" / "built"
        try:
            out_root.mkdir(parents=True, exist_ok=True)
        except OSError:
            out_root = Path(tempfile.gettempdir()) / "cloze-built"
        progress(0.1, desc="cutting clips")
        stem = _safe_name(path.stem)
        entry = build_instance(path, out_root, stem=stem, gap=gap, seed=int(seed_v or 0))
        tries = "; ".join(f"gap {t['gap'][0]}-{t['gap'][1]} s flow {t['flow']:.2f}" for t in entry["gap_tries"])
        md = (f"Built **{stem}**: gap {entry['gap_start']}-{entry['gap_end']} s of {entry['duration']} s, "
              f"seed {entry['seed']}" + (f" (tries: {tries})" if tries else " (explicit gap)")
              + f". Saved under {out_root}; the data folder now points there.")
        return md, str(out_root)

    # -- wiring --
    build_btn.click(on_build, [build_video, gap_s, gap_e, build_seed], [build_out, root])
    qargs = [state, mode, root, set_name, dims, seed]
    start.click(on_start, [*qargs, annotator, display],
                [state, *views, progress, navigator, feedback, timer])
    timer.tick(on_tick, [state], [progress], show_progress="hidden")
    for i, btn in enumerate(choice_btns):
        btn.click(on_choice, [state, gr.State(LETTERS[i]), display, flow, blind],
                  [state, *views, progress, navigator, feedback])
    submit.click(on_submit, [state, display, flow, blind], [state, *views, progress, navigator, feedback])
    def on_prev(st, d):
        return on_goto(st, d, (st or {}).get("index", 0) - 1)

    def on_next(st, d):
        return on_goto(st, d, (st or {}).get("index", 0) + 1)

    def on_navigate(st, d, v):
        return on_goto(st, d, int(str(v).split()[0]) - 1)

    def on_display(st, d):
        return on_goto(st, d, (st or {}).get("index", 0))

    def on_export_json(st):
        return on_export(st, "json")

    def on_export_csv(st):
        return on_export(st, "csv")

    nav_out = [state, *views, progress, navigator]
    prev_btn.click(on_prev, [state, display], nav_out)
    next_btn.click(on_next, [state, display], nav_out)
    navigator.input(on_navigate, [state, display, navigator], nav_out)
    display.input(on_display, [state, display], nav_out)
    export_json.click(on_export_json, [state], [export_file])
    export_csv.click(on_export_csv, [state], [export_file])
    upload.upload(on_upload, [upload], [root, status])
    root.submit(on_root, [root], [set_name, status])
    mode.change(on_mode, [mode], [qgroup, mgroup, cgroup, answer_row, export_row, annotator, blind, start])
    run_one.click(on_run_one, [state, ctx.settings, mode, root, set_name, dims, seed, edge, strict],
                  [raw, parsed, reason, option_map, model_summary])
    run_all.click(on_run_set, [state, ctx.settings, root, set_name, dims, seed, edge, strict],
                  [model_summary, results_file])
    refresh.click(on_refresh, [imported, imports], [leaderboard, hvm])
    imports.upload(on_refresh, [imported, imports], [leaderboard, hvm])
    order_run.click(on_orders, [state, ctx.settings, root, set_name, dims, seed, edge, k_orders, order_limit],
                    [order_out])


_pushers: dict[str, object] = {}


def _push_for(folder: Path) -> None:
    """Start (once per folder, per process) the optional Hub push of the study files."""
    from components.cloze.human import HubPush

    key = str(folder)
    if key in _pushers:
        return
    push = HubPush.from_env(folder)
    if push is None:
        return
    try:
        push.start()
    except Exception as exc:  # noqa: BLE001 - pushing is optional; answers stay on disk
        gr.Warning(f"Could not start pushing study files to {push.repo_id}: {exc}")
        return
    _pushers[key] = push
