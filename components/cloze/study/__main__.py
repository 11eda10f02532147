"""The study page and the researcher's commands:

    python -m components.cloze.study [serve] --data-dir DATA [--host H] [--port P]
    python -m components.cloze.study invite --data-dir DATA ann1 ann2 ... [--url URL] [--renew]
    python -m components.cloze.study invites --data-dir DATA          (who is invited, no tokens)
    python -m components.cloze.study revoke --data-dir DATA ann1 ...
    python -m components.cloze.study check --data-dir DATA            (the set as the released app sees it)
    python -m components.cloze.study adopt FILE --annotator NAME --data-dir DATA

`invite` prints each annotator's link once; only a hash of its token is kept."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from components.cloze.study import access
from components.cloze.study.cache import study_set
from components.cloze.study.config import StudyConfig, load_config
from components.base.errors import UserError
from components.datasource import as_source

COMMANDS = ("serve", "invite", "invites", "revoke", "check", "adopt")


def _config(data_dir: Path) -> StudyConfig:
    cfg = load_config(data_dir)
    if cfg is None:
        raise UserError(f"No study is configured: write {data_dir}/cloze/study.json or set APP_STUDY.")
    return cfg


def check_lines(cfg: StudyConfig) -> list[str]:
    """The set as the released app sees it: its stems and questions, then what to look at."""
    sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    lines = [f"study {cfg.study_id}: set {cfg.set_name} (seed {cfg.seed}), {len(sset.dataset.instances)} stems, "
             f"{len(sset.questions)} questions, access {cfg.access}"]
    lines += [f"warning: {w}" for w in (*sset.warnings, *sset.dropped)]
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m components.cloze.study", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text)
        p.add_argument("--data-dir", type=as_source, default=as_source(os.environ.get("APP_DATA_DIR") or "data"),
                       help="data folder, or a dataset repository hf://datasets/<owner>/<name>[@rev][/sub]")
        return p

    serve = command("serve", "serve the study page")
    serve.add_argument("--host", default=os.environ.get("APP_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("APP_STUDY_PORT", "7861")))
    inv = command("invite", "make invitation links")
    inv.add_argument("annotators", nargs="+")
    inv.add_argument("--url", default=os.environ.get("APP_STUDY_URL", "http://127.0.0.1:7861"),
                     help="the study page's address, as annotators reach it")
    inv.add_argument("--renew", action="store_true", help="replace existing invitations (old links stop working)")
    command("invites", "list who is invited")
    rev = command("revoke", "remove invitations (answers are kept)")
    rev.add_argument("annotators", nargs="+")
    command("check", "the set as the released app sees it, and what to look at")
    adopt = command("adopt", "continue a released app's set_N.json as an annotator")
    adopt.add_argument("file", type=Path)
    adopt.add_argument("--annotator", required=True)
    return parser


def run(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help"):
        argv = ["serve", *argv]          # `python -m components.cloze.study --data-dir DATA` serves
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from components.cloze.study.app import launch_study

        try:
            for line in check_lines(_config(args.data_dir)):
                print(line, file=sys.stderr)
        except UserError as exc:         # the page shows it too
            print(f"warning: {exc}", file=sys.stderr)
        launch_study(args.data_dir, host=args.host, port=args.port)
        return 0
    cfg = _config(args.data_dir)
    if args.command == "invite":
        tokens = access.invite(cfg, args.annotators, renew=args.renew)
        print(f"# study {cfg.study_id}: one link per annotator, shown once; send each only to its annotator")
        for name, token in tokens.items():
            print(f"{name}\t{access.invite_link(args.url, token)}")
        print(f"# hashes kept in {access.access_dir(cfg) / 'invites.json'}; for a Space, put that file's "
              f"content in the secret {access.INVITES_ENV}", file=sys.stderr)
    elif args.command == "invites":
        for name, when in access.invited(cfg).items():
            print(f"{name}\tinvited {when}")
    elif args.command == "revoke":
        gone = access.revoke(cfg, args.annotators)
        print(f"revoked: {', '.join(gone) or 'none'} (their answers are kept)")
    elif args.command == "check":
        print("\n".join(check_lines(cfg)))
    elif args.command == "adopt":
        from components.cloze.study.store import adopt as adopt_file

        sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
        store, new = adopt_file(cfg, args.annotator, sset.questions, args.file)
        print(f"{store.annotator}: {new} answers from {args.file} added; {len(store.latest)} answered in "
              f"{store.result_path} ({args.file} left as it was)")
        for note in store.notes:
            print(f"note: {note}")
    return 0


def main() -> None:
    try:
        sys.exit(run(sys.argv[1:]))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
