"""Image: the public functions (torchmetrics.functional.image's names and signatures).

One batch of images in, the metric out, computed from the same sums as the classes in
torchtally.image.
"""

from typing import List

from .pansharpening import quality_with_no_reference, spatial_distortion_index, spectral_distortion_index
from .scc import spatial_correlation_coefficient
from .sliding_window import relative_average_spectral_error, root_mean_squared_error_using_sliding_window
from .uqi import universal_image_quality_index

__all__: List[str] = []
__all__ += [
    "universal_image_quality_index",
    "root_mean_squared_error_using_sliding_window",
    "relative_average_spectral_error",
    "spatial_correlation_coefficient",
    "spectral_distortion_index",
    "spatial_distortion_index",
    "quality_with_no_reference",
]
