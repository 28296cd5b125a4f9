"""``homogeneity_score``, ``completeness_score``, ``v_measure_score``
(torchmetrics.functional.clustering.homogeneity_completeness_v_measure's names): how far each
predicted cluster holds one target class (homogeneity), each class sits in one cluster
(completeness), and their weighted harmonic mean."""

from typing import Tuple

from torch import Tensor

from .utils import check_cluster_labels, contingency_rows, default_dtype, information, result

__all__ = ["homogeneity_score", "completeness_score", "v_measure_score", "hcv_from_table", "check_beta"]


def check_beta(beta: float) -> float:
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
        raise ValueError(f"beta: expected a positive float, got {beta!r}")
    return float(beta)


def hcv_from_table(table: Tensor, beta: float = 1.0) -> Tuple[float, float, float]:
    """scikit-learn's homogeneity_completeness_v_measure of a contingency table: all 1 with no
    samples; homogeneity 1 when the target has one class, completeness 1 when preds have one
    cluster; V 0 when both are 0."""
    if table.numel() == 0:
        return 1.0, 1.0, 1.0
    mi, h_preds, h_target, _, _ = information(table)
    homogeneity = mi / h_target if h_target else 1.0
    completeness = mi / h_preds if h_preds else 1.0
    if homogeneity + completeness == 0.0:
        return homogeneity, completeness, 0.0
    v = (1 + beta) * homogeneity * completeness / (beta * homogeneity + completeness)
    return homogeneity, completeness, v


def homogeneity_score(preds: Tensor, target: Tensor) -> Tensor:
    """Homogeneity of a clustering ``preds`` against the classes ``target``.

    >>> import torch
    >>> homogeneity_score(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1]))
    tensor(0.6667)
    """
    p, t = check_cluster_labels(preds, target)
    return result(hcv_from_table(contingency_rows(p, t))[0], p.device, default_dtype())


def completeness_score(preds: Tensor, target: Tensor) -> Tensor:
    """Completeness of a clustering ``preds`` against the classes ``target``.

    >>> import torch
    >>> completeness_score(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1]))
    tensor(0.4206)
    """
    p, t = check_cluster_labels(preds, target)
    return result(hcv_from_table(contingency_rows(p, t))[1], p.device, default_dtype())


def v_measure_score(preds: Tensor, target: Tensor, beta: float = 1.0) -> Tensor:
    """V-measure: ``(1 + beta) h c / (beta h + c)`` of homogeneity h and completeness c
    (scikit-learn's value: 0 when both are 0, where torchmetrics gives 1).

    >>> import torch
    >>> v_measure_score(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1]))
    tensor(0.5158)
    """
    beta = check_beta(beta)
    p, t = check_cluster_labels(preds, target)
    return result(hcv_from_table(contingency_rows(p, t), beta)[2], p.device, default_dtype())
