"""Figure builders: handed arrays and labels, they return Plotly figures or Altair charts.  They
import no other layer of explorer, so they can be tested, and reused, on any data; where a builder
reads a result object, a typing.Protocol in its module says which attributes.

    common        fonts, colour scales, the labelled heatmap and bar chart, panel grids, CSV
    heads         one attention head large: a heatmap with every token labelled, and as lines
    matrices      large matrices (encodings up to 1024 × 1024) as float32 heatmaps on numeric axes
    dependency    dependency matrices, log10 ‖∂y_t/∂x_s‖ side by side on one scale
    logscale      log10 values on linear axes whose ticks read 1e−20 … 1
    margins       margins worked out from the labels a figure holds
    presentation  a figure's fonts and heights for a projector
    vega          Vega-Lite charts' shared look and legends for the width drawn at
"""
