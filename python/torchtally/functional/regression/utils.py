"""At torchmetrics' path torchmetrics.functional.regression.utils, which holds only private
helpers (shape checks); torchtally's input checks are in functional/regression/update.py."""
