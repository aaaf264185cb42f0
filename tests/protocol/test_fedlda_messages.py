"""``dptopic.protocol.fedlda_messages``."""
import json
import struct

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def test_a_fedlda_message_with_a_repeated_or_extra_array_or_a_surrogate_is_refused():
    from dptopic.protocol.fedlda_messages import MessageError, _encode, decode_message

    t = np.zeros(4, np.int32)
    w = np.ones((4, 1), np.int32)
    good = {"kind": "update", "round": 0, "client": "abcd", "vocab": "0" * 16}
    decode_message(_encode(good, {"topics": t, "words": w}))
    with pytest.raises(MessageError, match="carries the arrays topics, words only"):
        decode_message(_encode(good, {"topics": t, "words": w, "x": t}))
    raw = _encode(good, {"topics": t, "words": w})
    (hlen,) = struct.unpack("<I", raw[5:9])
    head = json.loads(raw[9:9 + hlen])
    head["arrays"].append(head["arrays"][1])            # "words" listed twice
    hb = json.dumps(head).encode()
    payload = raw[9 + hlen:-4] + w.astype("<i4").tobytes()
    import zlib

    body = raw[:5] + struct.pack("<I", len(hb)) + hb + payload
    with pytest.raises(MessageError, match="'words' is listed twice"):
        decode_message(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))
    with pytest.raises(MessageError, match="lone surrogate"):
        decode_message(_encode(dict(good, client="\ud800"), {"topics": t, "words": w}))


def test_a_fedlda_message_header_with_a_repeated_key_is_refused():
    """FedLDA message headers took the last of two values of a key (report headers refuse that): a reader that keeps
    the first would read another round or client from the same bytes."""
    import struct
    import zlib

    from dptopic.protocol.fedlda_messages import ClientUpdate, MessageError, decode_message

    u = ClientUpdate(3, "alice", "abcd", np.array([0, 1], np.int32), np.array([2, 3], np.int32))
    data = u.encode()
    assert decode_message(data).round == 3
    hlen = struct.unpack("<I", data[5:9])[0]
    head = data[9:9 + hlen]
    for doctored in (head.replace(b'"round":3', b'"round":3,"round":4'),
                     head.replace(b'"name":"topics"', b'"name":"topics","name":"words"')):
        assert doctored != head
        body = data[:5] + struct.pack("<I", len(doctored)) + doctored + data[9 + hlen:-4]
        bad = body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
        with pytest.raises(MessageError, match="more than once") as e:
            decode_message(bad)
        assert "\n" not in str(e.value)


def test_messages_round_trip():
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.protocol.fedlda_messages import (
        ClientUpdate,
        ModelBroadcast,
        decode_message,
        vocabulary_fingerprint,
    )

    c, _, _, _ = lda_corpus(n_docs=12, vocab_size=40, n_topics=3, doc_length=20, seed=5)
    fp = vocabulary_fingerprint(c.vocabulary.words)
    b = ModelBroadcast(3, fp, np.random.default_rng(0).dirichlet(np.ones(40), size=3))
    b2 = decode_message(b.encode())
    assert isinstance(b2, ModelBroadcast) and b2.round == 3 and b2.vocab == fp
    np.testing.assert_array_equal(b2.phi, b.phi)
    u = ClientUpdate(3, "u0", fp, np.arange(5, dtype=np.int32), np.arange(5, 10, dtype=np.int32))
    u2 = decode_message(u.encode())
    assert isinstance(u2, ClientUpdate) and (u2.round, u2.client, u2.vocab) == (3, "u0", fp)
    np.testing.assert_array_equal(u2.words, u.words)
    np.testing.assert_array_equal(u2.topics, u.topics)
