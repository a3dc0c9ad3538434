"""Render the chart's Grafana dashboard (charts/wasd/dashboards/wasd.json) as a PNG
from a recorded run of wasd, without Prometheus or Grafana: standard library only.

    record   scrape the webhook's and reconciler's /metrics into JSON lines
    promql_parse  the subset of PromQL the dashboard uses, and Grafana's variables
    promql   its evaluation over a recording, as Prometheus evaluates it
    evaluate a recording loaded; each panel's queries run over its time range
    font     a 5x7 bitmap font for printable ASCII
    canvas   an indexed-colour raster: rectangles, lines, text; PNG encoding
    render   the dashboard's panels in their grid layout

bench/dashboard_png.py is the command line.
"""
