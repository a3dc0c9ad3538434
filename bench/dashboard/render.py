"""Render a Grafana dashboard's panels (their gridPos layout) as a PNG from query
results: time series with axes, tick labels, grid and a legend below; stat panels as
one big number; the run's events as numbered dotted lines. Grafana's dark theme
colours; a 24-column grid as Grafana's. Pure: data in, PNG bytes out.
"""
import math
import time

from dashboard.canvas import Canvas, text_height, text_width

WIDTH = 1400        # px; GitHub shows a README image at most ~900 px wide: text stays readable
ROW_HEIGHT = 34     # px per gridPos unit of height (Grafana uses 30 at its smaller font)
MARGIN = 8          # px between panels and around the page
HEADER = 64         # px for the title and the run's events
SCALE = 2           # the font's scale for every text: 12 px per character
Y_AXIS_ALLOWANCE = 130  # px a panel's y labels take at most ("0.00 ops/s" and the gap)

PAGE = (17, 18, 23)
PANEL = (24, 27, 31)
BORDER = (44, 48, 54)
TEXT = (204, 204, 220)
MUTED = (142, 142, 160)
GRID = (50, 54, 60)
EVENT = (110, 110, 130)
SERIES = [(115, 191, 105), (242, 204, 12), (87, 148, 242), (255, 152, 48), (242, 73, 92),
          (184, 119, 217), (110, 208, 224), (255, 166, 176), (180, 230, 60), (190, 140, 90),
          (230, 230, 230), (60, 170, 150), (160, 160, 255), (255, 110, 200)]  # distinct on PANEL


# ----------------------------------------------------------------------------- numbers

_UNIT_SCALES = {
    "s": [(86400, " day"), (3600, " h"), (60, " min"), (1, " s"), (1e-3, " ms"), (1e-6, " us")],
    "reqps": [(1, " req/s")],
    "ops": [(1, " ops/s")],
    "short": [(1e9, " Bil"), (1e6, " Mil"), (1e3, " K"), (1, "")],
}


def unit_scale(unit, magnitude):
    """(divisor, suffix) to show values up to `magnitude` in `unit` (Grafana's names:
    s, reqps, ops, short); raises ValueError for another unit."""
    if unit not in _UNIT_SCALES:
        raise ValueError(f"unsupported panel unit {unit!r} (known: {', '.join(_UNIT_SCALES)})")
    scales = _UNIT_SCALES[unit]
    for divisor, suffix in scales:
        if magnitude >= divisor:
            return divisor, suffix
    return scales[-1]


def nice_ticks(lo, hi, max_ticks):
    """Tick values from <= lo to >= hi at a step of 1, 2 or 5 x 10^k, at most
    max_ticks + 1 of them."""
    span = hi - lo
    raw = span / max(1, max_ticks)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9) * step
    ticks, v = [], first
    for _ in range(max_ticks + 3):  # bounded: the step covers the span in max_ticks
        ticks.append(round(v, 12))
        if v >= hi - 1e-9 * step:
            break
        v += step
    return ticks, step


def format_tick(v, step):
    decimals = max(0, -int(math.floor(math.log10(step) + 1e-9))) if step < 1 else 0
    return f"{v:.{decimals}f}"


def fit(s, width):
    """`s` cut with "..." to at most `width` px."""
    n = (width + SCALE) // (6 * SCALE)
    return s if len(s) <= n else s[:max(0, n - 3)] + "..."


# ----------------------------------------------------------------------------- panels

def _legend_rows(names, width):
    """[(row, x, name)] for names flowing left to right and wrapping at `width`."""
    out, row, x = [], 0, 0
    for name in names:
        w = 22 + text_width(name, SCALE) + 18
        if x and x + w > width:
            row, x = row + 1, 0
        out.append((row, x, name))
        x += w
    return out


