"""``dptopic.train``: a training run in one call, its steps in order (every input checked before the first release,
the split by the model's unit, the metrics labelled), and the same card and forecast as ``dptopic train``."""
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError, ForecastWarning
from dptopic.training import run as steps
from helpers import run_dptopic


@pytest.fixture(scope="module")
def texts():
    rng = np.random.default_rng(0)
    topics = [[f"{stem}{chr(97 + i)}" for i in range(12)] for stem in ("apple", "river", "stone")]
    return [" ".join(rng.choice(topics[d % 3], 10)) + f" filler{chr(97 + d % 7)}" for d in range(240)]


@pytest.fixture(scope="module")
def corpus(texts):
    return Corpus.from_texts(texts)


def test_train_is_exported_and_returns_a_result_with_every_step_done(corpus, tmp_path):
    r = dptopic.train(corpus, algorithm="lda", n_topics=3, n_iter=5, seed=0, verbose=0, out=str(tmp_path / "m"))
    assert isinstance(r, dptopic.TrainingResult)
    assert r.train.n_docs + r.test.n_docs + r.held_out_copies == corpus.n_docs
    assert r.model.metrics_ is r.metrics and "npmi_top10" in r.metrics
    assert r.card["guarantee"] == "none"
    assert (tmp_path / "m" / "model.json").exists() and r.path is not None


def test_a_large_held_out_part_is_scored_on_evenly_spaced_documents(corpus, monkeypatch):
    """Above HELD_OUT_SCORED held-out documents, the metrics read that many of them, evenly spaced (the first and the
    last among them), and say so: n_test_docs the held-out part's size, n_test_docs_scored the documents read; the
    perplexity is the one of that subset."""
    monkeypatch.setattr(steps, "HELD_OUT_SCORED", 20)
    r = dptopic.train(corpus, unit="document", epsilon=2.0, n_topics=3, test_size=0.3, seed=0, ledger=False)
    assert r.test.n_docs > 20
    assert r.metrics["n_test_docs"] == r.test.n_docs and r.metrics["n_test_docs_scored"] == 20
    part = steps.scored_part(r.test)
    assert part.n_docs == 20 and np.array_equal(part.doc(0), r.test.doc(0))
    assert np.array_equal(part.doc(19), r.test.doc(r.test.n_docs - 1))
    assert r.metrics["perplexity_bound"] == pytest.approx(r.model.perplexity(part))
    assert any(f"20 of the {r.test.n_docs} held-out documents" in n for n in r.notes)


def test_the_steps_run_in_the_issue_s_order(corpus):
    seen = []
    dptopic.train(corpus, unit="document", epsilon=2.0, n_topics=3, test_size=0.2,
                  callback=lambda step, res: seen.append(step))
    assert seen == ["checked", "vocabulary", "split", "fit", "metrics", "composition", "word_list", "card", "save"]


def test_a_bad_input_is_refused_before_anything_is_spent(corpus, tmp_path, monkeypatch):
    """The public corpus is the private one: refused in check_inputs, before the DP set union draws or the trainer
    fits; the ledger holds no release."""
    import dptopic.training.fdptm as fdptm
    from dptopic.dataset_ledger.ledger import DatasetLedger

    drawn = []
    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: drawn.append(1))
    ledger = tmp_path / "ledger.db"
    with pytest.raises(DPTopicError, match="public_corpus is the training corpus itself"):
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, public_corpus=corpus,
                      private_vocabulary=(1.0, 1e-6), ledger=str(ledger), dataset="d")
    assert drawn == []
    assert DatasetLedger(ledger).releases("d") == []
    with pytest.raises(DPTopicError, match="vocabulary.*or private_vocabulary.*not both"):
        dptopic.train(corpus, algorithm="lda", vocabulary=["applea", "rivera"], private_vocabulary=(1.0, 1e-6))
    with pytest.raises(DPTopicError, match="test_size"):
        dptopic.train(corpus, algorithm="lda", test_size=1.5)


