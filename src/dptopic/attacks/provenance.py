"""What an audit audited, recorded so that its figures can never be shown beside another model's claim.

An audit re-runs a training procedure (LiRA's shadow models) on a corpus and attacks the shadow models; a released
model is never scored. ``audit.json`` names the procedure (the trainer's class and parameters), the saved model it
was read from with a fingerprint of that model, the corpus and how it was read, and the dptopic version;
a report page given the audit compares them with the model it reports.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np

from .lira import claim_caption, settings_text

EXECUTION_PARAMS = ("seed", "verbose", "n_jobs", "secure", "backend", "client", "parallel", "eval_every")
"""Parameters that change how a trainer runs, not what it computes or claims: left out of the procedure."""


def procedure_params(estimator) -> dict:
    """The estimator's parameters that define its training procedure (JSON values; execution settings left out)."""
    try:
        params = estimator.get_params(deep=False)
    except TypeError:
        params = estimator.get_params()
    except AttributeError:
        return {}
    return _jsonable({k: v for k, v in params.items() if k not in EXECUTION_PARAMS})


def _jsonable(obj):
    """``obj`` as it reads back from JSON (tuples as lists, NumPy numbers as Python ones, anything else as text)."""
    def default(o):
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    return json.loads(json.dumps(obj, default=default, sort_keys=True))


def model_fingerprint(model) -> str:
    """``sha256:`` of what the model releases: its class, vocabulary and topic-word matrix (the saved arrays, as
    float64), the same whatever folder it is loaded from or when."""
    h = hashlib.sha256()
    h.update(type(model).__name__.encode("utf-8") + b"\0")
    vocab = getattr(model, "vocabulary_", None)
    words = getattr(vocab, "words", vocab) or []
    h.update("\n".join(map(str, words)).encode("utf-8") + b"\0")
    phi = np.ascontiguousarray(np.asarray(model.components_, dtype="<f8"))
    h.update(str(phi.shape).encode("ascii") + b"\0" + phi.tobytes())
    return "sha256:" + h.hexdigest()


def audited_model(model, path) -> dict:
    """``settings["audited"]`` of an audit of a saved model."""
    return {"what": "saved model", "model": str(path), "class": type(model).__name__,
            "fingerprint": model_fingerprint(model), "params": procedure_params(model)}


def audited_procedure(algorithm: str, estimator) -> dict:
    """``settings["audited"]`` of an audit of a trainer's procedure (a trainer named with its settings)."""
    return {"what": "procedure", "algorithm": algorithm, "class": type(estimator).__name__,
            "params": procedure_params(estimator)}


def describe(audited: dict | None, corpus: dict | None, n_shadows: int | None = None, claim=None,
             models: str | None = None) -> str:
    """One line: what was audited and how, on which corpus (``settings["attacked"]``, shown by ``dptopic report``).

    An audit never scores a released model: it retrains shadow models with the procedure (class and parameters) and
    attacks those. For a saved model the procedure is the saved model's, and the line says that the saved model itself
    was not scored. ``claim``: the privacy report audited (a model's ``privacy_``); its claimed epsilon and unit are
    named (a trainer's parameters need not hold them: DP-SVI's hold its noise multiplier). ``models``: what was
    trained, where it was not shadow models (the one-run design's one model)."""
    audited = audited or {}
    shadows = models or (f"{n_shadows} shadow models" if n_shadows else "shadow models")
    on = f" on the corpus {corpus.get('spec')} ({corpus.get('read')})" if corpus else ""
    if claim is not None:
        on += f"; {claim_caption(claim)}"
    if audited.get("model"):
        return (f"the training procedure of the saved model {audited['model']} ({audited.get('class')},"
                f" {str(audited.get('fingerprint', ''))[:19]}…): its class and parameters, by retraining {shadows}"
                f"{on}; the released model itself was not scored")
    if audited:
        return (f"the training procedure {audited.get('algorithm')} ({audited.get('class')}:"
                f" {settings_text(audited.get('params'))}), by training {shadows}{on}")
    return f"a custom training function, by training {shadows}{on}"


def mismatch(audited: dict, model) -> str | None:
    """Why ``audited`` (an audit's record) is not an audit of ``model``; None when it is."""
    if audited.get("fingerprint"):
        mine = model_fingerprint(model)
        if audited["fingerprint"] != mine:
            return (f"it audited the training procedure of the saved model {audited.get('model')}"
                    f" ({audited.get('class')}, {str(audited['fingerprint'])[:19]}…), not of this one"
                    f" ({type(model).__name__}, {mine[:19]}…)")
        return None
    if audited.get("class") != type(model).__name__:
        return (f"it audited the procedure of {audited.get('class')} ({audited.get('algorithm')}), and this model is a"
                f" {type(model).__name__}")
    theirs, mine = audited.get("params") or {}, procedure_params(model)
    for k in sorted(set(theirs) | set(mine)):
        if k in theirs and k in mine and theirs[k] != mine[k]:
            return f"it audited {audited.get('class')} with {k}={theirs[k]!r}, and this model has {k}={mine[k]!r}"
    return None
