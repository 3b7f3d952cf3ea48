"""Figure builders: handed arrays and labels, they return Plotly figures or Altair charts.  They
import no other layer of explorer, so they can be tested, and reused, on any data."""
