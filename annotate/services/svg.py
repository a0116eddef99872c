"""Server-side SVG drawings of the relationship graph and of reasoning chains.

Drawn on the server so the page needs no graph library (closed network) and the picture is the
same in every browser; edges and nodes are links, so clicking one opens its editor.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape

from django.utils.safestring import SafeString, mark_safe

FONT = "'WenQuanYi Zen Hei','Noto Sans CJK SC',sans-serif"


def _attr(value: str) -> str:
    return escape(str(value), {'"': "&quot;"})


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def relationship_graph(
    people: Sequence[tuple[int, str, bool]],
    edges: Sequence[tuple[int, int, int, str]],
    edge_url: Callable[[int], str],
    size: int = 640,
    current: int | None = None,
) -> SafeString:
    """People on a circle, one arrow per relationship (source → target), label at the middle.

    ``people``: (id, name, playable); ``edges``: (relationship id, source id, target id, label).
    """
    n = max(len(people), 1)
    cx = cy = size / 2
    radius = size / 2 - 70
    pos = {}
    for i, (pid, _, _) in enumerate(people):
        angle = -math.pi / 2 + 2 * math.pi * i / n
        pos[pid] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 {size} {size}" role="img" '
        f'aria-label="Relationship graph" font-family="{_attr(FONT)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#64748b"/></marker></defs>',
    ]
    seen_pairs: dict[tuple[int, int], int] = {}
    for rid, src, dst, label in edges:
        if src not in pos or dst not in pos:
            continue
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        dx, dy = x2 - x1, y2 - y1
        dist = math.hypot(dx, dy) or 1
        ux, uy = dx / dist, dy / dist
        sx, sy, ex, ey = x1 + ux * 26, y1 + uy * 26, x2 - ux * 28, y2 - uy * 28
        pair = (min(src, dst), max(src, dst))
        # bend perpendicular to the canonical (low id → high id) direction, so the two directions of
        # a pair curve to opposite sides and repeated edges fan out
        (ax, ay), (bx, by) = pos[pair[0]], pos[pair[1]]
        nd = math.hypot(bx - ax, by - ay) or 1
        nx, ny = -(by - ay) / nd, (bx - ax) / nd
        count = seen_pairs.get((src, dst), 0)
        seen_pairs[(src, dst)] = count + 1
        bend = 44 * (1 + count) * (1 if src < dst else -1)
        mx, my = (sx + ex) / 2 + nx * bend, (sy + ey) / 2 + ny * bend
        lx, ly = (sx + 2 * mx + ex) / 4, (sy + 2 * my + ey) / 4
        out.append(
            f'<a href="{_attr(edge_url(rid))}" class="edge" data-id="{rid}"><title>{escape(label)}</title>'
            f'<path d="M{sx:.1f},{sy:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}" fill="none" '
            f'stroke="{"#1d4ed8" if rid == current else "#94a3b8"}" stroke-width="{2.6 if rid == current else 1.6}" '
            f'marker-end="url(#arrow)"/>'
            f'<path d="M{sx:.1f},{sy:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}" fill="none" stroke="transparent" stroke-width="12"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="11" text-anchor="middle" fill="#334155" '
            f'paint-order="stroke" stroke="#fff" stroke-width="3">{escape(_clip(label, 28))}</text></a>'
        )
    for pid, name, playable in people:
        x, y = pos[pid]
        fill = "#1e40af" if playable else "#94a3b8"
        out.append(
            f'<g class="person"><circle cx="{x:.1f}" cy="{y:.1f}" r="24" fill="{fill}"/>'
            f'<text x="{x:.1f}" y="{y + 42:.1f}" font-size="13" text-anchor="middle" fill="#0f172a">{escape(_clip(name, 14))}</text>'
            f'<text x="{x:.1f}" y="{y + 5:.1f}" font-size="13" text-anchor="middle" fill="#fff">{escape(name[:1])}</text></g>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))


def chain_graph(
    nodes: Sequence[tuple[int, str, str, str]],
    parents: dict[int, list[int]],
    levels: dict[int, int | None],
    node_url: Callable[[int], str],
) -> SafeString:
    """Nodes in columns by hop level (unreachable nodes last), arrows from parent to child.

    ``nodes``: (id, key, kind, text).
    """
    box_w, box_h, gap_x, gap_y = 190, 64, 60, 22
    columns: dict[int, list[tuple[int, str, str, str]]] = {}
    max_level = max([lv for lv in levels.values() if lv is not None], default=0)
    for node in nodes:
        lv = levels.get(node[0])
        columns.setdefault(max_level + 1 if lv is None else lv, []).append(node)
    pos = {}
    for col, items in sorted(columns.items()):
        for row, node in enumerate(items):
            pos[node[0]] = (20 + col * (box_w + gap_x), 20 + row * (box_h + gap_y))
    width = 40 + (max(columns, default=0) + 1) * (box_w + gap_x)
    height = 40 + max((len(v) for v in columns.values()), default=1) * (box_h + gap_y)
    colours = {"direct": ("#ecfdf5", "#059669"), "inferred": ("#eff6ff", "#2563eb"), "conclusion": ("#fef2f2", "#dc2626")}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph chain" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Reasoning chain" font-family="{_attr(FONT)}">',
        '<defs><marker id="carrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>',
    ]
    for child, plist in parents.items():
        for parent in plist:
            if child in pos and parent in pos:
                (px, py), (cx, cy) = pos[parent], pos[child]
                x1, y1, x2, y2 = px + box_w, py + box_h / 2, cx, cy + box_h / 2
                mid = (x1 + x2) / 2
                out.append(
                    f'<path d="M{x1},{y1} C{mid},{y1} {mid},{y2} {x2 - 2},{y2}" fill="none" stroke="#475569" '
                    f'stroke-width="1.4" marker-end="url(#carrow)"/>'
                )
    for nid, key, kind, text in nodes:
        x, y = pos[nid]
        bg, border = colours.get(kind, ("#f8fafc", "#64748b"))
        lv = levels.get(nid)
        tag = f"{key} · {kind} · " + ("p" if lv == 0 else "–" if lv is None else f"{lv}-step")
        out.append(
            f'<a href="{_attr(node_url(nid))}" class="node" data-id="{nid}"><title>{escape(text)}</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="8" fill="{bg}" stroke="{border}" stroke-width="1.5"/>'
            f'<text x="{x + 10}" y="{y + 18}" font-size="11" fill="{border}">{escape(tag)}</text>'
            f'<text x="{x + 10}" y="{y + 38}" font-size="12" fill="#0f172a">{escape(_clip(text, 15))}</text>'
            f'<text x="{x + 10}" y="{y + 54}" font-size="12" fill="#0f172a">{escape(_clip(text[15:], 15))}</text></a>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))
