"""dptopic: differentially private topic models (LDA) and privacy auditing."""
__version__ = "0.1.0"

from ._lazy_names import lazy_names as _lazy_names  # noqa: E402

# Names are imported on first use (PEP 562), so that the command's help and a Ctrl-C during the
# start-up of the command line never wait on (or show a traceback from) numba and scipy imports.
_EXPORTS = {"Corpus": ".corpus", "Vocabulary": ".corpus", "lda_corpus": ".corpus", "DPTopicError": ".errors",
            "SmallCorpusWarning": ".errors", "ForecastWarning": ".errors", "SeededNoiseWarning": ".errors",
            "DataVocabularyWarning": ".errors", "PublicOverlapWarning": ".errors",
            "LDA": ".models", "HDPLDA": ".models", "CDPLDA": ".models", "CDPLDAPlus": ".models", "load": ".models",
            "LPLDA": ".models", "OnlineLDA": ".models", "OLPLDA": ".models", "FedLDA": ".models",
            "OnlineVB": ".models", "DPSVI": ".models", "for_unit": ".training", "train": ".training", "TrainingResult": ".training",
            "DocDPEM": ".models", "DocDPCooccurrence": ".models", "LocalDocumentLDA": ".models", "SecureSumTopics": ".models",
            "CountVectorizer": ".corpus.vectorizer"}

__all__ = ["Corpus", "Vocabulary", "lda_corpus", "LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "load", "DPTopicError",
           "SmallCorpusWarning", "ForecastWarning", "SeededNoiseWarning", "DataVocabularyWarning", "PublicOverlapWarning",
           "LPLDA", "OnlineLDA", "OLPLDA", "FedLDA", "OnlineVB", "DPSVI", "DocDPEM", "DocDPCooccurrence", "LocalDocumentLDA", "SecureSumTopics", "for_unit",
           "train", "TrainingResult",
           "CountVectorizer",
           "__version__"]


__getattr__, __dir__ = _lazy_names(__name__, {k: v.lstrip('.') for k, v in _EXPORTS.items()}, globals())
