"""A path given to an estimator where documents go: a prepared corpus or a shard folder is read, any other corpus
file is refused in one line naming the call that reads it, for every estimator's fit, partial_fit and transform
(through the shared base)."""
import json
import math
import os
import re
import shutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import dptopic
from dptopic import CDPLDA, HDPLDA, LDA, CDPLDAPlus
from dptopic.accounting.verify import verify_report
from dptopic.attacks.lira import ALGORITHMS
from dptopic.backends import ThreadBackend
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus.preprocess import TOKENIZER_VERSION
from dptopic.errors import BudgetExceededError, CorruptModelError, DPTopicError
from dptopic.models import base
from dptopic.models import base as model_base
from dptopic.models.docdp import DocDPEM
from dptopic.models.docdp_cooc import DocDPCooccurrence
from helpers import FAST, NASTY, PARAMS, base_kwargs, is_clean_number, mutations, works_or_refuses

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean".split()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paths")
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, 8)) for _ in range(30)]
    (tmp / "tweets.jsonl").write_text("".join(f'{{"text": "{t}"}}\n' for t in texts))
    (tmp / "docs.csv").write_text("text\n" + "\n".join(texts) + "\n")
    (tmp / "docs.tsv").write_text("id\ttext\n" + "".join(f"{i}\t{t}\n" for i, t in enumerate(texts)))
    (tmp / "docs.txt").write_text("\n".join(texts) + "\n")
    (tmp / "folder").mkdir()
    for i, t in enumerate(texts):
        (tmp / "folder" / f"{i}.txt").write_text(t)
    return tmp, texts


ESTIMATORS = [lambda: dptopic.LDA(n_topics=2, n_iter=2, verbose=0),
              lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, verbose=0),
              lambda: dptopic.DocDPEM(n_topics=2, verbose=0),
              lambda: dptopic.DocDPCooccurrence(n_topics=2, verbose=0),
              lambda: dptopic.FedLDA(n_topics=2, verbose=0),
              lambda: dptopic.OnlineVB(n_topics=2, verbose=0),
              lambda: dptopic.DPSVI(n_topics=2, verbose=0)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("name,call", [("tweets.jsonl", "dptopic.Corpus.from_jsonl("),
                                       ("docs.csv", "dptopic.Corpus.from_csv("),
                                       ("docs.tsv", "delimiter='\\t'"),
                                       ("docs.txt", "dptopic.Corpus.from_texts(open("),
                                       ("folder", "dptopic.Corpus.from_directory(")])
def test_fit_on_a_corpus_file_path_names_the_call_that_reads_it(files, make, name, call):
    tmp, _ = files
    model = make()
    path = str(tmp / name)
    with pytest.raises(DPTopicError) as e:
        model.fit(path)
    msg = str(e.value)
    assert "corrupt corpus shard" not in msg and "\n" not in msg
    assert msg.startswith(f"{type(model).__name__} reads a path only as a prepared corpus (.npz) or a shard folder")
    assert repr(path) in msg and call in msg, msg
    if hasattr(model, "partial_fit"):
        with pytest.raises(DPTopicError, match=re.escape(call)):
            make().partial_fit(path)


def test_the_calls_named_read_the_files(files):
    tmp, texts = files
    for corpus in (dptopic.Corpus.from_jsonl(str(tmp / "tweets.jsonl"), text_field="text"),
                   dptopic.Corpus.from_csv(str(tmp / "docs.csv"), text_column="text"),
                   dptopic.Corpus.from_csv(str(tmp / "docs.tsv"), text_column="text", delimiter="\t"),
                   dptopic.Corpus.from_directory(str(tmp / "folder")),
                   dptopic.Corpus.from_texts(open(str(tmp / "docs.txt"), encoding="utf-8").read().splitlines())):
        assert corpus.n_docs == len(texts)


def test_transform_on_a_path_names_the_call_that_reads_it_in_the_models_words(files):
    tmp, texts = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(texts)
    path = str(tmp / "tweets.jsonl")
    for method in ("transform", "perplexity", "score"):
        with pytest.raises(DPTopicError, match=re.escape("vocabulary=model.vocabulary_")) as e:
            getattr(model, method)(path)
        assert str(e.value).startswith("LDA takes documents here, not a path") and repr(path) in str(e.value)
    theta = model.transform(dptopic.Corpus.from_jsonl(path, text_field="text", vocabulary=model.vocabulary_))
    assert theta.shape == (len(texts), 2)


