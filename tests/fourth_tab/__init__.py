"""A tiny fourth tab, registered from tests/ only (tests/test_fourth_tab.py): what docs/architecture.md
"How to add a benchmark" walks through, in the fewest files. Its row (spec.py) is read when
$APP_EXTRA_TABS names `tests.fourth_tab.spec`; no file outside this folder names it."""
