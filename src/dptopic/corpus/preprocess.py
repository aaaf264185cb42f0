"""Tokenisation and vocabulary construction (the setup of Zhao et al. 2020 Sec. VII-A, with the unstated details fixed as below).

* lowercase, alphabetic tokens only, at least ``min_length`` letters;
* scikit-learn's English stop-word list removed;
* vocabulary = the ``max_vocab`` most frequent words by total token count over
  the whole corpus (ties broken alphabetically), keeping words in at least
  ``min_df`` documents;
* out-of-vocabulary tokens dropped; documents left empty dropped (counted).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_TOKEN = re.compile(r"[a-z]+")


def stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@dataclass(frozen=True)
class Preprocessor:
    min_length: int = 3
    remove_stop_words: bool = True
    lowercase: bool = True

    def tokenize(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        toks = _TOKEN.findall(text) if self.lowercase else re.findall(r"[A-Za-z]+", text)
        sw = stop_words() if self.remove_stop_words else frozenset()
        return [t for t in toks if len(t) >= self.min_length and t not in sw]


def build_vocabulary(token_lists: list[list[str]], max_vocab: int | None = 1000,
                     min_df: int = 1) -> list[str]:
    tf: Counter = Counter()
    df: Counter = Counter()
    for toks in token_lists:
        tf.update(toks)
        df.update(set(toks))
    cands = [w for w in tf if df[w] >= min_df]
    cands.sort(key=lambda w: (-tf[w], w))
    if max_vocab is not None:
        cands = cands[:max_vocab]
    return cands
