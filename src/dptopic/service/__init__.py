"""``dptopic serve``: a collection service for local-DP reports and FedLDA rounds.

Contributors randomize their documents on their own devices (:class:`dptopic.contributor.Randomizer`)
and upload only the reports; the server stores them durably, trains OLP-LDA on them in
mini-batches, exactly once, and runs FedLDA rounds. See ``docs/service.md``.
"""
from .config import ServiceConfig


def create_app(cfg: ServiceConfig, start_trainer: bool = True, freeze_gc: bool = True, setting_names=None):
    """The Starlette ASGI app (imported lazily: the web stack is the optional ``service`` extra).

    ``freeze_gc``: after start-up, move the objects alive then out of the garbage collector's reach
    (:func:`gc.freeze`), so that full collections under load stay short. ``setting_names``: how whoever starts the
    server names its settings, for the answers that name one (by default the fields of :class:`ServiceConfig`).
    """
    from .app import create_app as _create  # starlette: optional (the [service] extra); app loads it

    return _create(cfg, start_trainer=start_trainer, freeze_gc=freeze_gc, setting_names=setting_names)


__all__ = ["ServiceConfig", "create_app"]
