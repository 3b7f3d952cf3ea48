"""The cost lesson on the runtime: the counts, the crossover and the stopwatch."""

import functools

from explorer.analysis.timing import TIMED_LAYERS
from explorer.kit.spec import LessonSpec

from . import figures
from . import view as cost

COST = LessonSpec("cost", cost.CostSettings, cost.cost_view, figures.cost_figures, claims=cost.COST_CLAIMS)
COST_CROSSOVER = LessonSpec("cost", cost.CrossoverSettings, cost.crossover_view, figures.crossover_figures,
                            section="crossover")
COST_STOPWATCH = LessonSpec("cost", cost.StopwatchSettings, cost.stopwatch_view,
                            functools.partial(figures.stopwatch_figures, labels=TIMED_LAYERS), section="stopwatch")
SPECS = (COST, COST_CROSSOVER, COST_STOPWATCH)
