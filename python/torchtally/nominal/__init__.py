"""torchmetrics.nominal's place: ``from torchtally.nominal import CramersV``."""

from .cramers import CramersV
from .fleiss_kappa import FleissKappa
from .pearson import PearsonsContingencyCoefficient
from .theils_u import TheilsU
from .tschuprows import TschuprowsT

__all__ = ["CramersV", "FleissKappa", "PearsonsContingencyCoefficient", "TheilsU", "TschuprowsT"]
