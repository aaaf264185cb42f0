"""Clients of the collection service: ``dptopic submit`` and ``dptopic fed-client``.

The raw documents never leave the process: ``submit`` randomizes them locally with the
server's public vocabulary and ``f`` (coins from the OS CSPRNG) and uploads only the packed
reports; ``fed-client`` sends only RRP-perturbed FedLDA updates. Every upload carries an
idempotency key that is reused, with the very same bytes, on each retry, so a retry after a
lost acknowledgement is never counted twice and the reports are never randomized twice.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import math
import os
import random
import secrets
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import fields as dataclass_fields
from pathlib import Path
from urllib.parse import urlsplit

from .._io import atomic_write_bytes, load_json
from ..accounting.verify import fmt_epsilon
from ..errors import MISSING, DPTopicError, ParameterError
from ..protocol import codec
from ..protocol.codec import DEFAULT_MAX_EPSILON
from . import kinds

RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
#: error codes of a retryable status that retrying cannot cure (the server's database refuses its writes)
PERMANENT_CODES = frozenset({"storage_misconfigured"})
#: a FedLDA update refused as ``stale_round`` (its round closed while it was computed) is redone for the next round at
#: most this many times in a row, after pauses of STALE_PAUSE, 2 STALE_PAUSE, ... (at most STALE_MAX_PAUSE) seconds,
#: each shortened by a random factor in [0.5, 1] (OS entropy: the clients that missed one round do not all come back
#: at once); then the participant gives up in one line. Every redone update is a new one: it spends epsilon too.
STALE_RETRIES = 5
STALE_PAUSE = 0.5
STALE_MAX_PAUSE = 8.0
_JITTER = random.SystemRandom()     # the OS's entropy: no generator that draws privacy noise is touched
#: OpenSSL's reasons for a TLS handshake answered in plain HTTP
_PLAIN_HTTP_SSL_REASONS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"})


class ServerError(DPTopicError):
    """The server refused a request (4xx) or stayed unavailable through every retry."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


class ServiceClient:
    """A small HTTP client with retries (exponential backoff with jitter), over ``urllib``.

    ``keep_alive``: keep one HTTP/1.1 connection open between requests (``http.client``) instead of one connection a
    request, for a client that sends many small requests to one server (a secure-sum round); a connection the server
    closed in between is opened again once, and a proxy named in the environment is used as ``urllib`` would (one
    connection a request)."""

    def __init__(self, server: str, timeout: float = 30.0, retries: int = 8, backoff: float = 0.2,
                 max_backoff: float = 5.0, keep_alive: bool = False):
        if not isinstance(server, str) or not server.startswith(("http://", "https://")):
            raise DPTopicError(f"invalid server URL {server!r}: use http://HOST:PORT or https://HOST:PORT.")
        try:
            parts = urlsplit(server)
            ok = bool(parts.hostname) and (parts.port is None or parts.port > 0)
            credentials = parts.username is not None or parts.password is not None
            # a space or control character (http.client refuses them), and a host name that cannot be a DNS name
            # (a label over 63 characters): refused here, in one line, rather than by the first request
            ok = ok and not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in server)
            if ok:
                parts.hostname.encode("idna")
        except (ValueError, UnicodeError):  # a malformed IPv6 host, a port that is not a number, a bad host name
            ok, credentials = False, "@" in server
        if credentials:         # never echoed: the part before '@' may be a password
            raise DPTopicError("invalid server URL: it carries a user name or password (USER:PASSWORD@HOST), which"
                               " dptopic does not send; use http://HOST:PORT or https://HOST:PORT.")
        if not ok:
            raise DPTopicError(f"invalid server URL {server!r}: use http://HOST:PORT or https://HOST:PORT.")
        self.server = server.rstrip("/")
        self.timeout, self.retries, self.backoff, self.max_backoff = timeout, retries, backoff, max_backoff
        self.attempts = 0
        self.keep_alive = keep_alive
        self._conn = None

    def _path_hint(self, status: int) -> str:
        """For a 404 from a server URL that carries a path (``http://host:8000/v1``): the endpoints already start
        with ``/v1``, so say which URL to give instead."""
        parts = urlsplit(self.server)
        if status != 404 or parts.path in ("", "/"):
            return ""
        return (f" (the server URL has a path, {parts.path!r}; give the server's root, e.g."
                f" {parts.scheme}://{parts.netloc}, unless a proxy serves dptopic under that path)")

    def _direct(self) -> bool:
        """Whether requests may go straight to the server on a kept connection: no proxy in the environment for it."""
        parts = urlsplit(self.server)
        return not urllib.request.getproxies().get(parts.scheme) or bool(urllib.request.proxy_bypass(parts.hostname))

    def _kept(self, method: str, path: str, body: bytes | None, headers: dict):
        """One request on the kept connection (opened on first use; opened again once if the server closed it while
        idle: nothing was read from a closed connection, and a secure-sum message sent twice is a replay)."""
        parts = urlsplit(self.server)
        for again in (False, True):
            if self._conn is None:
                if parts.scheme == "https":
                    self._conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=self.timeout,
                                                             context=ssl.create_default_context())
                else:
                    self._conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
            try:
                self._conn.request(method, parts.path.rstrip("/") + path, body=body, headers=headers)
                r = self._conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if again:
                    raise
                continue
            except ssl.SSLError as e:       # as urllib reports it (the plain-HTTP hint reads its reason)
                self.close()
                raise urllib.error.URLError(e) from None
            except OSError:
                self.close()
                raise
            except http.client.HTTPException as e:      # a reply cut off or malformed: retried as a lost connection
                self.close()
                raise ConnectionError(f"{type(e).__name__}: {e}") from None
            if r.will_close:
                self.close()
            return r.status, dict(r.headers), data

    def close(self) -> None:
        """Close the kept connection (a later request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _once(self, method: str, path: str, body: bytes | None, headers: dict):
        if self.keep_alive and self._direct():
            self.attempts += 1
            return self._kept(method, path, body, headers)
        req = urllib.request.Request(self.server + path, data=body, method=method, headers=headers)
        self.attempts += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers or {}), e.read()

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        """Send with retries on connection errors and 408/429/5xx; raise :class:`ServerError` on 4xx, and on a 5xx
        whose code says that retrying cannot help (``storage_misconfigured``)."""
        headers = dict(headers or {})
        last, answered, error = "no attempt", None, None     # answered: (status, code) of the last reply
        for attempt in range(self.retries + 1):
            try:
                status, rh, data = self._once(method, path, body, headers)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
                last, answered, error = f"{type(e).__name__}: {getattr(e, 'reason', e)}", None, e
            else:
                if status < 400:
                    return status, rh, data
                code, msg = _error_of(data, status)
                if status not in RETRY_STATUS or code in PERMANENT_CODES:
                    raise ServerError(f"the server refused {method} {path}: {status} {code}: {msg}"
                                      f"{self._path_hint(status)}", status, code)
                last, answered, error = f"{status} {code}: {msg}", (status, code), None
            if attempt < self.retries:
                time.sleep(min(self.max_backoff, self.backoff * 2 ** attempt) * (0.5 + random.random() / 2))
        tried = f"{method} {path} failed after {self.retries + 1} attempt{'s' if self.retries else ''}"
        if answered is not None:    # it is running: say what it answered, not "is it running?"
            raise ServerError(f"{tried}: the server at {self.server} answered {last} (it is running but could not"
                              " serve the request: try again later, or ask its operator).", *answered)
        if self._plain_http(error):
            plain = "http://" + self.server[len("https://"):]
            raise ServerError(f"{tried} ({last}): the server at {self.server} speaks plain HTTP, not TLS: give its"
                              f" address as {plain} (or put it behind a TLS reverse proxy).")
        raise ServerError(f"{tried} ({last}); is the server at {self.server} running?")

    def _plain_http(self, error) -> bool:
        """Whether ``error`` (the last attempt's) is a TLS handshake that got a plain-HTTP reply: an https:// URL for
        a server that speaks HTTP (OpenSSL says WRONG_VERSION_NUMBER; newer releases, record layer failure or packet
        length too long)."""
        reason = getattr(error, "reason", error)
        if not self.server.startswith("https://") or not isinstance(reason, ssl.SSLError):
            return False
        name = str(getattr(reason, "reason", "") or "").upper()
        text = str(reason).lower()
        return name in _PLAIN_HTTP_SSL_REASONS or "wrong version number" in text or "record layer failure" in text

    def _json_object(self, method: str, path: str, data: bytes) -> dict:
        """A reply's body as the JSON object every dptopic endpoint answers with; anything else (a proxy's HTML
        page, a cut-off body) is one line naming what came back."""
        try:
            doc = load_json(data.decode("utf-8"), f"the reply to {method} {path}")
        except (UnicodeDecodeError, ValueError):
            start = data[:40].decode("utf-8", errors="replace").split()
            raise ServerError(f"{self.server} answered {method} {path} with something that is not JSON"
                              f" ({' '.join(start)[:40]!r}...): is it a dptopic server, or a proxy's page?") from None
        if not isinstance(doc, dict):
            raise ServerError(f"{self.server} answered {method} {path} with a JSON {type(doc).__name__}, not an"
                              " object: is it a dptopic server?")
        return doc

    def get_json(self, path: str) -> dict:
        _, _, data = self.request("GET", path)
        return self._json_object("GET", path, data)

    def post_bytes(self, path: str, body: bytes, key: str, extra: dict | None = None) -> dict:
        headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": key, **(extra or {})}
        _, _, data = self.request("POST", path, body, headers)
        return self._json_object("POST", path, data)

    def config(self) -> dict:
        """The server's ``/v1/config`` as it came (a JSON object); :func:`check_server_config` checks the fields a
        client reads."""
        return self.get_json("/v1/config")


API_VERSION = "v1"


def _shown(value) -> str:
    """A value of a server's configuration, for an error line: its JSON, at most 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _config_error(server: str, key: str, value, expected: str, missing: bool = False) -> DPTopicError:
    got = f"has no {key} ({expected})" if missing else f"has {key} = {_shown(value)}, where this dptopic expects {expected}"
    return DPTopicError(f"the /v1/config of {server} {got}: nothing was randomized or sent; upgrade dptopic (or the"
                        " server).")


