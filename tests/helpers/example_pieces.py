"""A small piece of each example generator, written by the generators' own code: the first 20 s of
the movie, one 12 s cloze source with its instance (every clip operation), one impact clip.
tests/test_examples_determinism.py runs it in two processes, one allowed a single CPU, and compares
the bytes: the encoders must not depend on how many CPUs they see.

    python -m tests.helpers.example_pieces OUT_DIR
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from components.cloze.build import build_instance
from examples import cloze_data, impact_clips, movie

MOVIE_SECONDS = 20.0
CLOZE_KIND, CLOZE_SECONDS = "ball_roll", 12.0
IMPACT_QID = "h0001"


def write_pieces(out_dir: Path) -> None:
    out_dir = Path(out_dir)
    movie._write_video(out_dir / "grounding" / "movie.mp4", seed=0, seconds=MOVIE_SECONDS)
    source = out_dir / "cloze" / "sources" / f"{CLOZE_KIND}.mp4"
    source.parent.mkdir(parents=True, exist_ok=True)
    cloze_data._write_source(CLOZE_KIND, source, CLOZE_SECONDS, seed=0)
    build_instance(source, out_dir / "cloze", stem=CLOZE_KIND, seed=0)
    impact_clips.generate(out_dir / "impact", seed=0, qids=(IMPACT_QID,))


def file_bytes(out_dir: Path) -> dict[str, bytes]:
    """Every file under out_dir by its relative path."""
    return {str(p.relative_to(out_dir)): p.read_bytes() for p in sorted(Path(out_dir).rglob("*")) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    write_pieces(args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
