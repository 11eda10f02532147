"""components.common.cli: the backend options every run command shares, and how they resolve."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from backends.record import RecordingBackend
from components.common.cli import HelpFormatter, add_backend_options, backend_from_args, backend_spec


def build_parser() -> argparse.ArgumentParser:
    """Like app.py: a global --backend, and a run command with the shared options."""
    parser = argparse.ArgumentParser(prog="app.py", formatter_class=HelpFormatter)
    parser.add_argument("--backend", default=None)
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", formatter_class=HelpFormatter)
    add_backend_options(run, items="queries")
    return parser


@pytest.fixture(autouse=True)
def _no_app_backend(monkeypatch):
    monkeypatch.delenv("APP_BACKEND", raising=False)


def spec(argv: list[str]) -> str:
    return backend_spec(build_parser().parse_args(argv))


def test_the_run_commands_backend_beats_the_global_one(monkeypatch):
    monkeypatch.setenv("APP_BACKEND", "openai:from-env")
    assert spec(["--backend", "openai:global", "run", "--backend", "replay:t.jsonl"]) == "replay:t.jsonl"


def test_the_global_backend_beats_app_backend(monkeypatch):
    monkeypatch.setenv("APP_BACKEND", "openai:from-env")
    assert spec(["--backend", "openai:global", "run"]) == "openai:global"


def test_app_backend_beats_baseline(monkeypatch):
    assert spec(["run"]) == "baseline"
    monkeypatch.setenv("APP_BACKEND", "openai:from-env")
    assert spec(["run"]) == "openai:from-env"


def test_the_shared_options_and_their_defaults():
    args = build_parser().parse_args(["run"])
    assert (args.run_backend, args.base_url, args.record, args.concurrency, args.no_progress) == (
        None, None, None, 1, False)
    args = build_parser().parse_args(["run", "--base-url", "http://h/v1", "--record", "t.jsonl",
                                      "--concurrency", "4", "--no-progress"])
    assert (args.base_url, args.record, args.concurrency, args.no_progress) == (
        "http://h/v1", Path("t.jsonl"), 4, True)


def test_help_shows_the_defaults():
    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]
    text = " ".join(run.format_help().split())
    assert "model backend:" in text
    assert "(default: 1)" in text and "queries in flight at once" in text
    assert "(default: None)" in text
    assert "unset: the global --backend, else $APP_BACKEND, else baseline" in text


def test_backend_from_args_builds_and_records(tmp_path):
    args = build_parser().parse_args(["run", "--record", str(tmp_path / "t.jsonl")])
    backend = backend_from_args(args)
    assert isinstance(backend, RecordingBackend) and backend.is_baseline
    assert backend_from_args(build_parser().parse_args(["run"])).backend_id == "baseline"
