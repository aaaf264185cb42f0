"""Privacy review 49: DP set union never starts from a word list that the documents' counts already cut."""
from __future__ import annotations

import numpy as np
import pytest

from dptopic.cli.main import main
from dptopic.corpus import Corpus, as_corpus
from dptopic.corpus.corpus import data_cut_of
from dptopic.corpus.private_vocabulary import dp_set_union
from dptopic.errors import DPTopicError
from dptopic.models.fdptm import restrict_to_private_vocabulary


def _neighbours():
    """D and D + u where a top-1,000 cut built from the documents holds 'target' under D and drops it under D + u
    (u's word outranks it): the candidate list itself would differ between the neighbours."""
    fill = [[f"filler{i:03d}"] * 201 for i in range(998)]
    D = fill + [["anchor", "anchor"] for _ in range(200)] + [["target"] for _ in range(200)]
    return D, D + [["intruder"] * 201]


def test_the_private_vocabulary_of_texts_or_words_starts_from_every_word():
    D, Dp = _neighbours()
    # the default cut of a vocabulary built from words is what the review showed would break the guarantee
    assert "target" in as_corpus(D).vocabulary.words and "target" not in as_corpus(Dp).vocabulary.words
    assert data_cut_of(as_corpus(Dp)) == "built with max_vocab=1000"
    for data in (D, Dp):
        full = as_corpus(data, uncut=True)
        assert "target" in full.vocabulary.words and data_cut_of(full) is None
    # 'target' (200 documents) is released from both neighbours, as set union's stability promises at this size
    for data in (D, Dp):
        restricted, event = restrict_to_private_vocabulary(data, 1.0, 1e-5, seed=0)
        assert "target" in restricted.vocabulary.words and event.epsilon == 1.0


@pytest.mark.parametrize("build, cut", [
    (lambda docs: Corpus.from_tokens(docs, max_vocab=3), "built with max_vocab=3"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, min_df=2), "built with min_df=2"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, min_df=0.2), "built with min_df=0.2"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, max_df=0.9), "built with max_df=0.9"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None).prune(max_vocab=3), "pruned with max_vocab=3"),
])
def test_set_union_refuses_a_corpus_whose_words_were_cut_by_their_counts(build, cut):
    docs = [["alpha", "beta", "gamma"], ["alpha", "delta"], ["beta", "epsilon", "alpha"], ["gamma", "beta"]] * 5
    corpus = build(docs)
    assert data_cut_of(corpus) == cut
    with pytest.raises(DPTopicError, match="cut by their counts") as e:
        dp_set_union(corpus, 1.0, 1e-5, seed=0)
    assert cut in str(e.value) and "\n" not in str(e.value)


def test_only_a_corpus_with_every_word_or_a_public_list_is_accepted():
    docs = [["alpha", "beta", "gamma"], ["alpha", "delta"], ["beta", "epsilon", "alpha"]] * 5
    for corpus in (Corpus.from_tokens(docs, max_vocab=None),
                   Corpus.from_tokens(docs, max_vocab=2**31 - 1, min_df=1, max_df=1.0),   # --max-vocab all
                   Corpus.from_tokens(docs, max_vocab=2).restrict(["alpha", "beta", "zeta"]),   # a caller's list
                   Corpus.from_bow(np.array([[1, 2, 0], [0, 1, 3]]))):     # a matrix's columns: the caller's
        assert data_cut_of(corpus) is None
        dp_set_union(corpus, 1.0, 1e-5, seed=0)
    # a cap that left nothing out of this corpus still binds on one a document away (a document with 996 new words
    # pushes the rarest of these out of the top 1,000): refused as well, as is a count max_df at any value
    assert data_cut_of(Corpus.from_tokens(docs)) == "built with max_vocab=1000"
    assert data_cut_of(Corpus.from_tokens(docs, max_vocab=None, max_df=100)) == "built with max_df=100"
    # a cap hidden by a later prune that records none (stop words only) is still seen
    hidden = Corpus.from_tokens(docs, max_vocab=4).prune(max_vocab=None, stop_words=["zeta"])
    assert data_cut_of(hidden) == "built with max_vocab=4"


