"""``dptopic pull``: a server's released model, fetched into a model folder and checked by loading it.

The model is public (post-processing of what the server released); the transport is the contributor's
:class:`~dptopic.contributor.client.ServiceClient`, the check the model's own ``load``.
"""
from __future__ import annotations

import base64
import binascii

from .._io import check_output_dir
from ..contributor.client import ServiceClient, check_server_config
from ..errors import CorruptModelError, DPTopicError, ParameterError
from ..models.blobs import model_from_blobs


def pull(server: str, out, overwrite: bool = False, client: ServiceClient | None = None, fed: bool = False) -> dict:
    """Fetch the server's active model into the model folder ``out`` (checked before any request; written
    atomically by the model's own ``save``, so a failure leaves nothing half-written).

    ``fed=True``: the FedLDA model instead (``GET /v1/fed/model``): the broadcast of the latest closed round, with the
    privacy report of a FedLDA with the server's protocol settings; ``round`` in the summary is that round's number."""
    check_output_dir(out, overwrite=overwrite)
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

    try:
        model = model_from_blobs(meta, arrays)
    except CorruptModelError as e:   # its reason, without the temporary folder it was checked in
        why = str(e).split(": ", 1)[-1].removesuffix("; re-save the model.").rstrip(".")
        raise DPTopicError(f"the server at {client.server} sent a model that does not load ({why}): its database"
                           " may be damaged; tell the server's operator.") from None
    if fed and type(model).__name__ != "FedLDA":
        raise DPTopicError(f"the server at {client.server} answered {path} with a {type(model).__name__} model, not a"
                           " FedLDA one: is it a dptopic server?")
    path = model.save(out)
    if fed:
        rnd = doc.get("round")
        return {"round": rnd if isinstance(rnd, int) and not isinstance(rnd, bool) else None, "out": str(path),
                "class": type(model).__name__}
    return {"model_id": doc.get("model_id"), "model_version": doc.get("model_version"), "out": str(path),
            "class": type(model).__name__}
