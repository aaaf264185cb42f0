"""A path given to an estimator where documents go: a prepared corpus or a shard folder is read, any other corpus
file is refused in one line naming the call that reads it, for every estimator's fit, partial_fit and transform
(through the shared base)."""
import json
import math
import os
import pickle
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import dptopic
import dptopic.models._variational as variational
import dptopic.models.dpsvi as svi
import dptopic.models.local_document_lda as ldp_document
import dptopic.models.online_lda as online
from dptopic import CDPLDA, HDPLDA, LDA, CDPLDAPlus, DPTopicError
from dptopic.accounting.verify import verify_report
from dptopic.attacks.lira import ALGORITHMS
from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus.preprocess import TOKENIZER_VERSION
from dptopic.errors import BudgetExceededError, CorruptModelError
from dptopic.models import (
    DPSVI,
    LPLDA,
    OLPLDA,
    DocDPCooccurrence,
    DocDPEM,
    FedLDA,
    LocalDocumentLDA,
    TopicModel,
    base,
    load,
)
from dptopic.models import base as model_base
from dptopic.training.fdptm import fit_fdptm
from helpers import (
    FAST,
    NASTY,
    PARAMS,
    THREE_SUBJECTS,
    ShardLosingBackend,
    base_kwargs,
    corrupt_model_line,
    is_clean_number,
    mutations,
    set_tokenizer_version,
    works_or_refuses,
)

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


@pytest.mark.filterwarnings('ignore')
def test_a_fifo_in_a_model_folder_is_refused_not_waited_on(saved_local_models, tmp_path):
    import shutil

    for name in ("model.json", "components.npy"):
        folder = tmp_path / name.replace(".", "_")
        shutil.copytree(saved_local_models / "lp", folder)
        (folder / name).unlink()
        os.mkfifo(folder / name)
        msg = corrupt_model_line(folder) if name != "model.json" else None
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




@pytest.mark.parametrize("name", ["LDA", "OnlineVB"])
@pytest.mark.parametrize("sparse", [False, True])
def test_input_without_rows_is_named_as_scikit_learn_names_it(fitted_lda_and_vb, poisson_counts, name, sparse):
    empty = sp.csr_matrix(poisson_counts[:0]) if sparse else poisson_counts[:0]
    with pytest.raises(DPTopicError, match=r"X has 0 documents \(shape=\(0, 12\)\) while a minimum of 1 is required"):
        fitted_lda_and_vb[name].transform(empty)


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


# ------------------------------------------------------------------ model files


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
def test_topic_words_and_transform_arguments(lda_three_subjects, n):
    m = lda_three_subjects
    works_or_refuses(lambda: m.topic_words(n))
    ok, theta = works_or_refuses(lambda: m.transform(THREE_SUBJECTS[:2], n_iter=4, burn_in=2, seed=n))
    if ok:
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)


