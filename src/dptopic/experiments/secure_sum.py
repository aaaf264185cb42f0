"""``dptopic experiment secure-sum``: a secure-sum round played by every person of a corpus over HTTP, beside the
central user-level trainer on the same documents (docs/secure_sum.md)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

from ..contributor.client import ServiceClient
from ..contributor.secure_client import person_bows, simulate_round
from ..evaluation import topic_coverage
from ..models import DocDPCooccurrence, model_from_blobs


def secure_sum_experiment(server: str, corpus, out, invitations, *, dropout: float = 0.1, token: str | None = None,
                          seed=None, client=None) -> dict:
    """A secure-sum round played by every person of ``corpus`` (read in the server's vocabulary with its
    ``user_ids``) against ``server`` (:func:`simulate_round`); the released model is saved to ``out/model`` and set
    beside a central user-level :class:`~dptopic.models.DocDPCooccurrence` of the same epsilon on the same documents
    (``recovery_of_central_topics``: outside the guarantee, computed from the private documents). The summary is
    written to ``out/summary.json`` and returned."""
    from .._io import atomic_write_json  # looked up when called: tests patch it at its source
    client = client or ServiceClient(server, retries=3)
    cfg = client.get_json("/v1/config")
    s = simulate_round(server, person_bows(corpus), invitations, dropout, token, seed=seed, client=client)
    doc = client.get_json("/v1/model")
    model = model_from_blobs(doc["model_json"], {k: base64.b64decode(v) for k, v in doc["arrays"].items()})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model")
    central = DocDPCooccurrence(n_topics=model.n_topics, epsilon=float(cfg["epsilon"]), delta=float(cfg["delta"]),
                                unit="user", seed=seed).fit(corpus, user_ids=corpus.user_ids)
    s["recovery_of_central_topics"] = topic_coverage(model, (central.components_, list(cfg["vocabulary"])))["coverage"]
    atomic_write_json(out / "summary.json", s)
    json.dumps(s)
    return s
