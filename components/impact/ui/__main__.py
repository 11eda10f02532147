"""`python -m components.impact.ui`: the Impact tab alone, with the Model panel, for focused work.

    python -m components.impact.ui --data-dir data --backend baseline --port 7861
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import gradio as gr

from components.common.cli import BACKEND_HELP, HelpFormatter
from components.common.theme import CSS, THEME
from components.common.ui import TabContext
from components.impact.ui.layout import build_tab
from components.settings.session import SessionSettings
from components.settings.ui import build_settings_panel

TITLE = "Impact (HAPACT)"


def build_demo(data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    """The tab in a Blocks of its own, under the shared Model panel."""
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        settings = build_settings_panel(SessionSettings(backend=backend))
        build_tab(TabContext(data_dir=Path(data_dir), settings=settings, demo=demo))
    return demo


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m components.impact.ui", description=TITLE,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("APP_DATA_DIR") or "data"),
                        help="data directory holding impact/annotations.json")
    parser.add_argument("--backend", default=os.environ.get("APP_BACKEND", "baseline"), help=BACKEND_HELP)
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    parser.add_argument("--port", type=int, default=7860, help="port to serve on")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    demo = build_demo(args.data_dir, args.backend)
    demo.queue(default_concurrency_limit=int(os.environ.get("APP_CONCURRENCY", "4")))
    demo.launch(server_name=args.host, server_port=args.port, theme=THEME, css=CSS,
                allowed_paths=[str(Path(args.data_dir).resolve())], show_error=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
