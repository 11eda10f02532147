"""The role table holds (docs/architecture.md): each module does what its name says.

- Impact's painting maths is pure (painting.py: no GL, no files), render.py keeps only GL and the
  turntables on disk, view.py writes nothing;
- every parser of Impact's model replies is in replies.py (regions.py keeps the vocabulary);
- impact's and window search's cli.py build parsers and call: the batch is pipeline.py's;
- Impact's handlers: one module per panel;
- the Impact deep link is written by one function (links.frame_link), not in the page's JS;
- every array function of the metrics modules gives its shapes.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMPACT = ROOT / "components" / "impact"
GL_MODULES = ("pyrender", "OpenGL", "moderngl", "trimesh", "pyglet", "glfw", "EGL")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imported(path: Path) -> set[str]:
    """Every module a file imports (at any depth: lazy imports inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _defined(path: Path) -> set[str]:
    return {node.name for node in _tree(path).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _called(path: Path) -> set[str]:
    """The names a file calls (f(...) and x.f(...) both give f)."""
    out = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call):
            fn = node.func
            out.add(fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", ""))
    return out


# -- painting / render / view --------------------------------------------------------------------

def test_the_painting_module_imports_no_gl_in_its_source():
    imported = _imported(IMPACT / "painting.py")
    bad = sorted(name for name in imported
                 if name.split(".")[0] in GL_MODULES or name.startswith("components.impact.render"))
    assert not bad, f"painting.py must stay pure maths (no GL, no render.py): it imports {bad}"


def test_importing_the_painting_module_loads_no_gl():
    code = ("import sys\nimport components.impact.painting\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {GL_MODULES!r}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"importing painting.py loaded GL modules: {done.stdout}"


def test_render_keeps_only_gl_and_the_painting_maths_is_painting_s():
    maths = {"vertex_colors", "color_legend", "hex_to_rgba", "camera_for", "vertex_normals",
             "paint_frame", "paint_key", "painted_mask", "body_normals", "PaintedFrame"}
    assert maths <= _defined(IMPACT / "painting.py")
    assert not maths & _defined(IMPACT / "render.py"), "render.py defines painting maths"
    assert not maths & _defined(IMPACT / "view.py"), "view.py defines painting maths"
    assert "time_turntable" not in _defined(IMPACT / "render.py")


def test_view_writes_nothing_to_disk():
    imported = _imported(IMPACT / "view.py")
    assert not {"os", "tempfile", "shutil", "components.impact.render"} & imported, imported
    writes = {"mkdir", "write_text", "write_bytes", "render_turntable", "turntable_for", "open"}
    assert not writes & _called(IMPACT / "view.py"), writes & _called(IMPACT / "view.py")


def test_painting_s_array_functions_give_their_shapes():
    tree = _tree(IMPACT / "painting.py")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            text = ast.get_docstring(node) or ""
            assert re.search(r"\(\w+(, \w+)*,?\)", text), f"painting.{node.name}: no shape in its docstring"


def test_protocol_s_unused_discover_stems_is_gone():
    assert "discover_stems" not in _defined(ROOT / "components" / "cloze" / "study" / "protocol.py")


# -- replies -------------------------------------------------------------------------------------

def test_every_impact_reply_parser_is_in_replies_py():
    parsers = {"read_region_answer", "RegionReading", "parse_intervals", "read_regions"}
    assert parsers <= _defined(IMPACT / "replies.py")
    for path in sorted(IMPACT.rglob("*.py")):
        if path.name == "replies.py":
            continue
        found = parsers & _defined(path)
        assert not found, f"{path.relative_to(ROOT)} defines reply parsers {found}: they belong in replies.py"


def test_the_region_parser_reads_with_the_vocabulary_of_regions_py():
    from components.impact import regions, replies

    assert replies.read_region_answer("the left calf and the head").labels == ["left calf", "head"]
    assert set(replies.read_region_answer("everything except the head").labels) == set(regions.REGION_LABELS) - {"head"}


# -- cli.py builds parsers and calls ------------------------------------------------------------------

BATCH = {"run_resumable", "fetch_all", "checked_output", "repair_companion", "append_jsonl", "output_lock",
         "backend_stamp", "data_stamp", "settings_stamp", "solvers_for", "ground_query", "select_regions",
         "localize", "merged_files", "input_files"}


@pytest.mark.parametrize("tab", ["impact", "window_search"])
def test_cli_runs_no_batch_and_pipeline_does(tab):
    cli = ROOT / "components" / tab / "cli.py"
    called = BATCH & _called(cli)
    assert not called, f"{tab}/cli.py calls {sorted(called)}: the batch belongs in {tab}/pipeline.py"
    assert "components.common.batch" not in _imported(cli)
    loops = [node.lineno for node in ast.walk(_tree(cli)) if isinstance(node, ast.With)]
    assert not loops, f"{tab}/cli.py holds a `with` block (a lock, an output) at lines {loops}"
    assert {"run_resumable"} <= _called(ROOT / "components" / tab / "pipeline.py")


# -- Impact's handlers: one module per panel -----------------------------------------------------------

def test_impact_handlers_are_one_module_per_panel():
    handlers = IMPACT / "ui" / "handlers"
    modules = {p.stem for p in handlers.glob("*.py") if p.stem != "__init__"}
    assert {"clip", "frame", "body", "model_runs", "metrics", "runs_panel"} <= modules
    from components.impact.ui import handlers as package

    homes = {getattr(package, name).__module__.rsplit(".", 1)[-1] for name in package.__all__}
    assert len(homes) >= 5, f"the wired handlers live in {homes}: one module per panel"
    assert {"on_clip", "on_load"} == {n for n in package.__all__
                                      if getattr(package, n).__module__.endswith(".clip")}


# -- the deep link is written in one place -------------------------------------------------------

def test_the_page_script_writes_no_impact_link():
    page = (IMPACT / "ui" / "page.py").read_text(encoding="utf-8")
    assert "URLSearchParams" not in page and "ADDRESS_JS" not in page, \
        "the Impact link is written in Python alone (links.frame_link)"
    layout = (IMPACT / "ui" / "layout.py").read_text(encoding="utf-8")
    assert "links.frame_link" in layout, "the address box is filled by links.frame_link"


@pytest.mark.parametrize("clip, frame, query", [
    ("h0007", 46, "clip=h0007&frame=46&tab=impact"),
    ("h0007", "46", "clip=h0007&frame=46&tab=impact"),
    ("h0007", 46.0, "clip=h0007&frame=46&tab=impact"),
    ("h0007", 46.5, "clip=h0007&tab=impact"),      # the old page script: Number.isInteger
    ("h0007", 0, "clip=h0007&tab=impact"),
    ("h0007", "", "clip=h0007&tab=impact"),
    ("h0007", None, "clip=h0007&tab=impact"),
    ("h0007", "abc", "clip=h0007&tab=impact"),
    ("", 46, "tab=impact"),
    (None, 46, "tab=impact"),
    ("a b&c", 3, "clip=a+b%26c&frame=3&tab=impact"),
])
def test_frame_link_writes_what_the_page_script_wrote(clip, frame, query):
    from components.impact.links import frame_link

    assert frame_link(clip, frame) == query


#: the page script that wrote the address before (components/impact/ui/page.py ADDRESS_JS at
#: 49176bb), transcribed: frame_link must write what it wrote
OLD_ADDRESS_JS = """
(clip, frame) => {
  const params = new URLSearchParams({tab: 'impact'});
  const f = Number(frame);
  if (clip) params.set('clip', clip);
  if (clip && Number.isInteger(f) && f >= 1) params.set('frame', String(f));
  params.sort();
  return params.toString();
}
"""


def test_frame_link_agrees_with_the_old_page_script_run_in_node():
    import json
    import shutil

    from components.impact.links import frame_link

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed")
    cases = [["h0007", 46], ["h0007", "46"], ["h0007", 46.5], ["h0007", 0], ["h0007", ""], ["h0007", None],
             ["h0007", "abc"], ["", 46], [None, 46], ["a b&c", 3], ["h0001", 1], ["h0001", -2], ["h 0007", "7"]]
    script = f"const f = {OLD_ADDRESS_JS.strip()};\n" \
             f"console.log(JSON.stringify({json.dumps(cases)}.map(([c, n]) => f(c, n))));"
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [frame_link(c, n) for c, n in cases] == json.loads(done.stdout)


# -- metrics give shapes -------------------------------------------------------------------------------

METRICS = [ROOT / "components" / "impact" / "metrics" / "temporal.py",
           ROOT / "components" / "impact" / "metrics" / "spatial.py",
           ROOT / "components" / "window_search" / "metrics.py",
           ROOT / "components" / "cloze" / "metrics.py"]
ARRAYS = re.compile(r"ndarray|Sequence|list|Iterable")


def array_functions(path: Path) -> list[ast.FunctionDef]:
    """The functions (methods and nested ones too) whose parameters or result are arrays or lists."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef):
            args = node.args.args + node.args.kwonlyargs
            text = " ".join(ast.unparse(a.annotation) for a in args if a.annotation)
            text += " " + (ast.unparse(node.returns) if node.returns else "")
            if ARRAYS.search(text):
                found.append(node)
    return found


@pytest.mark.parametrize("path", METRICS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_array_function_of_the_metrics_gives_its_shapes(path):
    missing = [f"{node.name} (line {node.lineno})" for node in array_functions(path)
               if "Shapes:" not in (ast.get_docstring(node) or "")]
    assert not missing, f"{path.relative_to(ROOT)}: no 'Shapes:' in the docstring of {missing}"
