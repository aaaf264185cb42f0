"""dptopic: differentially private topic models (LDA) and privacy auditing."""
__version__ = "0.1.0"

from .corpus import Corpus, Vocabulary, lda_corpus  # noqa: E402
from .errors import DPTopicError  # noqa: E402
from .models import CDPLDA, DPSVI, HDPLDA, LDA, CDPLDAPlus, OnlineVB, load  # noqa: E402

__all__ = ["Corpus", "Vocabulary", "lda_corpus", "LDA", "HDPLDA", "CDPLDA", "CDPLDAPlus", "OnlineVB", "DPSVI", "load", "DPTopicError",
           "__version__"]