def _positive_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def check_server_config(cfg, server: str, reads: str = "reports") -> dict:
    """A server's ``/v1/config`` (``cfg``), checked before anything is randomized or sent: every client runs it, and
    each refusal is one line that names the server and the key. Every client checks ``api_version`` (this dptopic
    speaks ``v1``) and that ``fed`` is an object or null; then ``reads`` says what else the client reads:

    * ``"reports"`` (``submit``): the vocabulary and its fingerprint, the upload limits, the report kind, its format
      (name and version) and the kind's randomizer settings (``f``, ``epsilon_doc``);
    * ``"fed"`` (``fed-client``): the vocabulary and its fingerprint and every FedLDA setting it reads
      (:func:`fed_settings`);
    * ``"model"`` (``pull``): nothing more.

    Returns ``cfg``."""
    if not isinstance(cfg, dict):
        raise DPTopicError(f"the server at {server} answered /v1/config with a JSON {type(cfg).__name__}, not an"
                           " object: is it a dptopic server?")
    version = cfg.get("api_version")
    if version != API_VERSION:
        said = "names no API version (api_version)" if version is None else f"speaks API {_shown(version)}"
        raise DPTopicError(f"the server at {server} {said} in its /v1/config, and this dptopic speaks"
                           f" {API_VERSION!r}: nothing was randomized or sent; upgrade dptopic (or the server).")
    if not (cfg.get("fed") is None or isinstance(cfg.get("fed"), dict)):
        raise _config_error(server, "fed", cfg["fed"], "an object of FedLDA settings, or null")
    if reads not in ("reports", "fed"):
        return cfg
    got = cfg.get("report_format")
    if reads == "reports" and not isinstance(got, dict):
        raise _config_error(server, "report_format", got, "an object naming the report format",
                            "report_format" not in cfg)
    words = cfg.get("vocabulary")
    if not isinstance(words, list) or len(words) < 2 or not all(isinstance(w, str) for w in words):
        raise _config_error(server, "vocabulary", words, "a list of at least 2 words", "vocabulary" not in cfg)
    if codec.vocabulary_fingerprint(words) != cfg.get("vocabulary_sha256"):
        raise DPTopicError(f"the vocabulary in the /v1/config of {server} does not match its fingerprint"
                           " (vocabulary_sha256): refusing to randomize with it; nothing was sent.")
    if reads == "fed":
        fed_settings(cfg, server)
        return cfg
    _check_report_settings(cfg, server, got, words)
    return cfg


def _check_report_settings(cfg: dict, server: str, got: dict, words: list) -> None:
    """:func:`check_server_config`'s checks for ``submit``: the upload limits, the report kind, its format (``got``)
    and the kind's randomizer settings over ``words``, each refusal one line naming the server."""
    for key in ("max_reports_per_request", "max_body_bytes"):
        if not _positive_int(cfg.get(key)):
            raise _config_error(server, key, cfg.get(key), "a positive integer", key not in cfg)
    kind = cfg.get("report_kind", "word")
    if kind not in kinds.NAMES:
        raise DPTopicError(f"the server at {server} takes reports of kind {_shown(kind)} (report_kind), which this"
                           f" dptopic cannot write (it writes {', '.join(repr(n) for n in kinds.NAMES)}): nothing was"
                           " randomized or sent; upgrade dptopic.")
    expected = codec.report_format(kind)
    if got.get("name") != expected["name"] or got.get("version") != expected["version"]:
        raise DPTopicError(f"the server at {server} takes {kind} reports in format {_shown(got.get('name'))}"
                           f" v{_shown(got.get('version'))} (report_format), and this dptopic writes them in"
                           f" {expected['name']!r} v{expected['version']}: nothing was randomized or sent; upgrade"
                           " dptopic (or the server).")
    try:        # the kind's randomizer checks its own settings (f, epsilon_doc); it draws nothing when built
        kinds.get(kind).randomizer(list(words), cfg)
    except KeyError as e:
        raise _config_error(server, str(e.args[0]), None, f"a setting {kind} reports are randomized with",
                            missing=True) from None
    except (DPTopicError, TypeError, ValueError) as e:
        raise DPTopicError(f"the server at {server} asks for {kind} reports with settings this dptopic refuses"
                           f" ({' '.join(str(e).split()).rstrip('.')}): nothing was randomized or sent; upgrade"
                           " dptopic (or the server).") from None


