"""What the tests share, and nothing that is itself collected except the shared tester's own
test (test_metric_tester.py): the life-cycle and parity testers (metric_tester, parity_tester)
and the rank pools they run on (rank_pools),
the toy metrics, the catalogue of every public metric and functional form, the scikit-learn
references of classification, hypothesis' batch strategies, the regression and aggregation case
tables, the state comparison, the engine tests' metrics and checks, and the C core's input
makers, bad-input cases and SIMD-path runner (kernel_inputs, kernel_bad_inputs, simd_paths),
which tests/csrc, tests/kernels and tests/cuda all use. Tests import them by their full name
(``from support.metric_tester import check_metric``): tests/ is on sys.path, through
tests/conftest.py (and tests/distributed, tests/kernels and tests/cuda put it there too), and
processes a test spawns inherit that path, so what is pickled to them resolves as
``support.<module>``."""