def test_the_user_unit_splits_whole_people(texts):
    people = [f"p{d % 40}" for d in range(len(texts))]
    c = Corpus.from_texts(texts, user_ids=people)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dptopic.train(c, unit="user", epsilon=5.0, n_topics=3, test_size=0.2)
    assert r.model.unit == "user"
    train_people, test_people = set(r.train.user_ids), set(r.test.user_ids)
    assert train_people and test_people and not train_people & test_people


def test_the_user_unit_refuses_a_corpus_without_people(corpus):
    with pytest.raises(DPTopicError, match="user unit needs each document's person"):
        dptopic.train(corpus, unit="user", epsilon=5.0, n_topics=3)


def test_the_metrics_of_a_private_model_are_labelled_outside_the_guarantee(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dptopic.train(corpus, algorithm="hdp", epsilon=400.0, n_topics=3, n_iter=3)
    assert r.metrics and any("outside the guarantee" in line for line in r.notes if "metrics" in line)
    assert all("outside the guarantee" not in line for line in
               dptopic.train(corpus, algorithm="lda", n_topics=3, n_iter=3, verbose=0).notes)


def test_a_private_vocabulary_is_composed_into_the_report(texts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dptopic.train(Corpus.from_texts(texts, max_vocab=None), unit="document", epsilon=2.0,
                          private_vocabulary=(2.0, 1e-5), n_topics=3)
    assert r.vocabulary_event is not None and r.model.vocabulary_event_ is r.vocabulary_event
    assert r.card["epsilon"] > 2.0      # the composed total: the trainer's and the vocabulary's


@pytest.mark.parametrize("build", [dict(unit="document"),
                                   pytest.param(dict(algorithm="svi", n_epochs=1), marks=pytest.mark.slow)])
def test_a_private_vocabulary_inside_the_total_spends_the_total_asked(texts, build):
    """Without vocabulary_in_total the trainer's (1, 5e-6) and the vocabulary's (2, 5e-6) compose to less than 3
    (the card's PLD saves on the sum); with it, epsilon 3 and delta 1e-5 are the total, and the trainer's share is
    solved so that the card states 3 to within 0.1% below it, never above."""
    from dptopic.accounting.set_union import VOCABULARY_SPEND_RTOL

    corpus = Corpus.from_texts(texts, max_vocab=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        split = dptopic.train(corpus, epsilon=1.0, delta=5e-6, private_vocabulary=(2.0, 5e-6), n_topics=3,
                              metrics=False, **build)
        total = dptopic.train(corpus, epsilon=3.0, delta=1e-5, private_vocabulary=(2.0, 5e-6), n_topics=3,
                              vocabulary_in_total=True, metrics=False, **build)
    assert split.card["epsilon"] < 3.0 * (1 - VOCABULARY_SPEND_RTOL)
    assert 3.0 * (1 - VOCABULARY_SPEND_RTOL) <= total.card["epsilon"] <= 3.0 and total.card["delta"] == 1e-5
    assert total.model.privacy_["topic_model"]["delta"] == 5e-6
    assert total.model.privacy_["topic_model"]["epsilon_pld"] > 1.0      # more than the total less eps_V
    assert any("the trainer's share of epsilon 3:" in n for n in total.notes)


def test_a_built_trainer_and_the_command_line_get_the_same_share_of_the_total(texts, tmp_path):
    """vocabulary_in_total with a built trainer (as the command line passes one): its total-epsilon parameter and
    delta are set to the share, and `dptopic train --vocabulary-in-total` states the same total on its card."""
    import json

    from dptopic.accounting.set_union import VOCABULARY_SPEND_RTOL
    from helpers import run_dptopic

    corpus = Corpus.from_texts(texts, max_vocab=None)
    asked = dict(epsilon=3.0, delta=1e-5, private_vocabulary=(2.0, 5e-6), vocabulary_in_total=True, metrics=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = dptopic.train(corpus, model=dptopic.DocDPCooccurrence(n_topics=3, epsilon=3.0, delta=1e-5), **asked)
    assert 3.0 * (1 - VOCABULARY_SPEND_RTOL) <= built.card["epsilon"] <= 3.0 and built.card["delta"] == 1e-5
    assert built.model.delta == 5e-6 and 1.0 < built.model.epsilon < 3.0
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(texts) + "\n")
    out = tmp_path / "model"
    r = run_dptopic("train", "--corpus", str(path), "--unit", "document", "--topics", "3", "--epsilon", "3",
                    "--delta", "1e-5", "--private-vocabulary", "2,5e-6", "--vocabulary-in-total", "--test-size", "0",
                    "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    card = json.loads((out / "model.json").read_text())["privacy_card"]
    assert 3.0 * (1 - VOCABULARY_SPEND_RTOL) <= card["epsilon"] <= 3.0
    r = run_dptopic("train", "--corpus", str(path), "--unit", "document", "--epsilon", "3", "--delta", "1e-5",
                    "--vocabulary-in-total", "--out", str(tmp_path / "other"))
    assert r.returncode == 2 and "--vocabulary-in-total reads epsilon and delta as a total" in r.stderr
    assert "add --private-vocabulary" in r.stderr and "\n" not in r.stderr.strip()


@pytest.mark.parametrize("in_total", [True, False])
def test_a_private_vocabulary_run_is_one_release_of_the_users_dataset(texts, tmp_path, in_total):
    """With a ledger on, the DP set union's event and the trainer's fit are charged to the dataset the user's corpus
    names (its fingerprint, not the restricted corpus's): one release whose total is the card's epsilon."""
    from dptopic.accounting.set_union import VOCABULARY_SPEND_RTOL
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.dataset_ledger.ledger import DatasetLedger

    corpus = Corpus.from_texts(texts, max_vocab=None)
    L = tmp_path / "l.sqlite"
    asked = dict(epsilon=3.0, delta=1e-5, vocabulary_in_total=True) if in_total else dict(epsilon=1.0, delta=5e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dptopic.train(corpus, unit="document", private_vocabulary=(2.0, 5e-6), n_topics=3, metrics=False,
                          ledger=str(L), **asked)
    ledger = DatasetLedger(L)
    name = ledger.content_name(documents_of(corpus))
    assert ledger.datasets() == [name]
    (release,) = ledger.releases(name)
    assert release["kind"] == "fit" and len(release["groups"]) > 1      # the vocabulary's event and the fit's
    total = ledger.total(name)
    assert total["epsilon_total"] == pytest.approx(r.card["epsilon"], rel=VOCABULARY_SPEND_RTOL)
    assert total["delta_total"] == pytest.approx(r.card["delta"])
    line = r.model.privacy_["dataset_ledger"]
    assert line["dataset"] == name and "over 1 release" in line["line"]
    assert line["epsilon_total"] == pytest.approx(total["epsilon_total"])


def test_a_cap_the_whole_run_would_exceed_refuses_it_before_the_set_union_draws(corpus, tmp_path, monkeypatch):
    """The cap admits the vocabulary's 0.4 alone, not with the trainer's 1: refused before the DP set union draws,
    nothing written."""
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.errors import BudgetExceededError
    from dptopic.training import fdptm

    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("drawn"))
    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_cap("posts", 1.0, 1e-5)
    with pytest.raises(BudgetExceededError, match="capped at epsilon = 1"):
        dptopic.train(corpus, unit="document", epsilon=1.0, delta=5e-6, private_vocabulary=(0.4, 5e-6),
                      n_topics=3, ledger=str(L), dataset="posts")
    assert DatasetLedger(L).releases("posts") == []


def test_a_private_vocabulary_inside_the_total_is_refused_before_anything_is_read(corpus, monkeypatch):
    from dptopic.training import fdptm

    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("drawn"))
    for kw, why in ((dict(unit="document", epsilon=1.0, delta=1e-5), "add private_vocabulary"),
                    (dict(unit="document", epsilon=0.4, delta=1e-5, private_vocabulary=(0.4, 5e-6)), "must be below"),
                    (dict(unit="document", epsilon=1.0, delta=5e-6, private_vocabulary=(0.4, 5e-6)), "must be below"),
                    (dict(unit="document", epsilon=1.0, private_vocabulary=(0.4, 5e-6)), "needs epsilon and delta"),
                    (dict(unit="document", epsilon=1.0, delta=1e-5, private_vocabulary=(0.4, 5e-6), user_epsilon=2.0),
                     "not a per-user budget"),
                    (dict(model=dptopic.LDA(n_topics=2), epsilon=1.0, delta=1e-5, private_vocabulary=(0.4, 5e-6)),
                     "needs a private trainer: LDA claims no guarantee"),
                    (dict(model=type("MyCooc", (dptopic.DocDPCooccurrence,), {})(n_topics=2), epsilon=1.0,
                          delta=1e-5, private_vocabulary=(0.4, 5e-6)), "MyCooc is not one; give algorithm=")):
        with pytest.raises(DPTopicError, match=why) as e:
            dptopic.train(corpus, vocabulary_in_total=True, **kw)
        assert "\n" not in str(e.value)


def test_too_few_private_words_for_the_topics_warns(texts):
    corpus = Corpus.from_texts(texts, max_vocab=None)
    with pytest.warns(dptopic.SmallCorpusWarning, match="private_vocabulary kept .* words for 30 topics, too few"):
        try:
            dptopic.train(corpus, algorithm="lda", private_vocabulary=(3.0, 1e-5), n_topics=30, n_iter=2, verbose=0)
        except DPTopicError as e:       # fewer words than topics: refused instead, in the same words
            assert "fewer words than topics" in str(e)
            warnings.warn("private_vocabulary kept 0 words for 30 topics, too few", dptopic.SmallCorpusWarning)


def test_the_word_list_is_recorded(corpus):
    words = [f"{stem}{chr(97 + i)}" for stem in ("apple", "river") for i in range(12)]
    r = dptopic.train(corpus, algorithm="lda", vocabulary=("mylist.txt", words), n_topics=2, n_iter=2, verbose=0)
    assert r.model.privacy_["vocabulary_list"]["n_words"] == len(words)


def test_a_reference_can_take_another_model_s_split(corpus):
    from dptopic.models import HDPLDA, LDA
    from dptopic.training.by_unit import split_for

    hdp = HDPLDA(n_topics=2)
    r = dptopic.train(corpus, model=LDA(n_topics=2, n_iter=2, verbose=0), split_as=hdp)
    assert r.train.n_docs == split_for(hdp, corpus, 0.2)[0].n_docs


def _write(texts, path):
    path.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n")
    return path


def test_the_cli_and_python_give_the_same_card(texts, tmp_path):
    f = _write(texts, tmp_path / "c.jsonl")
    words = sorted({w for t in texts for w in t.split()})
    (tmp_path / "v.txt").write_text("\n".join(words) + "\n")
    r = run_dptopic("train", "--corpus", f, "--vocabulary", tmp_path / "v.txt", "--algorithm", "hdp", "--epsilon",
                    "300", "--iterations", "3", "--topics", "3", "--quiet", "--no-ledger", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    cli = dptopic.load(str(tmp_path / "m"))
    from dptopic.accounting.card import privacy_card

    cli_card = privacy_card(cli.privacy_, "HDPLDA", check=False)
    corpus = Corpus.from_texts(texts, vocabulary=words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        py = dptopic.train(corpus, algorithm="hdp", epsilon=300.0, n_iter=3, n_topics=3, epsilon_inherent=10.0,
                           vocabulary=(str(tmp_path / "v.txt"), words))
    for key in ("guarantee", "privacy_unit", "epsilon", "delta"):
        assert py.card[key] == cli_card[key], key


def test_the_cli_and_python_give_the_same_forecast(texts, tmp_path):
    f = _write(texts, tmp_path / "c.jsonl")
    r = run_dptopic("train", "--corpus", f, "--unit", "document", "--epsilon", "1", "--topics", "3", "--quiet",
                    "--no-ledger", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    cli = [line[len("warning: "):] for line in r.stderr.splitlines() if "become useful" in line or
           "forecast read at" in line]
    corpus = Corpus.from_texts(texts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dptopic.train(corpus, unit="document", epsilon=1.0, n_topics=3)
    py = [" ".join(str(w.message).split()) for w in caught if issubclass(w.category, ForecastWarning)]
    assert len(py) == 1 and cli == py


def test_check_inputs_names_the_flags_a_front_door_gives(corpus):
    with pytest.raises(DPTopicError, match="^--public-corpus 'p.txt' is --corpus 'c.txt' itself"):
        steps.check_inputs(dptopic.DocDPCooccurrence(n_topics=2), corpus, public_corpus=corpus,
                           names={"public_corpus": "--public-corpus 'p.txt'", "corpus": "--corpus 'c.txt'"})


# ---------------------------------------------------------------------------------------------------- the ledger
def _quiet_train(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dptopic.train(*a, **kw)


def test_a_dataset_name_keeps_the_ledger_the_environment_names(corpus, tmp_path, monkeypatch):
    """Issue 75, item 8: dataset= with the ledger from DPTOPIC_LEDGER is recorded there, as without dataset=."""
    from dptopic.dataset_ledger.ledger import DatasetLedger

    L = tmp_path / "env.sqlite"
    monkeypatch.setenv("DPTOPIC_LEDGER", str(L))
    r = _quiet_train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, test_size=0, metrics=False,
                     dataset="posts")
    assert [x["kind"] for x in DatasetLedger(L).releases("posts")] == ["fit"]
    assert r.model.privacy_["dataset_ledger"]["dataset"] == "posts"
    _quiet_train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, test_size=0, metrics=False, ledger=False)
    assert len(DatasetLedger(L).releases("posts")) == 1 and DatasetLedger(L).datasets() == ["posts"]


def test_the_run_is_one_release_of_every_document_given(corpus, tmp_path):
    """Held-out documents included: the same corpus with another held-out share is the same documents."""
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.dataset_ledger.ledger import DatasetLedger

    L = tmp_path / "l.sqlite"
    for share in (0.2, 0.3):
        _quiet_train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, test_size=share, metrics=False,
                     ledger=str(L))
    led = DatasetLedger(L)
    assert led.datasets() == [led.content_name(documents_of(corpus))]
    assert led.total(led.datasets()[0])["n_releases"] == 2


@pytest.mark.parametrize("value, says", [(5, "invalid ledger=5"), ("", "ledger='' names no ledger"),
                                         (["a"], "invalid ledger=")])
def test_a_bad_ledger_value_is_one_line_naming_the_parameter(corpus, tmp_path, monkeypatch, value, says):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DPTopicError, match=says.replace("(", r"\(").replace("[", r"\[")) as e:
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, ledger=value)
    assert "\n" not in str(e.value) and list(tmp_path.iterdir()) == []


def test_ledger_true_is_the_default_file_and_false_none(corpus, tmp_path, monkeypatch):
    from dptopic.dataset_ledger.location import default_path

    monkeypatch.chdir(tmp_path)
    _quiet_train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, test_size=0, metrics=False, ledger=True)
    assert default_path().exists() and list(tmp_path.iterdir()) == []     # no file named 'True' here


def test_a_ledger_for_a_trainer_that_spends_nothing_is_refused(corpus, tmp_path):
    for kw in (dict(ledger=str(tmp_path / "l.sqlite")), dict(dataset="posts")):
        with pytest.raises(DPTopicError, match="releases nothing private: drop"):
            dptopic.train(corpus, algorithm="lda", n_topics=3, n_iter=2, **kw)
    assert not (tmp_path / "l.sqlite").exists()


def test_a_private_vocabulary_without_delta_is_refused_before_the_run_is_charged(corpus, tmp_path, monkeypatch):
    """Issue 75, item 12c: (1, 0) was refused only after the release was written."""
    import dptopic.training.fdptm as fdptm
    from dptopic.dataset_ledger.ledger import DatasetLedger

    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("drawn"))
    L = tmp_path / "l.sqlite"
    for pv, says in (((1, 0), "its delta 0 must lie in"), ((0, 1e-6), "its epsilon 0 must be"),
                     ((float("nan"), 1e-6), "its epsilon nan"), ((1, 1.5), "its delta 1.5")):
        with pytest.raises(DPTopicError, match=says):
            dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, private_vocabulary=pv,
                          ledger=str(L), dataset="d")
    assert not L.exists() or DatasetLedger(L).releases("d") == []