def test_train_refuses_a_prepared_corpus_cut_by_its_counts_in_one_line(tmp_path, capsys):
    texts = tmp_path / "docs.txt"
    rng = np.random.default_rng(0)
    words = [f"word{c}" for c in "abcdefghij"]
    texts.write_text("\n".join(" ".join(rng.choice(words, 6)) for _ in range(600)) + "\n")
    prepared = tmp_path / "cut.npz"
    assert main(["corpus", "prepare", "--corpus", str(texts), "--max-vocab", "4", "--out", str(prepared)]) == 0
    every = tmp_path / "all.npz"       # the way the message names: every word kept
    assert main(["corpus", "prepare", "--corpus", str(texts), "--max-vocab", "all", "--out", str(every)]) == 0
    assert data_cut_of(Corpus.load(every)) is None and Corpus.load(every).vocab_size == 10
    capsys.readouterr()
    try:
        rc = main(["train", "--algorithm", "docdp-cooc", "--epsilon", "2", "--topics", "2", "--corpus", str(prepared),
                   "--private-vocabulary", "1,1e-5", "--out", str(tmp_path / "m"), "--test-size", "0"])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err
    assert "built with --max-vocab 4" in lines[0] and "--max-vocab all" in lines[0] and not (tmp_path / "m").exists()
    assert main(["train", "--algorithm", "docdp-cooc", "--epsilon", "2", "--topics", "2", "--corpus", str(every),
                 "--private-vocabulary", "8,1e-5", "--out", str(tmp_path / "m2"), "--test-size", "0", "--quiet"]) == 0


def test_the_fdptm_experiment_runs_on_a_pool_cut_once_before_its_shadows(tmp_path):
    """The experiment's pool is cut by its counts once (its --max-vocab); a shadow's candidates are that fixed list
    whichever half of the pool it holds, so the shadows' set union runs (it refused the cut pool before)."""
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.experiments import fdptm_experiment

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=400, n_topics=3, doc_length=30, alpha=0.2, seed=5)
    pool = Corpus.from_tokens([c.doc_words(d) for d in range(c.n_docs)], max_vocab=30,
                              labels=[str(int(np.argmax(t) % 2)) for t in theta])
    assert data_cut_of(pool) == "built with max_vocab=30"
    s = fdptm_experiment(pool, tmp_path, eps_v_grid=(5.0,), trainer="cgs", n_topics=3, n_shadows=4,
                         cgs_iterations=3, verbose=0)
    assert [r["config"] for r in s["rows"]] == ["public", "eps_V=5"]
    assert 0 < s["rows"][1]["mean_vocab_size"] <= 30


# ------------------------------------------------------------------ walk-through 49: recommend's advice
def _recommend(capsys, *argv) -> str:
    assert main(["recommend", *map(str, argv)]) in (0, None)
    return " ".join(capsys.readouterr().out.split())


def test_recommend_suggests_a_command_whose_guarantee_is_full_and_says_what_without_it(capsys):
    out = _recommend(capsys, "--unit", "document", "--epsilon", 1, "--docs", 400, "--topics", 5)
    assert "train it: dptopic train --unit document --epsilon 1 --topics 5 --corpus FILE --vocabulary PUBLIC_WORDS.txt" in out
    assert "--private-vocabulary EPS_V,DELTA_V chooses them by DP set union inside the budget" in out
    assert "the guarantee is partial" in out
    word = _recommend(capsys, "--unit", "word", "--epsilon", 1000, "--docs", 10_000)
    assert "--corpus FILE --vocabulary PUBLIC_WORDS.txt" in word and "the guarantee is partial" in word


def test_recommend_bounds_the_alternatives_as_it_bounds_the_headline(capsys):
    from dptopic.advice import recommend

    rec = recommend("document", 1.0, 400, 5)
    assert rec.extrapolated_side == "below" and rec.alternatives
    assert all(alt["extrapolated_side"] == "below" for alt in rec.alternatives)
    out = _recommend(capsys, "--epsilon", 1, "--docs", 400, "--topics", 5)
    assert all(f"alternative: {alt['trainer']} (at most {alt['expected_npmi_ratio']:.0%})" in out
               for alt in rec.alternatives)
    inside = recommend("document", 1.0, 20_000, 20)          # measured there: plain figures
    assert all(alt["extrapolated_side"] is None for alt in inside.alternatives)


def test_recommend_at_an_unreachable_epsilon_offers_no_corpus_size(capsys):
    out = _recommend(capsys, "--epsilon", 0.005, "--docs", 1000)
    assert "documents for useful topics" not in out and "topics become useful" not in out
    assert "train it: not at epsilon 0.005" in out
    reachable = _recommend(capsys, "--epsilon", 0.01, "--docs", 1000)
    assert "documents for useful topics" in reachable


@pytest.mark.parametrize("given, n", [("1e12", 10 ** 12), ("1.5e3", 1500), ("2000", 2000)])
def test_recommend_takes_a_document_count_in_scientific_notation(capsys, given, n):
    assert f"{n:,} document" in _recommend(capsys, "--epsilon", 1, "--docs", given)


