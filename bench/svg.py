# SPDX-License-Identifier: GPL-2.0
"""The SVG charts of bench/'s reports: a frame, lines per variant, grouped bars."""
from results import COLORS

def svg_frame(W, H, L, R, T, B, title, xlabel, ylabel):
    """The opening lines of a chart: canvas, title, axes and their labels."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    if xlabel:
        out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(T + H - B) / 2})">{ylabel}</text>')
    return out


def svg_line_chart(path, title, series, xs, ylabel):
    """Ops/s against vCPUs, one line per variant."""
    W, H, L, R, T, B = 640, 400, 80, 190, 40, 50
    ymax = max((y for pts in series.values() for _, y in pts), default=1) * 1.1 or 1
    xmin, xmax = min(xs), max(xs)
    sx = lambda x: L + ((x - xmin) / (xmax - xmin) if xmax > xmin else 0.5) * (W - L - R)  # noqa: E731
    sy = lambda y: H - B - y / ymax * (H - T - B)  # noqa: E731
    out = svg_frame(W, H, L, R, T, B, title, "vCPUs", ylabel)
    for x in xs:
        out.append(f'<text x="{sx(x):.1f}" y="{H - B + 16}" text-anchor="middle">{x}</text>')
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<text x="{L - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:,.0f}</text>')
        out.append(f'<line x1="{L}" y1="{sy(y):.1f}" x2="{W - R}" y2="{sy(y):.1f}" stroke="#ddd"/>')
    for n, (v, pts) in enumerate(series.items()):
        pts = sorted(pts)
        c = COLORS[v]
        if len(pts) > 1:
            d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in pts:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{c}"/>')
        out.append(f'<rect x="{W - R + 12}" y="{T + n * 20}" width="12" height="12" fill="{c}"/>')
        out.append(f'<text x="{W - R + 30}" y="{T + n * 20 + 10}">{v}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def svg_bar_chart(path, title, groups, variants, values, ylabel):
    """Grouped bars: one group per lock, one bar per variant."""
    W, H, L, R, T, B = 640, 400, 70, 190, 40, 50
    ymax = max([values.get((g, v), 0) for g in groups for v in variants] + [0.1]) * 1.15
    gw = (W - L - R) / max(len(groups), 1)
    bw = gw * 0.8 / max(len(variants), 1)
    sy = lambda y: H - B - y / ymax * (H - T - B)  # noqa: E731
    out = svg_frame(W, H, L, R, T, B, title, None, ylabel)
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<text x="{L - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
        out.append(f'<line x1="{L}" y1="{sy(y):.1f}" x2="{W - R}" y2="{sy(y):.1f}" stroke="#ddd"/>')
    for gi, g in enumerate(groups):
        x0 = L + gi * gw + gw * 0.1
        out.append(f'<text x="{L + gi * gw + gw / 2:.1f}" y="{H - B + 16}" text-anchor="middle">{g}</text>')
        for vi, v in enumerate(variants):
            y = values.get((g, v))
            if y is None:
                continue
            out.append(f'<rect x="{x0 + vi * bw:.1f}" y="{sy(y):.1f}" width="{bw * 0.9:.1f}" '
                       f'height="{H - B - sy(y):.1f}" fill="{COLORS[v]}"><title>{v}: {y:.3f}</title></rect>')
    for n, v in enumerate(variants):
        out.append(f'<rect x="{W - R + 12}" y="{T + n * 20}" width="12" height="12" fill="{COLORS[v]}"/>')
        out.append(f'<text x="{W - R + 30}" y="{T + n * 20 + 10}">{v}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
