"""A visitor's first event does not wait for the configuration of every component of the page.

gradio (6.x, `gradio/state_holder.py`) opens a session on its first event, the page's view: its
`SessionState` builds the configuration of every component of the page (`config_values`), for
the deep-link button (`gr.DeepLinkButton`, which saves them) alone. That is ~300 components
here, 22-25 ms on a quiet machine, inside the `queue/join` request of every page load (the bare
gradio page's join takes ~3 ms), and again on the study page's first answer. gradio's own code
already fills `config_values` one component at a time as events touch them
(`_update_value_in_config`, `_update_config`). Here a session starts with none, and a reader of
them all (`SessionState.components`) gets the others built when it asks: what it reads is what
it read before.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

_ATTRS = ("config_values", "blocks_config", "components", "_update_value_in_config", "_update_config")


class _BuiltOnRead(dict):
    """`config_values` of one session: the components events touched; `fill` adds the rest."""

    def __init__(self, blocks_config: Any, ids: Any):
        super().__init__()
        self._blocks_config = blocks_config
        self._ids = ids

    def fill(self) -> None:
        blocks = self._blocks_config.blocks
        for key in self._ids:
            if key not in self and key in blocks:
                self[key] = self._blocks_config.config_for_block(key, [], blocks[key])


def start_sessions_lazily() -> bool:
    """Make gradio's new sessions build component configurations only when read (once per
    process). Returns False, and changes nothing, when this gradio's sessions do not look as
    expected; a session the fast start cannot open is opened the usual way."""
    from gradio import state_holder

    cls = state_holder.SessionState
    if getattr(cls, "_starts_lazily", False):
        return True
    components = cls.__dict__.get("components")
    if not isinstance(components, property) or not all(hasattr(cls, a) for a in _ATTRS[3:]):
        return False
    full_init = cls.__init__

    def __init__(self, blocks: Any) -> None:
        try:
            # gradio's own start, over no component: it builds none
            full_init(self, SimpleNamespace(default_config=blocks.default_config, blocks={}))
            configs = _BuiltOnRead(self.blocks_config, tuple(blocks.blocks))
        except Exception:   # a gradio whose start reads more: the usual start
            full_init(self, blocks)
            return
        self.config_values = configs

    def all_components(self):
        if isinstance(self.config_values, _BuiltOnRead):
            self.config_values.fill()
        return components.fget(self)

    cls.__init__ = __init__
    cls.components = property(all_components)
    cls._starts_lazily = True
    return True
