"""What a review board reads: the privacy card (one JSON schema for every trainer), the HTML report, and the card and
topics as terminal text (:mod:`.terminal`).

The names below are imported on first use (a module ``__getattr__``): the command line imports
:mod:`dptopic.reporting.terminal` on its start-up path, which must not load the card's accountants and numpy.
"""
import importlib

_HOMES = {"CARD_SCHEMA": "..accounting.card", "privacy_card": "..accounting.card", "render_report": ".html"}

__all__ = ["CARD_SCHEMA", "privacy_card", "render_report"]


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
