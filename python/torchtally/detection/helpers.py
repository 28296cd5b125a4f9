"""At torchmetrics' path torchmetrics.detection.helpers, which holds its input validators and
the choice of COCO backend; torchtally's box checks are in functional/detection/boxes.py and it
needs no COCO backend (its matching is its own C kernel)."""
