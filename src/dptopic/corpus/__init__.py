"""Corpus layer: CSR token arrays, vocabulary, loaders, preprocessing, synthetic data."""
from .corpus import Corpus, as_corpus
from .preprocess import Preprocessor, build_vocabulary
from .split import held_out_split, without_copies
from .synthetic import SyntheticLDA, lda_corpus
from .vocabulary import Vocabulary
from .wordlist import general_word_list

from_uci = Corpus.from_uci
from_jsonl = Corpus.from_jsonl
from_csv = Corpus.from_csv
from_directory = Corpus.from_directory
from_texts = Corpus.from_texts

__all__ = ["Corpus", "Vocabulary", "Preprocessor", "build_vocabulary", "lda_corpus", "SyntheticLDA",
           "as_corpus", "general_word_list", "from_uci", "from_jsonl", "from_csv", "from_directory", "from_texts",
           "held_out_split", "without_copies"]
