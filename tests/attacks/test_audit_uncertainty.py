"""The audit's uncertainty and what it records (sized as 20 Newsgroups, 1,000-2,000 documents): an AUC standard error that counts
documents and models rather than pooled scores, a record of what was attacked (and a report that refuses another
model's audit), local-DP units, the corpus read into a saved model's vocabulary, a seeded model's caveat, the
coverage check, one-line API errors and thread-safe warnings, ldp-doc, and one rounding of the claim."""
import json
import os
import string
import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import dptopic
from dptopic.attacks import lira, metrics, run_lira
from dptopic.cli.main import main
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


def _fake(report, n_topics=4):
    """Plain (leaky) LDA whose report claims whatever ``report`` says."""
    def train(corpus, rng):
        m = dptopic.LDA(n_topics=n_topics, n_iter=10, beta=0.01, seed=rng, verbose=0).fit(corpus)
        m.privacy_ = dict(report)
        return m
    return train


DOC_CLAIM = {"private": True, "epsilon": 50.0, "delta": 1e-5, "unit": "document",
             "neighbouring_relation": "document-level replacement"}


def _one_line(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def _flat(text):
    return " ".join(text.split())     # the console wraps long lines


# ----------------------------------------------------------------- 1: the AUC's standard error
def _correlated_scores(rng, D=150, T=8):
    """Scores of T targets (complementary pairs) x D documents whose members stand out by a per-document amount:
    a document that is easy to spot is easy under every target, so its scores are strongly correlated."""
    y = np.zeros((T, D), bool)
    for r in range(T // 2):
        half = rng.permutation(D) < D // 2
        y[2 * r], y[2 * r + 1] = half, ~half
    effect = 0.6 + rng.normal(0, 1.0, D)
    s = effect[None, :] * y + rng.normal(0, 0.7, (T, D))
    return s.ravel(), y.ravel(), np.tile(np.arange(D), T)


def test_bootstrap_over_documents_matches_the_spread_over_replications():
    rng = np.random.default_rng(1)
    R = 300
    aucs = [roc_auc_score(y, s) for s, y, _ in (_correlated_scores(rng) for _ in range(R))]
    spread = np.std(aucs, ddof=1)
    spread_se = spread / np.sqrt(2 * (R - 1))           # the standard error of a standard deviation
    boot, hm = [], []
    for i in range(15):
        s, y, g = _correlated_scores(rng)
        out = metrics.summarize(s, y, groups=g, seed=i)
        assert "bootstrap over documents" in out["auc_se_method"]
        boot.append(out["auc_se"])
        hm.append(metrics.summarize(s, y)["auc_se"])
    boot_se = np.std(boot, ddof=1) / np.sqrt(len(boot))
    assert abs(np.mean(boot) - spread) <= 3 * np.hypot(spread_se, boot_se), (np.mean(boot), spread)
    # Hanley & McNeil treat the 1,200 scores as independent: far below the real spread, and below the bootstrap
    assert np.mean(hm) < 0.75 * spread and np.mean(hm) < 0.75 * np.mean(boot)


def test_weighted_auc_is_sklearns():
    rng = np.random.default_rng(0)
    s, y = np.round(rng.normal(size=400), 1), rng.random(400) < 0.4     # with ties
    w = rng.integers(0, 3, 400).astype(float)
    order, slot, n = metrics._weighted_auc_parts(s, y)
    assert metrics._weighted_auc(slot, n, w[order]) == pytest.approx(roc_auc_score(y, s, sample_weight=w))
    assert metrics.summarize(s, y)["auc_se_method"].startswith("Hanley & McNeil")


def test_audit_standard_error_matches_independent_audits():
    """Twenty independent audits (documents drawn afresh from one population, seeds afresh): the AUC's spread is what
    the audit's own standard error says, and more than documents alone (or Hanley & McNeil) account for."""
    population = lda_corpus(n_docs=2000, vocab_size=80, n_topics=3, doc_length=("poisson", 40), alpha=0.3, beta=0.05,
                            seed=7).corpus
    rows = []
    for r in range(20):
        c = population.subset(np.sort(np.random.default_rng(500 + r).choice(population.n_docs, 100, replace=False)))
        res = run_lira(c, lira.estimator_trainer("lda", n_topics=3, n_iter=10), n_shadows=8, seed=r, verbose=0, n_jobs=2)
        v = res.summaries["lira_online"]
        assert v["auc_se"] == pytest.approx(np.hypot(v["auc_se_documents"], v["auc_se_models"]))
        s, y = res.pooled["lira_online"]
        rows.append((v["auc"], v["auc_se"], v["auc_se_documents"], metrics.summarize(s, y)["auc_se"]))
    rows = np.array(rows)
    spread = rows[:, 0].std(ddof=1)
    tol = 3 * np.hypot(spread / np.sqrt(2 * (len(rows) - 1)), rows[:, 1].std(ddof=1) / np.sqrt(len(rows)))
    assert abs(rows[:, 1].mean() - spread) <= tol, (rows[:, 1].mean(), spread)
    assert rows[:, 2].mean() < rows[:, 1].mean() and rows[:, 3].mean() < rows[:, 1].mean()
    assert "jackknife over complementary shadow pairs" in res.settings["auc_se"]


def test_standard_error_is_reproducible_and_named(small):
    fn = _fake(DOC_CLAIM)
    a = run_lira(small, fn, n_shadows=4, seed=3, verbose=0)
    b = run_lira(small, fn, n_shadows=4, seed=3, verbose=0)
    assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)
    # 4 shadows leave no pair to spare: documents only, and the settings say so
    assert "auc_se_models" not in a.summaries["lira_online"] and "not included" in a.settings["auc_se"]
    c = run_lira(small, fn, n_shadows=6, seed=np.random.default_rng(3), verbose=0)
    assert "auc_se_models" in c.summaries["lira_online"]


# ----------------------------------------------------------------- 3: local-DP units are documents
@pytest.mark.parametrize("unit", ["document (local DP)", "contributor (local DP, 10 documents)", "user"])
def test_local_document_units_are_compared(small, unit):
    r = run_lira(small, _fake(dict(DOC_CLAIM, unit=unit)), n_shadows=4, seed=0, verbose=0)
    assert r.verdict == "consistent with the claim", r.verdict_note
    assert not any("group privacy" in n for n in r.to_json()["claimed_privacy"].get("notes", []))
    assert lira.unit_covers_document(unit) and not lira.unit_covers_document("word")


# ----------------------------------------------------------------- 6: a seeded model's caveat
def test_a_seeded_models_claim_keeps_the_seed_caveat(small):
    seeded = dict(DOC_CLAIM, noise_reproducible=True,
                  warning="an explicit seed makes the noise reproducible: the guarantee holds only while the seed"
                          " stays secret.")
    r = run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=0, verbose=0, claim=seeded)
    c = r.to_json()["claimed_privacy"]
    assert c["noise_reproducible"] is True and lira.SEEDED_NOTE in c["notes"]
    assert "seed stays secret" in r.verdict_note
    # the audit's own shadows (seeded by the audit) carry no such caveat
    assert "noise_reproducible" not in lira.claimed_epsilon(lira.shadow_claim(seeded))