def test_a_prepared_corpus_path_still_trains(files):
    tmp, texts = files
    corpus = dptopic.Corpus.from_texts(texts)
    saved = corpus.save(tmp / "prepared.npz")
    model = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(str(saved))
    assert model.components_.shape == (2, corpus.vocab_size)


TEXTS = (["the budget deficit fell by 30 percent in 1999 and the fiscal year closed with 000 jobs added"] * 3
         + ["our army and navy defend the nation at sea and on land with 10 new ships"] * 3
         + ["schools teachers and students need education funding for every child"] * 3) * 8


def test_an_infinite_epsilon_is_a_float_again_after_loading(tmp_path):
    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(TEXTS)
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    assert isinstance(back.privacy_["epsilon"], float) and math.isinf(back.privacy_["epsilon"])


DOCS = [["Running", "e-mail", "C++", "writes:", "runs"], ["apple", "pear", "runs"]] * 5


def _lda(X):
    return dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X)


def test_token_lists_are_recorded_as_the_caller_s_tokens_and_raw_text_warns(tmp_path):
    """A model fitted on token lists recorded dptopic's tokeniser ('runs of letters ... lower-cased') as the maker of
    its words, and raw text read into it (which never yields 'C++' or 'e-mail') gave proportions without a word. Words
    of letters in any case are read in the vocabulary's own case, so they are not named."""
    m = _lda(DOCS)
    assert m.tokenizer_["source"] == "token lists" and "caller's tokeniser" in m.tokenizer_["tokens"]
    with pytest.warns(UserWarning, match=r"'C\+\+'.*came from the tokenised documents"):
        m.transform(["Running e-mail C++ writes: it runs"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform([["Running", "C++"]])                       # tokens are read exactly: no warning
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    assert loaded.tokenizer_["source"] == "token lists"
    with pytest.warns(UserWarning, match="came from the tokenised documents"):
        loaded.transform(["Running e-mail"])
    plain = _lda([["NASA", "apple"], ["pear", "runs"]] * 5)       # words dptopic's tokeniser reads: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theta = plain.transform(["NASA apple"])
    assert not np.allclose(theta, plain.transform(["pear runs"]))   # 'NASA' is counted, as written
    assert "source" not in _lda(["running apple", "pear runs"] * 5).tokenizer_


@pytest.mark.parametrize("bow", [[[(0, 2), (1, 1)], [(2, 3), (3, 1)], [(1, 1)]],
                                 [[(0, 2), (1, 1)], [(2, 3), (3, 1)]]])
def test_gensim_bag_of_words_is_refused_with_the_conversion(bow):
    """gensim's corpus (lists of (id, count) pairs) was read as an array: 'give a 2-D array of counts' or 'it has 3
    dimension(s)', with no word of the format or of what to pass."""
    with pytest.raises(DPTopicError, match=r"gensim's bag-of-words corpus.*corpus2csc\(bow, num_terms"):
        _lda(bow)
    m = _lda([["apple", "pear"], ["runs", "pear"]] * 3)
    with pytest.raises(DPTopicError, match="gensim's bag-of-words corpus"):
        m.transform(bow)
    assert _lda([[0, 2, 1], [3, 0, 1]]).components_.shape == (2, 3)     # a count matrix of nested lists still reads


def test_bad_input_and_roundtrip(tmp_path):
    with pytest.raises(DPTopicError):
        DocDPEM(epsilon=0).fit(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(DPTopicError):
        DocDPEM(delta=1.5).fit(sp.csr_matrix(np.ones((3, 4))))
    c = lda_corpus(n_docs=30, vocab_size=30, n_topics=2, doc_length=15, seed=2).corpus
    m = DocDPEM(n_topics=2, n_iter=2, seed=0).fit(c)
    m.save(tmp_path / "m")
    m2 = dptopic.load(tmp_path / "m")
    assert isinstance(m2, DocDPEM)
    np.testing.assert_array_equal(m.components_, m2.components_)
    assert m2.topic_words(3) == m.topic_words(3)
    import json

    assert json.loads((tmp_path / "m" / "model.json").read_text())["params"]["seed"] is None
    assert m2.privacy_["epsilon"] <= 1.0 and m2.transform(c).shape == (c.n_docs, 2)


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_report_accounting_and_roundtrip(tmp_path):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    c = lda_corpus(n_docs=60, vocab_size=50, n_topics=3, doc_length=20, seed=1).corpus
    m = DocDPCooccurrence(max_false_words=None, n_topics=3, epsilon=1.0, delta=1e-5, n_words=20, seed=0).fit(c)
    rep = m.privacy_
    assert rep["unit"] == "document" and "add/remove" in rep["neighbouring_relation"]
    assert rep["epsilon"] <= 1.0 + 1e-9 and rep["delta"] == 1e-5
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(m.ranking_noise_std_)).compose(dp_event.GaussianDpEvent(m.noise_std_))
    assert rep["epsilon"] == pytest.approx(acc.get_epsilon(1e-5), rel=2e-2)
    assert "NOT covered" in rep["scope"] and "Koskela" in rep["theorem"]
    assert len(m.kept_words_) == 20 and np.allclose(m.components_.sum(1), 1)
    # with every word kept there is a single release and no ranking
    m1 = DocDPCooccurrence(max_false_words=None, n_topics=3, epsilon=1.0, n_words=50, seed=0).fit(c)
    assert m1.ranking_noise_std_ is None and m1.noise_std_ == pytest.approx(3.73, abs=0.02)
    m.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["params"]["seed"] is None
    m2 = dptopic.load(tmp_path / "m")
    assert isinstance(m2, DocDPCooccurrence)
    np.testing.assert_array_equal(m2.components_, m.components_)
    assert m2.transform(c).shape == (c.n_docs, 3) and np.isfinite(m2.perplexity(c, n_iter=5, burn_in=2))


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=120, vocab_size=60, n_topics=3, seed=0).corpus


def _models():
    return [
        ("LDA", lambda: dptopic.LDA(3, n_iter=15, seed=0, verbose=0)),
        ("OnlineVB", lambda: dptopic.OnlineVB(3, seed=0) if hasattr(dptopic, "OnlineVB") else None),
        ("DocDPEM", lambda: dptopic.DocDPEM(3, epsilon=5.0, delta=1e-5, seed=0)),
        ("DocDPCooccurrence", lambda: dptopic.DocDPCooccurrence(3, epsilon=5.0, delta=1e-5, seed=0)),
    ]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name,make", _models(), ids=[n for n, _ in _models()])
def test_set_params_after_fit_leaves_inference_as_fitted_and_as_reloaded(corpus, tmp_path, name, make):
    m = make()
    if m is None:
        pytest.skip(f"{name} not exported")
    m.fit(corpus)
    before = m.transform(corpus, seed=3)
    perp = m.perplexity(corpus, seed=3)
    m.set_params(alpha=7.0)
    assert m.get_params()["alpha"] == 7.0          # the next fit's α
    after = m.transform(corpus, seed=3)
    np.testing.assert_array_equal(after, before)
    assert m.perplexity(corpus, seed=3) == perp
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    np.testing.assert_allclose(back.transform(corpus, seed=3), after, rtol=0, atol=1e-12)


def _one_line_corrupt(folder):
    import dptopic

    with pytest.raises(CorruptModelError) as e:
        dptopic.load(folder)
    assert "\n" not in str(e.value) and str(e.value).count("re-save the model") == 1
    assert str(e.value).count("corrupt model") == 1
    return str(e.value)


@pytest.mark.filterwarnings('ignore')
def test_a_fifo_in_a_model_folder_is_refused_not_waited_on(saved_local_models, tmp_path):
    import shutil

    for name in ("model.json", "components.npy"):
        folder = tmp_path / name.replace(".", "_")
        shutil.copytree(saved_local_models / "lp", folder)
        (folder / name).unlink()
        os.mkfifo(folder / name)
        msg = _one_line_corrupt(folder) if name != "model.json" else None
        if msg is None:
            with pytest.raises(CorruptModelError, match="not a regular file"):
                import dptopic

                dptopic.load(folder)
        else:
            assert "not a regular file" in msg


def test_save_load_roundtrip(planted, tmp_path):
    m = LDA(5, n_iter=20, seed=0, verbose=0).fit(planted.corpus)
    d = m.save(tmp_path / "model")
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert meta["privacy"]["private"] is False and meta["privacy"]["epsilon"] == "inf"
    assert meta["class"] == "LDA" and meta["params"]["n_topics"] == 5
    m2 = dptopic.load(d)
    assert np.array_equal(m2.components_, m.components_) and m2.vocabulary_ == m.vocabulary_
    assert m2.perplexity(planted.corpus.subset(range(10))) == pytest.approx(m.perplexity(planted.corpus.subset(range(10))))
    # saving again replaces atomically, leaving no temp dirs behind
    m.save(tmp_path / "model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_corrupt_model_files(planted, tmp_path):
    m = LDA(5, n_iter=5, seed=0, verbose=0).fit(planted.corpus)
    d = tmp_path / "m"
    m.save(d)
    (d / "components.npy").write_bytes(b"garbage")
    with pytest.raises(CorruptModelError, match="components.npy"):
        dptopic.load(d)
    m.save(d)
    (d / "model.json").write_text("{not json")
    with pytest.raises(CorruptModelError, match="not valid JSON"):
        dptopic.load(d)
    with pytest.raises(DPTopicError, match="does not hold a dptopic"):  # unreadable metadata: not provably ours
        m.save(d)
    d = tmp_path / "m2"
    m.save(d)
    np.save(d / "components.npy", np.ones((5, 3)))
    with pytest.raises(CorruptModelError, match="not the file this model.json was saved with"):
        dptopic.load(d)                     # model.json records each array file's digest
    meta = json.loads((d / "model.json").read_text())
    del meta["array_sha256"]                # as a folder saved before digests were recorded: the shape is checked
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="K×V"):
        dptopic.load(d)
    with pytest.raises(DPTopicError, match="does not exist"):
        dptopic.load(tmp_path / "nope")


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).poisson(1.0, (40, 12))


