"""Tercom's tokenisation, as sacrebleu's TER (and torchmetrics' TranslationEditRate) applies it
to every sentence: trailing whitespace dropped, then optionally lowercased, normalised
(punctuation and symbols split off, XML entities decoded; with ``asian_support`` CJK characters
split one per token), punctuation removed, and whitespace collapsed. Returns the words.
"""

import re
from functools import lru_cache
from typing import List, Tuple

_CJK_PUNCT = "\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb"
_WIDE_PUNCT = "\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09"

# (pattern, replacement) in order; Tercom's Normalizer.java rules as sacrebleu writes them
_ENTITIES: Tuple[Tuple[str, str], ...] = (
    (r"\n-", ""),
    (r"\n", " "),
    (r"&quot;", '"'),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
)
_WESTERN: Tuple[Tuple[str, str], ...] = (
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),  # ASCII punctuation and symbols become words
    (r"'s ", r" 's "),
    (r"'s$", r" 's"),
    (r"([^0-9])([\.,])", r"\1 \2 "),  # a period or comma not inside a number
    (r"([\.,])([^0-9])", r" \1 \2"),
    (r"([0-9])(-)", r"\1 \2 "),
)
_ASIAN: Tuple[Tuple[str, str], ...] = (
    (r"([\u4e00-\u9fff\u3400-\u4dbf])", r" \1 "),  # CJK ideographs, one per word
    (r"([\u31c0-\u31ef\u2e80-\u2eff])", r" \1 "),
    (r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])", r" \1 "),
    (r"([\u3200-\u3f22])", r" \1 "),
    # kana runs at the start of the sentence, as Tercom (and sacrebleu) match them
    (r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])", r"\1 \2 "),
    (r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])", r"\1 \2 "),
    (r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])", r"\1 \2 "),
    (f"([{_CJK_PUNCT}])", r" \1 "),
    (f"([{_WIDE_PUNCT}])", r" \1 "),
)
_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")
_ASIAN_PUNCT = re.compile(f"[{_CJK_PUNCT}{_WIDE_PUNCT}]")


def _apply(rules: Tuple[Tuple[str, str], ...], sentence: str) -> str:
    for pattern, replacement in rules:
        sentence = re.sub(pattern, replacement, sentence)
    return sentence


@lru_cache(maxsize=1 << 16)
def words(sentence: str, normalize: bool, no_punctuation: bool, lowercase: bool, asian_support: bool) -> List[str]:
    """The Tercom words of ``sentence`` (a cached list: callers must not change it)."""
    sentence = sentence.rstrip()
    if lowercase:
        sentence = sentence.lower()
    if normalize:
        sentence = _apply(_WESTERN, f" {_apply(_ENTITIES, sentence)} ")
        if asian_support:
            sentence = _apply(_ASIAN, sentence)
    if no_punctuation:
        sentence = _PUNCT.sub("", sentence)
        if asian_support:
            sentence = _ASIAN_PUNCT.sub("", sentence)
    return sentence.split()
