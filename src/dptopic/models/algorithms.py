"""``ALGORITHMS``: each trainer's name (``dptopic train --algorithm``) and its estimator class."""
from .docdp import DocDPEM
from .docdp_cooc import DocDPCooccurrence
from .fedlda import FedLDA
from .lda import LDA
from .lplda import LPLDA
from .online import OLPLDA
from .private import CDPLDA, CDPLDAPlus, HDPLDA
from .svi import DPSVI, OnlineVB

ALGORITHMS = {"lda": LDA, "cdp": CDPLDA, "cdp+": CDPLDAPlus, "hdp": HDPLDA, "lp": LPLDA, "olp": OLPLDA, "fed": FedLDA,
              "online-vb": OnlineVB, "svi": DPSVI, "docdp": DocDPEM,
              "docdp-cooc": DocDPCooccurrence}
