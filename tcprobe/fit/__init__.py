"""Fit a model to a capture: search model space for the model that explains it.

``search`` the beam search (:func:`fit`), ``evaluate`` the scoring of a
candidate on the capture, ``diagnose`` what a candidate's errors say,
``space`` the candidates (:class:`Recipe`) and their moves, ``result`` the
report. The API (``from tcprobe.fit import fit, FitConfig``) is re-exported
here.
"""

from .evaluate import FitConfig
from .result import FitResult, Rejection, Step
from .search import FitError, fit, seed_recipes
from .space import Recipe

__all__ = ["FitConfig", "FitError", "FitResult", "Recipe", "Rejection", "Step", "fit", "seed_recipes"]
