"""What runs on a contributor's machine: everything here sees the contributor's own documents.

- :mod:`~dptopic.contributor.randomizer`: :class:`Randomizer`, word-presence reports (LP-LDA / OLP-LDA, Zhao et al.
  2020);
- :mod:`~dptopic.contributor.document_randomizer`: :class:`DocumentRandomizer`, one word pair per document by k-subset
  selection (LocalDocumentLDA);
- :mod:`~dptopic.contributor.fedlda`: :class:`FedClient`, a FedLDA participant (Wang, Tong & Shi 2020);
- :mod:`~dptopic.contributor.secure_sum`: a person's side of a secure-sum round in every mode (default, committee,
  cohorts), with every check of what the server says, and the HTTP client that runs it (``docs/secure_sum.md``);
- :mod:`~dptopic.contributor.client`: ``dptopic submit`` and ``dptopic fed-client`` over HTTP.
- :mod:`~dptopic.contributor.pull`: ``dptopic pull``'s fetch of a server's released model (loading it is
  :mod:`dptopic.reporting.pull`'s).

What both sides agree on (messages, file formats, plans, the pure maths and crypto) is :mod:`dptopic.protocol`; the
server is :mod:`dptopic.service`, which never imports this package, nor this package it. Names are imported on first
use, so that ``dptopic submit`` loads only what it runs.
"""
from .._lazy_names import lazy_names as _lazy_names

_EXPORTS = {"Randomizer": "randomizer", "DocumentRandomizer": "document_randomizer", "FedClient": "fedlda"}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = _lazy_names(__name__, _EXPORTS, globals())