#: FedLDA settings a server must send (the others have RRPConfig's defaults)
_FED_REQUIRED = ("n_topics", "epsilon_per_entry")


def fed_settings(cfg: dict, server: str):
    """``(RRPConfig, report words)``: the FedLDA protocol of a server's ``/v1/config`` (``cfg["fed"]``), every field a
    participant reads checked (type and range, then that the protocol can run on the report words), with a one-line
    refusal that names the server and the key ``fed.NAME``."""
    from ..protocol.fedlda import (
        RRPConfig,  # start-up: protocol.fedlda loads numpy
        protocol_value_rule,
    )
    from ..protocol.fedlda import check_config as check_protocol_config  # (as above)

    fed = cfg.get("fed")
    if not isinstance(fed, dict):
        raise DPTopicError(f"the server at {server} runs no FedLDA rounds (it was started without FedLDA's epsilon"
                           " per entry).")
    words = cfg["vocabulary"]
    report_words = fed.get("report_words")
    if report_words is None:
        report_words = len(words)
    elif not _positive_int(report_words) or report_words > len(words):
        raise _config_error(server, "fed.report_words", report_words,
                            f"an integer in [1, {len(words)}] (the words of the vocabulary the reports range over)")
    renamed = {new: old for old, new in codec.FED_WIRE_RENAMED.items()}
    settings = {}
    for f in dataclass_fields(RRPConfig):
        key = f.name if f.name in fed or renamed.get(f.name) not in fed else renamed[f.name]
        if key not in fed:
            if f.name in _FED_REQUIRED:
                raise _config_error(server, f"fed.{f.name}", None, "a setting every FedLDA participant reads",
                                    missing=True)
            continue
        rule = protocol_value_rule(f.name, fed[key])
        if rule is not None:
            raise _config_error(server, f"fed.{key}", fed[key], rule)
        settings[f.name] = fed[key]
    try:
        rrp = RRPConfig(**settings)
        check_protocol_config(rrp, int(report_words))
    except DPTopicError as e:
        raise DPTopicError(f"the FedLDA settings in the /v1/config of {server} cannot run on its {report_words} report"
                           f" words ({' '.join(str(e).split()).rstrip('.')}): nothing was randomized or sent; tell"
                           " the server's operator.") from None
    limit = cfg.get("max_body_bytes")
    if _positive_int(limit):    # an update the server would refuse as too large is neither drawn nor sent
        words_each = max(1, rrp.report_size(int(report_words))) if rrp.exclusion == "none" else 1
        least = 4 * rrp.n_entries * (words_each + 1)     # its arrays alone: int32 labels and words, one row per entry
        if least > limit:
            raise DPTopicError(f"the FedLDA settings in the /v1/config of {server} ask for updates of {rrp.n_entries}"
                               f" entries of {words_each} word{'s' if words_each != 1 else ''} (at least {least} bytes),"
                               f" more than its max_body_bytes ({limit}) lets an upload hold: every update would be"
                               " refused after it left this device; nothing was randomized or sent; tell the server's"
                               " operator.")
    return rrp, int(report_words)


def _error_of(data: bytes, status: int) -> tuple[str, str]:
    try:
        err = json.loads(data)["error"]
        return str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        return "http_error", f"HTTP {status}"


def new_key() -> str:
    return secrets.token_urlsafe(24)


def _chunks(n: int, size: int):
    for a in range(0, n, size):
        yield a, min(n, a + size)


def check_max_epsilon(max_epsilon) -> float:
    if isinstance(max_epsilon, bool) or not isinstance(max_epsilon, (int, float)) or not (
            max_epsilon > 0 and math.isfinite(max_epsilon)):
        raise DPTopicError(f"invalid max_epsilon={max_epsilon!r}: give the largest epsilon per report you accept, a"
                           " positive number.")
    return float(max_epsilon)


def _refuse_above(asked: float, limit: float, what: str, server: str, parameter: str = "max_epsilon") -> None:
    """The contributor's own limit (``parameter``): a server is not trusted, so it does not choose how little the
    reports hide."""
    if asked > limit * (1 + 1e-12):
        raise ParameterError("{url} asks for reports at {what} = {asked:.4g}, above your limit of {value:g}"
                             " ({parameter}): reports at that epsilon hide little of your text; nothing was randomized"
                             " or sent. Raise the limit only if you accept it.", parameter, limit, url=server,
                             what=what, asked=asked)


