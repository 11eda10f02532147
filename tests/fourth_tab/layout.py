"""The fourth tab's layout: pick an item, press Answer, read the answer."""
from __future__ import annotations

import gradio as gr

from components.common.ui import TabContext
from tests.fourth_tab.handlers import answer, read_items


def build_tab(ctx: TabContext) -> None:
    ids = list(read_items(ctx.data_dir))
    with gr.Row(elem_classes=["tab-controls"]):
        item = gr.Dropdown(ids, value=ids[0], label="Item", elem_id="fourth-item")
        ask = gr.Button("Answer", variant="primary", elem_id="fourth-ask")
    shown = gr.Markdown("", elem_id="fourth-answer")
    data_dir = gr.State(str(ctx.data_dir))
    ask.click(answer, [data_dir, item], [shown], api_name="fourth_answer")
