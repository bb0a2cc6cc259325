// The segmentation editor. A segmentation is a label map (Uint16Array, one label per
// pixel, row-major, presented orientation): every pixel always belongs to exactly one
// segment, and every tool only relabels pixels. The server rotates flipped images back.
import { capsuleBox, forEachInside, forEachInCapsule } from './geometry.js';

const $ = (id) => document.getElementById(id);
const iid = new URLSearchParams(location.search).get('iid') || '';
const api = (what) => `/api/${what}/${encodeURIComponent(iid)}`;
const UNDO_LIMIT = 100;
const MAX_SEGMENTS = 65535;
const AUTOSAVE_MS = 700;
const FIT_MARGIN = 8;   // CSS px around the fitted image
const LIST_LIMIT = 300;   // segments listed in the panel (the largest first beyond it)

const ed = {
  W: 0, H: 0, labels: null, nSeg: 1, cur: 0, tool: 'freehand', brush: 6,
  alpha: 0.3, bounds: true, zoom: 1, tx: 0, ty: 0,
  undo: [], redo: [], pixels: null, out: null, ctx: null,
  contour: null, stroke: null, lastContour: null, lastStroke: null, timings: [],
  dirty: false, saving: null, timer: 0, submitted: false, version: 0, savedVersion: 0,
  fitted: true, next: null,
};
window.segEditor = ed;   // for the tests and the curious: the state, read-only by intent

// ---- colours ---------------------------------------------------------------------
const palette = new Uint8Array(3 * (MAX_SEGMENTS + 1));
const paletteDone = new Uint8Array(MAX_SEGMENTS + 1);
function colour(l) {
  if (!paletteDone[l]) {   // golden-angle hues: neighbours' labels look different
    const h = (l * 137.508) % 360, s = 0.8, v = 0.95, f = (n) => {
      const k = (n + h / 60) % 6;
      return Math.round(255 * (v - v * s * Math.max(0, Math.min(k, 4 - k, 1))));
    };
    palette[3 * l] = f(5); palette[3 * l + 1] = f(3); palette[3 * l + 2] = f(1);
    paletteDone[l] = 1;
  }
  return 3 * l;
}

// ---- drawing ---------------------------------------------------------------------
// Repaint columns c0..c1 of rows r0..r1 (inclusive; clipped) from the labels. A pixel's
// colour depends on its label and on its right and lower neighbours' (the boundary
// between them), so after labels change in a box, the box grown by one pixel to the
// left and up is what needs repainting: a brush stroke on a 12-megapixel photograph
// repaints its capsule, not the photograph.
function paint(c0, r0, c1, r1) {
  const { W, H, labels, pixels, cur } = ed, o = ed.out.data;
  c0 = Math.max(0, c0); r0 = Math.max(0, r0); c1 = Math.min(W - 1, c1); r1 = Math.min(H - 1, r1);
  if (c0 > c1 || r0 > r1) return;
  const a = ed.alpha, ac = Math.min(1, a + 0.15), bounds = ed.bounds;
  for (let r = r0; r <= r1; r++) {
    for (let c = c0, i = r * W + c0; c <= c1; c++, i++) {
      const l = labels[i], p = 4 * i;
      const edge = bounds && ((c + 1 < W && labels[i + 1] !== l) ||
                              (r + 1 < H && labels[i + W] !== l));
      if (edge) {
        const isCur = l === cur || (c + 1 < W && labels[i + 1] === cur) ||
                      (r + 1 < H && labels[i + W] === cur);
        o[p] = 255; o[p + 1] = 255; o[p + 2] = isCur ? 0 : 255;   // yellow around the current
      } else {
        const k = colour(l), w = l === cur ? ac : a;
        o[p] = pixels[p] * (1 - w) + palette[k] * w;
        o[p + 1] = pixels[p + 1] * (1 - w) + palette[k + 1] * w;
        o[p + 2] = pixels[p + 2] * (1 - w) + palette[k + 2] * w;
      }
      o[p + 3] = 255;
    }
  }
  ed.ctx.putImageData(ed.out, 0, 0, c0, r0, c1 - c0 + 1, r1 - r0 + 1);
}

