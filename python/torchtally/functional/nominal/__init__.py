"""torchmetrics.functional.nominal's place: ``from torchtally.functional.nominal import cramers_v``."""

from .cramers import cramers_v, cramers_v_matrix
from .fleiss_kappa import fleiss_kappa
from .pearson import pearsons_contingency_coefficient, pearsons_contingency_coefficient_matrix
from .theils_u import theils_u, theils_u_matrix
from .tschuprows import tschuprows_t, tschuprows_t_matrix

__all__ = [
    "cramers_v",
    "cramers_v_matrix",
    "fleiss_kappa",
    "pearsons_contingency_coefficient",
    "pearsons_contingency_coefficient_matrix",
    "theils_u",
    "theils_u_matrix",
    "tschuprows_t",
    "tschuprows_t_matrix",
]
