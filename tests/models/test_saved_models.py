"""What every private trainer saves: each field of model.json and each array classified, the seed never written,
metrics computed outside the ledger left out (or labelled), fresh entropy without a seed, atomic pickle-free I/O.

A new field, array or privacy-report key makes ``test_saved_fields_are_classified`` fail until it is classified
here: (a) public input the user gave, (b) a noisy release or post-processing of releases only, or (c) computed from
the private data outside the ledger, which must not be saved unless labelled (the scope of the report says so).
"""
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import dptopic
from dptopic.contributor.document_randomizer import DocumentRandomizer
from dptopic.contributor.randomizer import Randomizer
from dptopic.corpus import lda_corpus
from dptopic.models import (
    CDPLDA,
    DPSVI,
    HDPLDA,
    LPLDA,
    OLPLDA,
    CDPLDAPlus,
    DocDPCooccurrence,
    DocDPEM,
    FedLDA,
    LocalDocumentLDA,
    load,
)
from dptopic.training.fdptm import fit_fdptm

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