def test_a_ledger_inside_the_output_folder_is_refused_before_either_is_made(corpus, tmp_path):
    out = tmp_path / "m"
    with pytest.raises(DPTopicError, match="lies inside the output folder"):
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, out=str(out),
                      ledger=str(out / "l.sqlite"))
    assert not out.exists()


def test_the_run_takes_its_inputs_by_name():
    """``train`` handed its 25 inputs to the run as one positional tuple, in an order two signatures had to keep
    alike: the run takes each by its name, train's own."""
    import inspect

    from dptopic.training import run

    kinds = {p.kind for p in inspect.signature(run._train).parameters.values()}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    train = set(inspect.signature(run.train).parameters) - {"ledger", "dataset", "person_aliases"}
    assert set(inspect.signature(run._train).parameters) == train


def test_a_user_level_run_without_people_names_the_parameter_to_a_python_caller():
    """dptopic.train told a Python caller of the command line's --user-field."""
    corpus = Corpus.from_texts(["apple banana cherry", "river ocean valley"] * 10)
    with pytest.raises(DPTopicError, match="carries none") as e:
        dptopic.train(corpus, unit="user", epsilon=2.0, ledger=False, metrics=False)
    assert "user_field=" in str(e.value) and "--" not in str(e.value), str(e.value)


