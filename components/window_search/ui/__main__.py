"""`python -m <this package> [--data-dir DIR] [--backend SPEC] [--port N]`: this tab alone, with the
Model panel (components/common/standalone.py; the tab's title, data folder and CSS are its row in
the tab registry, components/base/tabs.py)."""
import sys

from components.common.standalone import main

if __name__ == "__main__":
    sys.exit(main(__package__))