@pytest.fixture(scope="module")
def fitted(X):
    return {"LDA": dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0).fit(X),
            "OnlineVB": dptopic.OnlineVB(n_topics=2, n_epochs=2, seed=0, verbose=0).fit(X)}


@pytest.mark.parametrize("name", ["LDA", "OnlineVB"])
@pytest.mark.parametrize("sparse", [False, True])
def test_input_without_rows_is_named_as_scikit_learn_names_it(fitted, X, name, sparse):
    empty = sp.csr_matrix(X[:0]) if sparse else X[:0]
    with pytest.raises(DPTopicError, match=r"X has 0 documents \(shape=\(0, 12\)\) while a minimum of 1 is required"):
        fitted[name].transform(empty)


def test_every_trainer_report_verifies_before_and_after_saving(private_models, tmp_path):
    for i, m in enumerate(private_models):
        v = verify_report(m.privacy_)
        assert v.status == "verified", (type(m).__name__, v.detail)
        assert "epsilon_pld" in v.figures and v.figures["epsilon_pld"]["stated"] == pytest.approx(
            v.figures["epsilon_pld"]["recomputed"], rel=1e-9)
        m.save(tmp_path / str(i))
        back = dptopic.load(tmp_path / str(i))
        assert verify_report(back.privacy_).status == "verified", type(m).__name__


