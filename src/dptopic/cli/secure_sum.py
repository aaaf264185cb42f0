"""``dptopic serve --report-kind secure-sum``, ``dptopic submit`` against it, and ``dptopic experiment secure-sum``
(docs/secure_sum.md)."""
from __future__ import annotations

from ..errors import DPTopicError
from ._common import (PUBLIC_VOCABULARY_DECIDES, _float_arg, load_corpus, make_console, moved, positive_float,
                      read_vocabulary)

# old homes and names (the service loads numpy, which the command line's start-up must not)
__getattr__ = moved({"person_bow": "dptopic.contributor.secure_client:person_bow",
                     "secure_state_path": "dptopic.contributor.secure_client:state_path",
                     "SECURE_SUM_PEOPLE": "dptopic.service.startup:SECURE_SUM_PEOPLE",
                     "recommend_note": "dptopic.service.startup:secure_sum_recommendation"})


def add_serve_flags(s) -> None:
    """The secure sum's flags of ``dptopic serve``."""

    s.add_argument("--unit", choices=("user",), default=None,
                   help="--report-kind secure-sum: the privacy unit, user (one person's documents)")
    s.add_argument("--epsilon", type=positive_float, default=None,
                   help="--report-kind secure-sum: epsilon per person for the whole round")
    s.add_argument("--min-contributors", type=int, default=None, metavar="N",
                   help="--report-kind secure-sum: the round's contributors (its roster closes at N keys)")
    s.add_argument("--dropout-tolerance", type=int, default=None, metavar="F",
                   help="--report-kind secure-sum: how many may drop out with the sum still released (the noise is"
                        " calibrated for the N - F survivors; default N/10)")


def refuse_secure_flags(a) -> None:
    """Other report kinds: the secure sum's flags are refused in one line."""
    for flag in ("epsilon", "min_contributors", "dropout_tolerance", "unit"):
        if getattr(a, flag, None) is not None:
            raise DPTopicError(f"--{flag.replace('_', '-')} is for --report-kind secure-sum: drop it, or add"
                               " --report-kind secure-sum.")


def serve_secure_sum(a) -> None:
    from ..service import startup  # deferred: loads numpy
    from ..service.config import read_token_file  # loaded when the command runs, off the start-up path

    startup.need_service_extra()
    vocab = read_vocabulary(a.vocabulary)
    settings = startup.secure_sum_settings(vocab, unit=a.unit, epsilon=a.epsilon, delta=a.delta,
                                           min_contributors=a.min_contributors, dropout_tolerance=a.dropout_tolerance,
                                           max_body_bytes=a.max_body_bytes, epsilon_word=a.epsilon_word,
                                           epsilon_doc=a.epsilon_doc, prior=a.prior)
    from ..service.secure_sum import SecureSumConfig, create_secure_sum_app     # the service extra, checked above

    token = read_token_file(a.token_file) if a.token_file else None
    cfg = SecureSumConfig(**settings, n_topics=a.topics, database=a.database, admin_token=token)
    sockets = startup.check_port_free(a.host, a.port, keep=True)
    try:
        app = create_secure_sum_app(cfg)
        make_console(stderr=True).print(startup.banner(cfg, f"http://{a.host}:{a.port}/"), markup=False)
        startup.run_server(app, sockets, a.host, a.port, quiet=a.quiet)
    finally:
        startup.close_all(sockets)


