#!/usr/bin/env python3
"""coastline.py: writes scenarios/data/natural-earth/land-110m.inc, the world outline that `sim report` draws
its maps on, from Natural Earth's 1:110m land polygons as the npm package world-atlas 2.0.2 ships them
(land-110m.json, TopoJSON). Run once; the result is committed:

    npm pack world-atlas@2.0.2 && tar xzf world-atlas-2.0.2.tgz
    python3 scenarios/gen/coastline.py package/land-110m.json > scenarios/data/natural-earth/land-110m.inc

What it does: decodes the TopoJSON arcs (quantized, delta-encoded) into the rings of the "land" object,
rounds every point to 0.1 degree, simplifies each ring with Douglas-Peucker at 0.15 degree, and drops rings
left with fewer than 4 points (islands smaller than the tolerance). The output is a C initializer
fragment: a comment, then per ring its point count followed by x,y pairs in tenths of a degree (longitude
-1800..1800, latitude -900..900), then a 0 that ends the list. analysis/map.c includes it.
"""
import json
import sys

TOL = 1.5  # tenths of a degree


def decode(topo):
    sx, sy = topo["transform"]["scale"]
    tx, ty = topo["transform"]["translate"]
    arcs = []
    for arc in topo["arcs"]:
        x = y = 0
        pts = []
        for dx, dy in arc:
            x += dx
            y += dy
            pts.append((x * sx + tx, y * sy + ty))
        arcs.append(pts)
    return arcs


def ring_points(arcs, ring):
    pts = []
    for a in ring:
        seg = arcs[a] if a >= 0 else list(reversed(arcs[~a]))
        pts.extend(seg if not pts else seg[1:])
    return pts


def dp(pts, tol):
    """Douglas-Peucker on an open polyline (first and last kept)."""
    if len(pts) < 3:
        return pts
    keep = [False] * len(pts)
    keep[0] = keep[-1] = True
    stack = [(0, len(pts) - 1)]
    while stack:
        i, j = stack.pop()
        (x1, y1), (x2, y2) = pts[i], pts[j]
        dx, dy = x2 - x1, y2 - y1
        norm = (dx * dx + dy * dy) ** 0.5
        best, bi = -1.0, -1
        for k in range(i + 1, j):
            x0, y0 = pts[k]
            d = abs(dy * x0 - dx * y0 + x2 * y1 - y2 * x1) / norm if norm else ((x0 - x1) ** 2 + (y0 - y1) ** 2) ** 0.5
            if d > best:
                best, bi = d, k
        if best > tol:
            keep[bi] = True
            stack.append((i, bi))
            stack.append((bi, j))
    return [p for p, k in zip(pts, keep) if k]


def main():
    topo = json.load(open(sys.argv[1]))
    arcs = decode(topo)
    rings = []
    for geom in topo["objects"]["land"]["geometries"]:
        polys = geom["arcs"] if geom["type"] == "MultiPolygon" else [geom["arcs"]]
        for poly in polys:
            for ring in poly:
                pts = [(round(x * 10), round(y * 10)) for x, y in ring_points(arcs, ring)]
                dedup = [p for i, p in enumerate(pts) if i == 0 or p != pts[i - 1]]
                # split the closed ring in two halves so that Douglas-Peucker has two fixed ends
                half = len(dedup) // 2
                simp = dp(dedup[: half + 1], TOL)[:-1] + dp(dedup[half:], TOL)
                if simp and simp[0] == simp[-1]:
                    simp = simp[:-1]
                if len(simp) >= 4:
                    rings.append(simp)
    out = sys.stdout
    out.write("/* land-110m.inc: Natural Earth 1:110m land (public domain, naturalearthdata.com, version 4.1.0),\n"
              " * from the npm package world-atlas 2.0.2 (land-110m.json, ISC licence), written by\n"
              " * scenarios/gen/coastline.py: per ring its point count, then x,y in tenths of a degree; 0 ends. */\n")
    total = 0
    for r in rings:
        out.write("%d," % len(r) + ",".join("%d,%d" % p for p in r) + ",\n")
        total += len(r)
    out.write("0\n")
    print("rings %d points %d" % (len(rings), total), file=sys.stderr)


main()