def submit(server: str, corpus, contributor: str | None = None, chunk_reports: int | None = None,
           client: ServiceClient | None = None, max_epsilon: float = DEFAULT_MAX_EPSILON, state=None) -> dict:
    """Randomize ``corpus`` (a :class:`~dptopic.corpus.Corpus` of the contributor's documents)
    locally and upload the reports; returns a summary (reports sent, epsilon per document, ...).

    ``max_epsilon``: the largest epsilon per report the contributor accepts (per word for word-level reports, per
    document for document-level ones); a server that asks for more is refused before anything is randomized.
    ``contributor``: the pseudonym (checked before anything is randomized; None: the one kept for this server in
    ``state``, else a fresh random one).

    ``state`` (a file, or a folder): where the randomized reports are kept, with each upload's idempotency key and
    which servers acknowledged it, before the first upload leaves the device. A run stopped part-way (a server that
    went away, a killed process) is finished by running it again on the same documents: the kept reports are sent
    under their kept keys (the server answers an upload it stored before as a replay), and nothing is randomized
    again, which would spend the documents' epsilon a second time. A run on documents whose reports a server
    acknowledged sends it nothing. The reports are kept per set of documents and report settings, whatever the
    server's address (``localhost`` and ``127.0.0.1`` are one server: the kept bytes and keys are replayed), and a
    pseudonym is kept per server address, so that later runs are tallied under the same contributor. A replayed
    upload is answered with the pseudonym the server holds for it (only the uploader, who holds its key and bytes,
    gets a replay): when that differs from the one sent (the reports went to this server before under another
    address), it becomes this run's and this address's pseudonym, so the rest is sent under it and the summary's
    ``contributor`` is the one the server tallies (``contributor_from_server`` says so). ``replayed_reports``: those
    of ``reports`` the server had stored before (it stored nothing for them); ``stored_reports``: the rest. Without
    ``state`` every run randomizes anew under a fresh pseudonym."""
    from ..corpus import Vocabulary  # start-up: corpus loads numba

    limit = check_max_epsilon(max_epsilon)
    if contributor is not None and not codec.PSEUDONYM.fullmatch(str(contributor)):
        raise DPTopicError(f"invalid pseudonym {str(contributor)[:40]!r}: it must be {codec.PSEUDONYM_RULE}; leave it"
                           " out for a random one.")
    if state is not None and Path(state).is_file():     # a file that is not one is refused before the server is asked
        _load_submit_state(Path(state))
    client = client or ServiceClient(server)
    cfg = check_server_config(client.config(), client.server, "reports")
    vocab = Vocabulary(cfg["vocabulary"])
    kind = kinds.get(cfg.get("report_kind", "word"))
    rz = kind.randomizer(vocab, cfg)
    eps = kind.epsilons(rz)
    if eps["epsilon_word"] is not None:
        _refuse_above(eps["epsilon_word"], limit, "eps_word (per word)", client.server)
    else:
        _refuse_above(eps["epsilon_doc"], limit, "eps_doc (per document)", client.server)
    local = corpus if corpus.vocabulary == vocab else corpus.restrict(vocab, drop_empty=False)
    settings = {"vocabulary_sha256": cfg["vocabulary_sha256"], "report_kind": kind.name,
                "epsilon_word": eps["epsilon_word"], "epsilon_doc": eps["epsilon_doc"]}
    kept = path = None
    if state is not None:
        path, kept = _find_submit_state(state, settings, local)
    if kept is None:
        kept = _randomized(kind, rz, local, cfg, settings, chunk_reports, state, path)
    here = client.server
    contributor = _pseudonym(kept, here, contributor, state, path)
    counts, contributor, held_by_server = _send_uploads(client, kept, here, contributor, state, path)
    return {**counts, "n_documents": kept["n_reports"], "contributor": contributor,
            "contributor_from_server": held_by_server, "report_kind": kind.name,
            **kind.epsilons(rz), "state": None if path is None else str(path),
            "documents_without_vocabulary_words": int((local.doc_lengths == 0).sum()),
            "documents_with_fewer_than_two_vocabulary_words": int((local.doc_lengths < 2).sum()),
            "vocab_size": len(vocab), "attempts": client.attempts}


def _send_uploads(client, kept: dict, here: str, contributor: str, state, path) -> tuple:
    """:func:`submit`'s kept uploads sent to ``here`` under ``contributor`` (those it acknowledged before skipped),
    the acknowledged ones written to the state file every :data:`STATE_WRITE_INTERVAL` seconds, at the end and on an
    error (:func:`_upload_failure` says what was acknowledged). ``(the summary's counts, the pseudonym the server
    tallies them under, whether the server named it)``: a replay answered with another pseudonym makes it this run's,
    kept from then on."""
    acked = set(kept["acknowledged"].get(here, []))
    sent = replayed = replayed_reports = already = uploads = 0
    held_by_server = False
    last_write = time.monotonic()

    def keep_acknowledged() -> None:
        """Write which uploads this server acknowledged to the state file (a rerun sends only the others)."""
        if state is not None:
            kept["acknowledged"][here] = sorted(acked)
            _write_submit_state(path, kept)

    try:
        for i, up in enumerate(kept["uploads"]):
            if i in acked:
                already += up["reports"]
                continue
            ack = client.post_bytes("/v1/reports", up["body"], up["key"], {"Dptopic-Contributor": contributor})
            n = ack.get("reports")
            if isinstance(n, bool) or not isinstance(n, int):
                raise ServerError(f"{client.server} acknowledged an upload without a count of reports: is it a"
                                  " dptopic collection server?")
            sent += n
            uploads += 1
            if ack.get("replayed"):
                replayed += 1
                replayed_reports += n
                held = ack.get("contributor")
                # an earlier run stored these reports (through another address of this server, say) under the
                # pseudonym the server answers with: that is the one they are tallied under, so it is the one to
                # keep, print and send the rest under, or one person would be tallied as two contributors
                if isinstance(held, str) and codec.PSEUDONYM.fullmatch(held) and held != contributor:
                    contributor, held_by_server = held, True
                    if state is not None:
                        _keep_contributor(kept, here, contributor, state, path)
            acked.add(i)
            if time.monotonic() - last_write > STATE_WRITE_INTERVAL:
                keep_acknowledged()
                last_write = time.monotonic()
    except (DPTopicError, KeyboardInterrupt) as e:
        keep_acknowledged()
        raise _upload_failure(e, sent + already, kept, path) from None
    if uploads:
        keep_acknowledged()
    return ({"reports": sent, "uploads": uploads, "replayed_acks": replayed, "replayed_reports": replayed_reports,
             "stored_reports": sent - replayed_reports, "already_acknowledged": already}, contributor, held_by_server)


def _upload_failure(e: BaseException, acknowledged: int, kept: dict, path) -> BaseException:
    """What :func:`submit` raises when an upload failed or was interrupted (``e``) with ``acknowledged`` reports in:
    the same kind of line, saying what the server holds and whether running again would spend epsilon again."""
    if isinstance(e, KeyboardInterrupt):    # Ctrl-C: say what was acknowledged, as a failure does
        return KeyboardInterrupt(_interrupted("interrupted", acknowledged, kept["n_reports"], path))
    if getattr(e, "code", None) == "duplicate_body":
        # these bytes (with their upload nonce) were stored under another key: a copy of the kept reports was
        # uploaded by someone else or another state folder; sending them again cannot help, nor can the run
        return ServerError(f"{str(e).rstrip().rstrip('.')}; {acknowledged} of the {kept['n_reports']} reports were"
                           " acknowledged before it. These kept bytes were already posted under another key (taken"
                           " from this state file, or with its keys edited, and posted by another client): running"
                           " again gets the same answer; nothing more can be sent from this state file.",
                           e.status, e.code)
    return _noted(e, _interrupted("", acknowledged, kept["n_reports"], path), strip=True)


STATE_WRITE_INTERVAL = 10.0
"""Seconds between rewrites of the submit state file while uploading (and once at the end, or on an error): a run
killed meanwhile sends the last uploads again under their keys, which the server answers as replays."""


def _interrupted(message: str, acknowledged: int, total: int, path) -> str:
    """An upload failed part-way: say what the server holds, and whether running again would spend epsilon again."""
    message = message.rstrip().rstrip(".")
    if path is not None:
        return (f"{message}; {acknowledged} of the {total} reports were acknowledged before it. Run the same command"
                f" again to send the rest: the reports kept in {str(path)!r} are sent again under their keys, nothing"
                " is randomized again.")
    return (f"{message}; {acknowledged} of the {total} reports were acknowledged before it, and the rest were not kept"
            " (no state): running submit again randomizes all these documents anew, which spends their epsilon"
            " again and counts the acknowledged ones twice.")


