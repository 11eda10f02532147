"""The Impact tab's 3D body view: a gr.HTML holding a small WebGL viewer of this app's own.

gradio's Model3D loads the Babylon.js viewer (megabytes of script, a PBR shader set that software
WebGL compiles for seconds) and a GLB of the whole mesh for every painting: the body appeared
3-6 s after the page on the 2-core machine and each new painting reloaded ~1 MB. This view
fetches the body's mesh once (components/impact/body_mesh.py), takes each painting as a
palette-coded payload of a few KB, and draws with one Lambert shader, only when something changed.

The view's value (`body_value`) is a dict: the mesh's URL and sizes, the painting's key, palette
and colours, and the camera (alpha, beta in degrees, radius; the body's centre as the target;
the eye at centre + radius * (cos a sin b, cos b, sin a sin b) in the mesh's axes, so alpha 90,
beta 90 looks at the front). Drag turns the body, the wheel zooms, the arrow keys turn it when the
view has the focus. The canvas says which painting it was last given (`data-want`) and, after each
draw, which it shows (`data-key`, `data-draws`, `data-alpha`), and whether it multisamples
(`data-antialias`: not on a software renderer), for tests and scripts.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import gradio as gr

from components.common.players import serve_in_place
from components.impact.body_mesh import index_type, mesh_file, painting_payload

LABEL = "Body, painted for this frame (drag to turn)"

TEMPLATE = f"""<div class="body3d-view">
<canvas class="body3d-canvas" tabindex="0" role="img" aria-label="{LABEL}"></canvas>
<span class="body3d-label">{LABEL}</span>
<span class="body3d-note"></span>
</div>"""

CSS = """
.body3d-view {position: relative; width: 100%; height: 100%; min-height: 200px; border-radius: 8px;
  overflow: hidden; background: rgb(247, 247, 250); border: 1px solid #e3e6ee; box-sizing: border-box;}
.body3d-canvas {display: block; width: 100%; height: 100%; touch-action: none; cursor: grab; outline: none;}
.body3d-canvas:active {cursor: grabbing;}
.body3d-canvas:focus-visible {box-shadow: inset 0 0 0 2px #4f46e5;}
.body3d-label {position: absolute; top: 6px; left: 10px; font-size: 13px; font-weight: 600; color: #5b6478;
  pointer-events: none;}
.body3d-note {position: absolute; left: 10px; right: 10px; bottom: 8px; font-size: 13px; color: #5b6478;
  pointer-events: none;}
"""

# The viewer. `element`, `props`, `watch` are gradio's (gr.HTML js_on_load). The mesh of a URL is
# fetched once per page (window.__bodyMeshes); a value that arrives while an older one loads wins.
JS = r"""
const BACKGROUND = [247 / 255, 247 / 255, 250 / 255];
const canvas = element.querySelector('.body3d-canvas');
const note = element.querySelector('.body3d-note');
const meshes = window.__bodyMeshes = window.__bodyMeshes || new Map();
const say = (text) => { note.textContent = text || ''; };
// A software renderer (SwiftShader, llvmpipe: a machine or a headless browser without a GPU) pays
// for multisampling on every frame the page composites (~150 ms of each painting on 2 cores), so
// it draws without. The frame is drawn again whenever it changes, so no buffer is kept either.
function softwareGL() {
  try {
    const probe = document.createElement('canvas').getContext('webgl');
    if (!probe) { return false; }
    const info = probe.getExtension('WEBGL_debug_renderer_info');
    const name = `${probe.getParameter(probe.RENDERER)} ${info ? probe.getParameter(info.UNMASKED_RENDERER_WEBGL) : ''}`;
    const lose = probe.getExtension('WEBGL_lose_context');
    if (lose) { lose.loseContext(); }
    return /swiftshader|llvmpipe|softpipe|software/i.test(name);
  } catch (e) { return false; }
}
const GL_OPTIONS = {antialias: !(window.__bodySoftwareGL ??= softwareGL()), preserveDrawingBuffer: false};
const gl = canvas.getContext('webgl2', GL_OPTIONS) || canvas.getContext('webgl', GL_OPTIONS);
canvas.dataset.antialias = gl && gl.getContextAttributes().antialias ? '1' : '0';
const view = {mesh: null, alpha: 90, beta: 90, radius: 3, key: '', draws: 0, seq: 0, buffers: null};

function compile(type, source) {
  const shader = gl.createShader(type);
  gl.shaderSource(shader, source);
  gl.compileShader(shader);
  return shader;
}
let program = null;
if (gl) {
  program = gl.createProgram();
  gl.attachShader(program, compile(gl.VERTEX_SHADER, `
    attribute vec3 position; attribute vec3 normal; attribute vec3 color;
    uniform mat4 mvp; varying vec3 vNormal; varying vec3 vColor; varying vec3 vPosition;
    void main() { vNormal = normal; vColor = color; vPosition = position; gl_Position = mvp * vec4(position, 1.0); }`));
  gl.attachShader(program, compile(gl.FRAGMENT_SHADER, `
    precision mediump float; uniform vec3 eye;
    varying vec3 vNormal; varying vec3 vColor; varying vec3 vPosition;
    void main() {
      vec3 n = normalize(vNormal); vec3 toEye = normalize(eye - vPosition);
      float facing = abs(dot(n, toEye));
      float sky = 0.5 + 0.5 * n.y;
      gl_FragColor = vec4(vColor * (0.32 + 0.58 * facing + 0.12 * sky), 1.0);
    }`));
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) { program = null; }
}
if (!gl || !program) {
  say('This browser cannot draw the 3D body (WebGL is off). Render turntable shows it rotating.');
}
const uint32 = gl && (typeof WebGL2RenderingContext !== 'undefined' && gl instanceof WebGL2RenderingContext
  || !!gl.getExtension('OES_element_index_uint'));

function loadMesh(value) {
  if (!meshes.has(value.mesh)) {
    meshes.set(value.mesh, fetch(value.mesh).then((r) => {
      if (!r.ok) { throw new Error('the body mesh answered ' + r.status); }
      return r.arrayBuffer();
    }).then((buffer) => {
      const n = value.vertices, f = value.faces;
      const positions = new Float32Array(buffer, 0, n * 3);
      const indices = value.index === 'u16' ? new Uint16Array(buffer, n * 12, f * 3)
                                            : new Uint32Array(buffer, n * 12, f * 3);
      const normals = new Float32Array(n * 3);
      for (let t = 0; t < f * 3; t += 3) {
        const a = indices[t] * 3, b = indices[t + 1] * 3, c = indices[t + 2] * 3;
        const ux = positions[b] - positions[a], uy = positions[b + 1] - positions[a + 1], uz = positions[b + 2] - positions[a + 2];
        const vx = positions[c] - positions[a], vy = positions[c + 1] - positions[a + 1], vz = positions[c + 2] - positions[a + 2];
        const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
        for (const k of [a, b, c]) { normals[k] += nx; normals[k + 1] += ny; normals[k + 2] += nz; }
      }
      const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < n * 3; i += 3) {
        for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], positions[i + k]); hi[k] = Math.max(hi[k], positions[i + k]); }
      }
      return {positions, indices, normals, count: f * 3, centre: lo.map((v, k) => (v + hi[k]) / 2)};
    }).catch((error) => { meshes.delete(value.mesh); throw error; }));   // a later value tries again
  }
  return meshes.get(value.mesh);
}