// Repaint everything and the status bar.
function render() {
  paint(0, 0, ed.W - 1, ed.H - 1);
  showStatus();
}

const rgb = (l) => { const k = colour(l); return `rgb(${palette[k]},${palette[k + 1]},${palette[k + 2]})`; };

function showStatus() {
  const sizes = segmentSizes();
  const present = [];
  for (let l = 0; l < sizes.length; l++) if (sizes[l]) present.push(l);
  $('segments').textContent = String(present.length);
  $('swatch').style.background = rgb(ed.cur);
  $('current').textContent = String(ed.cur);
  $('undo').disabled = !ed.undo.length;
  $('redo').disabled = !ed.redo.length;
  listSegments(present, sizes);
}

// Pixels of each label 0..nSeg-1.
function segmentSizes() {
  const sizes = new Uint32Array(ed.nSeg), labels = ed.labels, n = labels.length;
  for (let i = 0; i < n; i++) sizes[labels[i]]++;
  return sizes;
}

// The panel's list of segments: colour, number, pixels; a click makes one current.
function listSegments(present, sizes) {
  let shown = present;
  if (shown.length > LIST_LIMIT) {
    shown = present.slice().sort((a, b) => sizes[b] - sizes[a]).slice(0, LIST_LIMIT);
    if (!shown.includes(ed.cur)) shown[LIST_LIMIT - 1] = ed.cur;
    shown.sort((a, b) => a - b);
  }
  const items = shown.map((l) => {
    const li = document.createElement('li'), sw = document.createElement('span'),
          name = document.createElement('span'), px = document.createElement('span');
    sw.className = 'swatch'; sw.style.background = rgb(l);
    name.textContent = `segment ${l}`;
    px.className = 'px'; px.textContent = `${sizes[l]} px`;
    li.dataset.label = String(l);
    if (l === ed.cur) li.className = 'current';
    li.append(sw, name, px);
    return li;
  });
  if (shown.length < present.length) {
    const li = document.createElement('li');
    li.textContent = `… and ${present.length - shown.length} smaller segments`;
    items.push(li);
  }
  $('segment-list').replaceChildren(...items);
}

function drawGuide(points, closed) {
  const svg = $('overlay');
  svg.replaceChildren();
  if (!points || !points.length) return;
  const el = document.createElementNS('http://www.w3.org/2000/svg', closed ? 'polygon' : 'polyline');
  el.setAttribute('points', points.map(([x, y]) => `${x},${y}`).join(' '));
  svg.appendChild(el);
}

// ---- edits -----------------------------------------------------------------------
function snapshot() {
  return { labels: ed.labels.slice(), nSeg: ed.nSeg, cur: ed.cur };
}
function pushUndo() {
  ed.undo.push(snapshot());
  if (ed.undo.length > UNDO_LIMIT) ed.undo.shift();
  ed.redo.length = 0;
}
function restore(s) { ed.labels = s.labels; ed.nSeg = s.nSeg; ed.cur = s.cur; }
// The labels changed: repaint (unless the change painted itself), count, save soon.
function changed(repaint = true) {
  ed.version++; ed.dirty = true;
  if (repaint) render(); else showStatus();
  scheduleSave();
}

export function undo() {
  if (!ed.undo.length) return;
  ed.redo.push(snapshot()); restore(ed.undo.pop()); changed();
}
export function redo() {
  if (!ed.redo.length) return;
  ed.undo.push(snapshot()); restore(ed.redo.pop()); changed();
}

