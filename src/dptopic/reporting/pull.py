"""``dptopic pull``: a server's released model, fetched into a model folder and checked by loading it.

The fetching (HTTP, the server's configuration, the message's shape) is the contributor's client,
:func:`~dptopic.contributor.pull.fetch_model`; what is here is the check that needs the models, which sit above the
contributor's package: the model loads (:func:`~dptopic.models.blobs.model_from_blobs`) and is of the kind asked for,
then its own ``save`` writes the folder.
"""
from __future__ import annotations

from .._io import check_output_dir
from ..contributor.client import ServiceClient
from ..contributor.pull import fetch_model
from ..errors import CorruptModelError, DPTopicError
from ..models.blobs import model_from_blobs


def pull(server: str, out, overwrite: bool = False, client: ServiceClient | None = None, fed: bool = False) -> dict:
    """Fetch the server's active model into the model folder ``out`` (checked before any request; written
    atomically by the model's own ``save``, so a failure leaves nothing half-written).

    ``fed=True``: the FedLDA model instead (``GET /v1/fed/model``): the broadcast of the latest closed round, with the
    privacy report of a FedLDA with the server's protocol settings; ``round`` in the summary is that round's number."""
    check_output_dir(out, overwrite=overwrite)
    got = fetch_model(server, client, fed)
    try:
        model = model_from_blobs(got["model_json"], got["arrays"])
    except CorruptModelError as e:   # its reason, without the temporary folder it was checked in
        why = str(e).split(": ", 1)[-1].removesuffix("; re-save the model.").rstrip(".")
        raise DPTopicError(f"the server at {got['server']} sent a model that does not load ({why}): its database"
                           " may be damaged; tell the server's operator.") from None
    if fed and type(model).__name__ != "FedLDA":
        raise DPTopicError(f"the server at {got['server']} answered {got['path']} with a {type(model).__name__}"
                           " model, not a FedLDA one: is it a dptopic server?")
    path = model.save(out)
    if fed:
        return {"round": got["round"], "out": str(path), "class": type(model).__name__}
    return {"model_id": got["model_id"], "model_version": got["model_version"], "out": str(path),
            "class": type(model).__name__}