def _vectors_file(path, words, text=None):
    rng = np.random.default_rng(1)
    path.write_text(text if text is not None else
                    "".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) + "\n" for w in words))
    return path


@pytest.mark.parametrize("which", ["a malformed file", "a NaN row", "a word too many", "a device"])
def test_public_vectors_are_checked_before_the_private_vocabulary_is_drawn(texts, tmp_path, monkeypatch, which):
    """With private_vocabulary, the vectors are read and checked before the DP set union draws (and before the run is
    charged): a malformed file or malformed PublicVectors spends nothing."""
    from dptopic.training import fdptm

    corpus = Corpus.from_texts(texts, max_vocab=None)
    words = list(corpus.vocabulary.words)
    if which == "a NaN row":            # checked when made, and again when read: made good, then spoiled
        from dptopic.corpus.vectors import PublicVectors

        spec, why = PublicVectors("mine", words, np.ones((len(words), 4))), "row 3 .* holds NaN or infinite"
        spec.vectors[2, 1] = np.nan
    elif which == "a word too many":
        from dptopic.corpus.vectors import PublicVectors

        spec, why = PublicVectors("mine", words, np.ones((len(words), 4))), "rows but its word list"
        spec.words = spec.words + ["extra"]
    elif which == "a malformed file":
        spec, why = str(_vectors_file(tmp_path / "bad.txt", words, "applea 0.1 0.2\nappleb 0.3\n")), "line 2 has 1"
    else:
        spec, why = "/dev/zero", "is a device"
    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("the words were drawn"))
    with pytest.raises(DPTopicError, match=why) as e:
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, private_vocabulary=(8.0, 1e-6),
                      public_vectors=spec, ledger=str(tmp_path / "l.sqlite"), dataset="d", metrics=False)
    assert "\n" not in str(e.value)


