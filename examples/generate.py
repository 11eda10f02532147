"""Generate the example data set for all three tabs into a data directory (deterministic).

    python -m examples.generate --out data [--only grounding,cloze,impact] [--force]
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

#: Each part's generator module (its `generate(out_dir, seed=0)` writes the part).
GENERATORS = {"grounding": "examples.movie", "cloze": "examples.cloze_data", "impact": "examples.impact_clips"}
PARTS = tuple(GENERATORS)


def generate_part(part: str, out_dir: Path, *, seed: int = 0) -> Path:
    """Generate one part into out_dir/<part>; returns that folder."""
    if part not in GENERATORS:
        raise ValueError(f"unknown part {part!r}; choose from {', '.join(PARTS)}")
    target = Path(out_dir) / part
    target.mkdir(parents=True, exist_ok=True)
    importlib.import_module(GENERATORS[part]).generate(target, seed=seed)
    (target / ".complete").write_text("ok\n")
    return target


def is_complete(out_dir: Path, part: str) -> bool:
    return (Path(out_dir) / part / ".complete").exists()


def generate_all(out_dir: Path, parts=PARTS, *, force: bool = False, seed: int = 0) -> dict[str, float]:
    timings: dict[str, float] = {}
    for part in parts:
        if not force and is_complete(out_dir, part):
            continue
        start = time.perf_counter()
        generate_part(part, out_dir, seed=seed)
        timings[part] = time.perf_counter() - start
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("data"), help="data directory (default: data)")
    parser.add_argument("--only", default=",".join(PARTS), help="comma list of parts")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    timings = generate_all(args.out, parts, force=args.force, seed=args.seed)
    for part, secs in timings.items():
        print(f"generated {part:10s} in {secs:6.1f} s -> {args.out / part}")
    if not timings:
        print(f"example data already present in {args.out} (use --force to regenerate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
