"""Rough edges a new user's walk-through found (2026-11-25): a corpus given as the vocabulary, a shard folder given
to a command that reads one corpus, another program's model folder, a JSONL file read as CSV, --max-vocab all beside a
private vocabulary, where the small-corpus warning goes, and audit --set values checked before any shadow model."""
import json

import numpy as np
import pytest

from dptopic.errors import DPTopicError


def _posts(tmp_path, n=40):
    p = tmp_path / "posts.jsonl"
    rng = np.random.default_rng(0)
    words = ["budget", "army", "navy", "school", "teacher", "farm", "wheat", "tax", "bank", "trade", "ship", "rail"]
    with p.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choice(words, 12)) + " and more words here",
                                 "label": "ab"[i % 2]}) + "\n")
    return p


def test_a_corpus_given_as_the_vocabulary_is_refused_in_one_line(tmp_path, capsys):
    from dptopic.cli.main import main

    posts = _posts(tmp_path)
    assert main(["randomize", "--vocabulary", str(posts), "--epsilon-word", "3", "--corpus", str(posts),
                 "--out", str(tmp_path / "r.dpr")]) == 2
    err = capsys.readouterr().err
    assert "holds text, not words" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.dpr").exists()
    # an n-gram vocabulary (a few words per line) is still a vocabulary
    from dptopic.cli._common import read_vocabulary
    (tmp_path / "ngrams.txt").write_text("new york\nunited states\ntax\nbank\n")
    assert len(read_vocabulary(tmp_path / "ngrams.txt")) == 4


def test_examples_in_vocabulary_messages_are_cut_short():
    import warnings
    from dptopic.corpus import Corpus

    long = "x" * 300
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(DPTopicError) as e:
            Corpus.from_texts(["some plain text here"], vocabulary=[long + " a", long + " b"])
    assert len(str(e.value)) < 400 and all(len(str(x.message)) < 600 for x in w)


def test_a_shard_folder_given_where_one_corpus_is_read_says_only_training_reads_it(tmp_path):
    from dptopic.corpus.shards import write_shards
    from dptopic.corpus import Corpus
    from dptopic.corpus.synthetic import lda_corpus

    write_shards(lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus, tmp_path / "sh", 2)
    with pytest.raises(DPTopicError, match=r"only training reads a shard folder whole .*one of its shard-\*\.npz"):
        Corpus.from_directory(tmp_path / "sh")


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


def test_a_jsonl_file_read_as_csv_says_it_looks_like_json_lines(tmp_path):
    from dptopic.corpus import Corpus

    posts = _posts(tmp_path)
    csv = tmp_path / "posts.csv"
    csv.write_text(posts.read_text())
    with pytest.raises(DPTopicError, match="looks like JSON Lines"):
        Corpus.from_csv(csv)
    other = tmp_path / "other.jsonl"
    other.write_text('{"body": "one two three", "tag": "a"}\n')
    with pytest.raises(DPTopicError, match=r"no field 'text' \(fields: body, tag\)"):
        Corpus.from_jsonl(other)


def test_max_vocab_all_goes_with_a_private_vocabulary():
    from argparse import Namespace
    from dptopic.cli._common import NO_VOCAB_CAP, refuse_data_cuts

    refuse_data_cuts(Namespace(max_vocab=NO_VOCAB_CAP, min_df=None), "--private-vocabulary chooses the words")
    with pytest.raises(DPTopicError, match="--max-vocab"):
        refuse_data_cuts(Namespace(max_vocab=500, min_df=None), "--private-vocabulary chooses the words")


def test_the_small_corpus_warning_goes_to_stderr(tmp_path, capsys):
    from dptopic.cli.main import main

    posts = _posts(tmp_path, 30)
    assert main(["train", "--corpus", str(posts), "--unit", "document", "--epsilon", "1", "--topics", "3",
                 "--test-size", "0", "--quiet", "--out", str(tmp_path / "m")]) == 0
    cap = capsys.readouterr()
    assert "warning: at epsilon 1" in " ".join(cap.err.split()) and "warning: at epsilon" not in cap.out


def test_audit_set_values_are_checked_before_any_shadow_model(tmp_path, capsys):
    from dptopic.cli.main import main

    assert main(["audit", "--algorithm", "hdp", "--set", "epsilon_inherent=abc", "--corpus", str(_posts(tmp_path)),
                 "--out", str(tmp_path / "a")]) == 2
    cap = capsys.readouterr()
    assert "invalid epsilon_inherent='abc'" in cap.err and "shadow" not in (cap.out + cap.err).lower()


def test_corpus_info_gives_no_stop_word_hint_for_a_corpus_prepared_with_its_own(tmp_path, capsys):
    from dptopic.cli.main import main

    src = tmp_path / "s.txt"
    src.write_text("apple banana cherry grape\ndate elder fig apple\ngrape apple banana melon\n")
    (tmp_path / "stop.txt").write_text("melon\n")
    for stop, hinted in ((f"english+{tmp_path / 'stop.txt'}", False), ("english", True)):
        out = tmp_path / f"c{hinted}.npz"
        assert main(["corpus", "prepare", "--corpus", str(src), "--stop-words", stop, "--out", str(out)]) == 0
        capsys.readouterr()
        assert main(["corpus", "info", str(out)]) == 0
        assert ("--stop-words english+FILE" in " ".join(capsys.readouterr().out.split())) is hinted