# ----------------------------------------------------------------- 9: API errors and warnings
def test_seed_errors_are_one_line(small):
    for bad in ("abc", -1, True, 1.5):
        with pytest.raises(DPTopicError, match="invalid seed") as e:
            run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=bad, verbose=0)
        assert "\n" not in str(e.value)


def test_corpus_error_names_real_functions():
    with pytest.raises(DPTopicError) as e:
        run_lira(["a b c"], _fake(DOC_CLAIM), n_shadows=4, verbose=0)
    msg = str(e.value)
    assert "dptopic.load_corpus" not in msg and "Corpus.from_texts" in msg and "dptopic.corpus.as_corpus" in msg
    assert callable(dptopic.corpus.as_corpus) and callable(dptopic.Corpus.from_jsonl)


def test_shadow_warnings_stay_quiet_in_threads():
    c = lda_corpus(n_docs=60, vocab_size=60, n_topics=3, doc_length=("poisson", 30), seed=5).corpus
    fn = lira.estimator_trainer("docdp", n_topics=3, n_iter=3, epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        run_lira(c, fn, n_shadows=8, seed=0, n_jobs=4, verbose=0)
        after = list(warnings.filters)
    leaked = [w for w in caught if issubclass(w.category, (dptopic.SeededNoiseWarning, dptopic.DataVocabularyWarning))
              or "earlier private fit" in str(w.message)]
    assert not leaked, [str(w.message)[:80] for w in leaked]
    ours = (dptopic.SeededNoiseWarning, dptopic.DataVocabularyWarning, dptopic.errors.SmallCorpusWarning)
    assert not [f for f in after if f not in before and (f[2] in ours or f[1] is not None)]   # ours are gone
    with pytest.warns(dptopic.SeededNoiseWarning):                  # and a user's own seeded fit still warns
        dptopic.DocDPEM(n_topics=3, n_iter=1, seed=1).fit(c)


# ----------------------------------------------------------------- 11: one rounding; owner-only plots
def test_the_claim_is_rounded_once_and_up():
    from dptopic.accounting.card import epsilon_text

    for eps in (1.9975, 0.99995, 1.979):
        _, note = lira.verdict({"epsilon": eps, "unit": "document", "private": True}, 0.1)
        assert f"claimed epsilon {epsilon_text(eps)}" in note, note
        assert float(epsilon_text(eps)) >= eps
    _, note = lira.verdict({"epsilon": 1.0, "unit": "document", "private": True}, 2.34567)
    assert "lower bound 2.34 exceeds" in note          # a lower bound is never shown larger than it is


def test_plot_from_python_is_owner_only(small, tmp_path):
    r = run_lira(small, _fake(DOC_CLAIM), n_shadows=4, seed=0, verbose=0)
    old = os.umask(0o022)
    try:
        p = r.plot(tmp_path / "roc.png")
        q = r.plot(tmp_path / "public.png", private=False)
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o600 and q.stat().st_mode & 0o777 == 0o644


# ----------------------------------------------------------------- CLI
def _name(i, prefix):
    out = ""
    for _ in range(3):
        i, r = divmod(i, 26)
        out += string.ascii_lowercase[r]
    return prefix + out


def _write(path, corpus, prefix="zork", extra=None):
    with open(path, "w") as fh:
        for d in range(corpus.n_docs):
            words = [_name(int(w), prefix) for w in corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]]
            fh.write(json.dumps({"text": " ".join(words + (extra(d) if extra else []))}) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, small):
    d = tmp_path_factory.mktemp("walk3")
    a = _write(d / "a.jsonl", small)
    m1, m2 = d / "m1", d / "m2"
    for out, seed in ((m1, "0"), (m2, "1")):
        assert main(["train", "--corpus", str(a), "--topics", "3", "--iterations", "3", "--out", str(out), "--quiet",
                     "--seed", seed]) == 0
    return d, a, m1, m2


