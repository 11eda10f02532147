"""`python -m components.window_search.ui [--data-dir DIR] [--backend SPEC] [--port N]`: the Window search tab alone, with the
Model panel, for focused work on it."""
from __future__ import annotations

import sys
from pathlib import Path

import gradio as gr

from components.common import standalone
from components.window_search.ui.layout import build_tab

TITLE = "Window search"
PROG = "python -m components.window_search.ui"
HOLDS = "grounding/"


def build_demo(data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    return standalone.build_demo(build_tab, TITLE, data_dir, backend)


def build_parser():
    return standalone.build_parser(PROG, TITLE, HOLDS)


if __name__ == "__main__":
    sys.exit(standalone.run_alone(build_tab, title=TITLE, prog=PROG, holds=HOLDS))
