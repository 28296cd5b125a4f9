"""``metric.plot()``: a quick matplotlib picture of a metric's result, as torchmetrics offers.

What is drawn follows the shape of the value:

* a number (0-d tensor): one point;
* a 1-D tensor (per class / label / output): one point per entry;
* a list of those (e.g. one ``compute()`` per epoch): one line per entry over the steps;
* a dict (a collection's results): one series per key;
* a 2-D tensor (a confusion matrix): a heatmap with the counts written in;
* a 3-D tensor (one matrix per label): a row of heatmaps;
* a curve, ``(x values, y values, thresholds)`` or per-class lists of them: lines.

matplotlib is imported only here, only when a plot is asked for.
"""

from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

import torch


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is optional
        raise ModuleNotFoundError("plot() needs matplotlib: pip install matplotlib") from exc
    return plt


def _figure(ax: Any, plt: Any) -> Tuple[Any, Any]:
    if ax is None:
        return plt.subplots()
    return ax.get_figure(), ax


def plot_value(
    val: Any,
    ax: Any = None,
    name: str = "",
    higher_is_better: Optional[bool] = None,
    lower_bound: Optional[float] = None,
    upper_bound: Optional[float] = None,
    curve_axes: Optional[Tuple[int, int, str, str]] = None,
) -> Tuple[Any, Any]:
    """Draw ``val`` (see the module docstring) on ``ax`` (a new figure when None); (fig, ax)."""
    plt = _pyplot()
    if curve_axes is not None and isinstance(val, tuple):
        return _curve(val, ax, name, curve_axes, plt)
    if isinstance(val, torch.Tensor) and val.dim() == 3:
        return _matrices(val, ax, name, plt)
    fig, ax = _figure(ax, plt)
    if isinstance(val, torch.Tensor) and val.dim() == 2:
        _heatmap(ax, val)
    elif isinstance(val, dict):
        for key, value in val.items():
            _series(ax, value, str(key))
        ax.legend()
    else:
        _series(ax, val, None)
    if lower_bound is not None or upper_bound is not None:
        ax.set_ylim(lower_bound, upper_bound)
    if higher_is_better is not None:
        ax.set_ylabel("higher is better" if higher_is_better else "lower is better")
    ax.set_title(name)
    return fig, ax


def _series(ax: Any, val: Any, label: Optional[str]) -> None:
    if isinstance(val, (list, tuple)):  # one value per step
        steps = torch.stack([torch.as_tensor(v).detach().float().cpu().reshape(-1) for v in val])
        for column in range(steps.shape[1]):
            ax.plot(
                range(len(val)),
                steps[:, column].tolist(),
                marker="o",
                label=label if steps.shape[1] == 1 else f"{label or ''} {column}".strip(),
            )
        ax.set_xlabel("step")
        return
    values = torch.as_tensor(val).detach().float().cpu().reshape(-1)
    ax.plot(range(values.numel()), values.tolist(), "o", label=label)
    if values.numel() > 1:
        ax.set_xlabel("index")


def _heatmap(ax: Any, matrix: torch.Tensor) -> None:
    data = matrix.detach().cpu()
    ax.imshow(data.float().tolist(), cmap="Blues")
    for (row, column), value in zip(_cells(data.shape), data.reshape(-1).tolist()):
        ax.text(column, row, f"{value:g}", ha="center", va="center")
    ax.set_xlabel("predicted")
    ax.set_ylabel("target")


def _cells(shape: Sequence[int]):
    return [(r, c) for r in range(shape[0]) for c in range(shape[1])]


def _matrices(val: torch.Tensor, ax: Any, name: str, plt: Any) -> Tuple[Any, Any]:
    count = val.shape[0]
    fig, axes = plt.subplots(1, count, squeeze=False) if ax is None else (ax.get_figure(), [[ax]] * count)
    for i in range(count):
        _heatmap(axes[0][i], val[i])
        axes[0][i].set_title(f"{name} {i}".strip())
    return fig, axes[0][0] if count == 1 else axes[0]


def _curve(
    val: Tuple[Any, ...], ax: Any, name: str, curve_axes: Tuple[int, int, str, str], plt: Any
) -> Tuple[Any, Any]:
    x_index, y_index, x_label, y_label = curve_axes
    fig, ax = _figure(ax, plt)
    xs, ys = val[x_index], val[y_index]
    if isinstance(xs, torch.Tensor) and xs.dim() == 1:
        xs, ys = [xs], [ys]
    for i, (x, y) in enumerate(zip(xs, ys)):
        ax.plot(x.detach().cpu().tolist(), y.detach().cpu().tolist(), label=None if len(xs) == 1 else str(i))
    if len(xs) > 1:
        ax.legend()
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(name)
    return fig, ax


class Plotting:
    """Mixin of Metric: ``plot()``, and torchmetrics' ``_plot()`` for a subclass's own ``plot``."""

    if TYPE_CHECKING:  # Metric's class attributes and compute (base/metric.py)
        higher_is_better: Optional[bool]
        plot_lower_bound: Optional[float]
        plot_upper_bound: Optional[float]
        plot_legend_name: Optional[str]
        _plot_curve_axes: Optional[Tuple[int, int, str, str]]

        def compute(self) -> Any: ...

    def plot(self, val: Any = None, ax: Any = None) -> Tuple[Any, Any]:
        """Draw ``val`` (default: ``compute()``; a list of results draws them over steps) with
        matplotlib on ``ax`` (a new figure when None); returns (figure, axes). See
        torchtally.base.plotting for what each kind of result looks like."""
        return plot_value(
            self.compute() if val is None else val,
            ax,
            type(self).__name__,
            self.higher_is_better,
            self.plot_lower_bound,
            self.plot_upper_bound,
            self._plot_curve_axes,
        )

    def _plot(self, val: Any = None, ax: Any = None) -> Tuple[Any, Any]:
        """torchmetrics' drawing helper for a subclass's ``plot`` (its docs' example is
        ``def plot(self, val=None, ax=None): return self._plot(val, ax)``): ``plot()``'s drawing,
        with ``plot_legend_name`` naming the entries of a 1-D result."""
        val = self.compute() if val is None else val
        legend = self.plot_legend_name
        if legend is not None and isinstance(val, torch.Tensor) and val.dim() == 1 and val.numel() > 1:
            val = {f"{legend} {i}": v for i, v in enumerate(val)}
        return Plotting.plot(self, val, ax)  # the drawing itself: a subclass's plot calls this one
