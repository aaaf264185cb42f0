"""Federated LDA with local differential privacy (FedLDA; Wang, Tong & Shi 2020). See ``docs/fedlda.md``."""
from .client import FedClient, RRPConfig, entries_per_update
from .messages import (ClientUpdate, MessageError, ModelBroadcast, decode_message, vocabulary_fingerprint)
from .server import FedServer

__all__ = ["FedClient", "FedServer", "RRPConfig", "entries_per_update", "ClientUpdate", "ModelBroadcast",
           "MessageError", "decode_message", "vocabulary_fingerprint"]
