"""Command-line pieces every `run` command shares: the backend options and how they resolve.

`python app.py --backend openai:X run cloze ...` and `APP_BACKEND=openai:X python app.py run cloze`
both reach the run command: its own `--backend` (dest `run_backend`) only overrides them when given.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from backends.base import VLMBackend
from backends.config import DEFAULT_TIMEOUT_S, TIMEOUT_ENV, ApiSettings
from backends.registry import resolve
from components.base.errors import UserError
from components.common.shards import SHARD_HELP, Shard, parse_shard

#: `--stop-after-failures`: items failed in a row that stop a run
DEFAULT_STOP_AFTER = 5

BACKEND_HELP = "baseline | openai:<model> | hf:<hub id or folder> | replay:<trace.jsonl>"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows each option's default; keeps descriptions as written."""


def add_backend_options(parser: argparse.ArgumentParser, *, items: str = "items") -> None:
    """--backend, --base-url, --record, --concurrency, --no-progress, --timeout, --adopt,
    --stop-after-failures (one definition for all)."""
    group = parser.add_argument_group("model backend")
    group.add_argument("--backend", dest="run_backend", default=None, metavar="SPEC",
                       help=f"{BACKEND_HELP}; unset: the global --backend, else $APP_BACKEND, else baseline")
    group.add_argument("--base-url", default=None,
                       help="OpenAI-compatible server for openai:<model>; unset: $OPENAI_BASE_URL")
    group.add_argument("--record", type=Path, default=None, help="record every model call to this trace JSONL")
    group.add_argument("--concurrency", type=int, default=1,
                       help=f"{items} in flight at once (API backends; a local model serialises on its device)")
    group.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    group.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help=f"seconds one request to an API server may take (each of its "
                            f"{ApiSettings().max_retries + 1} tries); unset: ${TIMEOUT_ENV}, else "
                            f"{DEFAULT_TIMEOUT_S:g}")
    group.add_argument("--adopt", action="store_true",
                       help="resume into an output whose results record no stamp (a file the released "
                            "code wrote, or one from an older version), taking them as made with this "
                            "run's backend and settings; without it such a file is refused")
    group.add_argument("--stop-after-failures", type=int, default=DEFAULT_STOP_AFTER, metavar="N",
                       help=f"stop the run once N {items} in a row failed to reach the model (a dead "
                            "or hung server); 0: never stop")


def backend_spec(args: argparse.Namespace) -> str:
    """The run command's --backend, else the global --backend, else $APP_BACKEND, else baseline."""
    return (getattr(args, "run_backend", None) or getattr(args, "backend", None)
            or os.environ.get("APP_BACKEND") or "baseline")


def api_settings_from_args(args: argparse.Namespace, *, max_images: int | None = None) -> ApiSettings:
    """--base-url and --timeout (the rest from the environment when resolved)."""
    return ApiSettings(base_url=getattr(args, "base_url", None), max_images=max_images,
                       timeout_s=getattr(args, "timeout", None))


def backend_from_args(args: argparse.Namespace, *, max_images: int | None = None) -> VLMBackend:
    """The backend the options name (a readable BackendError when the spec is wrong)."""
    record = getattr(args, "record", None)
    return resolve(backend_spec(args), api=api_settings_from_args(args, max_images=max_images),
                   record_to=record)


def stop_after_failures(args: argparse.Namespace) -> int | None:
    """--stop-after-failures as run_resumable takes it (None: never stop); UserError below 0."""
    value = getattr(args, "stop_after_failures", DEFAULT_STOP_AFTER)
    if value is None or value == 0:
        return None
    if value < 0:
        raise UserError(f"--stop-after-failures must be 0 (never stop) or more (got {value}).")
    return value


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
