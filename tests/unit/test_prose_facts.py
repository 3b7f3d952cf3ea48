"""General statements in lesson prose that no claim guards (they hold at every setting, so none is
needed), checked over every setting they cover: a review found such sentences false at some settings
("neighbours are more alike, up to a distance set by the slowest pair"; "a few times more parameters";
"its T²·d part takes over above T = d")."""

import numpy as np
import pytest
import torch

from explorer.analysis.cost import attention_cost, recurrent_cost
from explorer.lessons.positions.view import BASES
from explorer.model.positional import sinusoidal_encoding


@pytest.mark.parametrize("base", BASES)
def test_sinusoidal_similarity_falls_over_three_steps_and_can_rise_after(base):
    """positions.md, geometry: the dot product of two positions falls over the first three steps apart
    (every pair's angle is below π there: ω ≤ 1), and farther on can rise again (the fastest pair turns
    round every 2π positions)."""
    rose = False
    for d in range(2, 129, 2):
        pe = np.asarray(sinusoidal_encoding(40, d, base), dtype=float)
        for start in (0, 7):
            similarity = pe[start:] @ pe[start]
            assert np.all(np.diff(similarity[:4]) < 0), (d, start, similarity[:4])
            rose |= bool(np.any(np.diff(similarity[3:]) > 0))
    assert rose, "somewhere a distant position is more alike than a nearer one"


@pytest.mark.parametrize("d", [8, 64, 512])
def test_attention_has_twice_a_tanh_rnn_layers_parameters(d):
    """cost.py's lead, against torch's own modules."""
    attention = torch.nn.MultiheadAttention(d, 1)
    rnn = torch.nn.RNN(d, d)
    assert attention_cost(10, d).parameters == sum(p.numel() for p in attention.parameters())
    assert recurrent_cost("rnn", 10, d).parameters == sum(p.numel() for p in rnn.parameters())
    assert attention_cost(10, d).parameters == 2 * recurrent_cost("rnn", 10, d).parameters


@pytest.mark.parametrize("d", [16, 64, 256])
def test_the_quadratic_part_outgrows_the_projections_above_twice_d(d):
    """cost.py: in the exact count, 2·T²·d passes 4·T·d² above T = 2·d (not T = d)."""
    def quadratic_share(T):
        return 2 * T * T * d / attention_cost(T, d).multiplications
    assert quadratic_share(d) == pytest.approx(1 / 3)
    assert quadratic_share(2 * d) == pytest.approx(1 / 2)
    assert quadratic_share(2 * d + 1) > 1 / 2 > quadratic_share(2 * d - 1)