def draw_timeseries(cv, box, panel, series, t0, t1, events):
    """series: [(legend name, [(t, v)])]. box: (x, y, w, h) inside the panel's title."""
    x, y, w, h = box
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    names = [n for n, _ in series]
    placed = _legend_rows(names, w - 8)
    line_h = text_height(SCALE) + 6
    legend_h = (max(r for r, _, _ in placed) + 1) * line_h if placed else 0
    for i, (row, lx, name) in enumerate(placed):
        ly = y + h - legend_h + row * line_h
        cv.rect(x + 4 + lx, ly + 6, 16, 4, SERIES[i % len(SERIES)])
        cv.text(x + 4 + lx + 22, ly, name, TEXT, SCALE)
    values = [v for _, pts in series for _, v in pts if math.isfinite(v)]
    lo = min([0.0] + values)
    hi = max([0.0] + values)
    if hi - lo < 1e-12:
        hi = lo + 1.0
    divisor, suffix = unit_scale(unit, max(abs(lo), abs(hi)))
    plot_h = h - legend_h - text_height(SCALE) - 12
    ticks, step = nice_ticks(lo / divisor, hi / divisor, max(2, plot_h // 40))
    labels = [format_tick(v, step) + suffix for v in ticks]
    axis_w = max(text_width(s, SCALE) for s in labels) + 10
    px, pw = x + axis_w, w - axis_w - 6
    py, ph = y + 4, plot_h - 4
    vlo, vhi = ticks[0] * divisor, ticks[-1] * divisor

    def sx(t):
        return px + (t - t0) / (t1 - t0) * (pw - 1)

    def sy(v):
        return py + ph - 1 - (v - vlo) / (vhi - vlo) * (ph - 1)

    for v, s in zip(ticks, labels):
        yy = sy(v * divisor)
        cv.dotted_hline(px, px + pw, yy, GRID)
        cv.text(px - 8 - text_width(s, SCALE), int(yy) - 7, s, MUTED, SCALE)
    _time_axis(cv, px, pw, py + ph + 6, t0, t1, sx, w)
    for n, (at, _) in enumerate(events, 1):
        ex = int(sx(at))
        for yy in range(py, py + ph, 4):
            cv.rect(ex, yy, 1, 2, EVENT)
        cv.text(ex + 3, py, str(n), EVENT, SCALE)
    for i, (_, pts) in enumerate(series):
        colour = SERIES[i % len(SERIES)]
        for (ta, a), (tb, b) in zip(pts, pts[1:]):
            if tb - ta <= 2.5 * _step(pts) and math.isfinite(a) and math.isfinite(b):
                cv.line(sx(ta), sy(a), sx(tb), sy(b), colour)
        if len(pts) == 1:
            cv.rect(sx(pts[0][0]) - 1, sy(pts[0][1]) - 1, 3, 3, colour)


def _step(pts):
    return min((b[0] - a[0] for a, b in zip(pts, pts[1:])), default=1.0)


def _time_axis(cv, px, pw, y, t0, t1, sx, box_w):
    """HH:MM:SS labels under the plot; the step follows the panel's width (not the plot's,
    which depends on its y labels), so panels of one width share their times."""
    label_w = text_width("00:00:00", SCALE) + 24
    fits = max(1, (box_w - Y_AXIS_ALLOWANCE) // label_w)
    step = next((s for s in (5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600)
                 if (t1 - t0) / s <= fits), 3600)
    t = math.ceil(t0 / step) * step
    for _ in range(int((t1 - t0) / step) + 2):  # bounded: one label per step
        if t > t1:
            break
        s = time.strftime("%H:%M:%S", time.gmtime(t))
        xx = int(sx(t))
        half = text_width(s, SCALE) // 2
        if px <= xx - half and xx + half <= px + pw + 4:  # whole labels only, clear of the y axis
            cv.rect(xx, y - 6, 1, 4, MUTED)
            cv.text(xx - half, y, s, MUTED, SCALE)
        t += step


def draw_stat(cv, box, panel, series):
    """The last value of the first series, big, centred."""
    x, y, w, h = box
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    colour = SERIES[0]
    if not series or not series[0][1]:
        s, colour = "No data", MUTED
    else:
        v = series[0][1][-1][1]
        divisor, suffix = unit_scale(unit, abs(v))
        s = f"{v / divisor:.3g}{suffix}"
    scale = max(SCALE, min(8, (w - 20) // max(1, len(s) * 6), (h - 10) // 8))
    cv.text(x + (w - text_width(s, scale)) // 2, y + (h - text_height(scale)) // 2, s,
            colour, scale, bold=True)


# ----------------------------------------------------------------------------- page

def render(dashboard, results, t0, t1, subtitle="", events=()):
    """PNG bytes of `dashboard` (its JSON as a dict). results: {panel id: [(legend name,
    [(t, v)])]}; [t0, t1] the time range (Unix seconds); events: [(t, text)] drawn as
    numbered dotted lines and listed under the title. Raises ValueError for a panel
    type other than timeseries and stat."""
    panels = dashboard["panels"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    event_lines = _legend_rows([f"{n} {text}" for n, (_, text) in enumerate(events, 1)],
                               WIDTH - 2 * MARGIN)
    header = HEADER + (max((r for r, _, _ in event_lines), default=0)) * (text_height(SCALE) + 6)
    cv = Canvas(WIDTH, header + rows * ROW_HEIGHT + MARGIN, PAGE)
    cv.text(MARGIN + 4, 10, dashboard.get("title", ""), TEXT, SCALE + 1, bold=True)
    cv.text(MARGIN + 4 + text_width(dashboard.get("title", ""), SCALE + 1) + 20, 14, subtitle,
            MUTED, SCALE)
    for row, lx, text in event_lines:
        cv.text(MARGIN + 4 + lx, 40 + row * (text_height(SCALE) + 6), text, EVENT, SCALE)
    col_w = (WIDTH - MARGIN) / 24
    for p in panels:
        g = p["gridPos"]
        x = int(MARGIN + g["x"] * col_w)
        w = int((g["x"] + g["w"]) * col_w) - int(g["x"] * col_w) - MARGIN
        y = header + g["y"] * ROW_HEIGHT
        h = g["h"] * ROW_HEIGHT - MARGIN
        cv.rect(x, y, w, h, PANEL)
        cv.frame(x, y, w, h, BORDER)
        cv.text(x + 8, y + 8, fit(p.get("title", ""), w - 16), TEXT, SCALE, bold=True)
        box = (x + 8, y + 8 + text_height(SCALE) + 8, w - 16, h - text_height(SCALE) - 24)
        kind = p.get("type")
        if kind == "timeseries":
            draw_timeseries(cv, box, p, results.get(p["id"], []), t0, t1, events)
        elif kind == "stat":
            draw_stat(cv, box, p, results.get(p["id"], []))
        else:
            raise ValueError(f"panel {p.get('title')!r}: unsupported panel type {kind!r}")
    return cv.png()
