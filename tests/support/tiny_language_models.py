"""A tiny randomly initialised BERT and its word-piece tokenizer, saved to a local folder, so
that torchmetrics and torchtally load the same model without any download."""

import os

import torch

WORDS = (
    "hello there general kenobi master the cat sat on mat a dog is here he read book because was interested in "
    "world history big small red blue"
).split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]


def save_tiny_bert(folder: str, masked_lm: bool = False, seed: int = 0) -> str:
    """Write a 2-layer BERT (hidden size 32) and its tokenizer to ``folder``; returns it."""
    from transformers import BertConfig, BertForMaskedLM, BertModel, BertTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()
    os.makedirs(folder, exist_ok=True)
    vocab_file = os.path.join(folder, "vocab.txt")
    with open(vocab_file, "w") as handle:
        handle.write("\n".join(VOCAB) + "\n")
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    model = (BertForMaskedLM if masked_lm else BertModel)(config)
    model.save_pretrained(folder)
    BertTokenizer(vocab_file).save_pretrained(folder)
    return folder
