"""Render the chart's Grafana dashboard (charts/wasd/dashboards/wasd.json) as a PNG
from a recorded run of wasd, without Prometheus or Grafana: standard library only.

    record   scrape the webhook's and reconciler's /metrics into JSON lines
    promql   the subset of PromQL the dashboard uses, evaluated over a recording
    font     a 5x7 bitmap font for printable ASCII
    canvas   an indexed-colour raster: rectangles, lines, text; PNG encoding
    render   the dashboard's panels in their grid layout

bench/dashboard_png.py is the command line.
"""