@pytest.mark.parametrize("given", ["1.5", "0", "-3", "nan", "inf", "1e400", "ten"])
def test_recommend_refuses_a_document_count_that_is_not_a_whole_number(capsys, given):
    with pytest.raises(SystemExit) as e:
        main(["recommend", "--epsilon", "1", "--docs", given])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "--docs" in err[0]


def test_corpus_info_names_the_filler_words_only_when_there_are_some(tmp_path, capsys):
    filler = tmp_path / "fill.txt"
    filler.write_text("the cat sat on a mat today\nthe dog ran far away today\nthe bird flew high above\n"
                      "fish swim deep below\n")
    assert main(["corpus", "info", str(filler), "--stop-words", "none"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "1 word is in more than half of the documents (the), often filler: --max-df 0.5 drops it" in out
    assert main(["corpus", "info", str(filler), "--stop-words", "none", "--json"]) in (0, None)
    import json

    assert json.loads(capsys.readouterr().out)["words_in_most_documents"] == ["the"]
    none = tmp_path / "none.txt"
    none.write_text("alpha beta\ngamma delta\nepsilon zeta\n")
    assert main(["corpus", "info", str(none)]) in (0, None)
    assert "--max-df 0.5" not in capsys.readouterr().out


@pytest.mark.parametrize("word_choice, background_share, counted, counts", [
    ("frequency", 0.25, True, False), ("repetition", 0.25, True, True), ("frequency", None, False, False),
    ("repetition", None, False, True)])
def test_the_cooccurrence_theorem_names_the_ranking_statistic_released(word_choice, background_share, counted,
                                                                       counts):
    import warnings

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence

    c, *_ = lda_corpus(n_docs=200, vocab_size=300, n_topics=3, doc_length=30, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=12, epsilon=2.0, delta=1e-5, n_words=50, word_choice=word_choice,
                              background_share=background_share, verbose=0).fit(c, vocabulary=c.vocabulary.words)
    theorem = m.privacy_["theorem"]
    assert m.privacy_["parameters"]["word_choice"] == word_choice
    assert ("last entry 1 for the document" in theorem) == counted
    assert ("and the word counts" in theorem) == counts and "repetition" not in theorem


@pytest.mark.parametrize("word_choice", ["frequency", "repetition"])
def test_the_cooccurrence_trainers_two_releases_are_checked_against_its_parameters(word_choice):
    """`privacy verify` compared only DocDPCooccurrence's budget, not its events: a report whose ranking noise was
    edited (figures recomputed from the edit) passed. Both releases' noise now follows from epsilon, delta and
    ranking_noise, and whether the ranking came first from the report's public settings."""
    import json
    import warnings

    from dptopic.accounting.verify import recompute_report, verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence
    from dptopic.models.base import planned_spend_check

    c, *_ = lda_corpus(n_docs=200, vocab_size=300, n_topics=3, doc_length=30, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=4, epsilon=1.0, delta=1e-5, n_words=50, word_choice=word_choice,
                              verbose=0).fit(c, vocabulary=c.vocabulary.words)
    rep = m.privacy_
    assert len(rep["events"]) == 2 and rep["parameters"]["ranking_noise_multiplier"] is not None
    ok = planned_spend_check(verify_report(rep), m, rep)
    assert ok.status == "verified" and "match what" in ok.detail
    for i in (0, 1):
        edited = json.loads(json.dumps(rep))
        edited["events"][i]["noise_multiplier"] *= 1.5 if i == 0 else 0.9
        new = recompute_report(edited)
        edited.update({k: v for k, v in new.items() if k in edited or k in ("epsilon", "delta")})
        assert verify_report(edited).status == "verified"          # consistent with itself
        v = planned_spend_check(verify_report(edited), m, edited)
        assert v.status == "failed" and "parameters plan" in v.detail


def test_the_document_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """One report per document, an empty one included: a corpus that already dropped documents with no vocabulary
    word would send fewer reports, by a number read from the text."""
    from dptopic.local.document import DocumentRandomizer

    words = ["fever", "cough", "rash", "pain"]
    texts = ["fever cough today", "nothing here at all", "rash and pain"]
    r = DocumentRandomizer.for_simulation(words, 4.0, seed=0)
    dropped = Corpus.from_texts(texts, vocabulary=words)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="left out 1 document") as e:
        r.randomize(dropped)
    assert "drop_empty=False" in str(e.value) and "\n" not in str(e.value)
    kept = Corpus.from_texts(texts, vocabulary=words, drop_empty=False)
    assert len(r.sample_pairs(kept)) == 3
    assert len(r.sample_pairs([t.split() for t in texts])) == 3


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


# ------------------------------------------------------------------ fuzz 49: a shard set replaced atomically
_KILL_AT = r'''
import os, sys
K = int(sys.argv[1]); n = [0]
def hook(ev, args):
    if ev in ("os.rename", "os.remove") and "shard-" in os.fsdecode(args[0]) and not os.fsdecode(args[0]).endswith(".tmp"):
        n[0] += 1
        if n[0] == K:
            os._exit(137)           # as a SIGKILL: no handler, no clean-up
sys.addaudithook(hook)
from dptopic.cli.main import main
sys.exit(main(sys.argv[2:]))
'''


def _texts(path, seed):
    rng = np.random.default_rng(seed)
    words = "apple banana cherry dog elephant fish grape house igloo jungle kite lemon".split()
    path.write_text("\n".join(" ".join(rng.choice(words, 20)) for _ in range(60)) + "\n")


@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_a_shard_set_killed_among_its_renames_is_never_a_mix_of_two_runs(tmp_path, kill_at):
    """`corpus prepare --shards N --overwrite` replaced the old set one file at a time: killed between two renames,
    the folder held shards of both runs and every read refused it (the old corpus lost). The complete new set is now
    committed first, and the next reader finishes its renames."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from dptopic.corpus.shards import ShardSet, folder_shards

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    _texts(tmp_path / "docs.txt", 0)
    (tmp_path / "kill.py").write_text(_KILL_AT)
    prep = ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--out", str(tmp_path / "sh"),
            "--stop-words", "none"]
    assert main(prep + ["--shards", "3"]) in (0, None)
    old = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")
    assert old.vocab_size == 12 and len(old.paths) == 3
    r = subprocess.run([sys.executable, str(tmp_path / "kill.py"), str(kill_at), *prep, "--shards", "2",
                        "--max-vocab", "5", "--overwrite"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 137, r.stderr[-500:]
    new = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")     # read: the replacement is finished
    assert new.vocab_size == 5 and len(new.paths) == 2 and new.n_docs == 60
    assert sorted(p.name for p in (tmp_path / "sh").iterdir() if p.name.startswith((".shard", "shard"))) == [
        "shard-00000.npz", "shard-00001.npz"]
    # and the folder takes another run as before
    assert main(prep + ["--shards", "4", "--overwrite"]) in (0, None)
    assert len(ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh").paths) == 4


def test_a_shard_run_killed_before_its_set_is_complete_leaves_the_old_set(tmp_path, monkeypatch):
    from dptopic.corpus import shards as shards_module
    from dptopic.corpus.shards import ShardSet, folder_shards, write_shards

    c = Corpus.from_tokens([["a", "b", "c"], ["b", "c"], ["c", "d"], ["a", "d"]] * 5)
    write_shards(c, tmp_path / "sh", 3)
    import dptopic._io as io_module

    def killed(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(io_module, "atomic_write_json", killed)      # stopped just before the commit
    with pytest.raises(KeyboardInterrupt):
        write_shards(c.subset(np.arange(10)), tmp_path / "sh", 2, replace=True)
    monkeypatch.undo()
    back = ShardSet(folder_shards(tmp_path / "sh"), folder=tmp_path / "sh")
    assert back.n_docs == 20 and len(back.paths) == 3
    assert not (tmp_path / "sh" / shards_module._COMMIT).exists()


# ------------------------------------------------------------------ fuzz 49: coherence on a foreign reference
def test_topics_whose_top_words_occur_nowhere_in_the_reference_are_never_scored_best():
    """C_v scored 1.0 and Mimno's UMass 0.0 (each measure's best) for topics whose top words occur in no reference
    document: a reference from another domain made any topics look perfect."""
    import warnings

    from dptopic.evaluation import cv_coherence, topic_quality, umass_coherence

    words = [f"w{i}" for i in range(20)]
    comp = np.full((2, 20), 1e-3)
    comp[0, :10] = np.linspace(1, 0.5, 10)         # topic 0: w0..w9; topic 1: w10..w19
    comp[1, 10:] = np.linspace(1, 0.5, 10)
    rng = np.random.default_rng(0)
    foreign = Corpus.from_tokens([list(rng.choice(words[10:], 8)) for _ in range(30)], vocabulary=words)
    with pytest.warns(UserWarning, match="1 of 2 topics have top words that occur in no reference document"):
        per = cv_coherence(comp, foreign, 10, per_topic=False)
    assert np.isfinite(per)
    cv = cv_coherence(comp, foreign, 10, per_topic=True)
    assert np.isnan(cv[0]) and np.isfinite(cv[1])
    um = umass_coherence(comp, foreign, 10, per_topic=True)
    assert np.isnan(um[0]) and np.isfinite(um[1]) and um[1] < 0
    only = Corpus.from_tokens([list(rng.choice(words[10:], 8)) for _ in range(30)], vocabulary=words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cv_coherence(comp[:1], only, 10)) and np.isnan(umass_coherence(comp[:1], only, 10))
        q = topic_quality(comp[:1], only, 10)
    assert q["c_v"] is None and q["npmi"] == pytest.approx(-1.0) and "1 of 1 topics" in q["absent_top_words"]
    # one absent word among present ones: left out of the others' context vectors (their shared -1 entries for it
    # made them look alike), its own cosine 0: C_v is the 9 words' own C_v times 9/10, lower, never higher
    partial = Corpus.from_tokens([list(rng.choice(words[:9], 6)) for _ in range(40)], vocabulary=words)
    with_absent = cv_coherence(comp[:1], partial, 10, per_topic=True)[0]
    without = cv_coherence(comp[:1, :9], Corpus.from_tokens([partial.doc_words(d) for d in range(partial.n_docs)],
                                                            vocabulary=words[:9]), 9, per_topic=True)[0]
    assert with_absent == pytest.approx(without * 9 / 10, rel=1e-9) and with_absent < without


def test_evaluate_says_undefined_rather_than_best_on_a_foreign_reference(tmp_path, capsys):
    import json

    import dptopic

    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(30)]     # letters: the tokeniser keeps them
    rng = np.random.default_rng(1)
    train = Corpus.from_tokens([list(rng.choice(words[:12], 20)) for _ in range(60)], vocabulary=words)
    dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(train).save(tmp_path / "m")
    (tmp_path / "ref.txt").write_text("\n".join(" ".join(rng.choice(words[20:], 10)) for _ in range(5)) + "\n")
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "ref.txt")]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "C_v (top 10, sliding windows of 110 tokens): undefined" in out and "C_v (top 10, sliding windows of 110 tokens): 1.0000" not in out
    assert "Mimno et al. define it: undefined" in out and "2 of 2 topics have top words" in out
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "ref.txt"), "--json"]) in (0, None)
    q = json.loads(capsys.readouterr().out)            # valid JSON: null, never NaN
    assert q["c_v"] is None and q["umass_mimno_sum"] is None


# ------------------------------------------------------------------ fuzz 49: bounds and one-line errors
def _error_line(capsys, argv) -> str:
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error") and "Traceback" not in err, (rc, err)
    return lines[0]


@pytest.mark.parametrize("budget", ["1e12", "1e30", "1e300"])
def test_a_huge_user_budget_is_refused_at_once(capsys, budget):
    """`--user-budget 1e30` spun for hours in a one-step search before the size check."""
    import dptopic

    line = _error_line(capsys, ["train", "--algorithm", "fed", "--user-budget", budget, "--corpus", "demo",
                                "--topics", "3", "--out", "unused"])
    assert f"--user-budget {float(budget):g} is too large" in line and "more than the 1e+07 an update may hold" in line
    with pytest.raises(DPTopicError, match="invalid pad_length="):
        dptopic.FedLDA.from_user_budget(float(budget), 26)


@pytest.mark.parametrize("server", ["http://a b:8000", "http://127.0.0.1:9/x\ny", "http://" + "a" * 64 + ".example:8000"])
@pytest.mark.parametrize("command", [["pull", "--out", "p"], ["submit", "--corpus", "docs.txt"],
                                     ["fed-client", "--corpus", "docs.txt"]])
def test_a_server_url_http_refuses_is_one_line(tmp_path, monkeypatch, capsys, server, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.txt").write_text("apple banana cherry\ndog elephant fish\n")
    line = _error_line(capsys, [*command, "--server", server, "--retries", "0", "--timeout", "1"])
    assert "invalid server URL" in line


def test_a_server_url_with_credentials_is_refused_without_echoing_them():
    from dptopic.service.client import ServiceClient

    with pytest.raises(DPTopicError) as e:
        ServiceClient("http://alice:s3cret@127.0.0.1:9")
    assert "s3cret" not in str(e.value) and "USER:PASSWORD@HOST" in str(e.value)
    assert ServiceClient("http://bücher.example:80").server == "http://bücher.example:80"


@pytest.mark.parametrize("epochs", ["inf", "1e309"])
def test_online_vb_refuses_infinite_epochs_in_one_line(capsys, epochs):
    assert "invalid --epochs inf for online-vb" in _error_line(
        capsys, ["train", "--algorithm", "online-vb", "--epochs", epochs, "--corpus", "demo", "--out", "unused"])


@pytest.mark.parametrize("argv", [
    ["experiment", "hdp-utility", "--seeds", str(2 ** 63)], ["experiment", "topic-attack", "--seeds", "300000000"],
    ["experiment", "ldp-utility", "--seeds", "1001"], ["experiment", "svi", "--seeds", "300000000"],
    ["experiment", "lira", "--shadows", str(2 ** 63)], ["experiment", "lira", "--shadows", "10002"],
    ["experiment", "lira", "--k-grid", "2", "999999999"], ["experiment", "classifier-mia", "--shadows", "99999999"]])
def test_experiment_counts_that_would_never_finish_are_refused_before_any_work(tmp_path, capsys, argv):
    line = _error_line(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert "--seeds" in line or "--shadows" in line or "--k-grid" in line
    assert not (tmp_path / "out").exists()


def test_an_experiments_note_leaves_standard_error_to_the_error(tmp_path, capsys):
    line = _error_line(capsys, ["experiment", "hdp-utility", "--topics", "200000", "--iterations", "1", "--seeds", "1",
                                "--out", str(tmp_path / "out")])
    assert "200000" in line or "200,000" in line


# ------------------------------------------------------------------ fuzz 49: messages
def test_a_semicolon_csv_is_read_with_semicolons_when_that_finds_its_columns(tmp_path):
    p = tmp_path / "semi.csv"
    p.write_text("id;text;label\n1;apple banana cherry;a\n2;dog elephant fish;b\n")
    with pytest.warns(UserWarning, match="read with ';' between the fields"):
        c = Corpus.from_csv(p, label_column="label", id_column="id")
    assert c.n_docs == 2 and c.labels == ["a", "b"] and c.doc_ids == ["1", "2"]
    q = tmp_path / "commas.csv"             # a comma file is read as before, without a word
    q.write_text("id,text\n1,apple; banana\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Corpus.from_csv(q, id_column="id").n_docs == 1


def test_a_csv_without_its_text_column_names_a_short_column_list(tmp_path):
    p = tmp_path / "doc.csv"
    p.write_text("x" * 5000 + " private words, and more\nsecond document\n")
    with pytest.raises(DPTopicError) as e:
        Corpus.from_csv(p)
    msg = str(e.value)
    assert len(msg) < 300 and "no column 'text'" in msg and "x" * 50 not in msg
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join("v" for _ in range(50)) + "\n")
    with pytest.raises(DPTopicError, match=r"c7, \.\.\. \(50 columns\)"):
        Corpus.from_csv(wide)


def test_hints_name_only_what_the_command_has(tmp_path, capsys):
    from dptopic.models import LDA

    words = ["apple", "banana", "cherry", "grape"]
    LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(
        Corpus.from_tokens([["apple", "banana"], ["cherry", "grape"]] * 5)).save(tmp_path / "m")
    (tmp_path / "empty.jsonl").write_text('{"text": ""}\n{"text": "  "}\n')
    line = _error_line(capsys, ["evaluate", str(tmp_path / "m"), "--corpus", str(tmp_path / "empty.jsonl")])
    assert "none of the 2 documents holds any word" in line and "min_df" not in line and "min-df" not in line
    (tmp_path / "d").mkdir()
    (tmp_path / "docs.txt").write_text(" ".join(words) + "\n")
    line = _error_line(capsys, ["corpus", "info", "--format", "uci", "--vocab", str(tmp_path / "d"),
                                str(tmp_path / "docs.txt")])
    assert "UCI vocabulary" in line and "--format dir" not in line
    (tmp_path / "x.json").write_text('{"a": 1}')
    assert "model's privacy_)" not in _error_line(capsys, ["privacy", "verify", str(tmp_path / "x.json")])
    line = _error_line(capsys, ["corpus", "prepare", "--corpus", str(tmp_path / "docs.txt"), "--out", "bad\nname"])
    assert "write it as 'bad\\nname.npz'" in line


# ------------------------------------------------------------------ walk-through 49: audits and experiments
def _tiny_jsonl(path, n=120, seed=0):
    import json

    rng = np.random.default_rng(seed)
    themes = [["apple", "banana", "cherry", "grape", "melon"], ["engine", "wheel", "brake", "motor", "piston"],
              ["violin", "piano", "cello", "flute", "drums"]]
    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(themes[i % 3], 12))}) for i in range(n)) + "\n")


def test_a_model_trained_on_dask_is_audited_with_its_shadows_on_threads(tmp_path, capsys):
    """audit --model of a Dask-trained model failed: the shadows took backend='dask' with no client, and the error
    named flags audit does not have. Where shadows run is no part of the procedure audited."""
    import json

    import dptopic

    _tiny_jsonl(tmp_path / "d.jsonl")
    assert main(["train", "--corpus", str(tmp_path / "d.jsonl"), "--topics", "3", "--iterations", "3", "--seed", "1",
                 "--quiet", "--out", str(tmp_path / "m")]) in (0, None)
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"]["backend"] = "dask"              # as a model trained with --dask-local records it
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").backend == "dask"
    capsys.readouterr()
    rc = main(["audit", "--model", str(tmp_path / "m"), "--corpus", str(tmp_path / "d.jsonl"), "--shadows", "4",
               "--seed", "1", "--quiet", "--out", str(tmp_path / "a")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None) and (tmp_path / "a" / "audit.json").exists()
    assert "trained on a Dask cluster, its shadows run on threads here" in out


def test_experiment_lira_shows_an_unresolved_tpr_as_nr_and_leaves_its_cell_empty(tmp_path, capsys):
    import csv

    rc = main(["experiment", "lira", "--corpus", "demo", "--subsample", "150", "--topics", "3", "--shadows", "4",
               "--trainer", "cgs", "--cgs-iterations", "3", "--seed", "1", "--quiet", "--out", str(tmp_path / "l")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None)
    assert "TPR@0.1% n/r" in out and "n/r: fewer non-member scores than 1/FPR" in out
    assert "empirical epsilon lower bound" in out
    rows = list(csv.DictReader((tmp_path / "l" / "table1.csv").open()))
    assert rows and all(r["tpr_at_fpr_0.001"] == "" and r["tpr_at_fpr_0.01"] != "" for r in rows)


def test_topic_attack_over_one_seed_has_no_standard_error_and_owner_only_files(tmp_path):
    import csv
    import stat

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.experiments import topic_attack_experiment

    c, *_ = lda_corpus(n_docs=40, vocab_size=60, n_topics=3, doc_length=20, alpha=0.2, seed=2)
    topic_attack_experiment(c, tmp_path, n_topics=3, n_iter=2, seeds=[0], n_targets=3)
    rows = list(csv.DictReader((tmp_path / "topic_attack.csv").open()))
    assert rows and all(r["p_true_stderr"] == "" for r in rows)
    for name in ("topic_attack.csv", "topic_attack.png", "topic_attack_summary.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_the_lp_audit_on_a_corpus_cut_vocabulary_claims_a_partial_guarantee(tmp_path, capsys):
    _tiny_jsonl(tmp_path / "d.jsonl")
    rc = main(["audit", "--algorithm", "lp", "--epsilon", "3", "--iterations", "2", "--topics", "3", "--corpus",
               str(tmp_path / "d.jsonl"), "--shadows", "4", "--seed", "5", "--quiet", "--out", str(tmp_path / "a")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None) and "partial guarantee" in out and "full guarantee" not in out


def test_corpus_prepare_says_why_it_wrote_fewer_shards(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("\n".join(f"apple banana cherry {i}" for i in range(6)) + "\n")
    assert main(["corpus", "prepare", "--corpus", str(tmp_path / "d.txt"), "--shards", "10", "--out",
                 str(tmp_path / "sh")]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "fewer than the 10 asked" in out


def test_the_report_puts_a_small_audits_warning_beside_its_bound():
    from dptopic.reporting.html import _audit_section

    audit = {"claimed_privacy": {"private": False}, "empirical_epsilon": {"epsilon_lower_bound": 2.1},
             "settings": {"small_audit": "this audit is too small to mean much: 4 shadow models", "n_shadows": 4}}
    page = _audit_section(audit, None)
    assert page.index("too small to mean much") < page.index("empirical ε lower bound")


def test_a_model_trained_from_shards_records_how_its_text_was_read_and_its_words_chosen(tmp_path):
    import dptopic
    from dptopic.corpus.shards import write_shards

    texts = [f"apple banana cherry grape {w}" for w in ("melon", "lemon", "peach", "plum")] * 10
    c = Corpus.from_texts(texts, max_vocab=6)
    write_shards(c, tmp_path / "sh", 3)
    from_npz = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(c)
    from_shards = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(str(tmp_path / "sh"))
    for key in ("reading", "vocabulary_cuts"):
        assert from_shards.tokenizer_.get(key) == from_npz.tokenizer_.get(key) is not None, key
    assert "shard" not in from_shards.tokenizer_.get("vocabulary_cuts", {})


# ------------------------------------------------------------------ review 49 of the day's change
def test_privacy_verify_of_a_report_whose_parameters_are_not_an_object_is_one_line(tmp_path):
    import json
    import warnings

    from dptopic.accounting.verify import verify_report
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import DocDPCooccurrence
    from dptopic.models.base import planned_spend_check

    c, *_ = lda_corpus(n_docs=100, vocab_size=50, n_topics=3, doc_length=20, alpha=0.2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=3, epsilon=1.0, delta=1e-5, verbose=0).fit(c, vocabulary=c.vocabulary.words)
    rep = json.loads(json.dumps(m.privacy_))
    rep["parameters"] = ["edited"]
    v = planned_spend_check(verify_report(rep), m, rep)       # no AttributeError: checked against the budget only
    assert v.status in ("verified", "looser", "failed")


def test_the_small_corpus_warning_reads_the_models_delta():
    from dptopic.advice import too_small_message, unreachable_epsilon

    assert unreachable_epsilon("document", 0.005, 1e-5) is not None
    assert unreachable_epsilon("document", 0.005, 0.05) is None
    assert "no number of documents helps" in too_small_message("document", 0.005, 300, 20)
    assert "no number of documents helps" not in (too_small_message("document", 0.005, 300, 20, delta=0.05) or "")


def test_the_authors_umass_variant_still_skips_unseen_pairs_as_their_code_does():
    from dptopic.evaluation import umass_coherence

    words = [f"w{i}" for i in range(6)]
    comp = np.array([[6.0, 5, 3, 4, 2, 1]])        # top 4: w0, w1, w3, w2; w3 occurs nowhere
    ref = Corpus.from_tokens([["w0", "w1"], ["w1", "w2"], ["w0", "w2"]], vocabulary=words)
    assert np.isfinite(umass_coherence(comp, ref, 4, variant="authors", per_topic=True)[0])
    assert np.isnan(umass_coherence(comp, ref, 4, variant="mimno", per_topic=True)[0])


def test_recommends_private_vocabulary_example_splits_the_budget_asked_for(capsys):
    out = _recommend(capsys, "--epsilon", 2, "--docs", 5000, "--delta", "1e-6")
    assert "--epsilon 1.2 --delta 5e-07 --private-vocabulary 0.8,5e-07 for a total of epsilon 2, delta 1e-06" in out


def test_an_explicit_csv_delimiter_is_never_replaced(tmp_path):
    p = tmp_path / "semi.csv"
    p.write_text("id;text\n1;apple banana\n")
    with pytest.raises(DPTopicError, match="no column 'text'"):
        Corpus.from_csv(p, delimiter=",")


def test_a_stale_commit_record_never_renames_another_runs_staged_shards(tmp_path):
    """A commit record names its set: staged shards of another run are left alone (and the reader then refuses the
    folder), never moved in as if they were the committed set's."""
    import json

    from dptopic.corpus import shards as sh

    c = Corpus.from_tokens([["a", "b", "c"], ["b", "c"], ["c", "d"], ["a", "d"]] * 5)
    sh.write_shards(c, tmp_path / "s", 2)
    before = sorted(p.name for p in (tmp_path / "s").iterdir())
    staged = tmp_path / "s" / ".shard-00000.npz.partial"
    part = c.subset(np.arange(5))
    part.metadata[sh.SHARD_RECORD] = {"index": 0, "count": 1, "set": "other-run"}
    part.save(staged)
    (tmp_path / "s" / sh._COMMIT).write_text(json.dumps({"set": "stale", "count": 1, "remove": ["shard-00001.npz"]}))
    assert sh.finish_replacement(tmp_path / "s") is True
    assert staged.exists()                                  # not renamed over the live shard 0
    assert not (tmp_path / "s" / sh._COMMIT).exists()
    assert "shard-00000.npz" in before and (tmp_path / "s" / "shard-00000.npz").exists()


def test_the_clis_no_cap_is_the_corpus_no_cap():
    """--max-vocab all stands for the cap data_cut_of takes as none (the CLI keeps its own copy of the number so that
    its light imports stay light)."""
    from dptopic.cli._common import NO_VOCAB_CAP, max_vocab_arg
    from dptopic.corpus.corpus import NO_CAP

    assert NO_VOCAB_CAP == NO_CAP == max_vocab_arg("all")
