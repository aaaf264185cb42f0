"""DocDPCooccurrence with public word vectors: used by default when installed for the vocabulary's language (and said
on the card), off when told, refused in one line (before anything is spent) for vectors of another language or a
corrupt file; the topics the release does not support stay unsupported whatever the vectors add; a saved model
refits with the same vectors."""
import numpy as np
import pytest

import dptopic
from dptopic.accounting.card import privacy_card
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus import vectors as V
from dptopic.corpus.vectors import KnownSource
from dptopic.errors import DPTopicError
from dptopic.models import DocDPCooccurrence
from helpers import quiet_fit

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

N_WORDS, K = 400, 5


@pytest.fixture(scope="module")
def planted():
    """An LDA corpus over 400 words (more than the release keeps, so the vectors have words to place)."""
    return lda_corpus(n_docs=1500, vocab_size=N_WORDS, n_topics=K, doc_length=40, alpha=0.1, beta=0.05, seed=3)


def topic_vectors(phi, words, dim=8, seed=0):
    """Vectors that know the planted topics: each word near the axis of its most likely topic."""
    rng = np.random.default_rng(seed)
    E = 0.3 * rng.normal(size=(len(words), dim))
    E[np.arange(len(words)), np.argmax(phi, axis=0)] += 1.0
    return E


def write_glove(path, words, E):
    path.write_text("\n".join(w + " " + " ".join(f"{x:.5f}" for x in row) for w, row in zip(words, E)) + "\n")
    return path


@pytest.fixture
def vectors_file(planted, tmp_path):
    words = list(planted.corpus.vocabulary.words)
    return write_glove(tmp_path / "vec.txt", words, topic_vectors(planted.phi, words))


def install(tmp_path, monkeypatch, words, E, name="tiny-en"):
    """A known source installed as a package (the default-on path)."""
    pkg = tmp_path / "tinyvec"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    np.save(pkg / "data" / "emb.npy", np.asarray(E, dtype=np.float32))
    (pkg / "data" / "words.txt").write_text("\n".join(words) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(V, "KNOWN_SOURCES", {name: KnownSource(name, "tinyvec", "tinyvec", "en", "test",
                                                               "data/emb.npy", "data/words.txt")})
    monkeypatch.setattr(V, "_LOADED", {})


def test_installed_vectors_are_used_by_default_and_named_on_the_card(planted, tmp_path, monkeypatch):
    words = list(planted.corpus.vocabulary.words)
    install(tmp_path, monkeypatch, words, topic_vectors(planted.phi, words))
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0), planted.corpus)
    entry = m.public_vectors_
    assert entry["name"] == "tiny-en" and entry["default"] is True and entry["dimension"] == 8
    assert len(entry["sha256"]) == 64 and entry["vocabulary_coverage"] == 1.0 and entry["covered"] is False
    assert m.public_vectors_note_.startswith("tiny-en (8 dimensions")
    card = privacy_card(m.privacy_report(), "DocDPCooccurrence")
    assert card["public_vectors"]["name"] == "tiny-en" and "used by default" in card["public_vectors"]["summary"]
    # told not to: the same fit reads none, and the card says nothing of vectors
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0, public_vectors=None), planted.corpus)
    assert off.public_vectors_ is None and "public_vectors" not in off.privacy_report()
    none = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0, public_vectors="none"), planted.corpus)
    assert none.public_vectors_ is None
    # the release is the same: the vectors only place the words outside it
    np.testing.assert_array_equal(m.supported_topics_, off.supported_topics_)
    kept = m.kept_words_
    np.testing.assert_allclose(m.components_[:, kept] / m.components_[:, kept].sum(axis=1, keepdims=True),
                               off.components_[:, kept] / off.components_[:, kept].sum(axis=1, keepdims=True),
                               rtol=1e-9)


def test_no_vectors_installed_leaves_the_fit_as_it_was(planted):
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0), planted.corpus)
    assert m.public_vectors_ is None and "no public word vectors installed" in m.public_vectors_note_


