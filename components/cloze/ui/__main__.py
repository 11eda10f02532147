"""`python -m components.cloze.ui [--data-dir DIR] [--backend SPEC] [--port N]`: the Cloze tab alone, with the
Model panel, for focused work on it."""
from __future__ import annotations

import sys
from pathlib import Path

import gradio as gr

from components.common import standalone
from components.cloze.ui.layout import build_tab

TITLE = "Cloze"
PROG = "python -m components.cloze.ui"
HOLDS = "cloze/"


def build_demo(data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    return standalone.build_demo(build_tab, TITLE, data_dir, backend)


def build_parser():
    return standalone.build_parser(PROG, TITLE, HOLDS)


if __name__ == "__main__":
    sys.exit(standalone.run_alone(build_tab, title=TITLE, prog=PROG, holds=HOLDS))
