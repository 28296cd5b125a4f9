"""At torchmetrics' path torchmetrics.functional.image.utils, which holds only private helpers
(Gaussian windows, padding); torchtally's are in functional/image/windows.py."""
