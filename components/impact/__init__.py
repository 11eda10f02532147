"""Impact tab (HAPACT): temporal impact localization in short clips and on-body region selection.

Pure logic lives in the modules here (data, prompts/ (temporal, regions), replies (every reply
parser), solvers (every solver and `solvers_for`), metrics/ (temporal, spatial), regions, body,
render, view, links, timeline); `pipeline.py` runs one clip end to end for both front ends:
the `ui/` package (the only place gradio is imported) and `cli.py` (`python app.py eval|run`).
"""