def test_vectors_place_the_words_outside_the_release_in_their_topics(planted, vectors_file):
    """The words the release does not hold go to the topics of their vector neighbours instead of to every topic
    alike: each such word's mass concentrates on fewer topics, and the planted topics over them are recovered."""
    from dptopic.evaluation.topic_matching import topic_recovery

    with_v = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=str(vectors_file)),
                       planted.corpus)
    without = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=None), planted.corpus)
    assert with_v.public_vectors_["default"] is False and with_v.public_vectors_["name"] == "vec.txt"
    rest = np.setdiff1d(np.arange(N_WORDS), with_v.kept_words_)
    assert len(rest) > 100
    def share(m):
        return (m.components_[:, rest] / m.components_[:, rest].sum(axis=0)).max(axis=0).mean()
    assert share(without) < 0.35 < 0.5 < share(with_v)
    # the planted topics over those words: every topic alike without vectors, told apart with them
    def rec(m):
        return topic_recovery(m.components_[:, rest], planted.phi[:, rest])
    assert rec(with_v) > rec(without) + 0.2


def test_vectors_of_another_language_are_refused_before_anything_is_spent(planted, tmp_path):
    path = write_glove(tmp_path / "fr.txt", [f"mot{i}" for i in range(50)], np.ones((50, 3)))
    m = DocDPCooccurrence(n_topics=K, epsilon=1.0, seed=0, public_vectors=str(path))
    with pytest.raises(DPTopicError) as e:
        m.fit(planted.corpus)
    assert "fr.txt" in str(e.value) and "language" in str(e.value)
    assert not hasattr(m, "ledger_") and not hasattr(m, "releases_")


def test_vectors_with_settings_that_read_none_are_refused_or_left_off(planted, vectors_file):
    with pytest.raises(DPTopicError, match="recovery='nmf' reads no vectors"):
        DocDPCooccurrence(n_topics=K, recovery="nmf", public_vectors=str(vectors_file)).fit(planted.corpus)
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, recovery="nmf", seed=0), planted.corpus)
    assert m.public_vectors_ is None and "nmf" in m.public_vectors_note_


@pytest.mark.parametrize("route", ["spread", "groups", "rectangular"])
def test_a_corpus_without_topics_gets_no_supported_topic_whatever_the_vectors(planted, vectors_file, route):
    """Tokens shuffled across documents: the vectors still know the planted topics, the release shows none, and no
    topic is marked supported (the prior never makes an unsupported topic look learned)."""
    rng = np.random.default_rng(5)
    c = planted.corpus
    shuffled = Corpus(c.doc_ptr, rng.permutation(c.word_ids), c.vocabulary)
    for seed in range(3):
        m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=seed, public_vectors=str(vectors_file),
                                        vectors_route=route), shuffled)
        assert m.public_vectors_ is not None
        assert not m.supported_topics_.any()


def test_groups_route_releases_words_and_groups_and_supports_planted_topics(planted, vectors_file):
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=4.0, seed=2, public_vectors=str(vectors_file),
                                    vectors_route="groups"), planted.corpus)
    groups = m.word_groups_
    n_cols = int(groups.max()) + 1
    assert m.releases_["cooccurrence"].shape == (n_cols, n_cols) and len(groups) == len(m.kept_words_)
    assert n_cols < len(m.kept_words_)                      # several words share a column
    assert m.supported_topics_.sum() >= 3
    assert "groups of the other words made by public word vectors" in m.privacy_report()["theorem"]
    # every word with a vector is in the release (its own column or a group's): none is placed outside it
    assert m.placed_words_ is None and set(m.kept_words_) == set(range(N_WORDS))


def test_rectangular_route_releases_rows_against_columns_and_supports_planted_topics(planted, vectors_file, tmp_path):
    """The kept words as rows against fewer columns (frequent words and groups of the others): each row word gets a
    topic profile of its own, the planted topics stand above the noise, the card names the route and the theorem
    the statistic; the model saves and loads, and refit refuses it in one line (its release is not square)."""
    from dptopic.moments.rectangular import n_groups_for, n_hubs_for
    from helpers import assert_fit_spent_its_plan

    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=4.0, seed=2, public_vectors=str(vectors_file),
                                    vectors_route="rectangular", n_words=150), planted.corpus)
    columns, groups = m.rectangular_columns_
    assert len(m.kept_words_) == 150 and np.all(np.diff(m.kept_words_) > 0)
    assert int(groups.max()) + 1 == n_hubs_for(150) + n_groups_for(150) == 16 and len(columns) > 150
    assert m.word_groups_ is None and m.supported_topics_.sum() >= 3
    rows = m.components_[:, m.kept_words_]
    assert np.linalg.matrix_rank(rows / rows.sum(axis=1, keepdims=True), tol=1e-6) == K
    assert m.public_vectors_["route"] == "rectangular"
    assert "r c^T - P" in m.privacy_report()["theorem"]
    card = privacy_card(m.privacy_report(), "DocDPCooccurrence")
    assert "rectangular release" in card["public_vectors"]["summary"]
    assert_fit_spent_its_plan(m)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.components_, m.components_)
    with pytest.raises(DPTopicError, match="rectangular.*refit reads square releases only"):
        loaded.refit(3)