// Split a segment: the part of it inside the closed contour becomes a new segment,
// which becomes current (as in the 2001 tool: cut out, then split again). The segment
// split is the current one when the contour holds part of it; else the one under the
// contour's first point, when the contour holds part of that; else the one the contour
// holds most of. A segment the contour holds whole cannot be split by it.
export function split(points) {
  const t0 = performance.now();
  const { labels, W, H } = ed;
  if (ed.nSeg >= MAX_SEGMENTS) { status(`at most ${MAX_SEGMENTS} segments`); return false; }
  const within = [], held = new Uint32Array(ed.nSeg);
  forEachInside(points, W, H, (i) => { within.push(i); held[labels[i]]++; });
  const sizes = segmentSizes();
  ed.lastContour = points.map(([x, y]) => [x, y]);
  const splittable = (l) => l >= 0 && held[l] > 0 && held[l] < sizes[l];
  const start = pixelAt(points[0]);
  let target = -1;
  if (splittable(ed.cur)) target = ed.cur;
  else if (start >= 0 && splittable(labels[start])) target = labels[start];
  else {
    for (let l = 0; l < held.length; l++) {
      if (splittable(l) && (target < 0 || held[l] > held[target])) target = l;
    }
  }
  if (target < 0) {
    status(within.length ? 'the contour holds whole segments only: nothing to split'
                         : 'the contour holds no pixel of the image');
    return false;
  }
  pushUndo();
  const fresh = ed.nSeg++;
  let n = 0;
  for (const i of within) if (labels[i] === target) { labels[i] = fresh; n++; }
  ed.cur = fresh;
  ed.lastSplit = { from: target, into: fresh, pixels: n };
  const t1 = performance.now();
  changed();
  status(`split ${n} pixels off segment ${target}: segment ${fresh}`);
  ed.timings.push({ op: 'split', pixels: n, split_ms: t1 - t0,
                    render_ms: performance.now() - t1 });
  return true;
}

// Merge segment `other` into the current one.
export function merge(other) {
  if (other === ed.cur) return false;
  pushUndo();
  const { labels } = ed;
  for (let i = 0; i < labels.length; i++) if (labels[i] === other) labels[i] = ed.cur;
  changed();
  return true;
}

// Paint the current segment along a-b; repaint what that changed (the segment count
// in the status bar follows when the stroke ends).
function brushAt(a, b) {
  const { labels, cur } = ed;
  let n = 0;
  forEachInCapsule(a, b, ed.brush, ed.W, ed.H, (i) => {
    if (labels[i] !== cur) { labels[i] = cur; n++; }
  });
  if (n) {
    const [c0, r0, c1, r1] = capsuleBox(a, b, ed.brush, ed.W, ed.H);
    paint(c0 - 1, r0 - 1, c1, r1);
  }
  return n;
}

// ---- mouse -----------------------------------------------------------------------
function imagePoint(e) {
  const rect = $('canvas').getBoundingClientRect();
  return [(e.clientX - rect.left) * ed.W / rect.width,
          (e.clientY - rect.top) * ed.H / rect.height];
}
function pixelAt([x, y]) {
  const c = Math.floor(x), r = Math.floor(y);
  return c >= 0 && r >= 0 && c < ed.W && r < ed.H ? r * ed.W + c : -1;
}
function samePoint(a, b) { return a && b && a[0] === b[0] && a[1] === b[1]; }

let panFrom = null, spaceDown = false;

function onDown(e) {
  const view = $('viewport');
  if (e.button === 1 || (e.button === 0 && (ed.tool === 'pan' || spaceDown))) {
    panFrom = [e.clientX - ed.tx, e.clientY - ed.ty];
    view.setPointerCapture(e.pointerId);
    e.preventDefault();
    return;
  }
  if (e.button !== 0) return;
  const p = imagePoint(e);
  if (ed.tool === 'freehand') {
    ed.contour = [p];
    view.setPointerCapture(e.pointerId);
    drawGuide(ed.contour, false);
  } else if (ed.tool === 'polygon') {
    const pts = ed.contour || [];
    const rect = $('canvas').getBoundingClientRect(), scale = rect.width / ed.W;
    if (pts.length >= 3 && Math.hypot(p[0] - pts[0][0], p[1] - pts[0][1]) * scale < 8) {
      closePolygon();
    } else if (!samePoint(pts[pts.length - 1], p)) {
      pts.push(p); ed.contour = pts; drawGuide(pts, false);
    }
  } else if (ed.tool === 'brush') {
    pushUndo();
    ed.stroke = [p];
    brushAt(p, p);
    view.setPointerCapture(e.pointerId);
    showStatus();
  } else if (ed.tool === 'merge' || ed.tool === 'pick') {
    const i = pixelAt(p);
    if (i < 0) return;
    if (ed.tool === 'merge') merge(ed.labels[i]);
    else { ed.cur = ed.labels[i]; render(); }
  }
  e.preventDefault();
}

