"""Image: the public functions (torchmetrics.functional.image's names and signatures).

One batch of images in, the metric out, computed from the same sums as the classes in
torchtally.image.
"""

from typing import List

from .gradients import image_gradients, total_variation
from .psnr import peak_signal_noise_ratio, peak_signal_noise_ratio_with_blocked_effect
from .spectral import error_relative_global_dimensionless_synthesis, spectral_angle_mapper

__all__: List[str] = [
    "image_gradients",
    "total_variation",
    "peak_signal_noise_ratio",
    "peak_signal_noise_ratio_with_blocked_effect",
    "spectral_angle_mapper",
    "error_relative_global_dimensionless_synthesis",
]
