"""Run one tab alone, under the Model panel, for focused work: `python -m components.<tab>.ui`
(each tab's ui/__main__.py calls `main` with its package), or `python -m components.common.standalone
<tab>`. Everything about the tab (its title, its data folder, its layout, its CSS) is its row in the
tab registry (components/base/tabs.py)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import gradio as gr

from components.common.cli import BACKEND_HELP, HelpFormatter
from components.common.idle import quiet_when_idle
from components.common.session_start import start_sessions_lazily
from components.common.page import LAUNCH_OPTIONS
from components.common.players import serve_in_place
from components.base import tabs as registry
from components.base.tabs import TabSpec
from components.common.theme import THEME, page_css
from components.common.uploads import max_upload
from components.common.progress import busy_on_one_component
from components.common.ui import TabContext
from components.datasource import allowed_paths, as_source, open_data_dir
from components.settings.session import SessionSettings
from components.common.model_panel import build_settings_panel

ROOT = Path(__file__).resolve().parents[2]


def _spec(tab: str | TabSpec) -> TabSpec:
    """A row of the registry, by the tab's id, URL name, data folder or UI package."""
    if isinstance(tab, TabSpec):
        return tab
    for spec in registry.tabs():
        if tab in (spec.ui_module, spec.package):
            return spec
    return registry.tab(tab)


def build_demo(tab: str | TabSpec, data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    """The tab in a Blocks of its own, under the shared Model panel."""
    spec = _spec(tab)
    with gr.Blocks(title=spec.long_title, analytics_enabled=False) as demo:
        demo.queue(default_concurrency_limit=int(os.environ.get("APP_CONCURRENCY", "4")))  # before any component (app.py)
        settings = build_settings_panel(SessionSettings(backend=backend))
        spec.load("ui").build_tab(TabContext(data_dir=Path(data_dir), settings=settings, demo=demo))
    busy_on_one_component(demo)
    return demo


def build_parser(tab: str | TabSpec) -> argparse.ArgumentParser:
    spec = _spec(tab)
    parser = argparse.ArgumentParser(prog=f"python -m {spec.ui_module}",
                                     description=f"The {spec.long_title} tab alone, with the Model panel.",
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data-dir", type=as_source, default=as_source(os.environ.get("APP_DATA_DIR") or str(ROOT / "data")),
                        help=f"data directory holding {spec.data}/, or a dataset repository hf://datasets/... ($APP_DATA_DIR)")
    parser.add_argument("--backend", default=os.environ.get("APP_BACKEND", "baseline"), help=BACKEND_HELP)
    parser.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"), help="address to serve on")
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_PORT", "7860")), help="port")
    return parser


def served(data_dir: Path) -> list[str]:
    return [str(Path(data_dir).resolve()), *allowed_paths()]


def serve(demo: gr.Blocks, args: argparse.Namespace, spec: TabSpec) -> None:
    quiet_when_idle(demo)
    start_sessions_lazily()
    demo.launch(server_name=args.host, server_port=args.port, theme=THEME, css=page_css([spec]),
                allowed_paths=served(args.data_dir), max_file_size=max_upload(), show_error=True,
                **LAUNCH_OPTIONS)


def main(tab: str, argv: list[str] | None = None) -> int:
    """Serve the tab `tab` (its id, URL name, data folder or UI package) alone."""
    spec = _spec(tab)
    args = build_parser(spec).parse_args(argv)
    args.data_dir = open_data_dir(args.data_dir)  # a repository: opened now, its local folder served
    serve_in_place(served(args.data_dir))
    serve(build_demo(spec, args.data_dir, args.backend), args, spec)
    return 0


if __name__ == "__main__":   # python -m components.common.standalone <tab> [options]
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(f"usage: python -m components.common.standalone {{{','.join(s.id for s in registry.tabs())}}} [options]")
    sys.exit(main(sys.argv[1], sys.argv[2:]))
