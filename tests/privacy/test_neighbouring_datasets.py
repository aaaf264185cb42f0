"""Every release of a training run moves by at most the sensitivity its noise was calibrated for, between two
neighbouring datasets of the catalogue (tests/privacy/conftest.py: PAIRS), with the noise held fixed: the run on D'
replays the outputs of the run on D. Parametrised by pair x trainer x front door (the library's fit, with
``split_for`` where the pair holds documents out as a training run does; ``dptopic train`` in-process)."""
import pytest

from dptopic.errors import DPTopicError


def test_each_release_moves_within_its_sensitivity(harness, pair, trainer, front, tmp_path):
    train = harness.train[front]
    if pair.refused:        # ids that differ by an invisible character: refused, naming the id's row, nothing drawn
        with pytest.raises(DPTopicError, match="invisible control or format character"):
            train(pair, trainer, pair.d, tmp_path / "d")
        return
    a = train(pair, trainer, pair.d, tmp_path / "d")
    b = train(pair, trainer, pair.d2, tmp_path / "d2", replay=a)
    assert a.releases, "the run released nothing: the harness would check nothing"
    # DP set union's histogram is accounted by its own theorem (Gopi et al. 2020), whose coupling is the users'
    # random order, not the same draws: the releases after it follow the same vocabulary by replay
    harness.within_sensitivity(a, b, skip=1 if pair.options.get("private_vocabulary") else 0)


def test_the_harness_catches_a_release_beyond_its_sensitivity(harness, tmp_path):
    """The check can fail: a person of 20 copies of a document moves a document-level release by 20."""
    base = harness.background(11, people=8)
    d = base.plus([["wba", "wbb", "wbc"]] * 20, "twenty")
    pair = harness.Pair("twenty copies", "document", d, d.without_user("twenty"))
    a = harness.train["library"](pair, "docdp-cooc", pair.d, tmp_path / "a")
    b = harness.train["library"](pair, "docdp-cooc", pair.d2, tmp_path / "b", replay=a)
    worst = max(m for _, m, _, _ in harness.moved(a, b))
    assert worst > 10
    try:
        harness.within_sensitivity(a, b)
    except AssertionError as e:
        assert "moved" in str(e) and "sensitivity 1" in str(e)
    else:
        raise AssertionError("the harness let a release move by 20 pass")


def test_the_harness_reads_the_sensitivity_from_the_release_plan(harness, tmp_path, monkeypatch):
    """The sensitivity each release is held to is the one its trainer's plan states: a plan that understated it (a
    co-occurrence release planned for half of what one document moves) fails the check."""
    import dataclasses

    from dptopic.accounting import plan as plans

    base = harness.background(12, people=10)
    pair = harness.Pair("one document", "document", base, base.without_document(0))
    a = harness.train["library"](pair, "docdp-cooc", pair.d, tmp_path / "a")
    b = harness.train["library"](pair, "docdp-cooc", pair.d2, tmp_path / "b", replay=a)
    harness.within_sensitivity(a, b)            # the plan as calibrated: within it
    worst = max(m for label, m, _, _ in harness.moved(a, b) if label == plans.COOC_STATISTIC)
    assert worst > 0.5
    true_release = plans.docdp_cooc_release
    monkeypatch.setattr(plans, "docdp_cooc_release",
                        lambda *a, **k: dataclasses.replace(true_release(*a, **k), sensitivity=0.5))
    a = harness.train["library"](pair, "docdp-cooc", pair.d, tmp_path / "a2")
    b = harness.train["library"](pair, "docdp-cooc", pair.d2, tmp_path / "b2", replay=a)
    with pytest.raises(AssertionError, match="sensitivity 0.5"):
        harness.within_sensitivity(a, b)