def test_public_vectors_a_trainer_would_not_read_are_refused_before_the_private_vocabulary_is_drawn(texts, tmp_path,
                                                                                                     monkeypatch):
    from dptopic.training import fdptm

    corpus = Corpus.from_texts(texts, max_vocab=None)
    path = _vectors_file(tmp_path / "v.txt", corpus.vocabulary.words)
    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("the words were drawn"))
    with pytest.raises(DPTopicError, match="public_vectors applies to DocDPCooccurrence's default settings only"):
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=3, private_vocabulary=(8.0, 1e-6),
                      public_vectors=str(path), recovery="nmf", metrics=False)


def test_numpy_numbers_are_taken_wherever_train_takes_numbers(texts):
    from dptopic.advice import recommend

    corpus = Corpus.from_texts(texts, max_vocab=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dptopic.train(corpus, unit="document", epsilon=np.float32(2.0), delta=np.float64(1e-5),
                          n_topics=np.int64(3), test_size=np.float32(0.25), metrics=False, ledger=False)
        v = dptopic.train(corpus, algorithm="docdp-cooc", epsilon=np.float32(2.0), n_topics=3,
                          private_vocabulary=(np.float32(2.0), np.float64(1e-6)), metrics=False, ledger=False)
    assert r.model.epsilon == 2.0 and type(r.model.epsilon) is float and r.test is not None
    assert r.card["epsilon"] == pytest.approx(2.0, rel=1e-3) and v.vocabulary_event is not None
    rec = recommend("document", np.float32(2.0), np.int64(5000), np.int32(20))
    assert rec.epsilon == 2.0 and rec.trainer


@pytest.mark.parametrize("kw, says", [
    (dict(callback=5), "invalid callback=5: give a function callback(step, result)"),
    (dict(model=dptopic.DocDPCooccurrence), "model is the class DocDPCooccurrence, not an estimator"),
    (dict(model="docdp-cooc"), "invalid model: give an unfitted estimator"),
    (dict(public_corpus=["a b c"]), "invalid public_corpus: give a Corpus of public documents"),
    (dict(public_corpus=np.ones((3, 3))), "invalid public_corpus: give a Corpus"),
    (dict(split_as="x"), "invalid split_as: give an unfitted estimator"),
    (dict(split_as=dptopic.LDA), "split_as is the class LDA"),
    (dict(metrics="bogus"), "invalid metrics='bogus'"),
    (dict(metrics=1), "invalid metrics=1"),
    (dict(names=5), "invalid names"),
    (dict(overwrite="yes"), "invalid overwrite='yes': give True or False"),
    (dict(vocabulary=[1, 2]), "invalid vocabulary: word 1 is an int"),
    (dict(vocabulary=5), "invalid vocabulary: give a list of words, or the path of a word list"),
    (dict(user_field="user"), "user_field names each document's person under the user unit"),
    (dict(user_field=5, unit="user"), "invalid user_field=5: give the name of the field"),
    (dict(model=dptopic.DocDPCooccurrence(n_topics=2), seed="x", private_vocabulary=(1.0, 1e-6)),
     "invalid seed='x'"),
    (dict(vocabulary_policy="bogus", private_vocabulary=(1.0, 1e-6)), "invalid vocabulary_policy='bogus'"),
])
def test_wrong_arguments_are_refused_in_one_line_before_anything_is_read(corpus, kw, says, monkeypatch):
    from dptopic.training import fdptm

    monkeypatch.setattr(fdptm, "restrict_to_private_vocabulary", lambda *a, **k: pytest.fail("the words were drawn"))
    kw = {"algorithm": "docdp-cooc", "epsilon": 1.0, **kw}
    if "unit" in kw:
        kw.pop("algorithm")
    if "model" in kw:
        kw.pop("algorithm"), kw.pop("epsilon")
    with pytest.raises(DPTopicError) as e:
        dptopic.train(corpus, ledger=False, **kw)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kw, says", [
    (dict(epsilon=5.0), "epsilon beside model would do nothing"),
    (dict(delta=1e-6), "delta beside model would do nothing"),
    (dict(n_topics=5), "n_topics beside model would do nothing"),
    (dict(algorithm="docdp"), "algorithm beside model would do nothing"),
    (dict(n_words=300), "n_words beside model would do nothing"),
    (dict(unit="user", epsilon=1.0), "unit='user' beside model: the model's guarantee is stated per document"),
    (dict(unit="document"), "unit beside model forecasts the topics' use at the run's budget: give epsilon"),
])
def test_what_would_do_nothing_beside_a_built_model_is_refused(corpus, kw, says):
    model = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0)
    with pytest.raises(DPTopicError) as e:
        dptopic.train(corpus, model=model, ledger=False, metrics=False, **kw)
    assert says in str(e.value) and "\n" not in str(e.value)
    with warnings.catch_warnings():     # beside unit=, epsilon states the run's total (the forecast reads it)
        warnings.simplefilter("ignore")
        r = dptopic.train(corpus, model=model, unit="document", epsilon=1.0, ledger=False, metrics=False)
    assert r.model is model