def test_rectangular_route_is_refused_per_person_before_anything_is_spent(planted, vectors_file):
    from dptopic.errors import ParameterError
    from dptopic.mechanisms.observer import observing

    records = []
    users = [str(i % 300) for i in range(planted.corpus.n_docs)]
    refusal = "vectors_route='rectangular' applies at the document unit only, not per person"
    with observing(records.append), pytest.raises(ParameterError, match=refusal):
        DocDPCooccurrence(n_topics=K, unit="user", public_vectors=str(vectors_file),
                          vectors_route="rectangular").fit(planted.corpus, user_ids=users)
    assert not records


@pytest.mark.parametrize("route", ["spread", "groups"])
def test_saved_model_refits_with_the_same_vectors_and_refuses_others(planted, vectors_file, tmp_path, route):
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0, public_vectors=str(vectors_file),
                                    vectors_route=route), planted.corpus)
    m.save(tmp_path / "m")
    loaded = dptopic.load(tmp_path / "m")
    assert loaded.public_vectors_["sha256"] == m.public_vectors_["sha256"]
    before = loaded.components_.copy()
    loaded.refit(K)
    np.testing.assert_allclose(loaded.components_, before, atol=1e-12)
    loaded.refit(3)
    assert loaded.components_.shape == (3, N_WORDS)
    write_glove(vectors_file, list(planted.corpus.vocabulary.words), np.ones((N_WORDS, 8)))   # other vectors
    V._LOADED.clear()
    with pytest.raises(DPTopicError, match="not those the model was fitted with"):
        dptopic.load(tmp_path / "m").refit(4)


def test_the_report_shows_the_floor_of_the_vectors_alone_beside_the_topics(planted, tmp_path, monkeypatch):
    from dptopic.reporting.page import report_page

    words = list(planted.corpus.vocabulary.words)
    install(tmp_path, monkeypatch, words, topic_vectors(planted.phi, words))
    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0), planted.corpus)
    html, _ = report_page(m)
    assert "id='public-floor'" in html and "read no document" in html
    assert "<th>public vectors</th>" in html                                 # the card's row
    assert html.index('id="topics"') < html.index("id='public-floor'")      # after the model's own topics
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=0, public_vectors=None), planted.corpus)
    assert "public-floor" not in report_page(off)[0]


def test_words_the_vectors_placed_are_listed_marked_in_topics_report_and_exports(planted, vectors_file, tmp_path):
    """The spread places the words outside the release by their vectors: the top-word lists show them, marked as
    placed by public vectors (not hidden as unestimated, not presented as learned), the same in topic_words, the
    terminal's note, the report and the JSON, CSV and pyLDAvis exports, and after a save and load."""
    import csv
    import io

    from dptopic.models.base import PLACED_MARK
    from dptopic.reporting.export import PLACED, UNESTIMATED, pyldavis_export, topics_csv, topics_document
    from dptopic.reporting.page import report_page
    from dptopic.reporting.terminal import estimated_note, placed_note

    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=str(vectors_file),
                                    vectors_route="spread"), planted.corpus)
    placed, estimated = m.placed_words(), m.estimated_words()
    assert placed is not None and placed.any() and not (placed & estimated).any()
    words = list(m.vocabulary_.words)
    lists = m.topic_words(30, mark_placed=True)         # as the terminal and the report print them
    marked = [w for t in lists for w in t if w.endswith(PLACED_MARK)]
    assert marked and all(placed[k, words.index(w[:-1])] for k, t in enumerate(lists) for w in t if w in marked)
    assert all(estimated[k, words.index(w)] for k, t in enumerate(lists) for w in t if not w.endswith(PLACED_MARK))
    plain = m.topic_words(30)
    assert [[w.rstrip(PLACED_MARK) for w in t] for t in lists] == plain
    assert f"marked '{PLACED_MARK}'" in estimated_note(m)
    note = placed_note(m)
    assert note.startswith(f"'{PLACED_MARK}' marks") and "vec.txt placed" in note and "no private data" in note
    assert "not learned from the data" in note and "inside the guarantee" in note
    page = report_page(m, top=30, show_unsupported=True)[0]
    assert any(w in page for w in marked) and "no private data" in page
    doc = topics_document(m, 30, tmp_path, show_unsupported=True)
    flags = [(t["words"][i], t["placed_by_public_vectors"][i]) for t in doc["topics"] for i in range(len(t["words"]))]
    assert {w + PLACED_MARK for w, f in flags if f} == set(marked) and not any(w.endswith("*") for w, _ in flags)
    table, _ = topics_csv(m, 30, tmp_path, show_unsupported=True)
    rows = list(csv.DictReader(io.StringIO(table)))
    assert {r["word"] + PLACED_MARK for r in rows if r["placed_by_public_vectors"] == "true"} == set(marked)
    vocab = pyldavis_export(m, planted.corpus, show_unsupported=True)["vocab"]
    outside = ~estimated.any(axis=0)
    assert all(v.endswith(PLACED) == bool(placed.any(axis=0)[i]) for i, v in enumerate(vocab))
    assert all(v.endswith(UNESTIMATED) == bool(outside[i] and not placed.any(axis=0)[i]) for i, v in enumerate(vocab))
    m.save(tmp_path / "m")
    np.testing.assert_array_equal(dptopic.load(tmp_path / "m").placed_words(), placed)
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=None), planted.corpus)
    assert off.placed_words() is None and not any(w.endswith(PLACED_MARK) for t in off.topic_words(30, mark_placed=True)
                                                  for w in t)


