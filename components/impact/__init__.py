"""Impact tab (HAPACT): temporal impact localization in short clips and on-body region selection.

Pure logic lives in the modules here (annotations, intervals, temporal_prompt, temporal_solvers,
temporal_metrics, regions, body, spatial_metrics, render, view); `ui.py` is the only module that imports
gradio and `cli.py` wires the same functions to `python app.py eval|run`.
"""
