"""torchtally's public faces that the reference site gives a page each (conf.py writes them), every
class of which gets its own metric page; tests/test_docs_catalogue.py walks the same list."""

FACES = {
    "classification": "Classification",
    "regression": "Regression",
    "aggregation": "Aggregation",
    "wrappers": "Wrappers",
    "segmentation": "Segmentation",
    "detection": "Detection",
    "retrieval": "Retrieval",
    "text": "Text",
    "image": "Image",
    "nominal": "Nominal",
    "clustering": "Clustering",
    "shape": "Shape",
    "multimodal": "Multimodal",
    "audio": "Audio",
    "video": "Video",
}
