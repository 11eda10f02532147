"""Generate the example data set for every tab into a data directory (deterministic).

    python -m examples.generate --out data [--only grounding,cloze,impact] [--force]
        [--progress-file F]

The parts are the tabs' data folders and each part's generator is its row's `generator` in the tab
registry (components/base/tabs.py): a module with `generate(out_dir, seed=0, progress=None)`.

A part is built in `<out>/.partial/<part>` and moved to `<out>/<part>` once complete (with its
`.complete` marker), so a reader (the app serving while it generates) sees a whole part or none;
a complete part is never generated again. `--progress-file` keeps a small JSON file with the part
being built and its fraction done (components/common/preparing.py reads it).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from components.base import tabs as registry
from components.base.io import atomic_write_json

PARTIAL = ".partial"


def example_parts() -> tuple[str, ...]:
    """Every part with a generator: the tabs' data folders, in tab order."""
    return tuple(spec.data for spec in registry.tabs() if spec.generator)


def generator_module(part: str) -> str | None:
    """The module that writes `part` (its tab's registry row), None for no such part."""
    return next((spec.generator or None for spec in registry.tabs() if spec.data == part), None)


def generate_part(part: str, out_dir: Path, *, seed: int = 0,
                  progress: Callable[[float], None] | None = None) -> Path:
    """Generate one part into out_dir/<part>; returns that folder. `progress(fraction)` is called
    as the part is built. A folder already at out_dir/<part> (not complete) is built in place;
    otherwise the part appears there only when finished."""
    module = generator_module(part)
    if module is None:
        raise ValueError(f"unknown part {part!r}; choose from {', '.join(example_parts())}")
    final = Path(out_dir) / part
    in_place = final.exists() and any(final.iterdir())
    target = final if in_place else Path(out_dir) / PARTIAL / part
    if not in_place:
        shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    generate = importlib.import_module(module).generate
    kwargs = {"progress": progress} if progress and "progress" in inspect.signature(generate).parameters else {}
    generate(target, seed=seed, **kwargs)
    (target / ".complete").write_text("ok\n")
    if not in_place:
        if final.exists():
            final.rmdir()  # an empty folder left by an interrupted run
        os.replace(target, final)
        try:
            target.parent.rmdir()
        except OSError:
            pass
    if progress:
        progress(1.0)
    return final


def is_complete(out_dir: Path, part: str) -> bool:
    return (Path(out_dir) / part / ".complete").exists()


def generate_all(out_dir: Path, parts: Iterable[str] | None = None, *, force: bool = False, seed: int = 0,
                 progress_file: Path | None = None) -> dict[str, float]:
    timings: dict[str, float] = {}
    for part in example_parts() if parts is None else parts:
        if not force and is_complete(out_dir, part):
            continue
        start = time.perf_counter()
        generate_part(part, out_dir, seed=seed, progress=_reporter(progress_file, part) if progress_file else None)
        timings[part] = time.perf_counter() - start
    return timings


def _reporter(path: Path, part: str, every_s: float = 0.25) -> Callable[[float], None]:
    """progress(fraction) -> `path` rewritten atomically, at most every `every_s` seconds."""
    last = [0.0]

    def report(fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - last[0] < every_s:
            return
        last[0] = now
        atomic_write_json(path, {"part": part, "fraction": round(min(1.0, max(0.0, fraction)), 4)},
                          indent=None, durable=False)
    report(0.0)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("data"), help="data directory (default: data)")
    parser.add_argument("--only", default=",".join(example_parts()), help="comma list of parts")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--progress-file", type=Path, default=None,
                        help="keep {part, fraction} of the part being built in this JSON file")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    timings = generate_all(args.out, parts, force=args.force, seed=args.seed, progress_file=args.progress_file)
    for part, secs in timings.items():
        print(f"generated {part:10s} in {secs:6.1f} s -> {args.out / part}")
    if not timings:
        print(f"example data already present in {args.out} (use --force to regenerate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
