"""SacreBLEU's tokenizers as written here against sacrebleu 2.6's own (13a, zh, intl, char) and
torchmetrics' (all of those and 'none', lowercase too) on random lines of ASCII, punctuation,
HTML entities, digits with separators, CJK and other Unicode; the 'zh' character table code
point by code point."""

import random

import pytest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_char import TokenizerChar
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh
from torchmetrics.functional.text.sacre_bleu import _SacreBLEUTokenizer

from torchtally.functional.text import tokenizers

SACREBLEU = {"13a": Tokenizer13a(), "zh": TokenizerZh(), "intl": TokenizerV14International(), "char": TokenizerChar()}
PIECES = (
    [chr(c) for c in range(32, 127)]
    + list("éü漢字中。，「」€—“”…０９\n\t")
    + ["&quot;", "&amp;", "&lt;", "&gt;", "<skipped>", "-\n", "  ", "3.5", "1,000", "e-mail"]
)


def _lines(seed, n=1500):
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30))) for _ in range(n)]


@pytest.mark.parametrize("kind", sorted(SACREBLEU))
def test_tokens_match_sacrebleu(kind):
    ours, theirs = tokenizers.tokenizer(kind), SACREBLEU[kind]
    for line in _lines(1):
        assert ours(line) == theirs(line).split(), repr(line)


@pytest.mark.parametrize("kind", ["13a", "zh", "intl", "char", "none"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_tokens_match_torchmetrics(kind, lowercase):
    ours = tokenizers.tokenizer(kind, lowercase)
    for line in _lines(2, 600):
        assert ours(line) == list(_SacreBLEUTokenizer.tokenize(line, kind, lowercase)), repr(line)


def test_zh_character_table_is_sacrebleus():
    ours = [c for c in range(0x30000) if tokenizers._CJK.fullmatch(chr(c))]
    theirs = [c for c in range(0x30000) if TokenizerZh._is_chinese_char(chr(c))]
    assert ours == theirs
    assert len(theirs) > 20000


def test_unknown_and_missing_tokenizers():
    with pytest.raises(ValueError, match="tokenize: expected one of"):
        tokenizers.check_tokenize("moses")
    with pytest.raises(ModuleNotFoundError, match="pip install mecab-python3 ipadic"):
        tokenizers.check_tokenize("ja-mecab")