def test_topic_words_are_vocabulary_words_and_placed_words_says_which_the_vectors_placed(planted, vectors_file):
    """What a Python caller indexes with carries no mark: ``topic_words`` returns the vocabulary's words, and
    ``placed_words_`` (topics x words) says which the public vectors placed in each topic; the printing marks them."""
    import io

    from rich.console import Console

    from dptopic.reporting.terminal import print_topics

    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=str(vectors_file),
                                    vectors_route="spread"), planted.corpus)
    lists = m.topic_words(30, estimated_only=False)
    index = {w: i for i, w in enumerate(m.vocabulary_.words)}
    assert all(w in index for t in lists for w in t)          # every word indexes the vocabulary
    mask = m.placed_words_
    assert mask.shape == m.components_.shape and mask.dtype == bool
    np.testing.assert_array_equal(mask, m.placed_words())
    assert any(mask[k, index[w]] for k, t in enumerate(lists) for w in t)
    assert [w for w, _ in m.topic_words(5, weights=True)[0]] == m.topic_words(5)[0]
    buf = io.StringIO()
    print_topics(m, 30, console=Console(file=buf, width=1000), show_unsupported=True)
    printed = buf.getvalue()
    assert any(f" {w}*" in printed for k, t in enumerate(lists) for w in t if mask[k, index[w]])
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=None), planted.corpus)
    assert off.placed_words_ is None


def test_each_topic_line_says_how_many_of_its_words_the_release_estimated(planted, vectors_file):
    """A topic listed with words the vectors placed says, on its line, how many of its words the release estimated
    (its support was decided on those alone, which a line under the table says); a topic of estimated words only
    says nothing, and a model without vectors neither."""
    import io
    import re

    from rich.console import Console

    from dptopic.reporting.terminal import print_topics

    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=str(vectors_file),
                                    vectors_route="spread", n_words=30), planted.corpus)
    buf = io.StringIO()
    print_topics(m, 20, console=Console(file=buf, width=1000), show_unsupported=True)
    printed = buf.getvalue()
    placed, index = m.placed_words(), m.vocabulary_.get
    said = re.findall(r"\((\d+) of (\d+) words estimated\)", printed)
    expected = [sum(not placed[k, index(w)] for w in t) for k, t in enumerate(m.topic_words(20))]
    assert said and [int(e) for e, n in said] == [e for e in expected if e < 20]
    assert all(n == "20" for _, n in said)
    if m.supported_topics_.any():
        assert "by the words its release estimated" in printed
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=None), planted.corpus)
    buf = io.StringIO()
    print_topics(off, 20, console=Console(file=buf, width=1000), show_unsupported=True)
    assert "words estimated" not in buf.getvalue()


