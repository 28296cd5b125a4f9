"""tests/with_torchvision/ runs in the second environment (`make avalanche-venv`, .venv-avalanche),
whose torch has a matching torchvision: the comparisons with torchmetrics' detection metrics,
which need torchvision's box operations. The main suite ignores this folder when torchvision is
not importable (tests/conftest.py); `make test` runs it there afterwards."""
