"""Image: the public functions (torchmetrics.functional.image's names and signatures).

One batch of images in, the metric out, computed from the same sums as the classes in
torchtally.image.
"""

from typing import List

from .dists import deep_image_structure_and_texture_similarity
from .gradients import image_gradients, total_variation
from .lpips import learned_perceptual_image_patch_similarity
from .d_lambda import quality_with_no_reference, spatial_distortion_index, spectral_distortion_index
from .perceptual_path_length import perceptual_path_length
from .psnr import peak_signal_noise_ratio, peak_signal_noise_ratio_with_blocked_effect
from .scc import spatial_correlation_coefficient
from .rmse_sw import relative_average_spectral_error, root_mean_squared_error_using_sliding_window
from .sam import error_relative_global_dimensionless_synthesis, spectral_angle_mapper
from .ssim import multiscale_structural_similarity_index_measure, structural_similarity_index_measure
from .uqi import universal_image_quality_index
from .vif import visual_information_fidelity

__all__: List[str] = [
    "peak_signal_noise_ratio",
    "peak_signal_noise_ratio_with_blocked_effect",
    "image_gradients",
    "total_variation",
    "spectral_angle_mapper",
    "error_relative_global_dimensionless_synthesis",
    "structural_similarity_index_measure",
    "multiscale_structural_similarity_index_measure",
    "visual_information_fidelity",
    "universal_image_quality_index",
    "root_mean_squared_error_using_sliding_window",
    "relative_average_spectral_error",
    "spatial_correlation_coefficient",
    "spectral_distortion_index",
    "spatial_distortion_index",
    "quality_with_no_reference",
    "learned_perceptual_image_patch_similarity",
    "deep_image_structure_and_texture_similarity",
    "perceptual_path_length",
]