def test_the_saved_claim_is_checked_before_load_names_it_again(private_models, tmp_path):
    d = tmp_path / "m"
    private_models[0].save(d)                                         # HDP-LDA, word level
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"]["epsilon"] = meta["privacy"]["epsilon"] / 2
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="epsilon is stated as"):
        dptopic.load(d)
    old = json.loads(json.dumps(private_models[0].privacy_))         # a report saved before 'epsilon' named the guarantee
    del old["epsilon"], old["epsilon_method"]
    assert verify_report(old).status == "verified"


def test_load_refuses_a_report_that_claims_more_than_its_events(private_models, tmp_path):
    d = tmp_path / "m"
    private_models[2].save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"]["epsilon_pld"] = meta["privacy"]["epsilon_pld"] / 2
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="does not match its own events"):
        dptopic.load(d)


def test_every_trainer_report_matches_what_its_parameters_plan(private_models):
    from dptopic.models.base import planned_spend_check

    checked = set()
    for m in private_models:
        v = planned_spend_check(verify_report(m.privacy_), m, m.privacy_)
        assert v.status == "verified", (type(m).__name__, v.detail)
        if m._planned_spend(m.privacy_) is not None:
            checked.add(type(m).__name__)
            assert "match what" in v.detail
    # the trainers whose events follow from their parameters, and LP-LDA, whose plan fixes only its unit and
    # relation (local reports carry their own events)
    assert checked == {"HDPLDA", "DPSVI", "DocDPCooccurrence", "DocDPEM", "FedLDA", "LPLDA"}


@pytest.mark.parametrize("i, field, value", [
    (0, "unit", "document"),                          # HDP-LDA: word-level, edited to claim a whole document
    (0, "neighbouring_relation", "add/remove one document"),
    (1, "unit", "user"),                              # DP-SVI: document-level, edited to a user
    (2, "neighbouring_relation", "replace one user's documents"),
    (4, "unit", "document"),                          # FedLDA: per user
    (6, "unit", "word"),                              # LP-LDA: local, per document, edited to one word
    (6, "neighbouring_relation", "add/remove one document"),
    (7, "unit", "document"),                          # HDP-LDA on a private vocabulary: "document + word" edited
    (7, "topic_model.unit", "document"),
])
def test_a_unit_or_relation_edited_away_from_the_trainers_is_refused(private_models, tmp_path, i, field, value):
    # the figures still recompute from the events (they carry no unit), so only the trainer's own unit catches this
    d = tmp_path / "m"
    private_models[i].save(d)
    meta = json.loads((d / "model.json").read_text())
    rep = meta["privacy"]
    dptopic.load(d)                                   # as saved, it loads
    if "." in field:
        rep["topic_model"]["unit"] = value
    else:
        assert rep[field] != value
        rep[field] = value
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    assert verify_report(rep).status == "verified"
    with pytest.raises(CorruptModelError, match="names the (unit|neighbouring relation)"):
        dptopic.load(d)


