"""Vocabulary: a bijection between word strings and integer ids ``0..V-1``."""
from __future__ import annotations

from typing import Iterable, Sequence

from ..errors import DPTopicError


class Vocabulary:
    __slots__ = ("_words", "_index")

    def __init__(self, words: Iterable[str]):
        if isinstance(words, (str, bytes)):       # iterated, it would be a vocabulary of its letters
            raise DPTopicError(f"a vocabulary is a list of words, not a single string ({str(words)[:40]!r}): give a"
                               " list of words.")
        try:
            self._words: list[str] = [str(w) for w in words]
        except TypeError:
            raise DPTopicError(f"a vocabulary is a list of words, not a {type(words).__name__}.") from None
        for w in self._words:       # a model's word file holds one word per line: such a word could never be read back
            if not w.strip() or "\n" in w or "\r" in w or "\t" in w:
                raise DPTopicError(f"the word {w[:40]!r} is empty or holds a line break or tab, which no word list"
                                   " can hold: drop whitespace tokens (spaCy: skip tokens with token.is_space).")
        self._index = {w: i for i, w in enumerate(self._words)}
        if len(self._index) != len(self._words):
            seen, dup = set(), None
            for w in self._words:
                if w in seen:
                    dup = w
                    break
                seen.add(w)
            raise DPTopicError(f"vocabulary has duplicate word {dup!r}: each word must appear once.")

    def __len__(self) -> int:
        return len(self._words)

    def __iter__(self):
        return iter(self._words)

    def __contains__(self, word: str) -> bool:
        return word in self._index

    def __getitem__(self, i: int) -> str:
        return self._words[i]

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and self._words == other._words

    def __repr__(self) -> str:
        head = ", ".join(self._words[:5])
        return f"Vocabulary({len(self)} words: {head}{', ...' if len(self) > 5 else ''})"

    @property
    def words(self) -> list[str]:
        return list(self._words)

    def id(self, word: str) -> int:
        try:
            return self._index[word]
        except KeyError:
            raise DPTopicError(f"unknown word {word!r}: it is not in the vocabulary of {len(self)} words.") from None

    def get(self, word: str, default: int = -1) -> int:
        return self._index.get(word, default)

    def ids(self, words: Sequence[str]) -> list[int]:
        return [self._index.get(w, -1) for w in words]
