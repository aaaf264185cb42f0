"""``dptopic.federated.client``."""
import numpy as np
from dptopic.corpus import Corpus


def test_a_secure_fedlda_clients_labels_come_from_a_generator_no_text_dependent_draw_has_moved(monkeypatch):
    """In secure mode the labels sent every round came from the PCG64 stream that first drew the start of the
    user's token topics and the entries' sample, a number of draws that depends on the token count. They now come
    from a generator of their own: with its OS seed fixed here, two users with the same reports' shape but different
    token counts start from the same labels."""
    import secrets as _secrets

    from dptopic.federated.client import FedClient, RRPConfig

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
