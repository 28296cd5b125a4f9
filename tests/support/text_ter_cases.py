"""Sentences of the text edit-metric tests (tests/text/test_ter.py) in a module light
enough for spawned ranks to import."""

import random

WORDS = "the cat The Cat sat on a mat. mat , dog's 3.5 U.S. e.g. (it) “q” 猫 が いる 。 ！ &amp; x-1 Dr. ran".split()


def sentence(rng, longest=10):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, longest)))


def corpus(seed, n, longest=10):
    rng = random.Random(seed)
    preds = [sentence(rng, longest) for _ in range(n)]
    target = [[sentence(rng, longest) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    return preds, target


PREDS, TARGET = corpus(0, 24)
BATCHES = [(PREDS[i : i + 4], TARGET[i : i + 4]) for i in range(0, 16, 4)] + [(PREDS[16:23], TARGET[16:23])]