@FAST
@given(data=st.data())
def test_load_against_edited_json(saved_lda_dir, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("edit") / "model"
    shutil.copytree(saved_lda_dir, d)
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
def test_load_against_damaged_files(saved_lda_dir, tmp_path_factory, data, which):
    d = tmp_path_factory.mktemp("dmg") / "model"
    shutil.copytree(saved_lda_dir, d)
    (d / which).write_bytes(data.draw(mutations((d / which).read_bytes())))
    works_or_refuses(lambda: dptopic.load(d))


def test_the_saved_model_records_this_versions_tokenizer_and_keeps_it_on_resave(saved_two_topics, tmp_path):
    assert json.loads((saved_two_topics / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION
    set_tokenizer_version(saved_two_topics, TOKENIZER_VERSION - 1)
    dptopic.load(saved_two_topics).save(tmp_path / "again")         # a re-save does not pretend to be this version's
    assert json.loads((tmp_path / "again" / "model.json").read_text())["tokenizer"]["version"] == TOKENIZER_VERSION - 1


def test_text_into_a_model_of_another_tokenizer_warns_and_tokens_do_not(saved_two_topics):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptopic.load(saved_two_topics).transform(["a rocket in orbit"])      # same version: silent
    set_tokenizer_version(saved_two_topics, TOKENIZER_VERSION + 1)
    m = dptopic.load(saved_two_topics)
    with pytest.warns(UserWarning, match=f"tokeniser version {TOKENIZER_VERSION + 1}"):
        m.transform(["a rocket in orbit"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.transform([["rocket", "orbit"]])                         # token lists are read exactly
    set_tokenizer_version(saved_two_topics, 2)          # version 2 split ASCII text as version 3 does
    with pytest.warns(UserWarning, match=r"version 2 .*\(ASCII text[^)]* is read as it was then; other text may not be\)"):
        dptopic.load(saved_two_topics).transform(["a rocket in orbit"])


@pytest.mark.parametrize("bad", [0, "2", None, 1.5])
def test_a_malformed_tokenizer_version_is_refused_at_load(saved_two_topics, bad):
    set_tokenizer_version(saved_two_topics, bad)
    with pytest.raises(DPTopicError, match="'tokenizer'"):
        dptopic.load(saved_two_topics)


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


def test_each_fingerprint_is_numpys_sum_of_its_ids_hashes():
    """Each document's fingerprint (an empty one among them, skipped or not) is NumPy's sum modulo 2**64 of the mixed
    hash of its ids, mixed once more; the set of them counts each of some, duplicates each time."""
    from dptopic.corpus.identity import mix64

    rng = np.random.default_rng(2)
    docs = [rng.integers(0, 9, n).tolist() for n in (4, 0, 3, 7, 1, 5, 0, 2)]
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    c = Corpus(ptr, np.array(sum(docs, []), np.int32), [f"w{i}" for i in range(9)])
    h = mix64(np.arange(9, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(base._KEY_SALT))
    with np.errstate(over="ignore"):
        sums = np.array([np.sum(h[np.array(d, np.int64)], dtype=np.uint64) for d in docs], np.uint64)
    want = mix64(sums ^ np.uint64(0x5DEECE66D)).tolist()
    assert base._document_keys(c).tolist() == want and len(set(want)) == len(want) - 1    # the two empty ones alike
    assert base._document_keys(c, skip_empty=True).tolist() == [k for k, d in zip(want, docs) if d]
    seen = base.Fingerprints()
    assert seen.count(want) == 0 and not seen
    seen.update(np.array(want[:3], np.uint64))
    seen.update(want[2:4])
    assert len(seen) == 4 and sorted(seen) == sorted(want[:4])
    assert seen.count(want + want[:1]) == 6 and seen.count([]) == 0     # the first four, the second empty, the first
    seen.clear()
    assert seen.count(want) == 0


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


@pytest.mark.parametrize("lost", [2, 5])   # 2: a later planned sweep goes over; 5: a replay itself goes over
def test_a_budgeted_run_that_must_replay_says_a_worker_was_lost(tiny, monkeypatch, lost):
    # item 1: from_budget spends the whole budget on the plan, so any replay goes over it; the error used to say only
    # "raise the budget or run fewer iterations", never that a Dask worker had died
    monkeypatch.setattr(model_base, "make_backend", lambda name, n_jobs=1, client=None, parallel="adlda":
                        ShardLosingBackend(n_jobs, parallel, lost=lost))
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


# --------------------------------------------------------------------------------------------------------------
# Mini-batch trainers (OnlineVB, OnlineLDA, OLPLDA, LocalDocumentLDA) and DPSVI's fit: a refused or failing batch
# leaves the whole state as it was (its random stream included), the next batch gives what it would have given without
# the failed one, and save/load between batches continues the stream.
_MINIBATCH_STATE_MARKS = [pytest.mark.filterwarnings("ignore::dptopic.SeededNoiseWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.SmallCorpusWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.DataVocabularyWarning"),
              pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit"),
              pytest.mark.filterwarnings("ignore:.*trained a private model in this process"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


def _minibatch_state_marks(test):
    """The marks this section's tests carry (a module's ``pytestmark`` would reach the file's other tests)."""
    for mark in _MINIBATCH_STATE_MARKS:
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def docs():
    return lda_corpus(n_docs=90, vocab_size=12, n_topics=2, doc_length=10, seed=1).corpus


@pytest.fixture(scope="module")
def batches(docs):
    return [docs.subset(np.arange(a, a + 20)) for a in (0, 20, 40)]


@pytest.fixture(scope="module")
def other():
    return lda_corpus(n_docs=20, vocab_size=14, n_topics=2, doc_length=10, seed=2).corpus


@pytest.fixture(scope="module")
def reports(docs, other):
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = Randomizer.for_simulation(docs.vocabulary, epsilon_word=3.0, seed=0).randomize(docs.subset(np.arange(60)))
        return {"A": rs[:20], "B": rs[20:40], "C": rs[40:60],
                "other f": Randomizer.for_simulation(docs.vocabulary, epsilon_word=1.0, seed=0).randomize(
                    docs.subset(np.arange(20))),
                "other vocabulary": Randomizer.for_simulation(other.vocabulary, epsilon_word=3.0, seed=0).randomize(other),
                "document-level": DocumentRandomizer.for_simulation(docs.vocabulary, epsilon=4.0, seed=0).randomize(
                    docs.subset(np.arange(20))),
                "doc other eps": DocumentRandomizer.for_simulation(docs.vocabulary, epsilon=2.0, seed=0).randomize(
                    docs.subset(np.arange(20))),
                "doc other vocabulary": DocumentRandomizer.for_simulation(other.vocabulary, epsilon=4.0,
                                                                          seed=0).randomize(other)}


def _state(model) -> dict:
    """Every attribute, private ones and Generators (their state) included, pickled."""
    return {k: pickle.dumps(v) for k, v in vars(model).items()}


def _one_line(e) -> None:
    assert isinstance(e.value, DPTopicError) and "\n" not in str(e.value).strip()


MAKERS = {
    "OnlineVB": lambda: dptopic.OnlineVB(2, seed=0, verbose=0),
    "OnlineLDA": lambda: dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0),
}


def _bad_counts(good):
    cnt = good.to_bow().toarray()
    return {"wrong width": np.ones((3, 5)), "negative": cnt - 3, "nan": np.where(cnt > 0, np.nan, 0.0),
            "inf": np.where(cnt > 0, np.inf, 0.0), "fractional": cnt + 0.5, "no documents": cnt[:0],
            "all-empty documents": np.zeros((4, cnt.shape[1])), "a string": "hello", "None": None}


# ------------------------------------------------------------------------------------------ refused batches
@_minibatch_state_marks
@pytest.mark.parametrize("name", MAKERS)
def test_a_refused_batch_leaves_the_stream_as_it_was(batches, name):
    A, B, _ = batches
    m = MAKERS[name]().partial_fit(A)
    before = _state(m)
    for bad, X in _bad_counts(B).items():
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before, bad
    m.partial_fit(B)
    ref = MAKERS[name]().partial_fit(A).partial_fit(B)
    assert np.array_equal(m.components_, ref.components_)


@_minibatch_state_marks
@pytest.mark.parametrize("prior", ["none", "corpus"])
def test_olplda_refused_report_batches_leave_every_attribute(docs, reports, prior):
    """With prior_corpus='none' the first batch left _params_at_validate recording prior_corpus=None (its start
    validated with the placeholder in place): the next refused batch changed it."""
    d0 = "none" if prior == "none" else docs.subset(np.arange(60, 90))
    make = lambda: dptopic.OLPLDA(d0, n_topics=2, n_iter=2, prior_iter=2, seed=0, verbose=0)  # noqa: E731
    m = make().partial_fit(reports["A"])
    before = _state(m)
    for bad in ("other f", "other vocabulary", "document-level", "empty", "corpus", "None"):
        X = {"empty": reports["A"][:0], "corpus": docs, "None": None}.get(bad) if bad in ("empty", "corpus", "None") \
            else reports[bad]
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before, bad
    m.partial_fit(reports["B"])
    assert np.array_equal(m.components_, make().partial_fit(reports["A"]).partial_fit(reports["B"]).components_)


# --------------------------------------------------------------------------- a failure half-way through a step
def _failing_estep(ptr, ids, cts, eb, alpha, gamma, max_iter, tol, clip, ss, norms):
    ss[:] = 7.0                     # writes part of its output, then fails
    gamma[:] = 3.0
    raise DPTopicError("injected failure")


def _fails_half_way_and_changes_nothing(m, batch, monkeypatch):
    """``m.partial_fit(batch)`` with an E-step that fails half-way raises, and leaves ``m`` as it was."""
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(variational, "vb_estep", _failing_estep)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(batch)
    assert _state(m) == before


@_minibatch_state_marks
def test_online_vb_first_batch_failing_half_way_leaves_an_unfitted_model(batches, monkeypatch):
    """It kept lambda_ and n_updates_ without components_: every later partial_fit raised NotFittedError."""
    A, B, _ = batches
    m = dptopic.OnlineVB(2, seed=0, verbose=0)
    _fails_half_way_and_changes_nothing(m, A, monkeypatch)
    m.partial_fit(A)
    assert np.array_equal(m.lambda_, dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A).lambda_)


@_minibatch_state_marks
def test_online_vb_batch_failing_half_way_keeps_the_random_stream(batches, monkeypatch):
    """The failed step had drawn γ's start from the stream: the next batch gave another λ than without it."""
    A, B, C = batches
    m = dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A)
    _fails_half_way_and_changes_nothing(m, B, monkeypatch)
    m.partial_fit(C)
    assert np.array_equal(m.lambda_, dptopic.OnlineVB(2, seed=0, verbose=0).partial_fit(A).partial_fit(C).lambda_)


def _failing_finish(self, arrays, rng):
    self.topic_word_counts_ = np.zeros(1)
    raise DPTopicError("injected failure")


@_minibatch_state_marks
@pytest.mark.parametrize("first", [True, False], ids=["first batch", "later batch"])
def test_online_lda_batch_failing_half_way_changes_nothing(batches, monkeypatch, first):
    A, B, _ = batches
    m = MAKERS["OnlineLDA"]()
    if not first:
        m.partial_fit(A)
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(online._MatrixPriorGibbs, "_finish", _failing_finish)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(B)
    assert _state(m) == before
    m.partial_fit(B)
    ref = MAKERS["OnlineLDA"]()
    if not first:
        ref.partial_fit(A)
    assert np.array_equal(m.components_, ref.partial_fit(B).components_)


@_minibatch_state_marks
@pytest.mark.parametrize("first", [True, False], ids=["first batch", "later batch"])
def test_olplda_batch_failing_half_way_changes_nothing(docs, reports, monkeypatch, first):
    """A first batch failing after the overlap check kept its _overlap_note (and the 'none' start its validated
    parameters) though the batch was refused."""
    make = lambda: dptopic.OLPLDA(docs.subset(np.arange(60, 90)), n_topics=2, n_iter=2, prior_iter=2,  # noqa: E731
                                  seed=0, verbose=0)
    m = make()
    if not first:
        m.partial_fit(reports["A"])
    before = _state(m)
    with monkeypatch.context() as mp:
        mp.setattr(online._MatrixPriorGibbs, "_finish", _failing_finish)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(reports["B"])
    assert _state(m) == before
    m.partial_fit(reports["B"])
    ref = make()
    if not first:
        ref.partial_fit(reports["A"])
    assert np.array_equal(m.components_, ref.partial_fit(reports["B"]).components_)


# ------------------------------------------------------------------------------ save between batches, continue
@_minibatch_state_marks
@pytest.mark.parametrize("name", MAKERS)
def test_save_and_load_between_batches_continues_the_same_stream(batches, tmp_path, name):
    """The random stream was not saved: after load the seeded stream restarted, so the next batches drew the first
    batch's numbers again and gave other topics than the model that was never saved."""
    A, B, C = batches
    m = MAKERS[name]().partial_fit(A)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    for X in (B, C):
        m.partial_fit(X)
        loaded.partial_fit(X)
    assert np.array_equal(m.components_, loaded.components_)
    assert m.n_docs_seen_ == loaded.n_docs_seen_


@_minibatch_state_marks
def test_online_vb_partial_fit_after_fit_continues_that_fit_not_an_older_stream(docs, batches, tmp_path):
    """fit() kept the Generator of an earlier partial_fit stream, and partial_fit went on drawing from it."""
    A, B, _ = batches
    m = dptopic.OnlineVB(2, n_epochs=1, batch_size=10, seed=0, verbose=0).partial_fit(A).fit(docs).partial_fit(B)
    ref = dptopic.OnlineVB(2, n_epochs=1, batch_size=10, seed=0, verbose=0).fit(docs)
    ref.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m").partial_fit(B)
    assert np.array_equal(m.lambda_, ref.partial_fit(B).lambda_)
    assert np.array_equal(loaded.lambda_, m.lambda_)


@_minibatch_state_marks
def test_olplda_saves_no_random_state_and_continues_validly_after_load(docs, reports, tmp_path):
    """OLP-LDA never saves its seed nor its stream's state: after load it draws fresh randomness (documented)."""
    m = dptopic.OLPLDA(docs.subset(np.arange(60, 90)), n_topics=2, n_iter=2, prior_iter=2, seed=0,
                       verbose=0).partial_fit(reports["A"])
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "rng_state" not in meta["arrays"] and meta["params"]["seed"] is None
    loaded = dptopic.load(tmp_path / "m").partial_fit(reports["B"])
    m.partial_fit(reports["B"])
    assert loaded.n_batches_ == m.n_batches_ == 2 and loaded.n_docs_seen_ == m.n_docs_seen_
    assert np.array_equal(loaded.mu_, m.mu_) and loaded.omega_history_ == m.omega_history_
    assert np.allclose(loaded.components_.sum(axis=1), 1)


@_minibatch_state_marks
@pytest.mark.parametrize("name", MAKERS)
def test_a_malformed_saved_random_state_is_named_once(batches, tmp_path, name):
    m = MAKERS[name]().partial_fit(batches[0])
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "rng_state" in meta["arrays"]
    del meta["array_sha256"]        # as a folder saved before array digests: the state's own check speaks
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    for bad in (np.arange(5, dtype=np.uint64), np.zeros(6, dtype=np.uint64), np.full(6, 1.0)):
        np.save(tmp_path / "m" / "rng_state.npy", bad)
        with pytest.raises(DPTopicError, match="rng_state.npy must hold") as e:
            dptopic.load(tmp_path / "m")
        _one_line(e)


# ---------------------------------------------------------------------------------------- DPSVI: fit aborted
@_minibatch_state_marks
def test_an_interrupted_dpsvi_refit_keeps_the_earlier_fit_and_its_ledger(docs, monkeypatch):
    """An interrupt after a few private steps left lambda_ (noisy steps on the new documents) and a new ledger_ beside
    the earlier fit's components_ and privacy_: save() then wrote that lambda under the old report."""
    m = dptopic.DPSVI(n_topics=2, sampling_rate=0.25, n_epochs=1, seed=0, verbose=0).fit(docs.subset(np.arange(40)))
    before = _state(m)
    calls = []

    def mechanism(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    real = svi.gaussian_mechanism
    with monkeypatch.context() as mp:
        mp.setattr(svi, "gaussian_mechanism", mechanism)
        with pytest.raises(KeyboardInterrupt):
            m.fit(docs.subset(np.arange(40, 80)))
    assert _state(m) == before


# ------------------------------------------------------------------------------ LocalDocumentLDA (pinned)
@_minibatch_state_marks
def test_local_document_lda_refused_or_failing_batches_change_nothing(reports, monkeypatch, tmp_path, docs):
    m = dptopic.LocalDocumentLDA(n_topics=2).partial_fit(reports["document-level"])
    before = _state(m)
    for X in (reports["doc other eps"], reports["doc other vocabulary"], reports["A"], None):
        with pytest.raises(DPTopicError) as e:
            m.partial_fit(X)
        _one_line(e)
        assert _state(m) == before

    def failing(*a, **k):
        raise DPTopicError("injected failure")

    with monkeypatch.context() as mp:
        mp.setattr(ldp_document, "topics_from_cooccurrence", failing)
        with pytest.raises(DPTopicError, match="injected"):
            m.partial_fit(reports["document-level"])
    assert _state(m) == before
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m").partial_fit(reports["document-level"])
    assert np.array_equal(loaded.components_, m.partial_fit(reports["document-level"]).components_)


# --------------------------------------------------------------------------------------------------------------
# What every private trainer saves: each field of model.json and each array classified, the seed never written,
# metrics computed outside the ledger left out (or labelled), fresh entropy without a seed, atomic pickle-free I/O.  A
# new field, array or privacy-report key makes ``test_saved_fields_are_classified`` fail until it is classified here:
# (a) public input the user gave, (b) a noisy release or post-processing of releases only, or (c) computed from the
# private data outside the ledger, which must not be saved unless labelled (the scope of the report says so).
SEED = 987654321


@pytest.fixture(scope="module")
def data():
    c = lda_corpus(n_docs=120, vocab_size=40, n_topics=3, doc_length=20, seed=1).corpus
    with warnings.catch_warnings():     # simulated contributors, seeded for the test
        warnings.simplefilter("ignore")
        reports = Randomizer.for_simulation(c.vocabulary, epsilon_word=2.0, seed=0).randomize(c)
        doc_reports = DocumentRandomizer.for_simulation(c.vocabulary, 8.0, seed=0).randomize(c)
    return c, list(c.vocabulary.words), reports, doc_reports


def _fit(name, data, seed=None):
    c, vocab, reports, doc_reports = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "HDPLDA":
            return HDPLDA(n_topics=3, n_iter=2, verbose=0, seed=seed).fit(c, vocabulary=vocab)
        if name == "HDPLDA-data-vocabulary":
            return HDPLDA(n_topics=3, n_iter=2, verbose=0, seed=seed).fit(c)
        if name == "CDPLDA":
            return CDPLDA(n_topics=3, n_iter=2, verbose=0, seed=seed).fit(c, vocabulary=vocab)
        if name == "CDPLDAPlus":
            return CDPLDAPlus(n_topics=3, n_iter=2, verbose=0, seed=seed).fit(c, vocabulary=vocab)
        if name == "LPLDA":
            return LPLDA(n_topics=3, n_iter=2, verbose=0, seed=seed).fit(reports)
        if name == "OLPLDA":
            return OLPLDA(c.subset(np.arange(40)), n_topics=3, n_iter=2, prior_iter=2, batch_size=60, verbose=0,
                          seed=seed).fit(reports)
        if name == "LocalDocumentLDA":      # no seed: the contributors drew the noise; the server draws nothing
            return LocalDocumentLDA(n_topics=3).fit(doc_reports)
        if name == "FedLDA":
            return FedLDA(n_topics=3, epsilon_per_entry=3.0, rounds=2, pad_length=8, n_clients=4, report_words="all",
                          verbose=0, seed=seed).fit(c, vocabulary=vocab)
        if name == "DPSVI":
            return DPSVI(3, noise_multiplier=1.0, sampling_rate=0.2, n_epochs=1, clip=3.0, verbose=0,
                         seed=seed).fit(c, vocabulary=vocab)
        if name == "DocDPEM":
            return DocDPEM(n_topics=3, n_iter=1, seed=seed).fit(c, vocabulary=vocab)
        if name == "DocDPCooccurrence":
            return DocDPCooccurrence(n_topics=3, seed=seed).fit(c, vocabulary=vocab)
        if name == "FDPTM-HDPLDA":
            return fit_fdptm(HDPLDA(n_topics=3, n_iter=2, verbose=0, seed=seed), c, 20.0, 1e-4, seed=seed)[0]
        if name == "FDPTM-DPSVI":
            return fit_fdptm(DPSVI(3, noise_multiplier=1.0, sampling_rate=0.2, n_epochs=1, clip=3.0, verbose=0,
                                   seed=seed), c, 20.0, 1e-4, seed=seed)[0]
        if name == "for_unit-document":
            return dptopic.for_unit("document", 1.0, n_topics=3, seed=seed).fit(c, vocabulary=vocab)
        if name == "for_unit-word":
            return dptopic.for_unit("word", 200.0, n_topics=3, n_iter=2, verbose=0, seed=seed).fit(c, vocabulary=vocab)
    raise AssertionError(name)


# model.json's own fields (every trainer): format and class (a), params (a: the constructor's, seed removed),
# vocabulary (a, or labelled "data" in the report), privacy/privacy_card (b: the ledger's report), tokenizer (a:
# settings), arrays/array_sha256 (bookkeeping), metrics (empty unless save_metrics=True, then labelled), training
# (per trainer, below), log_likelihood (empty for every private trainer but LPLDA's eval_every, post-processing)
TOP = {"format", "version", "dptopic_version", "class", "params", "vocabulary", "metrics", "training",
       "log_likelihood", "privacy", "privacy_card", "tokenizer", "arrays", "array_sha256",
       "feature_names_in",      # (a) a DataFrame's column names: the vocabulary, given with the data
       "metrics_guarantee"}     # the label of metrics saved on request

# "training" per trainer
_WORD_SIZES = {"n_docs", "n_tokens", "vocab_size"}     # (c) labelled: public under word replacement (scope says so)
TRAINING = {
    "HDPLDA": _WORD_SIZES, "HDPLDA-data-vocabulary": _WORD_SIZES, "CDPLDA": _WORD_SIZES, "CDPLDAPlus": _WORD_SIZES,
    "for_unit-word": _WORD_SIZES,
    "LPLDA": {"n_docs", "n_tokens", "vocab_size"},          # (b) of the corpus reconstructed from the reports
    "OLPLDA": {"n_batches", "n_docs_seen"},                 # (b)/(a) reports received, batch_size given
    "LocalDocumentLDA": {"vocab_size", "n_reports"},        # (a) public vocabulary; reports received (local DP)
    # (a) users (local DP: who takes part is not hidden), pad length, report words; rounds: ledger figures and
    # message sizes, fixed by the configuration
    "FedLDA": {"n_clients", "vocab_size", "entries_per_update", "report_words", "rounds"},
    "DPSVI": {"vocab_size"}, "DocDPEM": {"vocab_size"}, "DocDPCooccurrence": {"vocab_size"},
    "for_unit-document": {"vocab_size"},
    # a private vocabulary protects whole documents: the sizes are dropped (compose_privacy)
    "FDPTM-HDPLDA": {"vocab_size"}, "FDPTM-DPSVI": {"vocab_size"},
}
FED_ROUND = {"round", "epsilon_per_entry", "epsilon_user_basic", "epsilon_user_pld", "bytes_per_client",
             "broadcast_bytes"}

# arrays per trainer, besides components (b)
ARRAYS = {
    "LPLDA": {"noisy_counts", "estimates", "targets", "variance_paper", "report_stats",   # (b) of the reports
              "topic_word_counts"},                                                     # (b) Gibbs on them
    # (b) B, N^l, mu, eta, omega history; prior_presence: the public prior corpus D_0 (a), named in the scope;
    # stream_state: batch size, f, the overlap threshold calibrated on D_0
    "OLPLDA": {"prior", "topic_word_counts", "mu", "eta", "omega_history", "prior_presence", "stream_state"},
    "LocalDocumentLDA": {"pair_counts"},                    # (b) counts of the randomized reports
    "DPSVI": {"lambda", "svi_state"}, "FDPTM-DPSVI": {"lambda", "svi_state"},   # (b) lambda; steps: from params
    # (b) per-topic flags decided from the releases and the public noise scale (dptopic.moments.support)
    **{name: {"supported_topics", "background_topics"} for name in ("DocDPEM",)},
    # (b) and the words of the co-occurrence release (public: the topics' own columns)
    **{name: {"supported_topics", "background_topics", "kept_words"}
       for name in ("DocDPCooccurrence", "for_unit-document")},
    **{name: {"lambda", "svi_state", "supported_topics", "background_topics"} for name in ("DPSVI", "FDPTM-DPSVI")},
}
# (b) DocDPCooccurrence's two noisy releases (DP outputs: refit reads the topics at another K from them), the words the
# first chose (kept, background) and the public noise scales
for _name in ("DocDPCooccurrence", "for_unit-document"):
    ARRAYS[_name] = ARRAYS[_name] | {"release_cooccurrence", "release_ranking", "release_kept", "release_background",
                                     "release_scales"}

# keys of the privacy report: the ledger's figures and events and the texts that qualify them (b)
PRIVACY = {
    "private", "unit", "neighbouring_relation", "theorem", "delta", "delta_basic", "epsilon", "epsilon_basic",
    "epsilon_pld", "epsilon_rdp", "epsilon_method", "accounting", "events", "pld_discretization", "guarantee",
    "guarantee_note", "mode", "parameters", "scope", "noise", "noise_reproducible", "secure_noise", "randomness",
    "vocabulary", "vocabulary_source", "fits", "warning", "warnings", "budget", "per_document", "epsilon_paper",
    "count_release_epsilon", "epsilon_nominal", "reason", "note", "composition", "epsilon_pld_tight",
    "topic_model", "vocabulary_selection", "epsilon_moments_accountant", "epsilon_moments_accountant_paper",
    "epsilon_strong_composition", "paper_figures_note", "epsilon_per_entry", "report_words_note", "deployment",
    "replayed_iterations", "claimed_by_paper",
    "user_bound",   # how one person's contribution is bounded; FedLDA: who a simulated user is (a setting, no count)
    # local DP
    "model", "kind", "epsilon_doc", "epsilon_doc_relation", "epsilon_word", "epsilon_word_relation",
    "epsilon_word_contributor", "epsilon_word_contributor_relation", "epsilon_contributor", "f", "flip_probability",
    "reports_per_contributor", "vocab_size", "domain_size", "subset_size", "mechanism", "server_steps",
    "server_seed", "prior_data",
    "stream",   # OLP-LDA: batches and reports taken (the server sees every report), and the per-contributor figures
    # the dataset ledger's total as of the fit (other releases' figures and the dataset's name), and a private
    # search's figures (docs/budget.md)
    "dataset_ledger", "search",
    # the release plan the fit reserved: public settings and the noise calibrated from them (a)
    "plan",
}
# privacy["parameters"]: settings given or calibrated from them (a), or read from a noisy release (n_words) (b)
PARAMETERS = {
    "epsilon_laplace", "epsilon_inherent", "clip", "beta", "n_iter", "final_release", "epsilon", "noise_releases",
    "noise_multiplier", "sampling_rate", "steps", "n_epochs", "l2_sensitivity", "max_doc_len", "threshold", "start",
    "ranking_noise_multiplier", "n_words", "n_words_rule", "background_share", "word_choice", "background_topics",
    "exclusion", "entries_per_round", "rounds", "vocab_size", "words_per_report", "local_inference",
    "inclusion_probability", "report_words", "report_words_rule", "eta", "delta0", "failure_rate_delta", "gamma",
    "variant", "replacement", "word_threshold", "expected_false_words", "words_below_threshold",
}
# never in a saved model: figures computed from the private documents outside the ledger
NEVER = re.compile(r"clipped_fraction|outside_guarantee|n_truncated|heldout_perplexity|training_theta|perplexity")

TRAINERS = sorted(TRAINING)


@pytest.mark.parametrize("name", TRAINERS)
def test_saved_fields_are_classified(name, data, tmp_path):
    m = _fit(name, data)
    folder = Path(m.save(tmp_path / "m"))
    text = (folder / "model.json").read_text("utf-8")
    meta = json.loads(text)
    assert set(meta) <= TOP, f"{name}: unclassified model.json field(s) {sorted(set(meta) - TOP)}"
    assert "metrics_guarantee" not in meta and meta["metrics"] == {}
    assert meta["log_likelihood"] == []
    assert set(meta["training"]) <= TRAINING[name], \
        f"{name}: unclassified training field(s) {sorted(set(meta['training']) - TRAINING[name])}"
    for r in meta["training"].get("rounds", []):
        assert set(r) <= FED_ROUND, f"{name}: unclassified per-round field(s) {sorted(set(r) - FED_ROUND)}"
    if {"n_docs", "n_tokens"} & set(meta["training"]) and name != "LPLDA":
        assert meta["privacy"]["unit"] == "word" and "public under word replacement" in meta["privacy"]["scope"]
    arrays = set(meta["arrays"]) - {"components"}
    assert arrays <= ARRAYS.get(name, set()), f"{name}: unclassified array(s) {sorted(arrays - ARRAYS.get(name, set()))}"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["model.json"] + [f"{a}.npy" for a in meta["arrays"]])
    rep = meta["privacy"]
    assert set(rep) <= PRIVACY, f"{name}: unclassified privacy-report key(s) {sorted(set(rep) - PRIVACY)}"
    assert set(rep.get("parameters") or {}) <= PARAMETERS, \
        f"{name}: unclassified report parameter(s) {sorted(set(rep.get('parameters') or {}) - PARAMETERS)}"
    found = NEVER.findall(json.dumps({k: v for k, v in meta.items() if k not in ("privacy", "privacy_card")}))
    found += [k for k in rep if NEVER.search(k)]
    assert not found, f"{name}: {found} saved"
    assert meta["params"].get("seed") is None
    # every private trainer's report: the guarantee's figures and what it does not cover
    assert "scope" in rep and "not covered" in rep["scope"].lower() and "unit" in rep
    if rep["private"]:
        for key in ("epsilon", "delta", "neighbouring_relation", "theorem", "epsilon_basic", "epsilon_pld",
                    "epsilon_rdp", "epsilon_method"):
            assert key in rep, f"{name}: privacy report has no {key}"
    assert isinstance(load(folder), type(m))


@pytest.mark.parametrize("name", [n for n in TRAINERS if n != "LocalDocumentLDA"])
def test_seed_never_saved(name, data, tmp_path):
    m = _fit(name, data, seed=SEED)
    folder = Path(m.save(tmp_path / "m"))
    text = (folder / "model.json").read_text("utf-8")
    assert str(SEED) not in text and json.loads(text)["params"]["seed"] is None
    rep = json.loads(text)["privacy"]
    # the report says the noise (or the server's post-processing) is reproducible by whoever knows the seed
    assert rep.get("noise_reproducible") is True or "server_seed" in rep
    for p in folder.glob("*.npy"):
        a = np.load(p, allow_pickle=False)
        assert not (a.dtype.kind in "iu" and SEED in a), f"{name}: {p.name} holds the seed"


@pytest.mark.parametrize("name", ["HDPLDA", "CDPLDA", "FedLDA", "DPSVI", "DocDPEM", "DocDPCooccurrence", "LPLDA"])
def test_unseeded_trainers_draw_fresh_entropy(name, data):
    a, b = _fit(name, data), _fit(name, data)
    assert a.seed is None and not np.array_equal(a.components_, b.components_)


def _with_metrics(m):
    m.metrics_ = {"perplexity_completion": 123.0, "n_test_docs": 7}    # computed beside the model, from documents
    return m


@pytest.mark.parametrize("name", ["LPLDA", "OLPLDA"])
def test_report_trainers_save_metrics_only_on_request_and_labelled(name, data, tmp_path):
    """LPLDA and OLPLDA are not central private trainers, but their reports claim a guarantee: metrics computed
    beside them are not saved by default, and are labelled when asked for (they were saved by default, unlabelled)."""
    m = _with_metrics(_fit(name, data))
    assert m.privacy_["private"] is True
    meta = json.loads((Path(m.save(tmp_path / "a")) / "model.json").read_text("utf-8"))
    assert meta["metrics"] == {} and "metrics_guarantee" not in meta
    meta = json.loads((Path(m.save(tmp_path / "b", save_metrics=True)) / "model.json").read_text("utf-8"))
    assert meta["metrics"]["perplexity_completion"] == 123.0
    assert "outside the guarantee" in meta["metrics_guarantee"]


def test_non_private_models_still_save_their_metrics(data, tmp_path):
    c = data[0]
    m = _with_metrics(dptopic.LDA(n_topics=3, n_iter=2, verbose=0, seed=0).fit(c))
    meta = json.loads((Path(m.save(tmp_path / "a")) / "model.json").read_text("utf-8"))
    assert meta["metrics"]["n_test_docs"] == 7 and "metrics_guarantee" not in meta


def test_dpsvi_lambda_does_not_read_the_exact_number_of_documents(data):
    """The step adds D times the noisy sum over qD: D cancels, and must not enter lambda even through rounding
    (the saved lambda.npy and components would otherwise depend on the exact document count, bit by bit)."""
    c = data[0]
    m = DPSVI(3, noise_multiplier=1.0, sampling_rate=0.2, n_epochs=1, clip=3.0, verbose=0)
    m._validate()
    m._init_state(c.vocab_size, np.random.default_rng(0))
    batch = m._bow(c.subset(np.arange(10)))
    first = m._step(m.lambda_, 0, batch, 40, np.random.default_rng(5))[0]
    for D in range(41, 80):
        assert np.array_equal(first, m._step(m.lambda_, 0, batch, D, np.random.default_rng(5))[0]), D


def test_arrays_are_read_without_pickle():
    src = Path(dptopic.__file__).parent
    for path in src.rglob("*.py"):
        text = path.read_text("utf-8")
        assert not re.search(r"^\s*(import pickle|from pickle|import cPickle|import dill|import joblib)", text, re.M), path
        for call in re.finditer(r"np\.load\(", text):
            depth, end = 1, call.end()
            while depth:                    # the call's own arguments, nested parentheses included
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            assert "allow_pickle=False" in text[call.end():end], f"{path}: np.load without allow_pickle=False"
        assert "allow_pickle=True" not in text, path


def test_save_is_atomic(data, tmp_path, monkeypatch):
    """A save that fails half-way leaves the folder as it was (the new bundle is written aside, then renamed)."""
    m = _fit("LPLDA", data)
    folder = Path(m.save(tmp_path / "m"))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real_save, calls = np.save, []

    def failing(path, arr, **kw):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_save(path, arr, **kw)

    monkeypatch.setattr(np, "save", failing)
    m2 = _fit("LPLDA", data)
    with pytest.raises(OSError):
        m2.save(folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]       # no temporary folder left beside it


# --------------------------------------------------------------------------------------------------------------
# scikit-learn conventions on every estimator: get_params/set_params/clone, tags, score, feature names, Pipeline and
# GridSearchCV.
FRUITS = (["apple banana cherry apple fruit", "banana cherry apple fruit salad", "fruit apple banana",
          "river mountain valley river lake", "mountain valley lake river", "valley lake mountain hiking"] * 6)


def _X():
    return CountVectorizer().fit_transform(FRUITS)


COMPAT_ESTIMATORS = [lambda: dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0),
              lambda: dptopic.OnlineVB(n_topics=2, n_epochs=3, seed=0, verbose=0)]


@pytest.mark.parametrize("make", COMPAT_ESTIMATORS)
def test_clone_then_fit_gives_an_equal_model(make):
    m = make()
    assert isinstance(m, TopicModel)
    assert m.get_params(deep=True) == m.get_params(deep=False)
    a = m.fit(_X())
    b = clone(m).fit(_X())
    assert np.array_equal(a.components_, b.components_)
    assert clone(m).get_params() == m.get_params()


@pytest.mark.parametrize("make", COMPAT_ESTIMATORS)
def test_the_same_calls_everywhere(make):
    m = make().fit(_X())
    theta = m.transform(_X())
    assert theta.shape == (len(FRUITS), 2) and np.allclose(theta.sum(axis=1), 1)
    assert list(m.get_feature_names_out()) == ["topic0", "topic1"]
    assert m.n_features_in_ == _X().shape[1]
    assert np.isfinite(m.score(_X())) and m.score(_X()) < 0
    for mode in ("paper", "completion"):
        assert m.perplexity(_X(), mode=mode) > 1
    tags = m.__sklearn_tags__()
    assert tags.input_tags.sparse and tags.transformer_tags is not None and not tags.non_deterministic


def test_private_estimators_are_tagged_non_deterministic():
    assert dptopic.DPSVI(n_topics=2).__sklearn_tags__().non_deterministic
    assert dptopic.HDPLDA(n_topics=2).__sklearn_tags__().non_deterministic


def test_score_prefers_the_better_model():
    X = _X()
    good = dptopic.LDA(n_topics=2, n_iter=100, seed=0, verbose=0).fit(X)
    worse = dptopic.LDA(n_topics=2, n_iter=100, alpha=50.0, beta=50.0, seed=0, verbose=0).fit(X)
    assert good.score(X) > worse.score(X)


def test_pipeline_with_countvectorizer_end_to_end():
    pipe = Pipeline([("vec", CountVectorizer()), ("lda", dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0))])
    theta = pipe.fit_transform(FRUITS)
    assert theta.shape == (len(FRUITS), 2)
    assert np.allclose(pipe.transform(FRUITS[:3]), pipe.named_steps["lda"].transform(pipe.named_steps["vec"].transform(FRUITS[:3])))
    assert list(pipe.get_feature_names_out()) == ["topic0", "topic1"]


@pytest.mark.parametrize("make", COMPAT_ESTIMATORS + [lambda: dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0),
                                  lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=50.0, seed=0)])
def test_pipeline_keeps_the_vectorizers_words(make):
    pipe = Pipeline([("vec", dptopic.CountVectorizer(min_df=2)), ("lda", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theta = pipe.fit_transform(FRUITS)
    words = list(pipe.named_steps["vec"].get_feature_names_out())
    model = pipe.named_steps["lda"]
    assert list(model.vocabulary_) == words == list(model.feature_names_in_)
    assert {w for t in model.topic_words(3) for w in t} <= set(words)
    assert theta.shape == (len(FRUITS), 2) and pipe.transform(FRUITS[:2]).shape == (2, 2)
    # the same counts as scikit-learn's own vectorizer
    assert (CountVectorizer(min_df=2).fit_transform(FRUITS) != pipe.named_steps["vec"].transform(FRUITS)).nnz == 0
    # with scikit-learn's own vectorizer the model gets the matrix only, and names its words by column
    plain = Pipeline([("vec", CountVectorizer(min_df=2)), ("lda", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain.fit(FRUITS)
    assert list(plain.named_steps["lda"].vocabulary_)[0].startswith("w")


def test_dataframe_columns_name_the_words():
    pd = pytest.importorskip("pandas")
    vec = CountVectorizer()
    df = pd.DataFrame(vec.fit_transform(FRUITS).toarray(), columns=vec.get_feature_names_out())
    m = dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(df)
    assert list(m.feature_names_in_) == list(vec.get_feature_names_out())
    assert set(w for t in m.topic_words(3) for w in t) <= set(vec.get_feature_names_out())


def test_gridsearch_on_a_non_private_model():
    gs = GridSearchCV(dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0), {"n_topics": [2, 3]}, cv=2)
    gs.fit(_X())
    assert gs.best_params_["n_topics"] in (2, 3) and np.isfinite(gs.best_score_)


def test_gridsearch_on_a_private_model_warns_that_budgets_add():
    from dptopic.models import base

    base._PRIVATE_DOCS.clear()
    X = _X()
    gs = GridSearchCV(dptopic.DPSVI(n_topics=2, noise_multiplier=2.0, sampling_rate=0.5, verbose=0),
                      {"n_topics": [2, 3]}, cv=2)
    with pytest.warns(UserWarning, match="epsilons add up"):
        gs.fit(X)
    assert "epsilons add up" in gs.best_estimator_.privacy_["fits"]


def test_a_parallel_search_on_a_private_model_warns_in_the_calling_process():
    # with n_jobs > 1 the fits run in worker processes, whose record of used documents
    # starts empty, so the re-use warning never fired; the clone, made in the calling process, now warns once
    X = _X()
    gs = GridSearchCV(dptopic.DocDPCooccurrence(n_topics=2, epsilon=1, delta=1e-5, verbose=0),
                      {"n_topics": [2, 3]}, cv=2, n_jobs=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gs.fit(X)
    assert sum("was cloned" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings(record=True) as caught:       # a non-private estimator's clone says nothing
        warnings.simplefilter("always")
        clone(dptopic.LDA(n_topics=2, verbose=0))
    assert not caught


def test_clones_of_a_private_trainer_seeded_with_a_generator_draw_their_own_noise():
    # scikit-learn's clone deep-copies a Generator, so every clone drew the same noise: two releases on overlapping
    # documents with equal noise show the difference of their data exactly. A private trainer's clones now get
    # streams spawned from it (still reproducible from the one Generator); a non-private one keeps the copy
    X = _X()
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=1, delta=1e-5, seed=np.random.default_rng(3), verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = clone(m), clone(m)
        assert a.seed is not b.seed and not np.array_equal(a.fit(X).components_, b.fit(X).components_)
        c = dptopic.LDA(n_topics=2, n_iter=10, seed=np.random.default_rng(3), verbose=0)
        assert np.array_equal(clone(c).fit(X).components_, clone(c).fit(X).components_)


def test_a_fitted_model_is_never_pickled_an_unfitted_one_is():
    import copy
    import pickle

    m = dptopic.HDPLDA(n_topics=2, n_iter=2, verbose=0)
    assert pickle.loads(pickle.dumps(m)).get_params() == m.get_params()  # joblib's parallel search ships these
    m.fit(_X())
    for dump in (pickle.dumps, copy.deepcopy):
        with pytest.raises(dptopic.DPTopicError, match="never pickled.*model.save"):
            dump(m)


def test_a_dataframe_at_transform_must_have_the_fitted_words_in_order():
    pd = pytest.importorskip("pandas")
    vec = dptopic.CountVectorizer()
    X = vec.fit_transform(FRUITS)
    df = pd.DataFrame(X.toarray(), columns=vec.get_feature_names_out())
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(df)
    assert m.transform(df.iloc[:3]).shape == (3, 2)
    for bad, what in ((df.iloc[:3, ::-1], "another order"), (df.iloc[:3].rename(columns={df.columns[0]: "zzz"}), "'zzz'"),
                      (df.iloc[:3, :4], "nothing")):
        with pytest.raises(dptopic.DPTopicError, match=f"not the words LDA was fitted on.*{what}"):
            m.transform(bad)
    with pytest.raises(dptopic.DPTopicError, match=r"holds text, not counts.*df\['text'\]"):
        dptopic.LDA(n_topics=2, n_iter=5, verbose=0).fit(pd.DataFrame({"text": FRUITS}))


def test_n_jobs_follows_scikit_learns_convention():
    import os

    from dptopic._validation import resolve_n_jobs

    assert resolve_n_jobs(None) == 1 and resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-1) == (os.cpu_count() or 1) and resolve_n_jobs(-1024) == 1
    for n_jobs in (None, -1):
        m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0, n_jobs=n_jobs).fit(_X())
        assert m.get_params()["n_jobs"] == n_jobs and m._backend_.n_jobs == resolve_n_jobs(n_jobs)  # threads used
    with pytest.raises(dptopic.DPTopicError, match="invalid n_jobs=0"):
        dptopic.LDA(n_topics=2, n_iter=3, verbose=0, n_jobs=0).fit(_X())


@pytest.mark.parametrize("make", [lambda **kw: dptopic.LDA(n_iter=5, verbose=0, **kw),
                                  lambda **kw: dptopic.DocDPCooccurrence(epsilon=2.0, verbose=0, **kw),
                                  lambda **kw: dptopic.DPSVI.from_budget(2.0, 1e-5, verbose=0, **kw)])
def test_n_components_is_scikit_learns_name_for_n_topics(make):
    import inspect

    from sklearn.base import clone

    m = make(n_components=3)
    assert m.n_topics == 3 and m.n_components == 3 and "n_components" not in m.get_params()
    assert clone(m).n_topics == 3
    m.set_params(n_components=4)
    assert m.get_params()["n_topics"] == 4
    m.n_components = 5
    assert m.n_topics == 5
    assert "n_topics" in inspect.signature(type(m)).parameters          # what scikit-learn's checks read
    with pytest.raises(dptopic.DPTopicError, match="not both"):
        make(n_components=3, n_topics=3)
    with pytest.raises(dptopic.DPTopicError, match="not both"):
        m.set_params(n_components=3, n_topics=3)


def test_a_model_used_before_fit_raises_scikit_learns_not_fitted_error():
    from sklearn.exceptions import NotFittedError

    from dptopic.errors import DPTopicError

    for m in (dptopic.LDA(n_topics=2), dptopic.DocDPCooccurrence(n_topics=2)):
        with pytest.raises(NotFittedError, match="not fitted yet") as e:
            m.transform(_X())
        assert isinstance(e.value, DPTopicError)           # still one line on the command line


def test_report_trained_estimators_do_not_claim_matrix_input():
    # LPLDA, OLPLDA and LocalDocumentLDA fit randomized reports, never a count matrix: their tags must not say
    # that fit takes a (sparse) 2-D array, as the matrix-trained estimators' do
    for m in (dptopic.LPLDA(n_topics=2), dptopic.OLPLDA(n_topics=2), dptopic.LocalDocumentLDA(n_topics=2)):
        tags = m.__sklearn_tags__()
        assert not tags.input_tags.sparse and not tags.input_tags.two_d_array, type(m).__name__
    assert not dptopic.LocalDocumentLDA(n_topics=2).__sklearn_tags__().non_deterministic
    assert dptopic.LDA(n_topics=2).__sklearn_tags__().input_tags.sparse


WITH_EMPTY = FRUITS[:5] + ["", "the of and"] + FRUITS[5:]          # an empty text, and one of stop words only


EMPTY_ROWS = [5, 6]


def _frame(X):
    pd = pytest.importorskip("pandas")
    vec = CountVectorizer()
    counts = vec.fit_transform(X).toarray()
    return pd.DataFrame(counts, columns=vec.get_feature_names_out(), index=[f"d{i}" for i in range(len(X))])


DOCUMENT_LEVEL = {"DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0),
                  "DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=50.0, seed=0),
                  "for_unit(document)": lambda: dptopic.for_unit("document", 5.0, n_topics=2, seed=0)}


WORD_LEVEL = {"HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_inherent=10.0, seed=0, verbose=0),
              "CDPLDA": lambda: dptopic.CDPLDA(n_topics=2, n_iter=3, seed=0, verbose=0),
              "CDPLDAPlus": lambda: dptopic.CDPLDAPlus(n_topics=2, n_iter=3, seed=0, verbose=0),
              "for_unit(word)": lambda: dptopic.for_unit("word", 500.0, n_topics=2, n_iter=3, seed=0, verbose=0)}


@pytest.mark.parametrize("make", DOCUMENT_LEVEL.values(), ids=DOCUMENT_LEVEL.keys())
def test_set_output_pandas_applies_to_transform_of_the_document_level_trainers(make):
    df = _frame(FRUITS)
    m = make().set_output(transform="pandas").fit(df)
    out = m.transform(df.iloc[:4])
    pd = pytest.importorskip("pandas")
    assert isinstance(out, pd.DataFrame), type(out).__name__
    assert list(out.columns) == ["topic0", "topic1"] and list(out.index) == ["d0", "d1", "d2", "d3"]
    assert np.allclose(out.to_numpy().sum(axis=1), 1)
    # the same rows as without pandas output, and as fit_transform gives (a DataFrame already before the fix)
    assert np.allclose(out.to_numpy(), make().fit(df).transform(df.iloc[:4]))
    assert isinstance(make().set_output(transform="pandas").fit_transform(df), pd.DataFrame)


def test_set_output_pandas_applies_to_transform_of_local_document_lda():
    pd = pytest.importorskip("pandas")
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    vocab = ["tax", "budget", "war", "army", "school", "teachers"]
    rs = DocumentRandomizer.for_simulation(vocab, 4.0, seed=3).randomize(
        [["tax", "budget"], ["war", "army"], ["school", "teachers"]] * 100)
    m = dptopic.LocalDocumentLDA(n_topics=2).set_output(transform="pandas").fit(rs)
    out = m.transform([["tax", "budget"], ["war", "army"]])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["topic0", "topic1"]


def test_a_pipeline_with_pandas_output_runs_through_a_document_level_trainer():
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    # the step after the topic model reads the topic columns by name, as pandas output promises
    # (a vectorizer has no set_output, so the pipeline's own set_output refuses: the model's step is set)
    pipe = make_pipeline(dptopic.CountVectorizer(),
                         dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0).set_output(transform="pandas"),
                         FunctionTransformer(lambda t: t[["topic0"]]))
    pipe.fit(FRUITS)
    out = pipe.transform(pd.Series(FRUITS[:3], index=["a", "b", "c"]))
    assert list(out.columns) == ["topic0"] and out.shape == (3, 1)


@pytest.mark.parametrize("make", WORD_LEVEL.values(), ids=WORD_LEVEL.keys())
def test_fit_transform_of_texts_gives_one_row_per_text(make):
    m = make()
    theta = m.fit_transform(WITH_EMPTY)
    assert theta.shape == (len(WITH_EMPTY), 2) and np.allclose(theta.sum(axis=1), 1) and np.all(theta >= 0)
    # the texts that trained: their rows are training_theta_ (covered by the report); the empty ones the prior's
    kept = [i for i in range(len(WITH_EMPTY)) if i not in EMPTY_ROWS]
    assert m.training_theta_.shape == (len(kept), 2)
    assert np.array_equal(theta[kept], m.training_theta_)
    assert np.allclose(theta[EMPTY_ROWS], 0.5)
    assert np.allclose(theta[EMPTY_ROWS], m.transform([WITH_EMPTY[i] for i in EMPTY_ROWS]))   # as transform gives
    # token lists too (gensim's and tomotopy's input)
    assert make().fit_transform([t.split() for t in WITH_EMPTY]).shape == (len(WITH_EMPTY), 2)


def test_fit_transform_with_pandas_output_keeps_the_texts_index():
    pd = pytest.importorskip("pandas")
    texts = pd.Series(WITH_EMPTY, index=[f"r{i}" for i in range(len(WITH_EMPTY))])
    out = WORD_LEVEL["HDPLDA"]().set_output(transform="pandas").fit_transform(texts)
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(texts.index)


def test_fit_transform_of_a_corpus_or_a_matrix_is_unchanged():
    # a Corpus's documents are the samples as given; a count matrix keeps every row (an all-zero one included)
    m = WORD_LEVEL["HDPLDA"]()
    corpus = dptopic.Corpus.from_texts(WITH_EMPTY)
    assert np.array_equal(m.fit_transform(corpus), m.training_theta_) and m.training_theta_.shape[0] == corpus.n_docs
    X = CountVectorizer().fit_transform(WITH_EMPTY)
    assert WORD_LEVEL["HDPLDA"]().fit_transform(X).shape == (len(WITH_EMPTY), 2)
    assert WORD_LEVEL["HDPLDA"]().fit_transform(FRUITS).shape == (len(FRUITS), 2)   # nothing dropped: as before


def test_fedlda_report_says_whether_its_noise_is_reproducible_like_every_private_trainer():
    """An unseeded FedLDA's report had no noise_reproducible field, where every other private trainer says false."""
    from dptopic.corpus import lda_corpus
    from dptopic.models import FedLDA

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=0).corpus
    m = FedLDA(n_topics=2, epsilon_per_entry=5.0, rounds=2, pad_length=16, n_clients=4).fit(c)
    assert m.privacy_["noise_reproducible"] is False
    with pytest.warns(UserWarning):
        seeded = FedLDA(n_topics=2, epsilon_per_entry=5.0, rounds=2, pad_length=16, n_clients=4, seed=1).fit(c)
    assert seeded.privacy_["noise_reproducible"] is True


@pytest.fixture(scope="module")
def Xc():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=3, doc_length=30, seed=1).corpus.to_bow()


@pytest.mark.parametrize("verbose", [False, True])
def test_verbose_takes_a_bool_as_scikit_learn_does(Xc, verbose):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=verbose).fit(Xc)
        dptopic.OnlineVB(n_topics=3, n_epochs=1, seed=0, verbose=verbose).fit(Xc)
        dptopic.DocDPCooccurrence(n_topics=3, epsilon=4.0, delta=1e-5, verbose=verbose).fit(Xc)
    with pytest.raises(DPTopicError, match="verbose=3"):
        dptopic.LDA(n_topics=3, verbose=3).fit(Xc)


def test_privacy_report_of_numpy_typed_parameters_is_plain_json(Xc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdp = dptopic.HDPLDA(n_topics=np.int64(3), n_iter=np.int64(3), epsilon_laplace=np.float32(2.0),
                             delta=np.float32(1e-5), seed=0).fit(Xc)
        fed = dptopic.FedLDA(n_topics=np.int64(3), rounds=np.int64(2), epsilon_per_entry=np.float32(5.0), pad_length=20,
                             seed=0, verbose=0).fit(Xc)
    for m in (hdp, fed):
        back = json.loads(json.dumps(m.privacy_))
        assert back["epsilon"] == pytest.approx(m.privacy_["epsilon"])


def test_a_typed_load_refuses_another_kind_of_model(Xc, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=0).fit(Xc).save(tmp_path / "lda")
    assert type(dptopic.load(tmp_path / "lda")).__name__ == "LDA"
    assert type(dptopic.LDA.load(tmp_path / "lda")).__name__ == "LDA"
    with pytest.raises(DPTopicError, match="holds a LDA model, not a HDPLDA"):
        dptopic.HDPLDA.load(tmp_path / "lda")


def test_online_lda_reads_a_later_batch_with_column_names_as_transform_does(Xc):
    pd = pytest.importorskip("pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.OnlineLDA(n_topics=3, n_iter=3, seed=0, verbose=0).fit(Xc.toarray())
    df = pd.DataFrame(Xc.toarray(), columns=[f"c{i}" for i in range(Xc.shape[1])])
    with pytest.warns(UserWarning, match="fitted without them"):
        m.partial_fit(df)
    assert m.n_batches_ == 2


def test_the_pipeline_saving_recipe_of_the_sklearn_page_runs_as_written(tmp_path, monkeypatch):
    from pathlib import Path

    from sklearn.pipeline import Pipeline

    import dptopic

    page = (Path(__file__).resolve().parents[2] / "docs" / "sklearn.md").read_text()
    block = page.split("### Saving a fitted pipeline", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    words = ["apple", "pear", "plum", "kiwi", "fig", "lime", "rock", "sand", "clay", "stone", "the", "and"]
    texts = [" ".join(rng.choice(words[:6] if i % 2 else words[6:], 15)) for i in range(60)]
    pipe = Pipeline([("vec", dptopic.CountVectorizer(min_df=2, stop_words="english")),
                     ("lda", dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0))]).fit(texts)
    before = pipe.transform(texts)
    monkeypatch.chdir(tmp_path)
    scope = {"pipe": pipe, "texts": texts}
    exec(compile(block, "docs/sklearn.md", "exec"), scope)
    np.testing.assert_allclose(scope["theta"], before)
    assert scope["pipe"] is not pipe and "the" not in scope["lda"].vocabulary_.words


@pytest.mark.parametrize("cls, other, ours", [("LDA", "max_iter", "n_iter"), ("LDA", "doc_topic_prior", "alpha"),
                                               ("LDA", "topic_word_prior", "beta"), ("OnlineVB", "topic_word_prior", "eta"),
                                               ("OnlineVB", "max_iter", "n_epochs"), ("OnlineVB", "learning_decay", "kappa"),
                                               ("FedLDA", "max_iter", "rounds"), ("LDA", "num_topics", "n_topics"),
                                               ("LDA", "evaluate_every", "eval_every")])
def test_another_librarys_parameter_name_is_answered_with_dptopics(cls, other, ours):
    import dptopic
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match=f"takes {ours}=, not {other}="):
        getattr(dptopic, cls)(**{other: 3})


def test_the_sklearn_page_names_every_estimator_whose_verbose_default_is_0():
    import inspect
    from pathlib import Path

    import dptopic.models as M

    page = (Path(__file__).resolve().parents[2] / "docs" / "sklearn.md").read_text()
    para = page[page.index("`verbose=1` by default"):]
    para = para[:para.index("\n- ") if "\n- " in para else para.index("\n\n")]
    quiet = [n for n in dir(M) if inspect.isclass(getattr(M, n)) and hasattr(getattr(M, n), "get_params")
             and inspect.signature(getattr(M, n)).parameters.get("verbose") is not None
             and inspect.signature(getattr(M, n)).parameters["verbose"].default == 0]
    assert quiet and all(f"`{n}`" in para for n in quiet), (quiet, para)


# --------------------------------------------------------------------------------------------------------------
# scikit-learn's own estimator checks (``parametrize_with_checks``) on dptopic's estimators.  A topic model takes a
# document-term matrix of integer counts, and dptopic refuses non-integral floats in one line rather than rounding
# them silently, while the checks feed random floats in [0, 1). So each estimator runs through ``counting(cls)``, a
# test-only subclass that turns the checks' floats into counts (times 3, rounded) before calling the estimator's real
# ``fit``, ``partial_fit``, ``transform`` and ``score``. NaN, infinities, negative numbers, complex numbers and non-
# numbers pass through unchanged, so the checks of input validation see them as they are. Every other contract is the
# estimator's own: ``fit`` returns self and is idempotent, parameters are left alone, ``n_features_in_`` and the
# message when it does not match, dtypes, sparse formats, read-only memory maps, ``transform`` of a subset or of the
# rows reordered gives the same rows, ``fit_transform`` equals ``fit().transform()``, and the messages for empty, 1-D,
# complex and object input.  One check fails by design and is expected to: ``check_estimators_pickle`` (models are
# saved as JSON + ``.npy`` with ``save``/``dptopic.load``, never pickled).  Every estimator here is seeded
# (``seed=0``; scikit-learn's ``set_random_state`` only knows ``random_state``, which dptopic does not take): an
# unseeded private trainer draws fresh noise at each fit, so ``check_fit_idempotent`` fails for it by design
# (test_an_unseeded_private_trainer_fails_fit_idempotence_by_design below shows it). The local trainers (``LPLDA``,
# ``OLPLDA``, ``LocalDocumentLDA``) fit randomized report sets, not count matrices, so the checks do not apply to
# them.
NOT_PICKLED = "models are saved as JSON + .npy (save/dptopic.load), never pickled"
EXPECTED = {"check_estimators_pickle": NOT_PICKLED}


def _as_counts(Xc):
    """The checks' random floats as integer-valued counts; anything else unchanged."""
    if sp.issparse(Xc):
        return type(Xc)(np.rint(Xc.toarray() * 3)) if Xc.dtype.kind == "f" else Xc
    if not isinstance(Xc, np.ndarray):
        if hasattr(Xc, "__array__") and not hasattr(Xc, "columns"):       # an array-like (the checks' _NotAnArray)
            return type(Xc)(_as_counts(np.asarray(Xc)))
        if isinstance(Xc, list) and Xc and all(isinstance(r, list) for r in Xc):     # nested lists of numbers
            return _as_counts(np.asarray(Xc)).tolist()
        return Xc
    if Xc.dtype.kind == "f" and np.all(np.isfinite(Xc)) and np.all(Xc >= 0):
        return np.rint(Xc * 3)
    if Xc.dtype.kind == "O":
        try:
            return np.rint(Xc.astype(np.float64) * 3).astype(object)
        except (TypeError, ValueError):
            return Xc
    return Xc


def counting(cls):
    """``cls`` with the checks' floats turned into counts on the way in (same name, parameters and methods)."""
    def fit(self, X, y=None, **kw):
        return cls.fit(self, _as_counts(X), y, **kw)

    def transform(self, X, *a, **kw):
        return cls.transform(self, _as_counts(X), *a, **kw)

    def score(self, X, y=None):
        return cls.score(self, _as_counts(X), y)

    body = {"fit": fit, "transform": transform, "score": score, "__module__": cls.__module__}
    if hasattr(cls, "partial_fit"):
        body["partial_fit"] = lambda self, X, y=None, **kw: cls.partial_fit(self, _as_counts(X), y, **kw)
    return type(cls.__name__, (cls,), body)


CHECKED_ESTIMATORS = [counting(dptopic.LDA)(n_topics=2, n_iter=10, seed=0, verbose=0),
              counting(dptopic.OnlineVB)(n_topics=2, n_epochs=1, seed=0, verbose=0),
              counting(dptopic.DPSVI)(n_topics=2, seed=0, verbose=0),
              counting(dptopic.DocDPCooccurrence)(n_topics=2, epsilon=100.0, seed=0),
              counting(dptopic.DocDPEM)(n_topics=2, epsilon=100.0, seed=0),
              counting(dptopic.OnlineLDA)(n_topics=2, n_iter=5, batch_size=64, seed=0, verbose=0),
              counting(dptopic.HDPLDA)(n_topics=2, n_iter=3, epsilon_inherent=10.0, seed=0, verbose=0),
              counting(dptopic.CDPLDA)(n_topics=2, n_iter=3, seed=0, verbose=0),
              counting(dptopic.CDPLDAPlus)(n_topics=2, n_iter=3, seed=0, verbose=0),
              counting(dptopic.FedLDA)(n_topics=2, rounds=1, pad_length=8, seed=0, verbose=0)]


@parametrize_with_checks(CHECKED_ESTIMATORS, expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # a seeded private fit warns that its noise is reproducible, a refit that its budget is spent again
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def test_the_expected_failure_is_a_real_check():
    """The expected-failure list names checks scikit-learn has (a misspelt name would hide nothing and mean nothing)."""
    import sklearn.utils.estimator_checks as checks

    assert all(hasattr(checks, name) for name in EXPECTED)


def test_the_adapter_leaves_the_estimators_own_refusal_of_fractions():
    """Without the test adapter, non-integral floats are refused in one line (never rounded silently)."""
    X = np.random.default_rng(0).uniform(size=(10, 4))
    with pytest.raises(DPTopicError, match="integer counts"):
        dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X)
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(np.rint(X * 3))
    assert np.array_equal(m.transform(np.rint(X * 3)), counting(dptopic.LDA)(**m.get_params()).fit(X).transform(X))


def test_sklearn_style_messages():
    """The wording scikit-learn users search for, inside dptopic's one-line errors."""
    m = dptopic.OnlineVB(n_topics=2, n_epochs=1, seed=0, verbose=0).fit(np.ones((6, 4), dtype=int))
    with pytest.raises(DPTopicError, match="X has 3 features, but OnlineVB is expecting 4 features as input"):
        m.transform(np.ones((2, 3), dtype=int))
    with pytest.raises(DPTopicError, match="Reshape your data"):
        m.transform(np.ones(4, dtype=int))
    with pytest.raises(DPTopicError, match="Negative values in data"):
        m.transform(-np.ones((2, 4), dtype=int))
    with pytest.raises(TypeError, match="not a number"):
        dptopic.Corpus.from_bow(np.array([[1, {"a": 1}]], dtype=object))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_unseeded_private_trainer_fails_fit_idempotence_by_design():
    """docs/sklearn.md: the checks run on seeded instances; unseeded, fresh noise makes each fit differ."""
    from sklearn.utils.estimator_checks import check_fit_idempotent

    checked = {type(e).__name__ for e in CHECKED_ESTIMATORS}
    assert {"HDPLDA", "CDPLDA", "CDPLDAPlus", "FedLDA"} <= checked
    assert all(e.get_params().get("seed") is not None for e in CHECKED_ESTIMATORS)
    with pytest.raises(AssertionError):
        check_fit_idempotent("DocDPEM", counting(dptopic.DocDPEM)(n_topics=2, epsilon=1.0))
    text = " ".join((Path(__file__).parents[2] / "docs" / "sklearn.md").read_text().split())
    for phrase in ("**seeded**", "check_fit_idempotent", "random_state", "return_estimator=True",
                   "fit randomized report sets"):
        assert phrase in text, phrase


def test_fold_in_threads_sets_the_threads_for_a_while_and_the_figures_do_not_move(planted):
    from dptopic.models.base import fold_in_threads

    m = LDA(5, n_iter=20, seed=0, verbose=0).fit(planted.corpus)
    alone = (m.perplexity(planted.corpus, mode="completion"), m.transform(planted.corpus))
    assert m._fold_in_jobs() == 1
    with fold_in_threads(m, 3):
        assert m._fold_in_jobs() == 3
        spread = (m.perplexity(planted.corpus, mode="completion"), m.transform(planted.corpus))
        with fold_in_threads(m, 2):
            assert m._fold_in_jobs() == 2
        assert m._fold_in_jobs() == 3
    assert m._fold_in_jobs() == 1 and not hasattr(m, "_fold_in_threads")
    assert alone[0] == spread[0] and np.array_equal(alone[1], spread[1])