def _noted(e: DPTopicError, note: str, strip: bool = False) -> DPTopicError:
    """``e`` with ``note`` after its line (``strip``: in place of its final full stop), of its kind: a
    :class:`~dptopic.errors.ParameterError` keeps the parameters it names, for a front door to write in its names."""
    if isinstance(e, ParameterError):
        extra = note.replace("{", "{{").replace("}", "}}")
        end = (lambda t: t.rstrip().rstrip(".") + extra) if strip else (lambda t: t + extra)
        return ParameterError(end(e.template), e.parameter, e.value, values=e.values,
                              flag_template=None if e.flag_template is None else end(e.flag_template), **e.fields)
    line = (str(e).rstrip().rstrip(".") if strip else str(e)) + note
    return ServerError(line, e.status, e.code) if isinstance(e, ServerError) else DPTopicError(line)


def _state_refusal(template: str, value=MISSING, key: str | None = None, **fields) -> ParameterError:
    """A refusal of the contributor's ``state`` (its file or folder, ``value``; a ``path`` field: the file in it);
    ``{none}`` in ``template`` says how to keep nothing (``state=None``). Such a line names itself by ``key``: the
    command line says it its own way (``{state} none``, ``dptopic/cli/_flag_templates.py``)."""
    return ParameterError(template.replace("{none}", "state=None"), "state",
                          MISSING if value is MISSING else str(value), key=key, **fields)


