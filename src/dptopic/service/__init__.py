"""``dptopic serve``: a collection service for local-DP reports and FedLDA rounds.

Contributors randomize their documents on their own devices (:class:`dptopic.local.Randomizer`)
and upload only the reports; the server stores them durably, trains OLP-LDA on them in
mini-batches, exactly once, and runs FedLDA rounds. See ``docs/service.md``.
"""
from .config import ServiceConfig


def create_app(cfg: ServiceConfig, start_trainer: bool = True):
    """The Starlette ASGI app (imported lazily: the web stack is the optional ``service`` extra)."""
    from .app import create_app as _create

    return _create(cfg, start_trainer=start_trainer)


__all__ = ["ServiceConfig", "create_app"]
