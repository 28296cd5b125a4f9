"""At torchmetrics' path torchmetrics.functional.text.helper, which holds only private helpers
(its edit-distance classes); torchtally's edit distances run in the C core
(functional/text/error_counts.py)."""
