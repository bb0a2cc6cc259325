// Pixel geometry of the editor. Convention: pixel (r, c) is the unit square
// [c, c+1) x [r, r+1) of canvas coordinates and its centre is (c + 0.5, r + 0.5);
// a pixel is inside a contour when its centre is (even-odd rule) and under the brush
// when its centre is within the radius of the stroke. The tests use the same rule.

// Calls visit(i) for the flat index of every pixel whose centre is inside the closed
// polygon pts = [[x, y], ...], scanning rows (no per-pixel polygon test: O(H * edges)).
export function forEachInside(pts, W, H, visit) {
  const n = pts.length;
  if (n < 3) return;
  let ymin = Infinity, ymax = -Infinity;
  for (const [, y] of pts) { ymin = Math.min(ymin, y); ymax = Math.max(ymax, y); }
  const r0 = Math.max(0, Math.ceil(ymin - 0.5)), r1 = Math.min(H - 1, Math.floor(ymax - 0.5));
  const xs = [];
  for (let r = r0; r <= r1; r++) {
    const y = r + 0.5;
    xs.length = 0;
    for (let k = 0, j = n - 1; k < n; j = k++) {
      const [xa, ya] = pts[j], [xb, yb] = pts[k];
      if ((ya > y) !== (yb > y)) xs.push(xa + (y - ya) * (xb - xa) / (yb - ya));
    }
    xs.sort((a, b) => a - b);
    for (let k = 0; k + 1 < xs.length; k += 2) {
      // centres strictly between the two crossings: xs[k] < c + 0.5 < xs[k+1]
      const c0 = Math.max(0, Math.floor(xs[k] - 0.5) + 1);
      const c1 = Math.min(W - 1, Math.ceil(xs[k + 1] - 0.5) - 1);
      for (let c = c0, i = r * W + c0; c <= c1; c++, i++) visit(i);
    }
  }
}

// The pixels [c0, r0, c1, r1] (inclusive, clipped to the image) that can have their
// centre within radius of the segment a-b.
export function capsuleBox(a, b, radius, W, H) {
  const [ax, ay] = a, [bx, by] = b;
  return [Math.max(0, Math.floor(Math.min(ax, bx) - radius - 0.5)),
          Math.max(0, Math.floor(Math.min(ay, by) - radius - 0.5)),
          Math.min(W - 1, Math.ceil(Math.max(ax, bx) + radius - 0.5)),
          Math.min(H - 1, Math.ceil(Math.max(ay, by) + radius - 0.5))];
}

// Calls visit(i) for every pixel whose centre is within radius of the segment a-b
// (a capsule; a disk when a == b).
export function forEachInCapsule(a, b, radius, W, H, visit) {
  const [ax, ay] = a, [bx, by] = b;
  const [c0, r0, c1, r1] = capsuleBox(a, b, radius, W, H);
  const dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy, rr = radius * radius;
  for (let r = r0; r <= r1; r++) {
    const py = r + 0.5;
    for (let c = c0; c <= c1; c++) {
      const px = c + 0.5;
      let t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
      t = t < 0 ? 0 : t > 1 ? 1 : t;
      const ex = px - (ax + t * dx), ey = py - (ay + t * dy);
      if (ex * ex + ey * ey <= rr) visit(r * W + c);
    }
  }
}
