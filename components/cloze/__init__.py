"""TempCloze tab: missing-middle video cloze (pure logic here; the Gradio tab is the ui/ package).

Modules: gaps (gap + distractor maths), data (the released choices/ layout, meta.json, zips),
build (instances from a video), questions (option orders, sets), prompts (the request), replies (the released reply parsers),
solvers (model and edge-baseline answering, `solvers_for`), edge (the B.2.2 baseline), metrics
(released analysis, strict variant, order sensitivity), human (study records), leaderboard,
pipeline (resumable set runs), cli.
"""