async function unpackColors(value, n) {
  const bytes = Uint8Array.from(atob(value.colors), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  const index = new Uint8Array(await new Response(stream).arrayBuffer());
  const rgb = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) {
    const c = value.palette[index[i]] || [128, 128, 128];
    rgb[i * 3] = c[0] / 255; rgb[i * 3 + 1] = c[1] / 255; rgb[i * 3 + 2] = c[2] / 255;
  }
  return rgb;
}

function buffer(target, data) {
  const b = gl.createBuffer();
  gl.bindBuffer(target, b);
  gl.bufferData(target, data, gl.STATIC_DRAW);
  return b;
}

function attribute(name, b) {
  const at = gl.getAttribLocation(program, name);
  gl.bindBuffer(gl.ARRAY_BUFFER, b);
  gl.enableVertexAttribArray(at);
  gl.vertexAttribPointer(at, 3, gl.FLOAT, false, 0, 0);
}

function matrix() {   // projection * view, column-major
  const a = view.alpha * Math.PI / 180, b = view.beta * Math.PI / 180, c = view.mesh.centre;
  const eye = [c[0] + view.radius * Math.cos(a) * Math.sin(b), c[1] + view.radius * Math.cos(b),
               c[2] + view.radius * Math.sin(a) * Math.sin(b)];
  const norm = (v) => { const l = Math.hypot(v[0], v[1], v[2]) || 1; return v.map((x) => x / l); };
  const cross = (u, v) => [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
  const dot = (u, v) => u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  const z = norm([eye[0] - c[0], eye[1] - c[1], eye[2] - c[2]]);
  const x = norm(cross([0, 1, 0], z)), y = cross(z, x);
  const aspect = Math.max(1e-3, canvas.width / Math.max(1, canvas.height));
  const near = view.radius * 0.05, far = view.radius * 10, f = 1 / Math.tan(0.4);
  const p = [f / aspect, f, (far + near) / (near - far), 2 * far * near / (near - far)];
  const v = [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
             -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  const out = new Float32Array(16);
  for (let col = 0; col < 4; col++) {
    const vx = v[col * 4], vy = v[col * 4 + 1], vz = v[col * 4 + 2], vw = v[col * 4 + 3];
    out[col * 4] = p[0] * vx; out[col * 4 + 1] = p[1] * vy;
    out[col * 4 + 2] = p[2] * vz + p[3] * vw; out[col * 4 + 3] = -vz;
  }
  return {mvp: out, eye};
}

let pending = false;
function draw() {
  if (pending) { return; }
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    const width = Math.round(canvas.clientWidth * (window.devicePixelRatio || 1));
    const height = Math.round(canvas.clientHeight * (window.devicePixelRatio || 1));
    if (!gl || !program || !width || !height) { return; }   // hidden (a closed tab): drawn when shown
    if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
    gl.viewport(0, 0, width, height);
    gl.clearColor(BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    if (!view.mesh || !view.buffers) { return; }
    gl.enable(gl.DEPTH_TEST);
    gl.useProgram(program);
    const {mvp, eye} = matrix();
    gl.uniformMatrix4fv(gl.getUniformLocation(program, 'mvp'), false, mvp);
    gl.uniform3fv(gl.getUniformLocation(program, 'eye'), eye);
    attribute('position', view.buffers.position);
    attribute('normal', view.buffers.normal);
    attribute('color', view.buffers.color);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, view.buffers.index);
    gl.drawElements(gl.TRIANGLES, view.mesh.count, view.indexType, 0);
    view.draws += 1;
    canvas.dataset.key = view.key;
    canvas.dataset.alpha = view.alpha.toFixed(1);
    canvas.dataset.draws = String(view.draws);
  });
}