def test_the_split_keeps_every_other_person_on_their_side(harness):
    """A user-level training run's held-out split: removing one person moves no other person's documents between the
    parts (dptopic.training.by_unit.split_for), whatever copies of one message they share."""
    from dptopic.corpus import Vocabulary
    from dptopic.models import DocDPCooccurrence
    from dptopic.training.by_unit import split_for

    pair = next(p for p in harness.PAIRS if p.unit == "user" and p.split)
    vocab = Vocabulary(harness.WORDS)
    model = DocDPCooccurrence(n_topics=2, unit="user")
    train_d, _ = split_for(model, pair.d.corpus(vocab), 0.2)
    train_d2, _ = split_for(model, pair.d2.corpus(vocab), 0.2)
    mine = sorted(u for u in train_d.user_ids if u != "P")
    assert sorted(train_d2.user_ids) == mine, (f"{len(set(mine) ^ set(train_d2.user_ids))} people changed side, and"
                                              f" {abs(len(mine) - train_d2.n_docs)} documents, when one person was"
                                              " removed")


def test_the_rectangular_release_draws_the_noise_its_plan_calibrated(tmp_path):
    """``vectors_route="rectangular"``: its co-occurrence release is calibrated for sensitivity 1 with the plan's
    noise multiplier, and the noise drawn on its cells (the release less the statistic) has mean 0 and that standard
    deviation, within a few standard errors."""
    import warnings

    import numpy as np

    from dptopic.accounting.plan import COOC_STATISTIC
    from dptopic.corpus import lda_corpus
    from dptopic.mechanisms.observer import observing
    from dptopic.models import DocDPCooccurrence

    planted = lda_corpus(n_docs=800, vocab_size=300, n_topics=4, doc_length=30, alpha=0.1, beta=0.05, seed=8)
    words = list(planted.corpus.vocabulary.words)
    rng = np.random.default_rng(0)
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=6)) for w in words) + "\n")
    model = DocDPCooccurrence(n_topics=4, epsilon=1.0, seed=3, public_vectors=str(path), vectors_route="rectangular",
                              n_words=120, max_false_words=None)
    records = []
    with observing(records.append), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(planted.corpus)
    release = next(r for r in records if r.label == COOC_STATISTIC)
    planned = model.release_plan(n_words=300).release("co-occurrence statistic").event.noise_multiplier
    assert release.sensitivity == 1.0 and release.norm == "l2"
    assert release.scale == pytest.approx(planned) and model.noise_std_ == pytest.approx(planned)
    noise = (release.noisy - release.values).ravel()
    n = noise.size
    assert release.noisy.shape[0] == 120 and release.noisy.shape[1] < 120 and n > 1000
    assert abs(noise.mean()) < 4 * planned / np.sqrt(n)
    # the sample variance's standard error is sigma^2 sqrt(2 / (n - 1)) for Gaussian noise
    assert abs(noise.var(ddof=1) / planned ** 2 - 1.0) < 4 * np.sqrt(2.0 / (n - 1))


@pytest.mark.parametrize("trainer", ["docdp-cooc", "docdp"])
def test_a_corpus_counted_a_block_at_a_time_moves_within_its_sensitivity(harness, tmp_path, monkeypatch, trainer):
    """A large corpus is read a few documents at a time and counted a block at a time at each pass
    (models._document_passes.COUNT_BLOCK_DOCS, corpus.TOKEN_BLOCK_DOCS, here 3 and 2): one document added moves each
    release by at most its sensitivity, the noise held fixed."""
    from dptopic.corpus import corpus as corpus_module
    from dptopic.models import _document_passes

    monkeypatch.setattr(_document_passes, "COUNT_BLOCK_DOCS", 3)
    monkeypatch.setattr(corpus_module, "TOKEN_BLOCK_DOCS", 2)
    blocks = []
    count = _document_passes.tokens_to_bow
    monkeypatch.setattr(_document_passes, "tokens_to_bow", lambda ptr, *a: blocks.append(len(ptr) - 1) or
                        count(ptr, *a))
    d = harness.background(11, people=8).plus([["wba", "wbb", "wbc", "wbd"]], "one")
    pair = harness.Pair("one document, counted in blocks", "document", d, d.without_user("one"))
    a = harness.train["library"](pair, trainer, pair.d, tmp_path / "d")
    b = harness.train["library"](pair, trainer, pair.d2, tmp_path / "d2", replay=a)
    assert a.releases and blocks and max(blocks) <= 3 and len(blocks) > 2     # counted in blocks, at each pass
    harness.within_sensitivity(a, b)
