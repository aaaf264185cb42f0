"""DocDPCooccurrence's public prior (``fit(..., public_corpus=)``, ``dptopic train --public-corpus``): the public part
is post-processing of the release and the public documents (it never reads the private ones, and spends nothing), the
card names the public input, the model says when it kept the public topics alone, and bad input is refused before
any noise is drawn."""
import json

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic.moments.public_prior as public_prior
from dptopic.accounting.card import privacy_card
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models import DocDPCooccurrence
from dptopic.moments.public_prior import extend_topics
from helpers import main_output

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def split():
    """A planted corpus of 400 documents over 120 words: 60 public, the rest private (disjoint)."""
    corpus = lda_corpus(n_docs=400, vocab_size=120, n_topics=4, doc_length=40, alpha=0.1, beta=0.05, seed=5).corpus
    return corpus.subset(np.arange(60)), corpus.subset(np.arange(60, 400))


def _model(**kw):
    return DocDPCooccurrence(n_topics=4, epsilon=2.0, n_words=40, background_share=None, seed=0, **kw)


def test_the_public_prior_reads_the_private_documents_no_more_and_spends_nothing(split):
    """The private documents, given as mini-batches, are read in the same number of passes with the public prior as
    without it, and the ledger holds the same releases with the same epsilon."""
    public, private = split
    X = private.to_bow()
    words = list(private.vocabulary.words)
    reads = []

    def batches():
        reads.append(1)
        return iter([X[:150], X[150:]])

    plain = _model().fit(batches, vocabulary=words)
    n_plain = len(reads)
    with_public = _model().fit(batches, vocabulary=words, public_corpus=public)
    assert len(reads) - n_plain == n_plain
    assert with_public.public_route_ in public_prior.ROUTES and plain.public_route_ is None
    a, b = plain.privacy_report(), with_public.privacy_report()
    assert b["epsilon"] == pytest.approx(a["epsilon"]) and b["parameters"]["steps"] == a["parameters"]["steps"]


def test_the_public_topics_are_post_processing_of_the_release(split, monkeypatch):
    """Two different private corpora over the same words, given the same noisy releases: the same topics. Whatever
    the public step computes, it computes from the releases and the public documents only."""
    public, private = split
    other = lda_corpus(n_docs=340, vocab_size=120, n_topics=4, doc_length=40, alpha=0.1, beta=0.05, seed=9).corpus
    words = list(private.vocabulary.words)
    releases = []
    real = DocDPCooccurrence._release

    def record(self, values, sigma, rng, label):
        out = real(self, values, sigma, rng, label)
        releases.append(out.copy())
        return out

    monkeypatch.setattr(DocDPCooccurrence, "_release", record)
    first = _model().fit(private, vocabulary=words, public_corpus=public)
    replay = iter(list(releases))
    monkeypatch.setattr(DocDPCooccurrence, "_release", lambda self, values, sigma, rng, label: next(replay))
    second = _model().fit(other.restrict(words), vocabulary=words, public_corpus=public)
    np.testing.assert_array_equal(first.components_, second.components_)
    # and the public documents do change the topics (the step is not a no-op)
    monkeypatch.setattr(DocDPCooccurrence, "_release", real)
    alone = _model().fit(private, vocabulary=words)
    assert not np.allclose(alone.components_, first.components_)


def test_the_card_names_the_public_input_and_a_saved_model_keeps_it(split, tmp_path):
    public, private = split
    _model().fit(private, public_corpus=public).save(tmp_path / "m")
    model = DocDPCooccurrence.load(tmp_path / "m")
    card = privacy_card(model.privacy_, "DocDPCooccurrence")
    entry = card["public_input"]
    assert entry["documents"] == public.n_docs and entry["covered"] is False
    assert "not protected by the epsilon" in entry["summary"]
    assert "public_input" not in privacy_card(_model().fit(private).privacy_report(), "DocDPCooccurrence")


def test_a_model_that_keeps_the_public_topics_says_so(split, monkeypatch):
    """When the public topics stand above the release's noise and the combined ones do not, the model keeps the public
    topics, warns, and its card says which route it took."""
    public, private = split
    calls = []

    def support(R, H, s):               # first call: the public topics; second: public + private
        calls.append(1)
        return np.full(len(H), len(calls) == 1)

    monkeypatch.setattr(public_prior, "cooccurrence_supported_topics", support)
    with pytest.warns(UserWarning, match="did not improve on the public documents' topics"):
        model = _model().fit(private, public_corpus=public)
    assert model.public_route_ == "public only"
    assert "from the public documents alone" in model.privacy_report()["public_input"]["summary"]


