"""Command-line pieces every `run` command shares: the backend options and how they resolve.

`python app.py --backend openai:X run cloze ...` and `APP_BACKEND=openai:X python app.py run cloze`
both reach the run command: its own `--backend` (dest `run_backend`) only overrides them when given.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from backends.base import VLMBackend
from backends.config import ApiSettings
from backends.registry import resolve
from components.common.shards import SHARD_HELP, Shard, parse_shard

BACKEND_HELP = "baseline | openai:<model> | hf:<hub id or folder> | replay:<trace.jsonl>"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows each option's default; keeps descriptions as written."""


def add_backend_options(parser: argparse.ArgumentParser, *, items: str = "items") -> None:
    """--backend, --base-url, --record, --concurrency, --no-progress (one definition for all)."""
    group = parser.add_argument_group("model backend")
    group.add_argument("--backend", dest="run_backend", default=None, metavar="SPEC",
                       help=f"{BACKEND_HELP}; unset: the global --backend, else $APP_BACKEND, else baseline")
    group.add_argument("--base-url", default=None,
                       help="OpenAI-compatible server for openai:<model>; unset: $OPENAI_BASE_URL")
    group.add_argument("--record", type=Path, default=None, help="record every model call to this trace JSONL")
    group.add_argument("--concurrency", type=int, default=1,
                       help=f"{items} in flight at once (API backends; a local model serialises on its device)")
    group.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def backend_spec(args: argparse.Namespace) -> str:
    """The run command's --backend, else the global --backend, else $APP_BACKEND, else baseline."""
    return (getattr(args, "run_backend", None) or getattr(args, "backend", None)
            or os.environ.get("APP_BACKEND") or "baseline")


def backend_from_args(args: argparse.Namespace, *, max_images: int | None = None) -> VLMBackend:
    """The backend the options name (a readable BackendError when the spec is wrong)."""
    api = ApiSettings(base_url=getattr(args, "base_url", None), max_images=max_images)
    record = getattr(args, "record", None)
    return resolve(backend_spec(args), api=api, record_to=record)


def shard_arg(text: str) -> Shard:
    """argparse type of --shard: a bad value is reported as `argument --shard: ...`."""
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_shard_option(parser: argparse.ArgumentParser, *, by: str) -> None:
    """--shard i/N on a run command; `by` names the item key it splits on (shown in --help)."""
    parser.add_argument("--shard", type=shard_arg, default=None, metavar="i/N",
                        help=f"{SHARD_HELP} (split by {by})")
