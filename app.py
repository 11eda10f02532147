"""Video benchmark explorer: one Gradio app, one tab per benchmark.

`python app.py` starts the UI; `python app.py eval|run ...` are the batch commands and `python app.py
fetch` mirrors a dataset repository. This module only parses the command line and assembles the tabs
(each a row of the tab registry, components/base/tabs.py); importing it loads no model and touches
no network.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
from pathlib import Path

from backends.errors import BackendError
from components.common.cli import HelpFormatter
from components.base.errors import UserError
from components.base import tabs as registry
from components.common import preparing
from components.datasource import FORM, as_source, is_hub_spec, mirror, open_data_dir, parse_spec, storage_folder
from components.settings.session import SessionSettings

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parent
TITLE = "Video benchmark explorer"


def default_data_dir() -> Path | str:
    """$APP_DATA_DIR (a folder, or a dataset repository spec kept as a string), else ./data."""
    return as_source(os.environ.get("APP_DATA_DIR") or str(ROOT / "data"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="app.py", description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter,
        epilog="Without a subcommand the UI starts. Environment variables: see README.md.")
    parser.add_argument("--host", default=os.environ.get("APP_HOST") or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
                        help="address to serve the UI on ($APP_HOST; 0.0.0.0 on a Space)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_PORT", "7860")),
                        help="port for the UI ($APP_PORT)")
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    parser.add_argument("--data-dir", type=as_source, default=default_data_dir(),
                        help=f"data directory with {', '.join(f'{d}/' for d in registry.data_folders())}, or a dataset repository "
                             f"{FORM} holding them or one benchmark ($APP_DATA_DIR)")
    parser.add_argument("--backend", default=os.environ.get("APP_BACKEND", "baseline"),
                        help="default model backend: baseline | openai:<model> | hf:<hub id or folder> "
                             "| replay:<trace.jsonl>; every run command inherits it ($APP_BACKEND)")
    parser.add_argument("--runs", action="append", default=[], metavar="FOLDER",
                        help="more run files to show on each item: a folder, a file or a dataset "
                             f"repository {FORM} (repeat for several; also $APP_RUNS_DIR)")
    commands = parser.add_subparsers(dest="command", metavar="{eval,run,compare,fetch}")
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
    for spec in registry.tabs():
        cli = spec.load("cli")
        if cli is None:
            continue
        cli.add_eval_parsers(eval_sub)
        cli.add_run_parsers(run_sub)
        cli.add_compare_parsers(compare_sub)
    add_fetch_parser(commands)
    return parser


def add_fetch_parser(commands) -> None:
    p = commands.add_parser("fetch", help="mirror a dataset repository (or a folder of it) for offline work",
                            formatter_class=HelpFormatter,
                            description="Download every file of a dataset repository, or of one folder of "
                                        "it, into --out (the repository's paths kept), side by side and "
                                        "resumable; the folder then works as a data directory offline, and "
                                        "runs on it record the commit it came from.")
    p.add_argument("--data", required=True, help=FORM)
    p.add_argument("--out", required=True, type=Path, help="folder to write (rerun to resume)")
    p.add_argument("--workers", type=int, default=8, help="files downloaded at once")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=fetch_command)


def fetch_command(args: argparse.Namespace) -> int:
    if not is_hub_spec(args.data):
        raise UserError(f"--data must be a dataset repository, {FORM} (got {args.data!r}).")
    folder = mirror(args.data, args.out, workers=args.workers, progress=not args.no_progress)
    print(f"mirrored {args.data} -> {folder} (use it as --data-dir / --data; runs record its commit)")
    return 0


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def build_app(data_dir: Path, backend: str = "baseline", concurrency: int = 4, runs: tuple[str, ...] = ()):
    """Assemble the registry's tabs under one header and the shared Model panel (a sidebar),
    `concurrency` events at a time."""
    import gradio as gr

    # these build gradio components: imported here so `app.py --help` never loads gradio
    from components.common.page import address_box, follow_view, link_tab_head, presentation_toggle, \
        sync_presentation
    from components.common.progress import busy_on_one_component
    from components.common.ui import TabContext
    from components.common.model_panel import build_settings_panel, model_badge

    with gr.Blocks(title=TITLE, analytics_enabled=False, fill_width=True) as demo:
        # before any component: each queue() call rebuilds gradio's server app and the config of
        # every component built so far (~0.2 s for these tabs, a sixth of the start)
        demo.queue(default_concurrency_limit=concurrency)
        with gr.Row(elem_id="app-header", equal_height=True):
            gr.HTML(f"<span class='app-name'>{TITLE}</span>", elem_id="app-name", container=False)
            badge = model_badge(SessionSettings(backend=backend))
            present = presentation_toggle()
        settings = build_settings_panel(SessionSettings(backend=backend), badge)
        ctx = TabContext(data_dir=Path(data_dir), settings=settings, demo=demo, runs=tuple(runs))
        own_keys = {spec.url: spec.link_keys for spec in registry.tabs()}
        # outside the tabs: a box in a tab not shown yet may not be in the page
        addresses = {slug: address_box(slug) for slug in own_keys}
        with gr.Tabs(elem_id="app-tabs"):
            for spec in registry.tabs():
                slug = spec.url
                with gr.Tab(spec.title, id=slug, elem_id=f"tab-{slug}") as tab:
                    # the tab mounted first is the one the link shows (page.link_tab_head): its
                    # select event, sent as it mounts, draws its view (TabEvents.on_open)
                    spec.load("ui").build_tab(dataclasses.replace(ctx, tab=tab, address=addresses[slug]))
                follow_view(slug, tab, addresses[slug])
        sync_presentation(demo, present)
    busy_on_one_component(demo)
    demo.link_head = link_tab_head(own_keys)   # launch() puts it in the page's head
    return demo


def ensure_example_data(data_dir: Path | str) -> Path:
    """The data folder to serve. On a Hugging Face Space (SPACE_ID set) nothing is waited for: a
    dataset repository opens and the example data of the parts still missing is generated in the
    background, part by part (components/common/preparing.py; `preparing.status(part)`), and a
    restart reuses what is on disk. Elsewhere a repository is opened here (one line on failure)."""
    if os.environ.get("SPACE_ID"):
        return preparing.start(data_dir, examples=True).root
    if is_hub_spec(data_dir):
        return open_data_dir(data_dir)
    return Path(data_dir)


def served_paths(data: Path | str, folder: Path) -> list[str]:
    """What the server may send as files: the data folder and, for a repository, the Hub cache
    folder its fetched files link to."""
    allowed = [str(Path(folder).resolve())]
    if is_hub_spec(data):
        allowed.append(str(storage_folder(parse_spec(str(data)).repo_id).resolve()))
    return allowed


def launch(args: argparse.Namespace, *, prevent_thread_lock: bool = False):
    from components.common.idle import quiet_when_idle
    from components.common.session_start import start_sessions_lazily
    from components.common.page import HEAD, LAUNCH_OPTIONS, view_wait_css
    from components.common.players import serve_in_place
    from components.common.warm import warm_in_background
    from components.common.theme import THEME, page_css
    from components.common.uploads import max_upload

    page = os.environ.get("APP_PAGE", "explorer").strip().lower() or "explorer"
    if page == "study":   # a Space (or server) that is the human-study page alone, on the same port
        from components.cloze.study.app import launch_study

        return launch_study(args.data_dir, host=args.host, port=args.port, prevent_thread_lock=prevent_thread_lock)
    if page != "explorer":
        raise SystemExit(f"error: APP_PAGE must be 'explorer' (the default) or 'study'; got {page!r}.")
    data_dir = ensure_example_data(args.data_dir)
    allowed = served_paths(args.data_dir, data_dir)
    serve_in_place(allowed)
    demo = build_app(data_dir, args.backend, int(os.environ.get("APP_CONCURRENCY", "4")), tuple(args.runs))
    start_runs(data_dir, tuple(args.runs))
    quiet_when_idle(demo)  # gradio polls its queue every 1 ms otherwise (components/common/idle.py)
    start_sessions_lazily()  # a page's first request builds no component's configuration (session_start.py)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share,
                theme=THEME, css=page_css(registry.tabs()) + "\n" + view_wait_css(getattr(demo, "views_awaited", [])),
                head=HEAD + getattr(demo, "link_head", ""), allowed_paths=allowed,
                max_file_size=max_upload(),
                prevent_thread_lock=True, show_error=True, quiet=prevent_thread_lock, **LAUNCH_OPTIONS)
    demo.warm_up = warm_in_background(warm_up_tasks(data_dir))
    if not prevent_thread_lock:
        demo.block_thread()
    return demo


def start_runs(data_dir: Path, runs: tuple[str, ...] = ()) -> list:
    """Every tab's run collection (components/common/runs.py), read in the background from server
    start, not on a first page's visit: the loaders the pages ask for (same folders, same key). Each
    logs one line when its runs are ready."""
    loaders = [spec.load("runs") for spec in registry.tabs()]
    return [loader(str(data_dir), tuple(runs)) for loader in loaders if loader is not None]


def warm_up_tasks(data_dir: Path) -> list:
    """What the server does once it answers (components/common/warm.py): each tab's `warm`, then
    the API client's import, so a first model call does not wait ~0.7 s for it."""
    from backends.registry import preload

    tasks = [functools.partial(module.warm, data_dir) for module in
             (spec.load("ui") for spec in registry.tabs()) if hasattr(module, "warm")]
    return [*tasks, functools.partial(preload, "openai")]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            launch(args)
            return 0
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except (UserError, BackendError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


def _stdout_closed() -> int:
    """`eval ... --json | head -c 100`: the reader went away. Nothing more to say (no traceback);
    stdout goes to /dev/null so the interpreter's last flush fails no more; 141 = 128 + SIGPIPE,
    what a shell reports for a command its pipe stopped."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


if __name__ == "__main__":
    sys.exit(main())