def test_audit_json_records_what_was_attacked(files, capsys):
    from dptopic.attacks.provenance import model_fingerprint

    d, a, m1, _ = files
    out = d / "rec"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(out)]) == 0
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert s["audited"]["model"] == str(m1) and s["audited"]["class"] == "LDA"
    assert s["audited"]["fingerprint"] == model_fingerprint(dptopic.load(m1))
    assert s["audited"]["params"]["n_topics"] == 3 and "seed" not in s["audited"]["params"]
    assert s["corpus"]["spec"] == str(a) and "model's vocabulary" in s["corpus"]["read"]
    assert s["dptopic_version"] == dptopic.__version__ and str(m1) in s["attacked"]
    assert s["reproducible"].startswith("yes") and "bootstrap" in s["auc_se"]
    assert "m1" in lira.attacked_caption(s) and "a.jsonl" in lira.attacked_caption(s)   # roc.png's title
    out2 = d / "rec2"       # by procedure; and an audit without --seed says it cannot be re-run
    assert main(["audit", "--algorithm", "lda", "--topics", "3", "--iterations", "3", "--corpus", str(a),
                 "--shadows", "4", "--quiet", "--out", str(out2)]) == 0
    s = json.loads((out2 / "audit.json").read_text())["settings"]
    assert s["audited"] == {"what": "procedure", "algorithm": "lda", "class": "LDA", "params": s["audited"]["params"]}
    assert s["audited"]["params"]["n_iter"] == 3 and s["corpus"]["read"].startswith("built as")
    assert s["seed"] is None and s["reproducible"].startswith("no")
    assert "for reproduction" not in lira.SHADOW_SEED_NOTE
    capsys.readouterr()


