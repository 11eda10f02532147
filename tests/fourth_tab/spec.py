"""The fourth tab's row in the tab registry (components/base/tabs.py)."""
from components.base.tabs import TabSpec

SPEC = TabSpec(
    id="fourth_tab", title="Fourth", benchmark="Tiny",
    url="fourth", data="fourth", prefix="fourth",   # shorter names, said here, nowhere else
    link_keys=("item",),
    generator="tests.fourth_tab.generate", holds=("items.json",), example_seconds=0.1,
    ui="layout", cli="", runs="", css="style.css",
)
