"""Run one tab alone, under the Model panel, for focused work: `python -m components.<tab>.ui`."""
from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

import gradio as gr

from components.common.cli import BACKEND_HELP, HelpFormatter
from components.common.idle import quiet_when_idle
from components.common.page import LAUNCH_OPTIONS
from components.common.players import serve_in_place
from components.common.theme import CSS, THEME
from components.common.uploads import max_upload
from components.common.progress import busy_on_one_component
from components.common.ui import TabContext
from components.datasource import allowed_paths, as_source, open_data_dir
from components.settings.session import SessionSettings
from components.common.model_panel import build_settings_panel

ROOT = Path(__file__).resolve().parents[2]
BuildTab = Callable[[TabContext], None]


def build_demo(build_tab: BuildTab, title: str, data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    """The tab in a Blocks of its own, under the shared Model panel."""
    with gr.Blocks(title=title, analytics_enabled=False) as demo:
        demo.queue(default_concurrency_limit=int(os.environ.get("APP_CONCURRENCY", "4")))  # before any component (app.py)
        settings = build_settings_panel(SessionSettings(backend=backend))
        build_tab(TabContext(data_dir=Path(data_dir), settings=settings, demo=demo))
    busy_on_one_component(demo)
    return demo


def build_parser(prog: str, title: str, holds: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=f"The {title} tab alone, with the Model panel.",
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data-dir", type=as_source, default=as_source(os.environ.get("APP_DATA_DIR") or str(ROOT / "data")),
                        help=f"data directory holding {holds}, or a dataset repository hf://datasets/... ($APP_DATA_DIR)")
    parser.add_argument("--backend", default=os.environ.get("APP_BACKEND", "baseline"), help=BACKEND_HELP)
    parser.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"), help="address to serve on")
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_PORT", "7860")), help="port")
    return parser


def served(data_dir: Path) -> list[str]:
    return [str(Path(data_dir).resolve()), *allowed_paths()]


def serve(demo: gr.Blocks, args: argparse.Namespace) -> None:
    quiet_when_idle(demo)
    demo.launch(server_name=args.host, server_port=args.port, theme=THEME, css=CSS,
                allowed_paths=served(args.data_dir), max_file_size=max_upload(), show_error=True,
                **LAUNCH_OPTIONS)


def run_alone(build_tab: BuildTab, *, title: str, prog: str, holds: str, argv: list[str] | None = None) -> int:
    args = build_parser(prog, title, holds).parse_args(argv)
    args.data_dir = open_data_dir(args.data_dir)  # a repository: opened now, its local folder served
    serve_in_place(served(args.data_dir))
    serve(build_demo(build_tab, title, args.data_dir, args.backend), args)
    return 0
