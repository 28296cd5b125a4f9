"""Image: the public functions (torchmetrics.functional.image's names and signatures).

One batch of images in, the metric out, computed from the same sums as the classes in
torchtally.image.
"""

from typing import List

from .dists import deep_image_structure_and_texture_similarity
from .lpips import learned_perceptual_image_patch_similarity
from .path_length import perceptual_path_length
from .ssim import multiscale_structural_similarity_index_measure, structural_similarity_index_measure
from .vif import visual_information_fidelity

__all__: List[str] = [
    "structural_similarity_index_measure",
    "multiscale_structural_similarity_index_measure",
    "visual_information_fidelity",
    "learned_perceptual_image_patch_similarity",
    "deep_image_structure_and_texture_similarity",
    "perceptual_path_length",
]
