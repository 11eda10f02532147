"""Video benchmark explorer: one Gradio app, three tabs (window search, cloze, impact).

`python app.py` starts the UI; `python app.py eval|run ...` are the batch commands. This module only
parses the command line and assembles the tabs; importing it loads no model and touches no network.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from pathlib import Path

from backends.errors import BackendError
from components.common.cli import HelpFormatter
from components.common.errors import UserError
from components.settings.session import SessionSettings

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parent
TITLE = "Video benchmark explorer"
# (tab label, UI module, CLI module, the parameters of its links)
TABS = [
    ("Window search", "components.window_search.ui", "components.window_search.cli", ("movie", "qid", "t")),
    ("Cloze", "components.cloze.ui", "components.cloze.cli", ("stem", "q")),
    ("Impact", "components.impact.ui", "components.impact.cli", ("clip", "frame")),
]


def tab_slug(label: str) -> str:
    return label.lower().replace(" ", "-")


def default_data_dir() -> Path:
    return Path(os.environ.get("APP_DATA_DIR") or ROOT / "data")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="app.py", description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter,
        epilog="Without a subcommand the UI starts. Environment variables: see README.md.")
    parser.add_argument("--host", default=os.environ.get("APP_HOST") or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
                        help="address to serve the UI on ($APP_HOST; 0.0.0.0 on a Space)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_PORT", "7860")),
                        help="port for the UI ($APP_PORT)")
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(),
                        help="data directory with grounding/, cloze/, impact/ ($APP_DATA_DIR)")
    parser.add_argument("--backend", default=os.environ.get("APP_BACKEND", "baseline"),
                        help="default model backend: baseline | openai:<model> | hf:<hub id or folder> "
                             "| replay:<trace.jsonl>; every run command inherits it ($APP_BACKEND)")
    commands = parser.add_subparsers(dest="command", metavar="{eval,run,compare}")
    eval_parser = commands.add_parser("eval", help="score prediction/result files (prints metrics)",
                                      formatter_class=HelpFormatter)
    eval_sub = eval_parser.add_subparsers(dest="target", metavar="TARGET")
    run_parser = commands.add_parser("run", help="run a backend over a data set (resumable)",
                                     formatter_class=HelpFormatter)
    run_sub = run_parser.add_subparsers(dest="target", metavar="TARGET")
    compare_parser = commands.add_parser("compare", formatter_class=HelpFormatter,
                                         help="two runs of one benchmark: paired differences with "
                                              "intervals and p-values, disagreeing items")
    compare_sub = compare_parser.add_subparsers(dest="target", metavar="TARGET")
    eval_parser.set_defaults(func=lambda args: _print_help(eval_parser))
    run_parser.set_defaults(func=lambda args: _print_help(run_parser))
    compare_parser.set_defaults(func=lambda args: _print_help(compare_parser))
    for _, _, cli_module, _ in TABS:
        cli = importlib.import_module(cli_module)
        cli.add_eval_parsers(eval_sub)
        cli.add_run_parsers(run_sub)
        cli.add_compare_parsers(compare_sub)
    return parser


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def build_app(data_dir: Path, backend: str = "baseline", concurrency: int = 4):
    """Assemble the three tabs under one header and the shared Model panel (a sidebar),
    `concurrency` events at a time."""
    import gradio as gr

    # these build gradio components: imported here so `app.py --help` never loads gradio
    from components.common.page import open_from_link, presentation_toggle, sync_presentation
    from components.common.ui import TabContext, message_line
    from components.settings.ui import build_settings_panel, model_badge

    with gr.Blocks(title=TITLE, analytics_enabled=False, fill_width=True) as demo:
        # before any component: each queue() call rebuilds gradio's server app and the config of
        # every component built so far (~0.2 s for these tabs, a sixth of the start)
        demo.queue(default_concurrency_limit=concurrency)
        with gr.Row(elem_id="app-header", equal_height=True):
            gr.HTML(f"<span class='app-name'>{TITLE}</span>", elem_id="app-name", container=False)
            badge = model_badge(SessionSettings(backend=backend))
            present = presentation_toggle()
        link_note = message_line("app-link-note")
        settings = build_settings_panel(SessionSettings(backend=backend), badge)
        ctx = TabContext(data_dir=Path(data_dir), settings=settings, demo=demo)
        with gr.Tabs(elem_id="app-tabs") as tabs:
            for label, ui_module, _, _ in TABS:
                with gr.Tab(label, id=tab_slug(label), elem_id=f"tab-{tab_slug(label)}"):
                    importlib.import_module(ui_module).build_tab(ctx)
        open_from_link(demo, tabs, link_note, {tab_slug(label): keys for label, _, _, keys in TABS})
        sync_presentation(demo, present)
    return demo


def ensure_example_data(data_dir: Path) -> None:
    """On a Hugging Face Space (SPACE_ID set) generate the example data on first start."""
    if not os.environ.get("SPACE_ID"):
        return
    from examples.generate import generate_all

    generate_all(Path(data_dir))


def launch(args: argparse.Namespace, *, prevent_thread_lock: bool = False):
    from components.common.idle import quiet_when_idle
    from components.common.page import HEAD
    from components.common.warm import warm_in_background
    from components.common.theme import CSS, THEME

    page = os.environ.get("APP_PAGE", "explorer").strip().lower() or "explorer"
    if page == "study":   # a Space (or server) that is the human-study page alone, on the same port
        from components.cloze.study.app import launch_study

        return launch_study(args.data_dir, host=args.host, port=args.port, prevent_thread_lock=prevent_thread_lock)
    if page != "explorer":
        raise SystemExit(f"error: APP_PAGE must be 'explorer' (the default) or 'study'; got {page!r}.")
    ensure_example_data(args.data_dir)
    demo = build_app(args.data_dir, args.backend, int(os.environ.get("APP_CONCURRENCY", "4")))
    quiet_when_idle(demo)  # gradio polls its queue every 1 ms otherwise (components/common/idle.py)
    allowed = [str(Path(args.data_dir).resolve())]
    demo.launch(server_name=args.host, server_port=args.port, share=args.share,
                theme=THEME, css=CSS, head=HEAD, allowed_paths=allowed,
                max_file_size=os.environ.get("APP_MAX_UPLOAD", "2gb"),
                prevent_thread_lock=True, show_error=True, quiet=prevent_thread_lock)
    demo.warm_up = warm_in_background(warm_up_tasks(args.data_dir))
    if not prevent_thread_lock:
        demo.block_thread()
    return demo


def warm_up_tasks(data_dir: Path) -> list:
    """What the server does once it answers (components/common/warm.py): each tab's `warm`, then
    the API client's import, so a first model call does not wait ~0.7 s for it."""
    from backends.registry import preload

    tasks = [functools.partial(module.warm, data_dir) for module in
             (importlib.import_module(ui) for _, ui, _, _ in TABS) if hasattr(module, "warm")]
    return [*tasks, functools.partial(preload, "openai")]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        launch(args)
        return 0
    try:
        return int(args.func(args) or 0)
    except (UserError, BackendError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