def test_report_refuses_an_audit_of_another_model(files, tmp_path, capsys):
    d, a, m1, m2 = files
    audit = d / "rep"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(audit)]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(m1), "--audit", str(audit), "--out", str(tmp_path / "ok.html")]) == 0
    html = (tmp_path / "ok.html").read_text()
    assert "attacked" in html and "sha256:" in html
    capsys.readouterr()
    # m2: another non-private LDA of the same claim (the old check compared only private/epsilon/delta/unit)
    assert main(["report", "--model", str(m2), "--audit", str(audit), "--out", str(tmp_path / "no.html")]) == 2
    err = _one_line(capsys)
    assert "not an audit of" in err and "'dptopic audit' on" in err and not (tmp_path / "no.html").exists()
    # an audit of a procedure: refused for a model trained with other parameters
    proc = d / "proc"
    assert main(["audit", "--algorithm", "lda", "--topics", "4", "--iterations", "3", "--corpus", str(a),
                 "--shadows", "4", "--seed", "0", "--quiet", "--out", str(proc)]) == 0
    capsys.readouterr()
    assert main(["report", "--model", str(m1), "--audit", str(proc), "--out", str(tmp_path / "p.html")]) == 2
    assert "n_topics=4" in _one_line(capsys)
    # an audit.json from before the record: shown, with a one-line warning (here and on the page)
    doc = json.loads((audit / "audit.json").read_text())
    for k in ("audited", "corpus", "attacked", "dptopic_version"):
        doc["settings"].pop(k)
    old = tmp_path / "old"
    old.mkdir()
    (old / "audit.json").write_text(json.dumps(doc))
    assert main(["report", "--model", str(m2), "--audit", str(old), "--out", str(tmp_path / "old.html")]) == 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("warning:") and "\n" not in err and "earlier dptopic" in err
    assert "only its claim was checked" in (tmp_path / "old.html").read_text()


def test_audit_reads_the_corpus_as_evaluate_does(tmp_path, capsys):
    from dptopic.cli._common import load_corpus
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    model = tmp_path / "m"
    assert main(["train", "--corpus", str(src), "--stop-words", "none", "--max-vocab", "200", "--topics", "3",
                 "--iterations", "3", "--out", str(model), "--quiet", "--seed", "0"]) == 0
    capsys.readouterr()
    out = tmp_path / "a"
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert "stop word" not in got.err and "outside the model's vocabulary" not in _flat(got.out)
    m = dptopic.load(model)
    want = load_corpus(str(src), vocabulary=m.vocabulary_, into_model=True, tokenizer=m.tokenizer_)
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert s["n_docs"] == want.n_docs and s["vocab_size"] == len(m.vocabulary_)
    assert "coverage" not in s
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--stop-words", "english", "--quiet",
                 "--out", str(tmp_path / "b")]) == 2
    assert "--stop-words" in _one_line(capsys)


def test_coverage_private_vocabulary_model_on_its_own_corpus(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "pv.jsonl"     # 40 words in every document; 10 words repeated 400 times in 4 documents each
    bursty = {int(d): w for w in range(10) for d in rng.choice(1200, 4, replace=False)}
    with open(path, "w") as fh:
        for d in range(1200):
            words = [_name(int(w), "zork") for w in rng.integers(0, 40, 25)]
            words += [_name(bursty[d], "burst")] * 400 if d in bursty else []
            fh.write(json.dumps({"text": " ".join(words)}) + "\n")
    model = tmp_path / "fd"
    assert main(["train", "--algorithm", "docdp", "--topics", "3", "--epsilon", "1", "--delta", "1e-5",
                 "--private-vocabulary", "1,1e-5", "--corpus", str(path), "--out", str(model), "--quiet"]) == 0
    capsys.readouterr()
    assert all(w.startswith("zork") for w in dptopic.load(model).vocabulary_.words)
    # the bursty words are most of the corpus's most frequent tokens, yet this is the training corpus
    assert main(["audit", "--model", str(model), "--corpus", str(path), "--shadows", "4", "--seed", "0", "--quiet",
                 "--out", str(tmp_path / "a")]) == 0
    assert "selected privately" in _flat(capsys.readouterr().out)
    other = tmp_path / "other.jsonl"  # a corpus missing most of the model's words is still refused
    other.write_text("".join(json.dumps({"text": " ".join([_name(w, "zork") for w in range(5)] * 5)}) + "\n"
                             for _ in range(50)))
    assert main(["audit", "--model", str(model), "--corpus", str(other), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "b")]) == 2
    assert "selected privately" in _one_line(capsys)