def test_a_vocabulary_path_is_read_as_the_command_line_reads_it(corpus, tmp_path):
    from pathlib import Path

    from dptopic.corpus.wordlist import read_vocabulary

    path = tmp_path / "words.txt"
    path.write_text("applea\n  rivera \n\nstonea\nappleb\n", encoding="utf-8")
    want = list(read_vocabulary(path).words)
    for spec in (str(path), Path(path)):
        r = dptopic.train(corpus, algorithm="lda", vocabulary=spec, n_topics=2, n_iter=2, verbose=0)
        assert r.vocabulary == want == ["applea", "rivera", "stonea", "appleb"]
        assert r.model.privacy_["vocabulary_list"]["n_words"] == 4
    with pytest.raises(DPTopicError, match="vocabulary file .*nothere.txt' not found"):
        dptopic.train(corpus, algorithm="lda", vocabulary=str(tmp_path / "nothere.txt"), n_topics=2)


def test_the_held_out_scores_fold_in_on_every_usable_core_whatever_the_trainers_threads(corpus, monkeypatch):
    import importlib

    import dptopic.kernels

    perplexity_module = importlib.import_module("dptopic.evaluation.perplexity")   # the package names a function so
    monkeypatch.setattr(dptopic.kernels, "usable_cores", lambda: 3)                # as on a 3-core machine

    seen = []
    real = perplexity_module._fold_in        # each block's fold-in, as infer_theta's

    def spy(*args, **kw):
        seen.append(args[7] if len(args) >= 8 else kw.get("n_jobs", 1))
        return real(*args, **kw)

    monkeypatch.setattr(perplexity_module, "_fold_in", spy)
    r = dptopic.train(corpus, unit="document", epsilon=2.0, n_topics=3, test_size=0.3, seed=0, ledger=False)
    assert "perplexity_bound" in r.metrics
    assert seen and set(seen) == {3}
    assert r.model.n_jobs == 1 and r.model._fold_in_jobs() == 1   # the model's own setting once the scores are taken


