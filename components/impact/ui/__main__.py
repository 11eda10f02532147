"""`python -m components.impact.ui [--data-dir DIR] [--backend SPEC] [--port N]`: the Impact (HAPACT) tab alone, with the
Model panel, for focused work on it."""
from __future__ import annotations

import sys
from pathlib import Path

import gradio as gr

from components.common import standalone
from components.impact.ui.layout import build_tab

TITLE = "Impact (HAPACT)"
PROG = "python -m components.impact.ui"
HOLDS = "impact/annotations.json"


def build_demo(data_dir: Path, backend: str = "baseline") -> gr.Blocks:
    return standalone.build_demo(build_tab, TITLE, data_dir, backend)


def build_parser():
    return standalone.build_parser(PROG, TITLE, HOLDS)


if __name__ == "__main__":
    sys.exit(standalone.run_alone(build_tab, title=TITLE, prog=PROG, holds=HOLDS))