function onMove(e) {
  if (panFrom) {
    ed.tx = e.clientX - panFrom[0]; ed.ty = e.clientY - panFrom[1]; ed.fitted = false;
    place(); return;
  }
  const p = imagePoint(e);
  $('where').textContent = pixelAt(p) >= 0 ? `row ${Math.floor(p[1])}, col ${Math.floor(p[0])}` : '';
  if (ed.tool === 'freehand' && ed.contour) {
    if (!samePoint(ed.contour[ed.contour.length - 1], p)) ed.contour.push(p);
    drawGuide(ed.contour, false);
  } else if (ed.tool === 'polygon' && ed.contour) {
    drawGuide(ed.contour.concat([p]), false);
  } else if (ed.tool === 'brush' && ed.stroke) {
    const last = ed.stroke[ed.stroke.length - 1];
    if (!samePoint(last, p)) { ed.stroke.push(p); brushAt(last, p); }
  }
}

function onUp(e) {
  if (panFrom) { panFrom = null; return; }
  if (ed.tool === 'freehand' && ed.contour) {
    const p = imagePoint(e);
    if (!samePoint(ed.contour[ed.contour.length - 1], p)) ed.contour.push(p);
    const pts = ed.contour;
    ed.contour = null;
    drawGuide(null);
    if (pts.length >= 3) split(pts);
  } else if (ed.tool === 'brush' && ed.stroke) {
    ed.lastStroke = { points: ed.stroke, radius: ed.brush };
    ed.stroke = null;
    changed(false);
  }
}

function closePolygon() {
  const pts = ed.contour;
  ed.contour = null;
  drawGuide(null);
  if (pts && pts.length >= 3) split(pts);
}

// ---- view ------------------------------------------------------------------------
function place() {
  $('stage').style.transform = `translate(${ed.tx}px, ${ed.ty}px) scale(${ed.zoom})`;
  $('zoom').textContent = `${Math.round(ed.zoom * 100)}%`;
}
function zoomAt(factor, cx, cy) {
  ed.fitted = false;
  const z = Math.min(32, Math.max(0.1, ed.zoom * factor));
  const rect = $('viewport').getBoundingClientRect();
  const px = cx - rect.left, py = cy - rect.top;
  ed.tx = Math.round(px - (px - ed.tx) * z / ed.zoom);
  ed.ty = Math.round(py - (py - ed.ty) * z / ed.zoom);
  ed.zoom = z;
  place();
}
export function setZoom(z) {   // about the viewport's centre
  const rect = $('viewport').getBoundingClientRect();
  zoomAt(z / ed.zoom, rect.left + rect.width / 2, rect.top + rect.height / 2);
}
// The whole image in the viewport, centred; kept so when the viewport changes size
// (a window resized, a phone turned) until the user zooms or pans.
function fit() {
  const view = $('viewport'), w = view.clientWidth, h = view.clientHeight;
  const rect = { width: w, height: h };
  ed.fitted = true;
  // a margin: contours around objects at the image's edge start and end outside it
  const m = 2 * FIT_MARGIN;
  ed.zoom = Math.max(0.1, Math.min((rect.width - m) / ed.W, (rect.height - m) / ed.H, 8));
  ed.tx = Math.round((rect.width - ed.W * ed.zoom) / 2);
  ed.ty = Math.round((rect.height - ed.H * ed.zoom) / 2);
  place();
}

// ---- saving ----------------------------------------------------------------------
function status(text) { $('status').textContent = text; }

async function put(url, method) {
  const version = ed.version;
  const body = ed.labels.slice();   // the buffer sent is the state of this version
  const r = await fetch(url, {
    method, body: body.buffer, credentials: 'same-origin',
    headers: { 'Content-Type': 'application/octet-stream', 'X-Segbench': '1',
               'X-Segments': String(ed.nSeg) } });
  const reply = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(reply.error || `HTTP ${r.status}`);
  return [version, reply];
}

function scheduleSave() {
  clearTimeout(ed.timer);
  ed.timer = setTimeout(saveDraft, AUTOSAVE_MS);
}

