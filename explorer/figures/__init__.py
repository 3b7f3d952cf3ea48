"""Figure builders: handed arrays and labels, they return Plotly figures or Altair charts.  They
import no other layer of explorer, so they can be tested, and reused, on any data; where a builder
reads a result object, a typing.Protocol in its module says which attributes.

    common      fonts, colour scales, the labelled heatmap and bar chart, panel grids, log axes, CSV
    attention   every layer and head as small multiples; one head's four steps side by side
    positions   encoding matrices, small multiples on one scale, line charts
    gradients   the gradient against position, dependency matrices, accuracy on the recall task
    unrolled    the unrolled loop against attention's single step, coloured by path length
    depth       the gradient at each layer of a stack, for each way of wrapping a sublayer
    cost        the complexity table, multiplications against T, measured forward times
"""
