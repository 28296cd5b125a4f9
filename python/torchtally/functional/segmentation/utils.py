"""At torchmetrics' path torchmetrics.functional.segmentation.utils, which holds its building
blocks for surface distances (edges, distance transforms); torchtally computes those inside
``hausdorff_distance`` (functional/segmentation/hausdorff_distance.py, a C kernel)."""
