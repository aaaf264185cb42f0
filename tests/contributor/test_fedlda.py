"""The FedLDA participant (``dptopic.contributor.fedlda``) and what it saves: no exact corpus sizes in a saved model, a
partial guarantee where topic labels go out in the clear, huge or odd message shapes refused in one line, K > V and
an epsilon too small for the vocabulary refused before training, and a refused broadcast leaves the client as it was."""
from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from dptopic import FedLDA
from dptopic.contributor.fedlda import FedClient
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models import load
from dptopic.protocol.fedlda import RRPConfig
from dptopic.protocol.fedlda_messages import MAGIC, VERSION, MessageError, ModelBroadcast, decode_message
from service_helpers import corpus_of, make_words, raw_fed_message


def _fit(**kw):
    c = lda_corpus(n_docs=12, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    params = dict(n_topics=2, rounds=2, pad_length=16, seed=3, verbose=0)
    with pytest.warns(UserWarning, match="seed"):
        return FedLDA(**{**params, **kw}).fit(c), c


# ------------------------------------------------------------------ item 6
def test_saved_model_holds_no_exact_corpus_sizes_and_old_folders_load(tmp_path):
    m, _ = _fit()
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "n_docs" not in meta["training"] and "n_tokens" not in meta["training"]
    assert meta["training"]["entries_per_update"] == 16 and meta["training"]["vocab_size"] == 20
    # a folder written before the fix (with the exact sizes) still loads, and a re-save drops them
    meta["training"].update(n_docs=12, n_tokens=120)
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    old = load(tmp_path / "m")
    np.testing.assert_array_equal(old.components_, m.components_)
    old.save(tmp_path / "again")
    again = json.loads((tmp_path / "again" / "model.json").read_text())["training"]
    assert "n_docs" not in again and "n_tokens" not in again


# ------------------------------------------------------------------ item 7
@pytest.mark.parametrize("replacement", ["mixture", "topic"])
def test_report_says_partial_because_topic_labels_go_out_in_the_clear(replacement):
    m, _ = _fit(replacement=replacement, exclusion="floor")
    rep = m.privacy_
    assert rep["guarantee"] == "partial"
    assert "topic labels go out unperturbed" in rep["note"]
    assert ("local theta" in rep["note"]) == (replacement == "mixture")
    assert rep["scope"].startswith("covers the word of every entry one user reports")
    assert "topic label of each entry" in rep["scope"]
    assert ("replacement='mixture'" in rep["scope"]) == (replacement == "mixture")


def test_tail_exclusion_keeps_both_reasons():
    m, _ = _fit(exclusion="tail")
    # partial where an (epsilon, delta) follows; here the excluded masses add past any delta: no guarantee at all
    assert m.privacy_["epsilon"] is None and m.privacy_["guarantee"] == "none"
    assert "topic labels" in m.privacy_["note"] and "Zipf" in m.privacy_["note"]


# ------------------------------------------------------------------ item 18
HUGE = [[2 ** 40, 2 ** 40], [10 ** 30], [2 ** 62, 4], [1, 1, 1, 1, 1, 1, 1, 1, 1], ["3"], [True], [1.5]]


@pytest.mark.parametrize("shape", HUGE)
def test_huge_or_odd_shapes_are_one_line_message_errors(shape):
    msg = raw_fed_message({"kind": "update", "round": 0, "client": "a", "vocab": "v",
                        "arrays": [{"name": "topics", "dtype": "<i4", "shape": shape},
                                   {"name": "words", "dtype": "<i4", "shape": shape}]}, b"\0" * 16)
    with pytest.raises(MessageError, match="malformed message") as e:
        decode_message(msg)
    assert "\n" not in str(e.value)


def test_deeply_nested_header_is_a_message_error():
    head = b'{"arrays":' + b"[" * 30000 + b"]" * 30000 + b"}"
    body = MAGIC + struct.pack("<BI", VERSION, len(head)) + head
    with pytest.raises(MessageError, match="nested too deeply"):
        decode_message(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))


