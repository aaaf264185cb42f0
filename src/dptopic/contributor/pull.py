"""``dptopic pull``'s client: a server's released model fetched over HTTP and checked as a message, before anything
reads it as a model.

The model is public (post-processing of what the server released). :func:`fetch_model` checks the server's
``/v1/config`` (:func:`~dptopic.contributor.client.check_server_config`), that it runs FedLDA rounds when their
model is asked for, and that the answer is a model's ``model.json`` text and its arrays (base64, decoded here); one
line naming the server otherwise. Loading the model (the check that it is one) is the models' own: this package sits
below them, so :func:`dptopic.reporting.pull.pull` loads and saves what this fetched.
"""
from __future__ import annotations

import base64
import binascii

from ..errors import DPTopicError, ParameterError
from .client import ServiceClient, check_server_config


def fetch_model(server: str, client: ServiceClient | None = None, fed: bool = False) -> dict:
    """The server's active model as a message: ``{"model_json": text, "arrays": {name: bytes}, "path", "server",
    "model_id", "model_version", "round"}`` (``round``: the FedLDA round's number, else None), after the checks of the
    module note. ``fed=True``: the FedLDA model instead (``GET /v1/fed/model``), the broadcast of the latest closed
    round."""
    client = client or ServiceClient(server)
    cfg = check_server_config(client.config(), client.server, "model")
    if fed and not cfg.get("fed"):
        raise ParameterError("the server at {server} runs no FedLDA rounds (it was started without an epsilon per"
                             " entry for them): there is no FedLDA model to pull; drop {fed} for its local-DP model.",
                             "fed", True, server=client.server)
    path = "/v1/fed/model" if fed else "/v1/model"
    doc = client.get_json(path)
    try:
        meta = doc["model_json"]
        arrays = {str(k): base64.b64decode(v, validate=True) for k, v in doc["arrays"].items()}
    except (KeyError, TypeError, AttributeError, binascii.Error, ValueError):
        raise DPTopicError(f"the server at {client.server} sent a malformed model (no model_json/arrays); is it a"
                           f" dptopic server?") from None
    if not isinstance(meta, str):
        raise DPTopicError(f"the server at {client.server} sent a malformed model (model_json is not the text of a"
                           " model.json); is it a dptopic server?")
    rnd = doc.get("round") if fed else None
    return {"model_json": meta, "arrays": arrays, "path": path, "server": client.server,
            "model_id": doc.get("model_id"), "model_version": doc.get("model_version"),
            "round": rnd if isinstance(rnd, int) and not isinstance(rnd, bool) else None}


__all__ = ["fetch_model"]
