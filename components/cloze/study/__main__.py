"""`python -m components.cloze.study --data-dir DATA`: serve the configured study page."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from components.cloze.study.app import launch_study


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m components.cloze.study", description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("APP_DATA_DIR") or "data"))
    parser.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_STUDY_PORT", "7861")))
    args = parser.parse_args()
    launch_study(args.data_dir, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