export async function saveDraft() {
  if (ed.submitted || !ed.dirty) return;
  if (ed.saving) { await ed.saving; return saveDraft(); }
  ed.saving = put(api('draft'), 'PUT').then(([version]) => {
    ed.savedVersion = version;
    ed.dirty = ed.version !== version;
    status(`draft saved ${new Date().toLocaleTimeString()}`);
  }, (err) => status(`draft NOT saved: ${err.message}`)).finally(() => { ed.saving = null; });
  await ed.saving;
}

async function submit() {
  clearTimeout(ed.timer);
  if (ed.saving) await ed.saving;
  $('save').disabled = true;
  try {
    const [, reply] = await put(api('submit'), 'POST');
    ed.submitted = true; ed.dirty = false;
    status(`saved ${reply.saved} (${reply.segments} segments)`);
    ed.next = reply.next;
    $('next').hidden = false; $('skip').hidden = true;
  } catch (err) {
    status(`NOT saved: ${err.message}`);
    $('save').disabled = false;
  }
}

// The next image: in collection mode the server assigns it now (no stop at the home
// page); alone, the next one without a submission.
async function goNext() {
  if (!ed.task.collect) { location.assign(ed.next || '/'); return; }
  $('next').disabled = true;
  try {
    const r = await fetch('/api/next', {
      method: 'POST', body: '{}', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Segbench': '1' } });
    const reply = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(reply.error || `HTTP ${r.status}`);
    location.assign(reply.iid ? `/edit?iid=${encodeURIComponent(reply.iid)}`
      : '/?msg=' + encodeURIComponent('No image can be given to you now: thank you! Come back later.'));
  } catch (err) {
    status(`no next image: ${err.message}`);
    $('next').disabled = false;
  }
}

// Collection mode: give this image up (it goes to someone else), then the next one.
async function skip() {
  clearTimeout(ed.timer);
  if (ed.saving) await ed.saving;
  $('skip').disabled = true;
  try {
    const r = await fetch(api('skip'), {
      method: 'POST', body: '{}', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Segbench': '1' } });
    const reply = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(reply.error || `HTTP ${r.status}`);
    ed.submitted = true;   // nothing more to save here
    await goNext();
  } catch (err) {
    status(`NOT skipped: ${err.message}`);
    $('skip').disabled = false;
  }
}

// Narrow screens: the viewport fills the screen below the toolbar and status line (whose
// heights vary as they wrap), so "fit" shows the whole image without scrolling.
function layout() {
  const view = $('viewport');
  document.documentElement.style.setProperty('--viewport-top', `${view.offsetTop}px`);
}

// ---- start -----------------------------------------------------------------------
function setTool(name) {
  ed.tool = name;
  if (ed.contour) { ed.contour = null; drawGuide(null); }
  const radio = document.querySelector(`input[name="tool"][value="${name}"]`);
  if (radio) radio.checked = true;
  $('viewport').dataset.tool = name;
}

const KEYS = { f: 'freehand', p: 'polygon', b: 'brush', m: 'merge', k: 'pick', h: 'pan' };

function onKey(e) {
  const k = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && k === 'z') { e.shiftKey ? redo() : undo(); e.preventDefault(); return; }
  if ((e.ctrlKey || e.metaKey) && k === 'y') { redo(); e.preventDefault(); return; }
  // plain keys are the sliders' own while one has the focus
  if (e.target instanceof HTMLInputElement && e.target.type === 'range') return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === 'Enter' && ed.tool === 'polygon') closePolygon();
  else if (e.key === 'Escape') { ed.contour = null; drawGuide(null); }
  else if (KEYS[k]) setTool(KEYS[k]);
  else if (e.key === '+' || e.key === '=') setZoom(ed.zoom * 1.25);
  else if (e.key === '-') setZoom(ed.zoom / 1.25);
  else if (e.key === '0') fit();
  else if (e.key === '1') setZoom(1);
  else if (e.key === '[' || e.key === ']') {
    ed.brush = Math.max(1, Math.min(60, ed.brush + (e.key === ']' ? 1 : -1)));
    $('brush-size').value = String(ed.brush);
  } else if (e.key === ' ') { spaceDown = true; e.preventDefault(); }
}

async function start() {
  const r = await fetch(api('task'), { credentials: 'same-origin' });
  const task = await r.json();
  if (!r.ok) { status(task.error || `HTTP ${r.status}`); return; }
  Object.assign(ed, { W: task.width, H: task.height, task });
  const how = [task.gray ? 'greyscale' : 'colour', task.invert ? 'inverted' : '',
               task.flipflop ? 'upside down' : ''].filter(Boolean).join(', ');
  $('title').textContent = `image ${task.iid} (${task.width}x${task.height}, ${how})` +
                           (task.subject ? ` · ${task.subject}` : '');
  const img = new Image();
  img.src = api('image');
  await img.decode();
  const canvas = $('canvas');
  canvas.width = ed.W; canvas.height = ed.H;
  $('overlay').setAttribute('viewBox', `0 0 ${ed.W} ${ed.H}`);
  $('overlay').setAttribute('width', ed.W); $('overlay').setAttribute('height', ed.H);
  ed.ctx = canvas.getContext('2d', { willReadFrequently: true });
  ed.ctx.drawImage(img, 0, 0);
  ed.pixels = ed.ctx.getImageData(0, 0, ed.W, ed.H).data.slice();
  ed.out = ed.ctx.createImageData(ed.W, ed.H);
  const d = await fetch(api('draft'), { credentials: 'same-origin' });
  if (d.status === 200) {
    ed.labels = new Uint16Array(await d.arrayBuffer());
    ed.nSeg = Number(d.headers.get('X-Segments'));
    status('draft restored');
  } else {
    ed.labels = new Uint16Array(ed.W * ed.H);
    ed.nSeg = 1;
  }
  layout();
  fit();
  render();

  const view = $('viewport');
  view.addEventListener('pointerdown', onDown);
  view.addEventListener('pointermove', onMove);
  view.addEventListener('pointerup', onUp);
  view.addEventListener('contextmenu', (e) => e.preventDefault());
  view.addEventListener('dblclick', () => { if (ed.tool === 'polygon') closePolygon(); });
  view.addEventListener('wheel', (e) => {
    zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX, e.clientY); e.preventDefault();
  }, { passive: false });
  document.addEventListener('keydown', onKey);
  document.addEventListener('keyup', (e) => { if (e.key === ' ') spaceDown = false; });
  for (const radio of document.querySelectorAll('input[name="tool"]')) {
    radio.addEventListener('change', () => setTool(radio.value));
  }
  $('undo').addEventListener('click', undo);
  $('redo').addEventListener('click', redo);
  $('zoom-in').addEventListener('click', () => setZoom(ed.zoom * 1.25));
  $('zoom-out').addEventListener('click', () => setZoom(ed.zoom / 1.25));
  $('zoom-1').addEventListener('click', () => setZoom(1));
  $('zoom-fit').addEventListener('click', fit);
  $('brush-size').addEventListener('input', (e) => { ed.brush = Number(e.target.value); });
  $('opacity').addEventListener('input', (e) => { ed.alpha = Number(e.target.value) / 100; render(); });
  $('show-bounds').addEventListener('change', (e) => { ed.bounds = e.target.checked; render(); });
  $('save').addEventListener('click', submit);
  $('next').addEventListener('click', goNext);
  $('skip').addEventListener('click', skip);
  $('skip').hidden = !task.collect;
  $('segment-list').addEventListener('click', (e) => {
    const li = e.target.closest('li[data-label]');
    if (li) { ed.cur = Number(li.dataset.label); render(); }
  });
  const above = new ResizeObserver(layout);   // the toolbar and status line wrap
  above.observe($('toolbar')); above.observe($('info'));
  new ResizeObserver(() => { if (ed.fitted) fit(); }).observe(view);
  window.addEventListener('beforeunload', (e) => {
    if (ed.dirty && !ed.submitted) { saveDraft(); e.preventDefault(); e.returnValue = ''; }
  });
  ed.brush = Number($('brush-size').value);
  setTool('freehand');
  ed.ready = true;
  document.body.dataset.ready = '1';
}

start().catch((err) => status(`cannot load: ${err.message}`));
