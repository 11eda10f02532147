"""The command line: documented flags, eval/run structure, and a light import."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_help_documents_the_global_flags_and_subcommands():
    out = subprocess.run([sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for flag in ("--host", "--port", "--share", "--data-dir", "--backend", "eval", "run", "compare"):
        assert flag in out.stdout


def test_eval_and_run_list_every_target():
    from app import build_parser

    parser = build_parser()
    for command, targets in (("eval", ["grounding", "cloze", "impact-temporal", "impact-spatial"]),
                             ("run", ["grounding", "cloze", "impact"]),
                             ("compare", ["grounding", "cloze", "impact-temporal", "impact-spatial"])):
        sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")
        target_parser = sub.choices[command]
        names = next(a for a in target_parser._subparsers._group_actions).choices
        assert set(targets) <= set(names), (command, sorted(names))


def test_importing_app_and_building_the_parser_loads_no_heavy_library():
    code = ("import sys, app; app.build_parser(); "
            "print(' '.join(m for m in ('torch', 'transformers', 'decord', 'pyrender', 'cv2', 'av', "
            "'smplx', 'trimesh', 'sentence_transformers', 'gradio') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_a_user_error_exits_2_with_one_readable_line():
    out = subprocess.run([sys.executable, "app.py", "eval", "grounding", "--annotations",
                          "does-not-exist.json", "--predictions", "nope.jsonl", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "does-not-exist.json" in out.stderr
