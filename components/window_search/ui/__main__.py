"""`python -m components.window_search.ui [--data-dir DIR] [--port N]`: the Window search tab
alone, with the Model panel, for focused work on it."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import gradio as gr

from components.common.cli import HelpFormatter
from components.common.theme import CSS, THEME
from components.common.ui import TabContext
from components.settings.session import default_settings
from components.settings.ui import build_settings_panel
from components.window_search.ui.layout import build_tab

ROOT = Path(__file__).resolve().parents[3]


def build_demo(data_dir: Path) -> gr.Blocks:
    with gr.Blocks(title="Window search", analytics_enabled=False) as demo:
        settings = build_settings_panel(default_settings())
        build_tab(TabContext(data_dir=Path(data_dir), settings=settings, demo=demo))
    return demo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.window_search.ui", description=__doc__,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("APP_DATA_DIR") or ROOT / "data"),
                        help="data directory holding grounding/ ($APP_DATA_DIR)")
    parser.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"), help="address to serve on")
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_PORT", "7860")), help="port")
    args = parser.parse_args(argv)
    demo = build_demo(args.data_dir)
    demo.queue(default_concurrency_limit=int(os.environ.get("APP_CONCURRENCY", "4")))
    demo.launch(server_name=args.host, server_port=args.port, theme=THEME, css=CSS,
                allowed_paths=[str(Path(args.data_dir).resolve())], show_error=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
