"""The base layer: Metric and MetricCollection, one part per file (metric.py's docstring maps
Metric's parts; collection.py, members.py and synced.py make up MetricCollection). The public
path of both is the package's top level: ``from torchtally import Metric, MetricCollection``.
"""
