# A package, so that these test modules (test_confmat.py, ...) do not clash with same-named
# test files elsewhere under tests/.