def test_public_and_private_together_recover_more_than_either_alone():
    """A planted corpus (6 topics over 400 words, short documents): 40 public documents and 1,000 private ones at
    epsilon 1. Over four seeds, the planted topics' coverage by the model with the public prior exceeds that of the
    private documents alone and of LDA on the public ones alone, each by more than three standard errors of the paired
    difference."""
    from dptopic.evaluation import topic_coverage
    from dptopic.models import LDA

    s = lda_corpus(n_docs=1040, vocab_size=400, n_topics=6, doc_length=30, alpha=0.3, beta=0.1, seed=11)
    public, private = s.corpus.subset(np.arange(40)), s.corpus.subset(np.arange(40, 1040))
    planted = (s.phi, list(s.corpus.vocabulary.words))
    both, alone, lda = [], [], []
    for seed in range(4):
        cover = lambda m: topic_coverage(m, planted)["coverage"]  # noqa: E731
        both.append(cover(DocDPCooccurrence(n_topics=6, epsilon=1.0, seed=seed).fit(private, public_corpus=public)))
        alone.append(cover(DocDPCooccurrence(n_topics=6, epsilon=1.0, seed=seed).fit(private)))
        lda.append(cover(LDA(n_topics=6, n_iter=100, seed=seed, verbose=0).fit(public)))
    for other in (alone, lda):
        d = np.array(both) - np.array(other)
        assert d.mean() > 3 * d.std(ddof=1) / np.sqrt(len(d)), (both, other)


@pytest.mark.parametrize("bad, fragment", [
    (["some text"], "must be a Corpus or a documents x words count matrix"),
    (sp.csr_matrix(np.ones((3, 7))), "has 7 columns but the vocabulary 120 words"),
    (-np.ones((3, 120)), "negative or non-finite counts"),
    (np.eye(120)[:5], "no document with two words of the vocabulary"),
])
def test_bad_public_input_is_refused_before_any_noise(split, bad, fragment):
    _, private = split
    model = _model()
    with pytest.raises(DPTopicError, match=fragment):
        model.fit(private, public_corpus=bad)
    assert not hasattr(model, "ledger_")        # nothing was spent


def test_extending_the_topics_gives_each_its_own_tail_words_from_the_public_documents():
    """Topic 0 is words 0-1 over the release's words, topic 1 words 2-3, and both spread their tail alike over words
    4-5; in the public documents word 4 comes with 0-1 and word 5 with 2-3. The extension moves each topic's tail onto
    its own word and keeps its own release words; no steps, no change."""
    beta = np.array([[0.4, 0.4, 0.0, 0.0, 0.1, 0.1], [0.0, 0.0, 0.4, 0.4, 0.1, 0.1]]) + 1e-6
    beta /= beta.sum(axis=1, keepdims=True)
    docs = sp.csr_matrix(np.array([[3, 3, 0, 0, 2, 0], [0, 0, 3, 3, 0, 2]] * 10, dtype=float))
    out = extend_topics(beta, docs, alpha=0.1)
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    assert out[0, 4] > 3 * out[0, 5] and out[1, 5] > 3 * out[1, 4]     # the prior (strength 1) keeps half the tail
    assert out[0, :2].sum() > 0.6 and out[1, 2:4].sum() > 0.6
    np.testing.assert_array_equal(extend_topics(beta, docs, alpha=0.1, steps=0), beta)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("public")
    topics = [["apple", "banana", "cherry", "grape", "melon", "peach", "plum", "berry"],
              ["engine", "wheel", "brake", "motor", "gear", "piston", "clutch", "tyre"]]
    rng = np.random.default_rng(0)
    for name, n in (("private.jsonl", 200), ("public.jsonl", 30)):
        (root / name).write_text("".join(json.dumps({"text": " ".join(rng.choice(topics[i % 2], size=15))}) + "\n"
                                         for i in range(n)))
    return root


def _extend_dense(beta, X, alpha, steps, strength=1.0):
    """extend_topics written with the dense documents x words model, as a NumPy reference."""
    X = np.asarray(X.todense(), dtype=np.float64)
    est, theta = beta.copy(), np.full((X.shape[0], beta.shape[0]), 1.0 / beta.shape[0])
    for _ in range(steps):
        for _ in range(5):
            theta = theta * ((X / np.maximum(theta @ est, 1e-300)) @ est.T) + alpha
            theta /= theta.sum(axis=1, keepdims=True)
        counts = est * ((X / np.maximum(theta @ est, 1e-300)).T @ theta).T
        est = counts + strength * beta * counts.sum(axis=1, keepdims=True) + 1e-12
        est /= est.sum(axis=1, keepdims=True)
    return est