async function show(value) {
  const seq = ++view.seq;
  canvas.dataset.want = (value && value.key) || '';
  if (!value || !value.mesh) { view.key = ''; view.mesh = null; draw(); return; }
  if (!gl || !program) { return; }
  if (value.index === 'u32' && !uint32) { say('This browser cannot draw a body this large.'); return; }
  try {
    const mesh = await loadMesh(value);
    const colors = await unpackColors(value, value.vertices);
    if (seq !== view.seq) { return; }          // a newer value arrived meanwhile
    if (view.mesh !== mesh) {
      view.mesh = mesh;
      view.buffers = {position: buffer(gl.ARRAY_BUFFER, mesh.positions), normal: buffer(gl.ARRAY_BUFFER, mesh.normals),
                      index: buffer(gl.ELEMENT_ARRAY_BUFFER, mesh.indices), color: buffer(gl.ARRAY_BUFFER, colors)};
      view.indexType = value.index === 'u16' ? gl.UNSIGNED_SHORT : gl.UNSIGNED_INT;
    } else {
      gl.bindBuffer(gl.ARRAY_BUFFER, view.buffers.color);
      gl.bufferData(gl.ARRAY_BUFFER, colors, gl.STATIC_DRAW);
    }
    [view.alpha, view.beta, view.radius] = value.camera;
    view.home = value.camera[2];
    view.key = value.key;
    say('');
    draw();
  } catch (error) {
    if (seq === view.seq) { say('The 3D body could not be loaded (' + error.message + ').'); }
  }
}

// drag turns, the wheel zooms, arrow keys turn (the view focused)
let drag = null;
canvas.addEventListener('pointerdown', (e) => { drag = {x: e.clientX, y: e.clientY}; canvas.setPointerCapture(e.pointerId); });
canvas.addEventListener('pointermove', (e) => {
  if (!drag) { return; }
  view.alpha -= (e.clientX - drag.x) * 0.5;
  view.beta = Math.min(175, Math.max(5, view.beta - (e.clientY - drag.y) * 0.5));
  drag = {x: e.clientX, y: e.clientY};
  draw();
});
const release = () => { drag = null; };
canvas.addEventListener('pointerup', release);
canvas.addEventListener('pointercancel', release);
canvas.addEventListener('wheel', (e) => {
  if (!view.mesh) { return; }
  e.preventDefault();
  const home = view.home || view.radius;
  view.radius = Math.min(home * 2.5, Math.max(home * 0.35, view.radius * (1 + Math.sign(e.deltaY) * 0.1)));
  draw();
}, {passive: false});
canvas.addEventListener('keydown', (e) => {
  const turn = {ArrowLeft: 15, ArrowRight: -15}[e.key], tilt = {ArrowUp: -10, ArrowDown: 10}[e.key];
  if (turn === undefined && tilt === undefined) { return; }
  e.preventDefault();
  e.stopPropagation();
  view.alpha += turn || 0;
  view.beta = Math.min(175, Math.max(5, view.beta + (tilt || 0)));
  draw();
});
new ResizeObserver(draw).observe(canvas);
watch('value', () => show(props.value));
show(props.value);
"""


def body_viewer(elem_id: str) -> gr.HTML:
    """The 3D view (empty until a painting arrives)."""
    return gr.HTML(None, html_template=TEMPLATE, css_template=CSS, js_on_load=JS, elem_id=elem_id,
                   apply_default_css=False, container=False)


def file_url(path: Path) -> str:
    """The page-relative URL gradio serves `path` at (its folder made servable first)."""
    path = Path(path).resolve()
    serve_in_place([str(path.parent)])
    return "gradio_api/file=" + quote(str(path))


def body_value(body, key: str, colors, camera, folder: Path) -> dict:
    """The view's value: `body`'s mesh (written to `folder` once), a painting's colours and the
    camera facing it."""
    return {"mesh": file_url(mesh_file(body, folder)), "vertices": int(body.num_vertices),
            "faces": int(len(body.faces)), "index": index_type(body.num_vertices), "key": key,
            **painting_payload(colors), "camera": [float(x) for x in camera]}


def shown_key(value) -> str | None:
    """The painting the page's view holds (its value, as the page sends it back)."""
    return value.get("key") if isinstance(value, dict) else None