def submit_secure_sum(a, cfg: dict) -> None:
    """``dptopic submit`` against a secure-sum server: every document of ``--corpus`` is this person's."""
    from ..corpus import Vocabulary  # deferred: loads numpy
    from ..protocol.codec import DEFAULT_MAX_EPSILON  # loaded when the command runs, off the start-up path
    from ..contributor.client import ServiceClient  # loaded when the command runs, off the start-up path
    from ..contributor.secure_client import person_bow, state_path, take_part  # loaded when the command runs, off the start-up path
    from ..service.status import secure_sum_lines  # loaded when the command runs, off the start-up path

    limit = DEFAULT_MAX_EPSILON if a.max_epsilon is None else a.max_epsilon     # as for every other kind
    if cfg["secure_sum"]["epsilon"] > limit * (1 + 1e-12):
        raise DPTopicError(f"the server asks for epsilon {cfg['secure_sum']['epsilon']:g} per person, above your"
                           f" --max-epsilon {limit:g}{' (the default)' if a.max_epsilon is None else ''}: nothing"
                           " computed or sent.")
    state = state_path(a.state, str(cfg.get("round_id")))
    corpus = load_corpus(a.corpus, a.format, None, a.text_field, None, vocabulary=Vocabulary(cfg["vocabulary"]),
                         stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_flag=None, drop_empty=False)
    client = ServiceClient(a.server, timeout=a.timeout, retries=a.retries)
    s = take_part(a.server, person_bow(corpus), state=state, max_epsilon=limit, client=client,
                  contributor=a.contributor)
    for line in secure_sum_lines(s):
        make_console().print(line)


def maybe_submit_secure_sum(a) -> bool:
    """``dptopic submit``: True when the server runs a secure sum (and this took part in it)."""
    from ..contributor.client import ServiceClient  # deferred: loads numpy

    try:    # one look: a server that does not answer is then the usual path's to report (with its retries)
        cfg = ServiceClient(a.server, timeout=a.timeout, retries=0).get_json("/v1/config")
    except DPTopicError:
        return False
    if cfg.get("report_kind") != "secure-sum":
        return False
    submit_secure_sum(a, cfg)
    return True


_share = _float_arg(lambda v: 0 <= v < 1, "a share must lie in [0, 1), e.g. 0.1")


def register_experiment(esub) -> None:
    p = esub.add_parser("secure-sum", help="a secure-sum round played by every person of a corpus, over HTTP")
    p.add_argument("--server", required=True, help="a dptopic serve --report-kind secure-sum server")
    p.add_argument("--corpus", required=True, help="documents with a person field (JSONL or CSV)")
    p.add_argument("--user-field", required=True, help="the field or column naming each document's person")
    p.add_argument("--format", default="auto", help="format of --corpus (auto: by its name; text = one document per"
                   " line)")
    p.add_argument("--text-field", default="text", help="JSONL field / CSV column holding the text (default: text)")
    p.add_argument("--dropout", type=_share, default=0.1, help="share of people who drop out after masking")
    p.add_argument("--token-file", default=None, help="the server's admin token (to close the upload step)")
    p.add_argument("--seed", type=int, default=None, help="who drops out, and the central model's noise")
    p.add_argument("--out", required=True, help="folder for summary.json and the model")
    p.set_defaults(func=cmd_experiment)


def cmd_experiment(a) -> None:
    from ..corpus import Vocabulary  # deferred: loads numpy
    from ..contributor.client import ServiceClient  # loaded when the command runs, off the start-up path
    from ..service.config import read_token_file  # loaded when the command runs, off the start-up path
    from ..experiments.secure_sum import secure_sum_experiment  # loaded when the command runs, off the start-up path
    from ..service.status import secure_sum_experiment_line  # loaded when the command runs, off the start-up path

    client = ServiceClient(a.server, retries=3)
    cfg = client.get_json("/v1/config")
    if cfg.get("report_kind") != "secure-sum":
        raise DPTopicError(f"--server {a.server} runs no secure sum: start it with --report-kind secure-sum.")
    corpus = load_corpus(a.corpus, a.format, None, a.text_field, None, vocabulary=Vocabulary(cfg["vocabulary"]),
                         stop_words=PUBLIC_VOCABULARY_DECIDES, vocab_flag=None, drop_empty=False,
                         user_field=a.user_field)
    token = read_token_file(a.token_file) if a.token_file else None
    s = secure_sum_experiment(a.server, corpus, a.out, dropout=a.dropout, token=token, seed=a.seed, client=client)
    make_console().print(secure_sum_experiment_line(s))
