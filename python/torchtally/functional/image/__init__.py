"""Image: the public functions (torchmetrics.functional.image's names and signatures).

One batch of images in, the metric out, computed from the same sums as the classes in
torchtally.image.
"""

from typing import List

from .ssim import multiscale_structural_similarity_index_measure, structural_similarity_index_measure
from .vif import visual_information_fidelity

__all__: List[str] = [
    "structural_similarity_index_measure",
    "multiscale_structural_similarity_index_measure",
    "visual_information_fidelity",
]