@pytest.mark.parametrize("algorithm", ["docdp-cooc", "docdp"])
def test_a_run_on_a_corpus_whose_ids_are_on_disk_reads_them_a_block_at_a_time_and_trains_the_same(
        corpus, tmp_path, monkeypatch, algorithm):
    """The streaming reader leaves a large corpus's ids on disk (dptopic.corpus.token_file): a document-level run
    splits, records, trains and scores it a block of documents at a time, never reading the ids whole, and releases
    what the same corpus in memory releases (the noise held fixed by one seed)."""
    from dptopic.corpus import corpus as corpus_module
    from dptopic.corpus.token_file import TokensOnDisk
    from dptopic.models import _document_passes

    monkeypatch.setattr(corpus_module, "TOKEN_BLOCK_DOCS", 37)
    monkeypatch.setattr(_document_passes, "COUNT_BLOCK_DOCS", 50)
    kw = dict(algorithm=algorithm, epsilon=2.0, n_topics=3, test_size=0.3, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = dptopic.train(corpus, ledger=str(tmp_path / "a.sqlite"), **kw)
        disk = Corpus(corpus.doc_ptr, TokensOnDisk(corpus.word_ids), corpus.vocabulary, doc_ids=corpus.doc_ids,
                      content_keys=corpus.content_keys, token_keys=corpus.token_keys)
        monkeypatch.setattr(TokensOnDisk, "load", lambda self: pytest.fail("the corpus's ids read whole"))
        got = dptopic.train(disk, ledger=str(tmp_path / "b.sqlite"), **kw)
    assert isinstance(disk._word_ids, TokensOnDisk)
    np.testing.assert_allclose(got.model.components_, want.model.components_, rtol=1e-12)
    assert got.metrics == pytest.approx(want.metrics, rel=1e-9)
    totals = [r.model.privacy_["dataset_ledger"]["epsilon_total"] for r in (got, want)]
    assert totals[0] == totals[1]
