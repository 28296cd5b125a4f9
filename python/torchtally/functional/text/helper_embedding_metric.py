"""At torchmetrics' path torchmetrics.functional.text.helper_embedding_metric, which holds the
datasets BERTScore and InfoLM batch their sentences with; torchtally batches them in
functional/text/embedding_models.py."""