def _randomized(kind, rz, local, cfg: dict, settings: dict, chunk_reports, state, path) -> dict:
    """:func:`submit`'s reports, randomized once (one a document, the empty ones included) and cut into uploads that
    each fit the server's limits, with a fresh key each; kept in ``path`` before anything leaves the device, where
    ``state`` is given (a run that kept its reports first wins: its are returned)."""
    reports = rz.randomize(local)
    nb = kind.bytes_per_report(reports)
    per_request = min(cfg["max_reports_per_request"], max(1, (cfg["max_body_bytes"] - 4096) // nb))
    if chunk_reports:
        per_request = min(per_request, chunk_reports)
    kept = {"settings": settings, "salt": secrets.token_hex(16), "n_reports": int(reports.n_reports),
            "acknowledged": {}, "contributors": {},
            "uploads": [{"reports": b - a, "key": new_key(), "body": codec.encode_reports(reports[a:b])}
                        for a, b in _chunks(reports.n_reports, per_request)]}
    if state is not None:
        kept["documents"] = _documents_digest(local, kept["salt"])
        other = _create_submit_state(path, kept)
        if other is not None:
            kept = other
    return kept


def _pseudonym(kept: dict, here: str, contributor, state, path) -> str:
    """The pseudonym :func:`submit` sends its reports to ``here`` under: the one kept reports went there under
    (another one given is refused in one line), else the one given, the one kept for ``here`` in a state folder, or a
    fresh random one; kept in the state for ``here``."""
    saved_name = kept["contributors"].get(here)
    if contributor is not None and saved_name is not None and str(contributor) != saved_name:
        raise ParameterError("the reports kept in {path!r} were sent to {here} as {saved!r}, not {contributor=}:"
                             " leave out {contributor} to finish sending them as before.", "contributor",
                             str(contributor)[:40], path=str(path), here=here, saved=saved_name)
    contributor = saved_name or (str(contributor) if contributor is not None else
                                 (state is not None and _kept_pseudonym(state, here)) or secrets.token_hex(8))
    if state is not None and kept["contributors"].get(here) != contributor:
        _keep_contributor(kept, here, contributor, state, path)
    return contributor


def _keep_contributor(kept: dict, here: str, contributor: str, state, path) -> None:
    """Keep ``contributor`` as the pseudonym of ``here`` in the submit state file (and in the state folder's own
    list, for a folder)."""
    kept["contributors"][here] = contributor
    _write_submit_state(path, kept)
    if Path(state).is_dir():
        _keep_pseudonym(state, here, contributor)


def _state_folder_or_file(state) -> Path:
    """``state`` as a path; one ending in a separator that does not exist yet is created as a folder, owner-only."""
    p = Path(state)
    if str(state).endswith(("/", os.sep)) and not p.exists():
        try:
            p.mkdir(mode=0o700, parents=True)
        except OSError as e:
            raise _state_refusal("cannot create the folder {state=} ({why}): give a folder you can write to.", state,
                                 why=type(e).__name__) from None
    return p


def _create_exclusive(path: Path, data: bytes, what: str) -> bool:
    """Write ``data`` to ``path``, owner-only, whole and only if no file is there yet (two first runs at once: the
    second finds the first's file); False when another run created it first."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)            # atomic, and fails if the file exists
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
    except OSError as e:
        raise _state_refusal("cannot write the {what} {path!r} ({why}): give {state} a path you can write to, or"
                             " {none}.", key="contributor.client.create_exclusive", what=what, path=str(path),
                             why=type(e).__name__) from None
    return True


def _read_state_file(path: Path, what: str, fmt: str, version: int, alternative: str = "") -> dict:
    """The JSON object of a contributor's state file (``what``: its name in messages), checked to be a file of
    format ``fmt`` and ``version``; a one-line error otherwise."""
    if not path.is_file():
        raise _state_refusal("{state=} is not a file: give the path of a {what} (it is created on the first"
                             " run){alternative}.", path, what=what, alternative=alternative)
    try:
        doc = load_json(path.read_text(encoding="utf-8"), f"{what} {str(path)!r}")
    except json.JSONDecodeError as e:   # the user's own text, an empty or truncated file: left as it is
        why = "it is empty" if not e.doc.strip() else f"it is not JSON ({e.msg}, line {e.lineno})"
        raise _state_refusal("{state=} is not a {what}: {why}; give another {state}{alternative}, or a new path (the"
                             " file is created on the first run).", path, what=what, why=why,
                             alternative=alternative or "") from None
    except (OSError, UnicodeDecodeError) as e:
        raise _state_refusal("cannot read the {what} {path!r} ({why}): check it, or give another {state}.", what=what,
                             path=str(path), why=type(e).__name__) from None
    if not isinstance(doc, dict) or doc.get("format") != fmt or doc.get("version") != version:
        raise _state_refusal("{path!r} is not a {what} of this dptopic (format {fmt!r} v{version}): give another"
                             " {state}.", path=str(path), what=what, fmt=fmt, version=version)
    return doc


SUBMIT_STATE_FORMAT = "dptopic-submit-state"
SUBMIT_STATE_VERSION = 1


def _documents_digest(local, salt: str) -> str:
    """A salted digest of the documents (their word ids over the server's vocabulary), to find their kept reports: the
    salt is the state file's own, so files cannot be matched across folders, but whoever holds a file can test a
    guessed set of documents against it (it lives beside the raw text, readable by its owner only)."""
    h = hmac.new(bytes.fromhex(salt), digestmod=hashlib.sha256)
    for a in (local.doc_ptr, local.word_ids):
        h.update(a.astype("<i8").tobytes())
    return h.hexdigest()


def _find_submit_state(state, settings: dict, local):
    """``(path, kept)``: the state file holding these documents' reports under ``settings`` (``kept`` None when there
    is none yet, ``path`` then the file to create). ``state``: a file, or a folder (one that exists, or a path
    ending in a separator, created owner-only) searched for such a file."""
    p = _state_folder_or_file(state)
    if not p.is_dir():
        kept = _load_submit_state(p) if p.exists() else None
        if kept is not None and (kept["settings"] != settings
                                 or kept["documents"] != _documents_digest(local, kept["salt"])):
            raise _state_refusal("the submit state file {path!r} keeps the reports of other documents or of other"
                                 " report settings: give a folder as {state} (one file per set of documents), or"
                                 " another file.", path=str(p))
        return p, kept
    for f in sorted(p.glob("submit-*.json")):
        try:
            kept = _load_submit_state(f)
        except DPTopicError:
            continue                # another version's or a damaged file: not these documents' reports
        if kept["settings"] == settings and kept["documents"] == _documents_digest(local, kept["salt"]):
            return f, kept
    return p / f"submit-{secrets.token_hex(8)}.json", None


def _load_submit_state(path):
    """The kept reports, keys, acknowledgements and pseudonyms of a submit state file; a one-line error for a file
    of another kind or an edited one."""
    doc = _read_state_file(path, "submit state file", SUBMIT_STATE_FORMAT, SUBMIT_STATE_VERSION, ", or a folder")
    try:
        uploads = [{"reports": int(u["reports"]), "key": str(u["key"]),
                    "body": base64.b64decode(u["body"], validate=True)} for u in doc["uploads"]]
        acked = {str(k): sorted({int(i) for i in v}) for k, v in doc["acknowledged"].items()}
        names = {str(k): str(v) for k, v in doc["contributors"].items()}
        ok = (isinstance(doc["settings"], dict) and isinstance(doc["salt"], str) and isinstance(doc["documents"], str)
              and sum(u["reports"] for u in uploads) == doc["n_reports"]
              and all(codec.PSEUDONYM.fullmatch(n) for n in names.values())
              and all(0 <= i < len(uploads) for v in acked.values() for i in v))
        bytes.fromhex(doc["salt"])
    except (KeyError, TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        raise _state_refusal("the submit state file {path!r} was edited or is damaged: give another {state} (a run"
                             " that randomizes these documents again spends their epsilon again).", path=str(path))
    return {"settings": doc["settings"], "salt": doc["salt"], "documents": doc["documents"],
            "n_reports": int(doc["n_reports"]), "acknowledged": acked, "contributors": names, "uploads": uploads}


def _submit_state_bytes(kept: dict) -> bytes:
    return json.dumps({
        "format": SUBMIT_STATE_FORMAT, "version": SUBMIT_STATE_VERSION, "settings": kept["settings"],
        "salt": kept["salt"], "documents": kept["documents"], "n_reports": kept["n_reports"],
        "acknowledged": kept["acknowledged"], "contributors": kept["contributors"],
        "note": "randomized reports, drawn once on this device; sending them again, to any server, spends no more"
                " epsilon, randomizing the documents again spends it again. 'documents' is a salted digest of the"
                " documents: whoever holds this file can test a guessed set of documents against it",
        "uploads": [{"reports": u["reports"], "key": u["key"], "body": base64.b64encode(u["body"]).decode("ascii")}
                    for u in kept["uploads"]]}).encode("utf-8")


def _create_submit_state(path, kept: dict):
    """Write a new state file, whole and only if no file is there yet; None when written, else the reports another
    run kept there first (two first runs at once: both send the first one's)."""
    path = Path(path)
    return None if _create_exclusive(path, _submit_state_bytes(kept), "submit state file") else _load_submit_state(path)


def _write_submit_state(path, kept: dict) -> None:
    try:
        atomic_write_bytes(Path(path), _submit_state_bytes(kept), private=True)
    except OSError as e:
        raise _state_refusal("cannot write the submit state file {path!r} ({why}): give {state} a path you can write"
                             " to, or {none}.", key="contributor.client.write_submit_state", path=str(path),
                             why=type(e).__name__) from None


PSEUDONYMS_FILE = "contributor-pseudonyms.json"


def _kept_pseudonym(state, server: str):
    """The pseudonym a state folder keeps for ``server`` (None when none is kept, or ``state`` is a file)."""
    p = Path(state) / PSEUDONYMS_FILE
    if not Path(state).is_dir() or not p.is_file():
        return None
    try:
        doc = load_json(p.read_text(encoding="utf-8"), str(p))
    except (OSError, UnicodeDecodeError, DPTopicError):
        return None
    name = doc.get(server) if isinstance(doc, dict) else None
    return name if isinstance(name, str) and codec.PSEUDONYM.fullmatch(name) else None


def _keep_pseudonym(state, server: str, contributor: str) -> None:
    p = Path(state) / PSEUDONYMS_FILE
    doc = {}
    if p.is_file():
        try:
            doc = load_json(p.read_text(encoding="utf-8"), str(p))
        except (OSError, UnicodeDecodeError, DPTopicError):
            doc = {}
    if not isinstance(doc, dict) or doc.get(server) == contributor:
        return
    doc[server] = contributor
    try:
        atomic_write_bytes(p, json.dumps(doc, indent=1).encode("utf-8"), private=True)
    except OSError:
        pass        # the reports are kept; only the next run's default pseudonym is not


FED_STATE_FORMAT = "dptopic-fed-client-state"
FED_STATE_VERSION = 1


def _fed_state_key(rrp, vocab_sha: str, vocab_size: int) -> dict:
    """What reports drawn once must agree on to be reused: the vocabulary they range over and the randomizer. The
    key ``"epsilon"`` (the per-entry figure) stays as the state files written before ``RRPConfig``'s rename have it:
    a renamed key would change the state file's name and content, and a participant would draw (and spend) new
    reports instead of reusing its own."""
    return {"vocabulary_sha256": vocab_sha, "epsilon": float(rrp.epsilon_per_entry), "entries": int(rrp.n_entries),
            "words_per_report": int(rrp.report_size(vocab_size)), "exclusion": str(rrp.exclusion)}


def _load_fed_state(path, key: dict, client_id: str | None):
    """The client id and randomized reports a FedLDA state file holds (None when there is no file), checked
    against the server's configuration; a one-line error otherwise."""
    import numpy as np  # numpy: kept off this module's import (a light start)

    p = Path(path)
    if not p.exists():
        return None
    doc = _read_state_file(p, "FedLDA state file", FED_STATE_FORMAT, FED_STATE_VERSION)
    if doc.get("server") != key:
        raise _state_refusal("the FedLDA state file {path!r} holds reports drawn for another server configuration"
                             " (vocabulary, epsilon or entries): give another {state} for this server; reports drawn"
                             " for it anew spend its per-user epsilon again.", path=str(p))
    saved_id = doc.get("client")
    if not isinstance(saved_id, str) or not codec.PSEUDONYM.fullmatch(saved_id):
        raise _state_refusal("the FedLDA state file {path!r} has no valid client id: it was edited; give another"
                             " {state}.", path=str(p))
    if client_id is not None and str(client_id) != saved_id:
        raise ParameterError("the FedLDA state file {path!r} belongs to client {saved!r}, not {client_id=}: leave out"
                             " {client_id}, or give another {state}.", "client_id", str(client_id)[:40],
                             path=str(p), saved=saved_id)
    reports = doc.get("reports")
    try:
        sets = np.asarray(reports, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        sets = None
    if sets is None or sets.ndim != 2 or not isinstance(reports, list):
        raise _state_refusal("the FedLDA state file {path!r} holds no table of reports: it was edited; give another"
                             " {state}.", path=str(p))
    return saved_id, sets


def fed_state_path(state, key: dict):
    """``state`` itself, or for a folder (one that exists, or a path ending in a separator, created owner-only) the
    file in it for reports that agree on ``key``: one per server configuration, whatever client id a run names
    (the id is kept inside, and a run naming another is refused), so that no run draws a second set unnoticed."""
    p = _state_folder_or_file(state)
    if not p.is_dir():
        return p
    tag = json.dumps(key, sort_keys=True).encode()
    return p / f"fed-{hashlib.sha256(tag).hexdigest()[:16]}.json"


def default_state_folder():
    """Where ``dptopic fed-client`` keeps its reports unless told otherwise: ``$XDG_STATE_HOME/dptopic``, else
    ``~/.local/state/dptopic`` (created readable by its owner only)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    folder = Path(base) / "dptopic"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise _state_refusal("cannot create {path!r} to keep your randomized reports ({why}): give {state} a file"
                             " (or {none} to draw new reports every run, which spends the per-user epsilon again).",
                             key="contributor.client.default_state_folder", path=str(folder),
                             why=type(e).__name__) from None
    return folder


def _create_fed_state(path, key: dict, client_id: str, sets) -> bool:
    """Write the state file, owner-only, whole and only if no file is there yet (two first runs at once: the second
    finds the first's file); False when another run created it first."""
    data = json.dumps({"format": FED_STATE_FORMAT, "version": FED_STATE_VERSION, "server": key, "client": client_id,
                       "reports": [[int(w) for w in row] for row in sets],
                       "note": "randomized reports, drawn once on this device and sent every round; reusing them"
                               " spends no more epsilon, drawing new ones spends it again"}).encode("utf-8")
    return _create_exclusive(Path(path), data, "FedLDA state file")


def _fed_reports(local, rrp, vocab, state, client_id):
    """:func:`fed_participate`'s FedLDA client, ``(client, the kept (client id, reports) or None, the state file or
    None)``: its reports drawn anew (and kept before anything leaves the device, where ``state`` is given: a run that
    kept its reports first wins), or those a state file kept for the same settings, under its client id."""
    from .fedlda import fed_client  # start-up: the FedLDA client loads numba

    # a user without any of them still takes part, with padding only, under every rule (the floor and tail rules
    # always replace a padding entry, as the 'none' rule randomizes it): whether someone takes part, and how many
    # entries they send, says nothing about their text
    key = _fed_state_key(rrp, codec.vocabulary_fingerprint(list(vocab.words)), len(vocab))
    saved = None
    if state is not None:
        if rrp.exclusion != "none":
            raise _state_refusal("{state} keeps reports drawn once, which only the 'none' rule does: this server's"
                                 " rule {rule!r} draws new entries every round; give {none}.", state,
                                 key="contributor.client.fed_reports", rule=rrp.exclusion)
        state = fed_state_path(state, key)
        saved = _load_fed_state(state, key, client_id)
    if saved is None:
        fc = fed_client(client_id or secrets.token_hex(8), local, rrp)
        # kept before anything leaves the device; a run that started at the same time and kept its reports first wins
        if state is not None and not _create_fed_state(state, key, fc.client_id, fc.sets):
            saved = _load_fed_state(state, key, client_id)
    if saved is not None:
        fc = fed_client(saved[0], local, rrp, reports=saved[1])
    return fc, saved, state


class _FedRun:
    """:func:`fed_participate`'s rounds for one FedLDA client ``fc``: ``done`` (one entry a round its update was
    taken in) and ``sent`` (the updates that left the device, each spent whether or not the server kept it)."""

    def __init__(self, client, fc, rrp, vocab_size: int, rounds: int, poll: float, timeout: float, saved,
                 user_limit, on_round):
        self.client, self.fc, self.rrp, self.vocab_size, self.rounds = client, fc, rrp, vocab_size, rounds
        self.poll, self.timeout, self.saved, self.user_limit, self.on_round = poll, timeout, saved, user_limit, on_round
        self.done: list = []
        self.sent = 0

    def spent_text(self) -> str:
        """What this run has spent, for an error after an update left the device (rounded up, never below)."""
        from .fedlda import fed_privacy  # start-up: the FedLDA client loads numba

        eps = fmt_epsilon(fed_privacy(self.rrp, self.sent, vocab_size=self.vocab_size)["epsilon_basic"])
        if self.saved is not None:
            return (f"your reports, drawn in an earlier run, spend epsilon {eps} by basic composition in all; this run"
                    " spent nothing more")
        return (f"spent so far: epsilon {eps} by basic composition over {self.sent} update"
                f"{'s' if self.sent != 1 else ''} that left this device, whether or not the server kept them")

    def interrupted(self, kept: bool) -> str:
        """The line of a run interrupted after an update left the device: what it spent, and what running again
        spends (nothing more where the reports are ``kept``)."""
        again = ("run the same command again to take part in later rounds: it reuses the kept reports and spends"
                 " nothing more" if kept else "running again draws new reports, which spends epsilon again (no state"
                 " kept)")
        n = len(self.done)
        return f"interrupted after {n} round{'s' if n != 1 else ''} ({self.spent_text()}); {again}."

    def play(self) -> None:
        """Take part until ``rounds`` rounds took this client's update: each newly opened round is answered once (a
        round the kept reports already answered is skipped; one that closed first is retried in the next,
        :meth:`_stale`); one line when no new round opens within ``timeout`` seconds."""
        last_round, deadline, stale = -1, time.monotonic() + self.timeout, 0
        while len(self.done) < self.rounds:
            rnd, msg = self._open_round()
            if rnd <= last_round:
                if time.monotonic() > deadline:
                    raise DPTopicError(f"round {last_round + 1} did not open within {self.timeout:g} s: other clients"
                                       " or the admin must close the current round.")
                time.sleep(self.poll)
                continue
            self._check_redone(rnd)
            update = self.fc.run_round(msg)
            self.sent += 1  # it leaves the device now: its privacy cost counts whether or not the server keeps it
            try:
                ack = self.client.post_bytes("/v1/fed/updates", update, new_key())
            except ServerError as e:
                if e.code == "duplicate_update" and self.saved is not None:
                    # an earlier run with these same reports already took part in this round: wait for the next one
                    last_round = rnd
                    continue
                self._stale(e, stale, rnd)
                stale += 1
                continue
            stale = 0
            last_round = rnd
            self.done.append({"round": rnd, "bytes_sent": len(update), "round_closed": ack.get("round_closed", False)})
            if self.on_round is not None:
                self.on_round(self.done[-1])

    def _open_round(self) -> tuple:
        """``(round number, the global model message)`` of the server's open round."""
        _, headers, msg = self.client.request("GET", "/v1/fed/round")
        try:
            return int({k.lower(): v for k, v in headers.items()}["dptopic-round"]), msg
        except (KeyError, ValueError):
            raise ServerError(f"{self.client.server} sent a FedLDA round without a round number (Dptopic-Round): is"
                              " it a dptopic server?") from None

    def _check_redone(self, rnd: int) -> None:
        """Updates redone after a stale_round refusal: the per-user limit was checked for ``rounds`` updates up front,
        so one more is checked before it is drawn."""
        if self.user_limit is None or self.sent < self.rounds:
            return
        from .fedlda import fed_privacy  # start-up: the FedLDA client loads numba

        total = float(fed_privacy(self.rrp, self.sent + 1, vocab_size=self.vocab_size)["epsilon_basic"])
        if total > self.user_limit:
            raise ParameterError("another update for round {round} (updates refused as stale_round were redone) would"
                                 " bring this run's spend to epsilon {total}, above your limit {value:g}"
                                 " ({parameter}): stopped before sending it.", "max_user_epsilon", self.user_limit,
                                 round=rnd, total=fmt_epsilon(total))

    def _stale(self, e, stale: int, rnd: int) -> None:
        """An update refused (``e``): unless the round closed while it was sampled (stale_round), raised as it is;
        else a pause that grows with each refusal in a row (``stale`` before this one) before the next round, and
        one line once they are :data:`STALE_RETRIES` (rounds that close faster than this client answers are not
        chased without end)."""
        if e.code != "stale_round":
            raise e
        if stale >= STALE_RETRIES:
            raise ServerError(f"the open round closed before this client's update arrived, {stale + 1} times in a row"
                              f" (lastly round {rnd}): the rounds close faster than this client can answer (other"
                              " clients fill them first); run it again later, or ask the operator to let a round"
                              " wait for more updates.", e.status, e.code) from None
        time.sleep(min(STALE_MAX_PAUSE, STALE_PAUSE * 2 ** stale) * (0.5 + _JITTER.random() / 2))


def fed_participate(server: str, corpus, rounds: int = 1, poll: float = 1.0, timeout: float = 600.0,
                    client_id: str | None = None, client: ServiceClient | None = None, on_round=None,
                    state=None, max_epsilon: float = DEFAULT_MAX_EPSILON, max_user_epsilon: float | None = None) -> dict:
    """Take part in ``rounds`` FedLDA rounds with ``corpus`` (the user's documents, kept local).

    ``state`` (a file path, or a folder): where this user's randomized reports are kept between runs. The reports
    of the ``"none"`` rule are drawn once and their per-user epsilon is spent once; a second run that drew them
    anew would spend it again. With ``state``, the first run saves its client id and reports there (before the
    first update leaves the device), and later runs reuse them under the same client id, whatever documents they
    are given (those are not read). In a folder, the file is named from what the reports must agree on (the
    vocabulary, epsilon, entries, words per report and rule), so one folder serves every server; a run that names
    another client id than the kept one is refused. A run whose kept reports already took part in the open round
    waits for the next. Without ``state`` every run draws new reports under a new id. ``max_epsilon``: the largest epsilon per entry the user accepts (a
    server that asks for more is refused before anything is randomized). ``max_user_epsilon``: the largest per-user
    epsilon (basic composition over every entry of the ``rounds`` updates) the user accepts: the server chooses the
    number of entries, so a limit per entry alone does not bound the total; None: no such limit."""
    if client_id is not None and not codec.PSEUDONYM.fullmatch(str(client_id)):
        raise DPTopicError(f"invalid client id {str(client_id)[:40]!r}: it must be {codec.PSEUDONYM_RULE}; leave it out"
                           " for a random one.")
    limit = check_max_epsilon(max_epsilon)
    if state is not None and Path(state).is_file():     # a file that is not one is refused before the server is asked
        _read_state_file(Path(state), "FedLDA state file", FED_STATE_FORMAT, FED_STATE_VERSION)
    client = client or ServiceClient(server)
    cfg = check_server_config(client.config(), client.server, "fed")
    from ..corpus import Vocabulary  # start-up: corpus loads numba
    from .fedlda import fed_privacy  # start-up: the FedLDA client loads numba

    rrp, report_words = fed_settings(cfg, client.server)
    vocab = Vocabulary(list(cfg["vocabulary"])[:report_words])  # FedLDA's report words
    # documents left without a report word stay (drop_empty=False): under the "none" rule such a user takes part with
    # padding only, and restricting used to drop them and then refuse the empty corpus
    local = corpus.restrict(vocab, drop_empty=False) if corpus.vocabulary != vocab else corpus
    _refuse_above(float(rrp.epsilon_per_entry), limit, "epsilon per entry", client.server)
    if max_user_epsilon is not None:    # the total this run may spend, before anything is drawn
        total = fed_privacy(rrp, rounds, vocab_size=len(vocab))["epsilon_basic"]
        _refuse_above(float(total), check_max_epsilon(max_user_epsilon),
                      f"a per-user epsilon (basic composition, {rounds} round{'s' if rounds != 1 else ''})", client.server,
                      "max_user_epsilon")
    fc, saved, state = _fed_reports(local, rrp, vocab, state, client_id)
    user_limit = None if max_user_epsilon is None else check_max_epsilon(max_user_epsilon)
    run = _FedRun(client, fc, rrp, len(vocab), rounds, poll, timeout, saved, user_limit, on_round)
    try:
        run.play()
    except DPTopicError as e:
        # any failure once an update has left (a refused upload, a round that does not open, a broadcast of another
        # vocabulary, a server gone) says what was spent: the participant's privacy cost is not undone by the failure
        if run.sent == 0:
            raise
        raise _noted(e, f" ({run.spent_text()})") from None
    except KeyboardInterrupt:       # Ctrl-C: what left the device is spent all the same
        if run.sent == 0:
            raise
        raise KeyboardInterrupt(run.interrupted(kept=state is not None)) from None
    done, sent = run.done, run.sent
    priv = fed_privacy(rrp, sent, vocab_size=len(vocab))
    return {"client": fc.client_id, "reused_reports": saved is not None, "state": None if state is None else str(state),
            "rounds": done, "updates_sent": sent, "epsilon_basic": priv["epsilon_basic"],
            "epsilon_pld": priv.get("epsilon_pld"), "epsilon": priv.get("epsilon"), "delta": priv["delta"],
            "guarantee": priv.get("guarantee"), "note": priv.get("note")}