def test_coverage_frequency_cut_model_refuses_a_foreign_corpus(files, small, tmp_path, capsys):
    d, a, m1, _ = files
    # the model's documents plus frequent words it never saw: as many of its words per document as in training,
    # yet a fifth of the tokens are foreign (the old check let this pass as if the model were trained on a word list)
    foreign = _write(tmp_path / "foreign.jsonl", small,
                     extra=lambda doc: [_name(i % 8, "quux") for i in range(int(0.25 * small.doc_lengths[doc]))])
    assert main(["audit", "--model", str(m1), "--corpus", str(foreign), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "x")]) == 2
    err = _one_line(capsys)
    assert "outside the model's vocabulary" in err and "--restrict" in err
    assert main(["audit", "--model", str(m1), "--corpus", str(foreign), "--shadows", "4", "--quiet", "--restrict",
                 "--out", str(tmp_path / "y")]) == 0
    capsys.readouterr()


def test_coverage_vocabulary_file_says_what_it_dropped(files, tmp_path, capsys):
    d, a, m1, _ = files
    m = dptopic.load(m1)
    corpus = dptopic.Corpus.from_jsonl(a, vocabulary=m.vocabulary_)
    order, X = np.argsort(np.bincount(corpus.word_ids, minlength=corpus.vocab_size)), corpus.to_bow()
    k = next(k for k in range(3, corpus.vocab_size) if (X[:, order[:k]].sum(axis=1) == 0).sum() <= 20)
    words = [m.vocabulary_.words[i] for i in order[:k]]
    lacking = int((X[:, order[:k]].sum(axis=1) == 0).sum())       # some of the 60 documents hold none of them
    assert 0 < lacking <= 20
    vocab = tmp_path / "v.txt"
    vocab.write_text("\n".join(words + ["notamodelword"]))
    out = tmp_path / "v"
    assert main(["audit", "--model", str(m1), "--corpus", str(a), "--vocabulary", str(vocab), "--shadows", "4",
                 "--seed", "0", "--quiet", "--out", str(out)]) == 0
    printed = _flat(capsys.readouterr().out)
    n_model = len(dptopic.load(m1).vocabulary_)
    assert f"holds {k} of the model's {n_model} words" in printed
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert f"{lacking} documents of the 60 held none of them and were left out" in printed
    assert s["n_docs"] == 60 - lacking and "left out" in s["coverage"]


def test_ldp_doc_is_refused_with_a_reason(files, tmp_path, capsys):
    d, a, *_ = files
    assert main(["audit", "--algorithm", "ldp-doc", "--corpus", str(a), "--shadows", "4", "--quiet",
                 "--out", str(tmp_path / "x")]) == 2
    err = _one_line(capsys)
    assert "unknown algorithm" not in err and "local reports" in err and "lp, olp" in err
    with pytest.raises(DPTopicError, match="cannot attack"):
        lira.estimator_trainer(dptopic.models.LocalDocumentLDA)


def test_lp_audit_from_the_cli_compares_the_document_unit(files, tmp_path, capsys):
    d, a, *_ = files
    assert main(["audit", "--algorithm", "lp", "--topics", "3", "--iterations", "3", "--epsilon", "3",
                 "--corpus", str(a), "--shadows", "4", "--seed", "1", "--quiet", "--out", str(tmp_path / "lp")]) == 0
    out = _flat(capsys.readouterr().out)
    doc = json.loads((tmp_path / "lp" / "audit.json").read_text())
    assert doc["claimed_privacy"]["unit"] == "document (local DP)"
    assert doc["verdict"] != "units differ" and "units differ" not in out and "L times epsilon" not in out


def test_docs_are_truthful():
    from pathlib import Path

    text = " ".join((Path(__file__).parents[2] / "docs" / "auditing.md").read_text().split())
    assert "lp, olp and docdp" not in text and "except `ldp-doc`" in text
    assert "the standard error is Hanley & McNeil's (1982)." not in text and "delete-a-group jackknife" in text