@pytest.mark.parametrize("make", [
    lambda: LDA(5, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, epsilon_laplace=None, n_iter=2, seed=0, verbose=0),
    lambda: HDPLDA(5, paper_literal=True, n_iter=2, seed=0, verbose=0),
    lambda: CDPLDA(5, n_iter=2, seed=0, verbose=0),
    lambda: CDPLDAPlus(5, n_iter=2, seed=0, verbose=0),
])
def test_every_report_names_epsilon_delta_unit_relation_theorem(planted, make, tmp_path):
    m = make().fit(planted.corpus)
    for rep in (m.privacy_, dptopic.load(m.save(tmp_path / "m")).privacy_):
        for key in ("private", "unit", "neighbouring_relation", "theorem"):
            assert rep[key] not in (None, "")
        assert "delta" in rep and ("epsilon" in rep or "epsilon_basic" in rep)
        assert "replacement" in rep["neighbouring_relation"]
        if not rep["private"]:
            assert rep["epsilon"] in (float("inf"), "inf") and rep["delta"] is None and rep["reason"]


TEXTS_2 = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 3


CORPUS = Corpus.from_texts(TEXTS_2)


_MODEL = {}


def _fitted():
    if "m" not in _MODEL:
        _MODEL["m"] = dptopic.LDA(3, n_iter=3, seed=0, verbose=0).fit(CORPUS)
    return _MODEL["m"]


# ------------------------------------------------------------------ model files
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("saved") / "model"
    _fitted().save(d)
    return d


def _meta_paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _meta_paths(v, prefix + (k,))
    elif isinstance(obj, list) and obj:
        yield prefix + (0,)


JSONABLE = st.one_of(st.sampled_from([None, True, -5, 0, 999, 1e308, "nan", "abc", "../../x", "/etc/passwd", [],
                                      {}, ["LDA"], [1, 2]]), st.floats(allow_nan=False), st.text(max_size=4))


def test_every_estimator_has_numeric_parameters_covered():
    assert {a for a, _, _ in PARAMS} == set(ALGORITHMS)
    assert {"alpha", "beta", "n_topics", "n_iter"} <= {n for _, _, n in PARAMS}


@pytest.mark.parametrize("algo,cls,name", PARAMS, ids=[f"{a}-{n}" for a, _, n in PARAMS])
@FAST
@given(value=NASTY)
def test_estimator_parameter_validation(algo, cls, name, value):
    m = cls(**{**base_kwargs(cls), name: value})
    ok, _ = works_or_refuses(m._validate)
    if ok:   # what validation lets through is a finite, non-boolean number (verbose: or a bool, as scikit-learn)
        assert value is None or is_clean_number(value) or (name == "verbose" and isinstance(value, bool)), (name, value)


@FAST
@given(n=NASTY)
def test_topic_words_and_transform_arguments(n):
    m = _fitted()
    works_or_refuses(lambda: m.topic_words(n))
    ok, theta = works_or_refuses(lambda: m.transform(TEXTS_2[:2], n_iter=4, burn_in=2, seed=n))
    if ok:
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)


