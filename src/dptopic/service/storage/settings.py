"""What a database is bound to on its first start: the settings its reports (and FedLDA's rounds) were made with,
checked on every later start (:meth:`SettingsStore.bind_settings`), each refusal one line naming the setting."""
from __future__ import annotations

import json
import math

from sqlalchemy import func, select

from ...errors import DPTopicError
from .database import Database
from .errors import SettingsError
from .schema import fed_rounds, settings

FED_PREFIX = "fed_"
#: FedLDA's settings that a flag of ``dptopic serve`` sets (the others are fixed by dptopic), in the order refusals
#: list them
FED_FLAG_SETTINGS = ("fed_epsilon", "fed_topics", "fed_failure_rate", "fed_pad_length", "fed_sample_ratio",
                     "fed_report_words")


#: settings stored with the others that bind no round (see :func:`_check_fed`)
UNBOUND_FED_SETTINGS = ("fed_failure_rate",)


def _settings_fields(side: str, values: dict, keys) -> tuple[str, dict]:
    """``keys`` of ``values`` as template fields of a :class:`ParameterError` (``{fed_topics=stored_fed_topics}``),
    and the fields."""
    return (", ".join("{%s=%s_%s}" % (k, side, k) for k in keys), {f"{side}_{k}": values[k] for k in keys})


def _check_fed(stored: dict, expected: dict, rounds_exist, fed_user_epsilon: float | None = None) -> None:
    """Refuse, in one line naming every FedLDA setting that differs, a start whose FedLDA settings are not those the
    database is bound to: the open round's model, the updates stored for it and the epsilon the users spent were made
    with them (another K leaves the round stuck; another epsilon would debias updates with the wrong epsilon and
    understate what the users spent). ``fed_epsilon`` is ``None`` with FedLDA off.

    A database that holds no record of ``fed_epsilon`` (made by a dptopic that bound only ``fed_report_words``) ran
    FedLDA if it records ``fed_report_words`` or holds a FedLDA round (``rounds_exist()``)."""
    now_on = expected.get("fed_epsilon") is not None
    if "fed_epsilon" in stored:
        was_on = stored["fed_epsilon"] is not None
    else:
        was_on = stored.get("fed_report_words") is not None or rounds_exist()
    if was_on and not now_on:
        known = [k for k in FED_FLAG_SETTINGS if stored.get(k) is not None]
        ran, fields = _settings_fields("stored", stored, known)
        raise SettingsError("the database ran FedLDA rounds" + (" with " + ran if known else "") + " but the server was"
                            " started without FedLDA (no {fed_epsilon}): FedLDA is off now, while the database's open"
                            " round and the epsilon its users spent are bound to those settings; start it with the"
                            " same FedLDA settings, or use a new {database}.", "fed_epsilon", None, **fields)
    # fed_failure_rate binds nothing: the server's rounds use the 'none' rule, which has no failure rate (serve
    # refuses fed_failure_rate), so a database first started with another value still starts
    differ = sorted((k for k, v in expected.items() if k.startswith(FED_PREFIX) and k in stored and stored[k] != v
                     and k not in UNBOUND_FED_SETTINGS),
                    key=lambda k: FED_FLAG_SETTINGS.index(k) if k in FED_FLAG_SETTINGS else len(FED_FLAG_SETTINGS))
    if not differ:
        return
    was, was_fields = _settings_fields("stored", stored, differ)
    now, now_fields = _settings_fields("given", expected, differ)
    if not was_on:
        raise SettingsError("the database was made without FedLDA (" + was + ") but the server was started with"
                            " FedLDA (" + now + "): FedLDA's settings are bound to a database on its first start;"
                            " start it without FedLDA, or use a new {database} for FedLDA rounds.", differ[0],
                            **was_fields, **now_fields)
    chosen = ("" if fed_user_epsilon is None else        # FedLDA.from_user_budget chose these two
              " ({fed_user_epsilon=:g} chose {fed_epsilon} and {fed_pad_length} here)")
    raise SettingsError("the database's FedLDA rounds were run with " + was + " but the server was started with " + now
                        + ": FedLDA's settings are bound to a database on its first start (the open round's model and"
                        " the epsilon its users spent depend on them); start it with the same FedLDA settings" + chosen
                        + ", or use a new {database}.", differ[0], values={"fed_user_epsilon": fed_user_epsilon},
                        **was_fields, **now_fields)