def test_extending_the_topics_reads_only_the_public_documents_non_zero_cells():
    """The EM steps compute the model at the documents' words only (a dense documents x words product did not fit in
    memory for 150,000 dictionary definitions); they give the dense reference's topics."""
    rng = np.random.default_rng(3)
    X = sp.random(200, 40, density=0.15, random_state=4, format="csr")
    X.data = np.ceil(X.data * 5)
    beta = rng.dirichlet(np.ones(40), size=4)
    np.testing.assert_allclose(extend_topics(beta, X, 0.1, steps=7), _extend_dense(beta, X, 0.1, 7), rtol=1e-10,
                               atol=1e-15)


def test_train_public_corpus_names_it_on_the_card(files, tmp_path, capsys):
    rc, out, err = main_output(capsys, ["train", "--algorithm", "docdp-cooc", "--corpus", files / "private.jsonl",
                                 "--public-corpus", files / "public.jsonl", "--epsilon", "2", "--topics", "2",
                                 "--test-size", "0", "--out", tmp_path / "m"])
    assert rc in (0, None), err
    assert "public input" in out and "30 public documents" in out


@pytest.mark.parametrize("argv, fragment", [
    (["--algorithm", "docdp-cooc", "--public-corpus", "nowhere.jsonl"], "--public-corpus 'nowhere.jsonl': no such"),
    (["--algorithm", "docdp", "--public-corpus", "PUBLIC"], "--public-corpus"),
])
def test_train_public_corpus_refusals_are_one_line(files, tmp_path, capsys, argv, fragment):
    argv = [str(files / "public.jsonl") if x == "PUBLIC" else x for x in argv]
    rc, out, err = main_output(capsys, ["train", "--corpus", files / "private.jsonl", "--epsilon", "1", "--topics", "2",
                                 "--test-size", "0", "--out", tmp_path / "m", *argv])
    assert rc == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m").exists()


def test_a_loaded_public_prior_model_keeps_its_route_kept_words_and_report(split, tmp_path):
    import dptopic

    public, private = split
    m = _model().fit(private, public_corpus=public)
    loaded = dptopic.load(m.save(tmp_path / "m"))
    assert loaded.public_route_ == m.public_route_ in public_prior.ROUTES
    np.testing.assert_array_equal(loaded.kept_words_, m.kept_words_)
    assert loaded.privacy_report() == json.loads(json.dumps(m.privacy_))     # the report its fit made
    with pytest.raises(dptopic.errors.NotFittedError, match=r"^this DocDPCooccurrence is not fitted yet"):
        _model().privacy_report()


def test_the_private_corpus_given_as_public_is_refused_before_any_noise(split):
    """fit(X, public_corpus=X) was accepted: the card then listed the private documents as public input."""
    _, private = split
    for public in (private, private.subset(np.arange(40)), private.to_bow()):
        model = _model()
        with pytest.raises(DPTopicError, match="public_corpus"):
            model.fit(private, public_corpus=public)
        assert not hasattr(model, "ledger_")
    # documents of one corpus found in the other, by the fingerprint of each bag of words, in either form
    words = list(private.vocabulary.words)
    with pytest.raises(DPTopicError, match="holds 40 of the private documents"):
        _model().fit(private.to_bow(), vocabulary=words, public_corpus=private.subset(np.arange(40)))


def test_a_few_private_documents_among_the_public_ones_are_warned_of_not_refused(split):
    """500 public posts were refused because 2 were cross-posted private ones: the guarantee does not depend on it. A
    few are warned of, the count labelled outside the guarantee; a large share is still refused."""
    import warnings

    from dptopic.corpus import Corpus

    public, private = split
    mixed = Corpus.concatenate([public, private.subset(np.arange(2))]) if hasattr(Corpus, "concatenate") else None
    if mixed is None:
        bow = sp.vstack([public.to_bow(), private.subset(np.arange(2)).to_bow()]).tocsr()
        mixed = Corpus.from_bow(bow, vocabulary=list(public.vocabulary.words))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        public_prior.refuse_private_as_public(mixed, private)
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "2 of its 62 documents" in said[0] and "outside the guarantee" in said[0]
    with pytest.raises(DPTopicError, match="holds 5 of the private documents"):     # 5 of 65: large
        bow = sp.vstack([public.to_bow(), private.subset(np.arange(5)).to_bow()]).tocsr()
        public_prior.refuse_private_as_public(Corpus.from_bow(bow, vocabulary=list(public.vocabulary.words)),
                                              private)


def test_public_documents_of_the_domain_that_share_no_private_document_are_taken(split):
    public, private = split
    public_prior.refuse_private_as_public(public, private)        # disjoint: nothing to refuse
    short = public_prior.document_fingerprints(private.subset(np.arange(3)), words=["nothing-shared"])
    assert short == {}       # a document under MIN_FINGERPRINT_TOKENS tokens is never taken for a private one


