"""The collection service in this process, for tests that speak to it over HTTP: ``InProcessServer`` runs the app
under a real uvicorn in a thread on 127.0.0.1 (no start-up checks, as a library caller of ``create_app``), ``_cfg`` a
small configuration, ``_body`` a randomized upload, ``_key`` a fresh idempotency key, ``_NoServer`` a uvicorn.Server
stand-in that runs ``dptopic serve``'s start-up checks and serves nothing."""
from __future__ import annotations

import threading
import time

from dptopic.accounting.local import f_from_epsilon
from dptopic.local import Randomizer
from dptopic.service.config import ServiceConfig

from service_helpers import free_port, http, make_data  # noqa: F401  (http, make_data: re-exported for the service tests)

_KEYS = iter(range(10 ** 6))


def _key() -> str:
    return f"upload-{next(_KEYS):06d}"


def _body(words, texts, eps: float = 2.0) -> bytes:
    return Randomizer(words, epsilon_word=eps, secure=True).randomize([t.split() for t in texts]).to_bytes(
        include_vocabulary=False)


class _NoServer:
    def __init__(self, config):
        self.started = False

    def run(self, sockets=None):
        self.started = True


class InProcessServer:
    """The service app under a real uvicorn in a thread of this process (no start-up checks: ``create_app`` as a
    library caller runs it), spoken to over HTTP on 127.0.0.1."""

    def __init__(self, cfg):
        import uvicorn

        from dptopic.service import create_app

        self.app = create_app(cfg, start_trainer=False, freeze_gc=False)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                    log_level="warning", access_log=False, lifespan="on"))

    @property
    def service(self):
        return self.app.state.service

    def __enter__(self) -> "InProcessServer":
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive(), "the in-process server did not start"
            assert time.monotonic() < deadline, "the in-process server did not start in 60 s"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def _cfg(words, database: str, **kw) -> ServiceConfig:
    return ServiceConfig(words, f_from_epsilon(2.0), database=database, n_topics=3, train_interval=0, **kw)