@FAST
@given(data=st.data())
def test_load_against_edited_json(saved, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("edit") / "model"
    shutil.copytree(saved, d)
    meta = json.loads((d / "model.json").read_text())
    path = data.draw(st.sampled_from(list(_meta_paths(meta))))
    node = meta
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = data.draw(JSONABLE)
    (d / "model.json").write_text(json.dumps(meta))
    ok, m = works_or_refuses(lambda: dptopic.load(d))
    if ok:
        assert np.all(np.isfinite(m.components_)) and m.components_.shape == (m.n_topics, len(m.vocabulary_))


@FAST
@given(data=st.data(), which=st.sampled_from(["model.json", "components.npy", "topic_word_counts.npy"]))
def test_load_against_damaged_files(saved, tmp_path_factory, data, which):
    d = tmp_path_factory.mktemp("dmg") / "model"
    shutil.copytree(saved, d)
    (d / which).write_bytes(data.draw(mutations((d / which).read_bytes())))
    works_or_refuses(lambda: dptopic.load(d))


TEXTS_3 = ["the rocket launch reached orbit", "the patient saw a doctor about the disease",
         "orbit of the moon and the rocket", "a doctor treats disease in the clinic"] * 10


@pytest.fixture()
def saved_2(tmp_path):
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(TEXTS_3)
    m.save(tmp_path / "m")
    return tmp_path / "m"


def _edit(path, version):
    meta = json.loads((path / "model.json").read_text())
    meta["tokenizer"]["version"] = version
    (path / "model.json").write_text(json.dumps(meta))


def test_the_saved_model_records_this_versions_tokenizer_and_keeps_it_on_resave(saved_2, tmp_path):
    assert json.loads((saved_2 / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION
    _edit(saved_2, TOKENIZER_VERSION - 1)
    dptopic.load(saved_2).save(tmp_path / "again")         # a re-save does not pretend to be this version's
    assert json.loads((tmp_path / "again" / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION - 1


def test_text_into_a_model_of_another_tokenizer_warns_and_tokens_do_not(saved_2):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptopic.load(saved_2).transform(["a rocket in orbit"])      # same version: silent
    _edit(saved_2, TOKENIZER_VERSION + 1)
    m = dptopic.load(saved_2)
    with pytest.warns(UserWarning, match=f"tokeniser version {TOKENIZER_VERSION + 1}"):
        m.transform(["a rocket in orbit"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform([["rocket", "orbit"]])                         # token lists are read exactly
    _edit(saved_2, 2)                                                # version 2 split ASCII text as version 3 does
    with pytest.warns(UserWarning, match=r"version 2 .*\(ASCII text[^)]* is read as it was then; other text may not be\)"):
        dptopic.load(saved_2).transform(["a rocket in orbit"])


@pytest.mark.parametrize("bad", [0, "2", None, 1.5])
def test_a_malformed_tokenizer_version_is_refused_at_load(saved_2, bad):
    _edit(saved_2, bad)
    with pytest.raises(DPTopicError, match="'tokenizer'"):
        dptopic.load(saved_2)


WORDS_3 = ["tax", "budget", "war", "army", "school", "teachers", "river", "bridge"]


def _reuse_warnings(caught):
    return [str(w.message) for w in caught if "already used by an earlier private fit" in str(w.message)]


# ------------------------------------------------------------------ finding 1: the re-used-documents fingerprint
def test_the_same_documents_as_text_a_corpus_or_counts_share_one_fingerprint():
    texts = ["war army war bridge", "tax budget school", "river bridge river tax", "teachers school war"]
    shuffled = [" ".join(reversed(t.split())) for t in texts]
    c = Corpus.from_texts(texts, vocabulary=WORDS_3)
    keys = list(base._document_keys(c))
    assert keys == list(base._document_keys(Corpus.from_texts(shuffled, vocabulary=WORDS_3)))   # token order
    assert keys == list(base._document_keys(Corpus.from_bow(c.to_bow(), vocabulary=WORDS_3)))   # a count matrix
    other = Corpus.from_texts(["war army bridge", "tax budget school school"], vocabulary=WORDS_3)
    assert not set(base._document_keys(other)) & set(keys[:1])        # the counts count, not only the words


@pytest.mark.filterwarnings("ignore::dptopic.errors.DataVocabularyWarning")
def test_a_refit_on_the_count_matrix_of_the_same_documents_counts_every_document():
    """A fit on a Corpus, then on its count matrix (GridSearchCV's folds, CountVectorizer): every document, duplicates
    included, is counted as re-used (not 1 of 100, nor the distinct ones only)."""
    from dptopic.corpus.synthetic import lda_corpus

    base._PRIVATE_DOCS.clear()
    c = lda_corpus(n_docs=60, vocab_size=30, n_topics=3, doc_length=20, seed=0).corpus
    c = c.subset(np.r_[np.arange(60), np.arange(10)])           # 10 documents twice: 70 documents, 60 distinct
    words = list(c.vocabulary.words)
    dptopic.DocDPEM(n_topics=3, epsilon=1.0).fit(c)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dptopic.DocDPEM(n_topics=3, epsilon=1.0).fit(c.to_bow(), vocabulary=words)
    said = _reuse_warnings(caught)
    assert len(said) == 1 and said[0].startswith("DocDPEM: 70 of these 70 training documents"), said
    assert "outside the guarantee" in said[0]       # exact counts of the private data, labelled
    base._PRIVATE_DOCS.clear()


def test_edited_text_claims_of_a_saved_report_are_refused(tmp_path):
    # walk C, finding 1: guarantee/vocabulary_source/secure_noise edited in model.json went onto the card as stored
    import json as _json
    import warnings as _warnings

    import numpy as np

    import dptopic
    from dptopic.errors import CorruptModelError

    X = np.random.default_rng(0).poisson(1.0, size=(60, 12))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, seed=0).fit(X).save(tmp_path / "m")   # data vocabulary
    meta = _json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["privacy"]["vocabulary_source"] == "data" and meta["privacy"]["guarantee"] == "partial"
    edits = {"full, supplied": lambda p: p.update(guarantee="full", vocabulary_source="supplied"),
             "full": lambda p: p.update(guarantee="full"),
             "private source": lambda p: p.update(vocabulary_source="private"),
             "odd source": lambda p: p.update(vocabulary_source="public"),
             "secure": lambda p: p.update(secure_noise=True)}
    for name, edit in edits.items():
        bad = _json.loads(_json.dumps(meta))
        edit(bad["privacy"])
        (tmp_path / "m" / "model.json").write_text(_json.dumps(bad))
        with pytest.raises(CorruptModelError, match="the file was edited|vocabulary source"):
            dptopic.load(tmp_path / "m")
    (tmp_path / "m" / "model.json").write_text(_json.dumps(meta))
    dptopic.load(tmp_path / "m")                                   # as saved: loads


class _LosesAShard(ThreadBackend):
    """The thread backend, but its second sweep reports shard 0 lost with ``lost`` sweeps to replay, as the Dask
    backend does when a worker dies (``sweep`` returns ``{shard: sweeps to redo}``)."""

    def __init__(self, *a, lost=2, **kw):
        super().__init__(*a, **kw)
        self._calls, self._lost = 0, lost

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        super().sweep(alpha, beta, word_table=word_table, clip=clip, shards=shards)
        if shards is None:
            self._calls += 1
            if self._calls == 2:
                return {0: self._lost}
        return {}


@pytest.mark.parametrize("lost", [2, 5])   # 2: a later planned sweep goes over; 5: a replay itself goes over
def test_a_budgeted_run_that_must_replay_says_a_worker_was_lost(tiny, monkeypatch, lost):
    # item 1: from_budget spends the whole budget on the plan, so any replay goes over it; the error used to say only
    # "raise the budget or run fewer iterations", never that a Dask worker had died
    monkeypatch.setattr(model_base, "make_backend", lambda name, n_jobs=1, client=None, parallel="adlda":
                        _LosesAShard(n_jobs, parallel, lost=lost))
    m = HDPLDA.from_budget(50.0, 1e-5, n_iter=4, n_topics=3, seed=0, verbose=0, backend="dask")
    with pytest.raises(BudgetExceededError) as e:
        m.fit(tiny.corpus)
    msg = str(e.value)
    assert f"after a Dask worker was lost: {lost} replayed sweep(s)" in msg and "exceed its budget" in msg
    assert "no headroom for replays" in msg and "threads" in msg and "\n" not in msg


def test_a_loaded_model_checks_a_dataframes_columns_as_the_fitted_one_does(tmp_path):
    pd = pytest.importorskip("pandas")
    import dptopic
    from dptopic.errors import DPTopicError

    df = pd.DataFrame(np.random.default_rng(0).poisson(1.0, (60, 6)), columns=list("abcdef"))
    m = dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0).fit(df)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.feature_names_in_, m.feature_names_in_)
    assert loaded.n_features_in_ == 6
    reordered = df[df.columns[::-1]]
    for model in (m, loaded):
        with pytest.raises(DPTopicError, match="columns"):
            model.transform(reordered[:1])
        with pytest.raises(DPTopicError, match="feature_names_in_"):
            model.get_feature_names_out(list("fedcba"))
    np.testing.assert_allclose(loaded.transform(df[:3]), m.transform(df[:3]))
    # a model fitted without column names stays without them after a load
    m2 = dptopic.LDA(n_topics=2, n_iter=10, seed=0, verbose=0).fit(df.to_numpy())
    m2.save(tmp_path / "m2")
    assert not hasattr(dptopic.load(tmp_path / "m2"), "feature_names_in_")


def test_another_programs_model_folder_is_not_called_a_corrupt_dptopic_model(tmp_path):
    import dptopic

    g = tmp_path / "gensim_model"
    g.mkdir()
    np.save(g / "lda.model.expElogbeta.npy", np.ones((2, 3)))
    with pytest.raises(DPTopicError, match="not a saved dptopic model") as e:
        dptopic.load(g)
    assert "corrupt" not in str(e.value)
    h = tmp_path / "hf_model"
    h.mkdir()
    (h / "model.json").write_text(json.dumps({"architectures": ["Bert"], "hidden_size": 8}))
    with pytest.raises(DPTopicError, match="written by another program"):
        dptopic.load(h)


@pytest.mark.parametrize("cls", ["DocDPCooccurrence", "DocDPEM", "HDPLDA", "FedLDA", "DPSVI"])
def test_the_privacy_report_of_an_unfitted_model_is_refused_in_one_line(cls):
    import dptopic
    from dptopic.errors import NotFittedError

    with pytest.raises(NotFittedError, match=rf"^this {cls} is not fitted yet: it has no privacy report; call fit\(\)"
                                             r" or dptopic.load\(\) first\.$"):
        getattr(dptopic, cls)(n_topics=2).privacy_report()


def test_training_stats_is_a_copy_of_what_model_json_saves_and_empty_before_fit(tiny, tmp_path):
    m = LDA(n_topics=2, n_iter=2, seed=0, verbose=0)
    assert m.training_stats_ == {}
    m.fit(tiny.corpus)
    stats = m.training_stats_
    assert stats == {"n_docs": tiny.corpus.n_docs, "n_tokens": tiny.corpus.n_tokens,
                     "vocab_size": tiny.corpus.vocab_size}
    stats["n_docs"] = -1                                    # a copy: the model keeps its own
    assert m.training_stats_["n_docs"] == tiny.corpus.n_docs
    m.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["training"] == m.training_stats_
    assert dptopic.load(tmp_path / "m").training_stats_ == m.training_stats_


def test_renamed_parameter_gives_the_line_that_refuses_a_name_given_up():
    from dptopic import FedLDA

    why = FedLDA.renamed_parameter("delta")
    assert "failure_rate=" in why and "\n" not in why
    assert FedLDA.renamed_parameter("failure_rate") is None and FedLDA.renamed_parameter("n_topics") is None
    assert "paper_epsilon" in CDPLDA.renamed_parameter("epsilon") and LDA.renamed_parameter("delta") is None
    with pytest.raises(DPTopicError) as e:
        FedLDA(delta=0.1)
    assert str(e.value) == why


def test_a_model_trained_with_addresses_kept_says_so_and_reads_them_in_transform():
    """--keep-urls was half kept: the model's tokenizer record said addresses were dropped, and transform dropped the
    URL words the model was trained on (a URL-only document got the prior's uniform row)."""
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["river", "water", "boat", "fish"], 20)) + " https://example.com/page" * 3
             if i % 2 else " ".join(rng.choice(["money", "loan", "credit", "market"], 20)) for i in range(40)]
    c = Corpus.from_texts(texts, keep_urls=True)
    assert {"https", "example", "page"} <= set(c.vocabulary.words)
    m = dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(c)
    assert m.tokenizer_["keep_urls"] is True and "KEPT" in m.tokenizer_["tokens"]
    row = m.transform(["https://example.com/page https://example.com/page"])[0]
    assert abs(row[0] - row[1]) > 0.5       # the URL words place it, where dropping them left the uniform prior
    plain = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(Corpus.from_texts(texts))
    assert "keep_urls" not in plain.tokenizer_ and "dropped" in plain.tokenizer_["tokens"]


@pytest.fixture(scope="module")
def thin_release():
    """A person-level docdp-cooc model of a 1,000-word corpus at epsilon 1: its release estimates a handful of words
    per topic, and every other word shares a tail (by noisy frequency) that is the same in each topic."""
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=600, vocab_size=1000, n_topics=3, doc_length=40, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return c, dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, unit="user", seed=0).fit(
            c, user_ids=[str(i // 5) for i in range(600)])


def test_top_words_leave_out_the_words_the_release_never_estimated(thin_release):
    """The per-person epsilon = 1 model's topics showed 9 of 10 words the release never estimated, unmarked."""
    _, m = thin_release
    mask = m.estimated_words()
    assert mask is not None and mask.shape == m.components_.shape and 0 < mask[0].sum() < 10
    words = list(m.vocabulary_.words)
    everything = m.topic_words(10, estimated_only=False)
    assert sum(not mask[0, words.index(w)] for w in everything[0]) >= 5       # what the lists used to show
    for k, topic in enumerate(m.topic_words(10)):
        assert topic and all(mask[k, words.index(w)] for w in topic)
    assert dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(
        Corpus.from_texts(["river water boat", "money loan bank", "river boat fish"])).estimated_words() is None