@pytest.fixture
def no_noise(monkeypatch):
    """Every noise function a docdp-cooc run with --private-vocabulary draws from raises: a run that reaches one has
    spent budget."""
    import dptopic.mechanisms.gaussian
    import dptopic.models.docdp_cooc
    import dptopic.training.fdptm

    def drawn(*a, **k):
        raise AssertionError("noise was drawn")

    for module, name in ((dptopic.mechanisms.gaussian, "gaussian_mechanism"), (dptopic.models.docdp_cooc,
                                                                               "gaussian_mechanism"),
                         (dptopic.training.fdptm, "dp_set_union")):
        monkeypatch.setattr(module, name, drawn)


@pytest.mark.parametrize("public, fragment", [
    ("missing.jsonl", "--public-corpus 'missing.jsonl': no such file"),
    ("private.jsonl", "is the private --corpus"),
    ("../{root}/private.jsonl", "is the private --corpus"),
    ("link.jsonl", "is the private --corpus"),
    ("copy.jsonl", "of the private documents of --corpus 'private.jsonl'"),
    ("empty.jsonl", "--public-corpus 'empty.jsonl'"),
    ("words.txt", "--public-corpus 'words.txt' has no document with two different words"),
    ("body.jsonl", "--public-text-field"),
    ("data.xlsx", "--public-corpus 'data.xlsx': its extension '.xlsx' names no format"),
])
@pytest.mark.parametrize("vocabulary", [["--private-vocabulary", "1,1e-6"], []])
def test_a_bad_public_corpus_is_refused_in_one_line_before_any_noise(files, tmp_path, capsys, monkeypatch, no_noise,
                                                                     public, fragment, vocabulary):
    """--private-vocabulary drew its release before a missing --public-corpus was noticed; the private corpus was taken
    as public by the same path, a ../ path or a symlink; the read errors spoke of the private corpus."""
    import shutil

    monkeypatch.chdir(files)
    if not (files / "link.jsonl").exists():
        (files / "link.jsonl").symlink_to(files / "private.jsonl")
        shutil.copy(files / "private.jsonl", files / "copy.jsonl")
        (files / "empty.jsonl").write_text("")
        (files / "words.txt").write_text("apple\nbanana\nengine\n")
        (files / "body.jsonl").write_text('{"body": "apple banana cherry grape"}\n')
        (files / "data.xlsx").write_bytes(b"PK\x03\x04")
    public = public.format(root=files.name)
    rc, out, err = main_output(capsys, ["train", "--algorithm", "docdp-cooc", "--corpus", "private.jsonl",
                                        "--public-corpus", public, "--epsilon", "1", "--topics", "2", "--test-size",
                                        "0", "--out", tmp_path / "m", *vocabulary])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    assert "private vocabulary" not in out and not (tmp_path / "m").exists()


def test_the_public_text_field_is_its_own(files, tmp_path, capsys):
    """--text-field renamed both corpora's field: a private JSONL with 'body' and a public text file was refused."""
    (files / "private-body.jsonl").write_text("".join(json.dumps({"body": json.loads(line)["text"]}) + "\n" for line in
                                                      (files / "private.jsonl").read_text().splitlines()))
    (files / "public.txt").write_text("".join(json.loads(line)["text"] + "\n" for line in
                                              (files / "public.jsonl").read_text().splitlines()))
    rc, out, err = main_output(capsys, ["train", "--algorithm", "docdp-cooc", "--corpus", files / "private-body.jsonl",
                                        "--text-field", "body", "--public-corpus", files / "public.txt", "--epsilon",
                                        "2", "--topics", "2", "--test-size", "0", "--quiet", "--out", tmp_path / "m"])
    assert rc in (0, None), err
    assert "30 public documents" in out


def test_a_saved_model_trained_with_public_documents_is_not_refitted_nor_edited(split, tmp_path):
    """refit from a folder was accepted (the in-memory refusal read an attribute the folder does not keep), and the
    card then said the topics come from the public and private co-occurrence together."""
    import dptopic
    from dptopic.errors import CorruptModelError

    public, private = split
    folder = _model().fit(private, public_corpus=public).save(tmp_path / "m")
    with pytest.raises(DPTopicError, match="also read public documents"):
        dptopic.load(folder).refit(3)
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    for edit in (lambda d: d["privacy"].pop("public_input"), lambda d: d["privacy"]["public_input"].update(covered=True),
                 lambda d: d["privacy"]["public_input"].update(route="private only"),
                 lambda d: d["privacy"].update(public_input="none")):
        doc = json.loads(json.dumps(meta))
        edit(doc)
        (tmp_path / "m" / "model.json").write_text(json.dumps(doc))
        with pytest.raises(CorruptModelError, match="public"):
            dptopic.load(folder)
