"""What a review board reads: the privacy card (one JSON schema for every trainer) and the HTML report."""
from ..accounting.card import CARD_SCHEMA, privacy_card
from .html import render_report

__all__ = ["CARD_SCHEMA", "privacy_card", "render_report"]
