"""`python -m components.cloze.study --data-dir DATA`: serve the configured study page."""
from __future__ import annotations

import argparse
import os
import sys

from components.cloze.study.app import launch_study
from components.common.errors import UserError
from components.datasource import as_source


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m components.cloze.study", description=__doc__)
    parser.add_argument("--data-dir", type=as_source, default=as_source(os.environ.get("APP_DATA_DIR") or "data"),
                        help="data folder, or a dataset repository hf://datasets/<owner>/<name>[@rev][/sub]")
    parser.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("APP_STUDY_PORT", "7861")))
    args = parser.parse_args()
    try:
        launch_study(args.data_dir, host=args.host, port=args.port)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