# ------------------------------------------------------------------ items 20 and 21
def test_more_topics_than_words_is_refused_before_training():
    c = lda_corpus(n_docs=6, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    with pytest.raises(DPTopicError, match="n_topics=30 exceeds the vocabulary size 20"):
        FedLDA(n_topics=30, rounds=1, pad_length=16, verbose=0).fit(c)
    with pytest.raises(DPTopicError, match="exceeds the vocabulary size"):
        FedClient("u", c, RRPConfig(30, 5.0, pad_length=16), np.random.default_rng(0))


@pytest.mark.parametrize("eps", [1e-300, 1e-3])
def test_epsilon_too_small_for_the_vocabulary_is_one_line(eps):
    c = lda_corpus(n_docs=6, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    with pytest.raises(DPTopicError, match="too small for a vocabulary of 20 words") as e:
        FedLDA(n_topics=2, epsilon_per_entry=eps, rounds=1, pad_length=16, exclusion="floor", verbose=0).fit(c)
    assert "\n" not in str(e.value)


def test_coincide_with_tiny_epsilon_still_runs():
    m, _ = _fit(epsilon_per_entry=1e-300, variant="coincide", exclusion="floor")
    assert m.privacy_["epsilon_basic"] > 0


@pytest.mark.parametrize("bad", [["--topics", "100000"], ["--epsilon-per-entry", "1e-300", "--exclusion", "floor"],
                                 ["--epsilon", "1e308"], ["--subset-size", "20"]])
def test_cli_refuses_fed_settings_in_one_line(tmp_path, capsys, bad):
    from dptopic.cli.main import main

    c = lda_corpus(n_docs=10, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    path = c.save(tmp_path / "c.npz")
    args = ["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--pad-length", "16",
            "--topics", "2", "--out", str(tmp_path / "m"), "--quiet"]
    try:
        rc = main(args + bad)
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" in err.lower()
    assert len(err.strip().splitlines()) <= 2
    assert not (tmp_path / "m").exists()


# ------------------------------------------------------------------ item 24
def _client():
    c = lda_corpus(n_docs=4, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus
    cfg = RRPConfig(2, 5.0, pad_length=64)
    return FedClient("u", c, cfg, np.random.default_rng(4)), c


@pytest.mark.parametrize("poison", ["nan", "neg", "zero", "inf", "unnormalised"])
def test_refused_broadcast_leaves_client_state_bit_for_bit(poison):
    client, c = _client()
    phi = np.full((2, 20), 1 / 20)
    if poison == "nan":
        phi[0, 3] = np.nan
    elif poison == "neg":
        phi[1, 0], phi[1, 1] = -0.05, 0.15
    elif poison == "zero":
        phi[0, 0], phi[0, 1] = 0.0, 0.1
    elif poison == "inf":
        phi[1, 2] = np.inf
    else:
        phi *= 3
    before = (client.z.copy(), client.ndk.copy(), client._rng.bit_generator.state, client.n_truncated)
    with pytest.raises(DPTopicError, match="broadcast phi must hold finite, positive probabilities"):
        client.run_round(ModelBroadcast(0, client.vocab, phi).encode())
    assert client.z.tobytes() == before[0].tobytes() and client.ndk.tobytes() == before[1].tobytes()
    assert client._rng.bit_generator.state == before[2] and client.n_truncated == before[3]
    # a good broadcast still works afterwards
    client.run_round(ModelBroadcast(0, client.vocab, np.full((2, 20), 1 / 20)).encode())


def test_two_first_runs_at_once_keep_one_set_of_reports(tmp_path):
    from dptopic.contributor.client import _create_fed_state, _load_fed_state

    key = {"vocabulary_sha256": "x", "epsilon": 5.0, "entries": 2, "words_per_report": 1, "exclusion": "none"}
    p = tmp_path / "s.json"
    assert _create_fed_state(p, key, "first", [[1], [2]]) is True
    assert _create_fed_state(p, key, "second", [[3], [4]]) is False     # the later run finds the first's reports
    cid, sets = _load_fed_state(p, key, None)
    assert cid == "first" and sets.tolist() == [[1], [2]]
    assert (p.stat().st_mode & 0o777) == 0o600 and [q.name for q in tmp_path.iterdir()] == ["s.json"]


BAD = [("sample_ratio", 2.0), ("sample_ratio", -1.0), ("pad_length", 0), ("pad_length", 10 ** 7 + 1),
       ("pad_length", 8.5), ("n_topics", 0), ("alpha", -1.0), ("alpha", float("nan")), ("subset_size", 2.5), ("subset_size", True),
       ("local_iter", 0), ("exclusion", "bogus"), ("variant", "bogus")]


@pytest.mark.parametrize("name,value", BAD)
def test_a_setting_out_of_range_is_refused_in_one_line_before_anything_is_drawn(name, value):
    words = make_words(10)
    c = corpus_of([" ".join(words[:8])], words)
    kw = {"n_topics": 2, "epsilon_per_entry": 3.0, "pad_length": 8, name: value}
    with pytest.raises(DPTopicError, match=f"^invalid {name}=") as e:
        FedClient("u", c, RRPConfig(**kw), np.random.default_rng(0), secure=True)
    assert "\n" not in str(e.value)


def test_the_participants_ranges_are_fedlda_s():
    from dptopic.models.fedlda import FedLDA
    from dptopic.protocol.fedlda import PROTOCOL_RULES

    rules = PROTOCOL_RULES
    assert set(rules) == {"n_topics", "epsilon_per_entry", "failure_rate", "gamma", "pad_length", "sample_ratio",
                          "alpha", "local_iter", "variant", "exclusion", "replacement", "subset_size", "local_inference"}
    for name, r in rules.items():
        mine = [c for c in FedLDA._parameter_constraints[name] if type(c).__name__ != "IsNone"]
        assert r == mine, name


def test_rrpconfig_refuses_its_old_names_in_one_line_naming_the_new_ones():
    from dptopic.protocol.fedlda import RRPConfig

    for old, new in (("epsilon", "epsilon_per_entry"), ("delta", "failure_rate")):
        with pytest.raises(DPTopicError, match=rf"RRPConfig\({old}=\) is now {new}=") as e:
            RRPConfig(3, **({"epsilon": 2.0} if old == "epsilon" else {"epsilon_per_entry": 2.0, "delta": 0.1}))
        assert "\n" not in str(e.value)
    assert RRPConfig(3, epsilon_per_entry=2.0, failure_rate=0.2).failure_rate == 0.2


def test_the_wire_names_the_per_entry_epsilon_and_a_participant_still_reads_an_older_server():
    from dptopic.protocol.codec import fed_config_dict, fed_config_from_dict
    from dptopic.protocol.fedlda import RRPConfig

    cfg = RRPConfig(3, 2.5, 0.05, pad_length=40)
    d = fed_config_dict(cfg)
    assert (d["epsilon_per_entry"], d["failure_rate"]) == (2.5, 0.05) and "epsilon" not in d and "delta" not in d
    assert fed_config_from_dict(d) == cfg
    older = {**{k: v for k, v in d.items() if k not in ("epsilon_per_entry", "failure_rate")},
             "epsilon": 2.5, "delta": 0.05}                    # a server before the rename: the same meanings
    assert fed_config_from_dict(older) == cfg
# ``dptopic.contributor.fedlda``.


def test_a_secure_fedlda_clients_labels_come_from_a_generator_no_text_dependent_draw_has_moved(monkeypatch):
    """In secure mode the labels sent every round came from the PCG64 stream that first drew the start of the
    user's token topics and the entries' sample, a number of draws that depends on the token count. They now come
    from a generator of their own: with its OS seed fixed here, two users with the same reports' shape but different
    token counts start from the same labels."""
    import secrets as _secrets

    from dptopic.contributor.fedlda import FedClient
    from dptopic.protocol.fedlda import RRPConfig

    monkeypatch.setattr(_secrets, "randbits", lambda k: 12345)
    words = [f"w{i}" for i in range(30)]
    short = Corpus.from_tokens([["w1", "w2", "w3"]], vocabulary=words)
    long = Corpus.from_tokens([[f"w{i % 30}" for i in range(37)], ["w4"] * 9], vocabulary=words)
    cfg = RRPConfig(3, 4.0, pad_length=20)
    a = FedClient("a", short, cfg, np.random.default_rng(7), secure=True)
    b = FedClient("b", long, cfg, np.random.default_rng(7), secure=True)
    np.testing.assert_array_equal(a.rz, b.rz)
    phi = np.full((3, 30), 1 / 30)
    a.local_sampling(phi), b.local_sampling(phi)
    assert a.rz.shape == b.rz.shape == (20,)
    # a simulation (no secure) keeps one seeded stream, as before: its figures reproduce
    c = FedClient("c", short, cfg, np.random.default_rng(7))
    assert c._label_rng is c._rng