def test_the_report_page_says_in_each_topic_s_heading_how_many_of_its_words_the_release_estimated(planted,
                                                                                                  vectors_file):
    """The HTML report says what the terminal says on each topic line: how many of the topic's listed words its
    release estimated, for each topic that lists a word the vectors placed; a model without vectors says nothing."""
    import re

    from dptopic.reporting.page import report_page

    m = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=str(vectors_file),
                                    vectors_route="spread", n_words=30), planted.corpus)
    html, _ = report_page(m, top=20, show_unsupported=True)
    placed, index = m.placed_words(), m.vocabulary_.get
    expected = [sum(not placed[k, index(w)] for w in t) for k, t in enumerate(m.topic_words(20))]
    said = re.findall(r"<h3>topic (\d+)[^<]*\((\d+) of (\d+) words estimated\)</h3>", html)
    assert said and {int(k): int(e) for k, e, _ in said} == {k: e for k, e in enumerate(expected) if e < 20}
    assert all(n == "20" for *_, n in said)
    off = quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=2.0, seed=1, public_vectors=None), planted.corpus)
    assert "words estimated" not in report_page(off, top=20, show_unsupported=True)[0]


def test_auto_route_per_person_reads_the_signal_as_the_document_unit_does(planted, vectors_file, monkeypatch):
    """``vectors_route="auto"`` at the user unit takes the groups where the people's first release's signal reaches
    the threshold and its presence reaches ``GROUPS_MIN_PRESENCE``, as the document unit does (on real documents
    grouped into people the groups won or tied there: docs/research/user_level.md), and the spread otherwise (750
    planted people give far less presence than the cut, which is lowered here to see the groups). The card says
    which route."""
    import dptopic.models.docdp_cooc as docdp_cooc
    from dptopic.moments import vector_prior
    from dptopic.moments.vector_prior import GROUPS_FROM_PER_PERSON, GROUPS_MIN_PRESENCE, choose_route

    signals, presences = [], []

    def spy(route, presence, sigma, *unit):
        signals.append(presence / (175.0 * sigma))
        presences.append(presence)
        return choose_route(route, presence, sigma, *unit)

    monkeypatch.setattr(docdp_cooc, "choose_route", spy)
    users = [f"p{i // 2}" for i in range(planted.corpus.n_docs)]       # 750 people of two documents

    def fit(epsilon):
        return quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=epsilon, seed=0, unit="user",
                                           public_vectors=str(vectors_file)), planted.corpus, user_ids=users)

    few = fit(20.0)             # the signal passes, the presence does not: the spread
    assert signals[-1] >= GROUPS_FROM_PER_PERSON and presences[-1] < GROUPS_MIN_PRESENCE
    assert few.public_vectors_["route"] == "spread" and few.word_groups_ is None
    monkeypatch.setattr(vector_prior, "GROUPS_MIN_PRESENCE", presences[-1] / 2)   # as if the cut lay below them
    person = fit(20.0)
    assert signals[-1] >= GROUPS_FROM_PER_PERSON
    assert person.public_vectors_["route"] == "groups" and person.word_groups_ is not None
    card = privacy_card(person.privacy_report(), "DocDPCooccurrence")
    assert card["privacy_unit"] == "user" and "also counts groups of the other words made by the vectors" in \
        card["public_vectors"]["summary"]
    low = fit(1.0)
    assert signals[-1] < GROUPS_FROM_PER_PERSON
    assert low.public_vectors_["route"] == "spread" and low.word_groups_ is None
    assert "placed in the topics of their nearest released words" in \
        privacy_card(low.privacy_report(), "DocDPCooccurrence")["public_vectors"]["summary"]



def test_auto_route_at_the_document_unit_reads_the_presence_that_does_not_grow_with_epsilon(planted, vectors_file,
                                                                                              monkeypatch):
    """At the document unit ``vectors_route="auto"`` takes the spread where the signal passes its threshold (a large
    epsilon) but the first release's presence stays below ``GROUPS_MIN_PRESENCE`` (1,500 planted documents), and the
    groups where the cut lies below that presence."""
    from dptopic.moments import vector_prior

    def fit():
        return quiet_fit(DocDPCooccurrence(n_topics=K, epsilon=20.0, seed=0, public_vectors=str(vectors_file)),
                         planted.corpus)

    small = fit()
    assert small.public_vectors_["route"] == "spread" and small.word_groups_ is None
    monkeypatch.setattr(vector_prior, "GROUPS_MIN_PRESENCE", 1000.0)  # the same release (seed 0): the signal passes
    large = fit()
    assert large.public_vectors_["route"] == "groups" and large.word_groups_ is not None