def _other_setting(key: str, stored, given) -> SettingsError:
    """The database's reports were made with another ``key`` (a setting of :meth:`SettingsStore.bind_settings`) than the
    server was started with: said as the settings a user gives (the per-word epsilon for ``f``, the vocabulary for its
    fingerprint and size)."""
    tail = ": start it with the same {vocabulary}, {report_kind} and epsilon, or use a new {database}."
    if key == "f":
        def eps(f):
            try:
                return math.log(2.0 / float(f) - 1.0)
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                return None
        if eps(stored) is not None and eps(given) is not None:
            return SettingsError("the database holds reports made with {epsilon_word=stored:.4g} but the server was"
                                 " started with {epsilon_word=given:.4g}" + tail, "epsilon_word", stored=eps(stored),
                                 given=eps(given))
    if key == "vocabulary_sha256" and isinstance(stored, str) and isinstance(given, str):
        return SettingsError("the database holds reports made with another {vocabulary} (SHA-256 {stored}...) than the"
                             " server was started with (SHA-256 {given}...)" + tail, "vocabulary",
                             stored=stored[:12], given=given[:12])
    if key == "vocab_size":
        return SettingsError("the database holds reports made with a {vocabulary} of {stored} words but the server was"
                             " started with one of {given} words" + tail, "vocabulary", stored=stored, given=given)
    return SettingsError("the database holds reports made with {parameter=stored} but the server was started with"
                         " {parameter=given}" + tail, key, stored=stored, given=given)


def _level(kind) -> str:
    """``word`` -> ``word-level``: how refusals name a report kind."""
    return f"{kind}-level" if kind in ("word", "document") else f"{kind!r}"


class SettingsStore(Database):
    """The settings the database is bound to (table ``service_settings``)."""

    def bind_settings(self, expected: dict, fed_user_epsilon: float | None = None) -> dict:
        """Store ``expected`` on first use; afterwards refuse to serve with other settings.

        A setting the database has no record of (a database made by a dptopic that did not bind it yet) is recorded
        with the value the server is started with, and bound from then on. FedLDA's settings (the keys starting with
        ``fed_``; ``fed_epsilon`` is ``None`` with FedLDA off) are checked together, so that one line names every
        FedLDA setting that differs (:func:`_check_fed`).
        """
        with self.write() as conn:
            self._lock(conn)
            rows = dict(conn.execute(select(settings.c.key, settings.c.value)).all())
            if not rows:
                conn.execute(settings.insert(), [{"key": k, "value": json.dumps(v)} for k, v in expected.items()])
                return expected
            stored = {k: json.loads(v) for k, v in rows.items()}
            stored.setdefault("report_kind", "word")  # databases from before report kinds hold word-level reports
            kind, want = stored["report_kind"], expected.get("report_kind", "word")
            # checked first: the other settings (f, eps_doc, ...) of the other kind differ as a consequence
            if kind != want:
                raise SettingsError("the database holds {stored_level} reports but the server was started for"
                                    " {given_level} reports ({report_kind=}): a database created for one kind refuses"
                                    " to be served for the other; start it with {report_kind=stored}, or use a new"
                                    " {database}.", "report_kind", want, stored=kind, stored_level=_level(kind),
                                    given_level=_level(want))
            for k, v in expected.items():
                if k.startswith(FED_PREFIX):
                    continue
                if k in stored and stored[k] != v:
                    raise _other_setting(k, stored[k], v)
            if any(k.startswith(FED_PREFIX) for k in expected):
                if "fed_topics" not in stored and expected.get("fed_topics") is not None:
                    k_stored = self._broadcast_topics(conn)
                    if k_stored is not None:    # an older database: its rounds' model says which K it ran with
                        stored["fed_topics"] = k_stored
                _check_fed(stored, expected, lambda: conn.execute(select(func.count()).select_from(fed_rounds))
                           .scalar() > 0, fed_user_epsilon)
            missing = [k for k in expected if k not in rows]
            if missing:     # a database from before these settings were bound: bound from this start on
                conn.execute(settings.insert(), [{"key": k, "value": json.dumps(expected[k])} for k in missing])
        return {**stored, **{k: expected[k] for k in missing}}

    @staticmethod
    def _broadcast_topics(conn) -> int | None:
        """The number of topics of the newest FedLDA round's published model, or None without a round (or with a
        message this version cannot read): what an older database, which did not record ``fed_topics``, ran with."""
        from ...protocol.fedlda_messages import (  # start-up: protocol.fedlda_messages loads numpy
            ModelBroadcast,
            decode_message,
        )

        row = conn.execute(select(fed_rounds.c.message).order_by(fed_rounds.c["round"].desc()).limit(1)).first()
        if row is None:
            return None
        try:
            msg = decode_message(bytes(row[0]))
        except DPTopicError:
            return None
        return int(msg.phi.shape[0]) if isinstance(msg, ModelBroadcast) else None
