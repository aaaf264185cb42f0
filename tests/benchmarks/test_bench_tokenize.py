"""benchmarks/bench_tokenize.py: the planted corpora it times are read by the Tokenizer as Preprocessor.tokenize reads
them, and a tiny run prints every route's rate and its ratio to scikit-learn's CountVectorizer, the peer."""
import contextlib
import io
import re

import pytest


def test_the_planted_corpora_are_read_by_the_tokenizer_as_tokenize_reads_them(bench):
    from dptopic.corpus.preprocess import Preprocessor, Tokenizer, stop_words

    texts = bench.planted_texts(3000, seed=1)
    words = bench.planted_words()
    assert len(set(words)) == 2000 and not set(words) & stop_words() and all(w.isalpha() for w in words)
    assert 50 < sum(len(t.split()) for t in texts) / len(texts) < 70            # about 60 words a document
    assert Tokenizer().tokens(texts) == [Preprocessor().tokenize(t) for t in texts]


def test_a_tiny_run_prints_each_routes_rate_and_ratio_beside_the_peer(bench):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--corpora", "planted", "--planted-docs", "400", "--repeats", "1", "--processes", "1", "2",
                    "--routes", "today", "kernel", "kernel-bag", "from_texts", "--vocab", "300",
                    "--chunk-chars", "20000"])
    text = out.getvalue()
    assert "the same tokens as today's tokenize: kernel yes, kernel-bag yes, from_texts yes" in text, text
    for p in (1, 2):
        for route in ("sklearn", "today", "kernel", "kernel-bag", "from_texts"):
            assert re.search(rf"{p} process\(es\)\s+{route}\s+[\d.]+ MB/s\s+ratio to sklearn\s+[\d.]+;", text), text
    assert "2 processes: kernel-bag's tokens mapped into one table the same as today's: yes" in text, text
    assert "load (1 min)" in text


@pytest.mark.parametrize("argv", [["--repeats", "0"], ["--vocab", "1"], ["--processes", "0"]])
def test_bad_settings_are_refused_before_anything_is_read(bench, argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2 and "must be at least" in capsys.readouterr().err


def test_another_versions_source_is_read_for_its_from_texts_only(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--src", str(tmp_path)])
    assert e.value.code == 2 and "holds no dptopic package" in capsys.readouterr().err
    (tmp_path / "dptopic").mkdir()
    with pytest.raises(SystemExit) as e:
        bench.main(["--src", str(tmp_path), "--routes", "kernel"])
    assert e.value.code == 2 and "times only the routes" in capsys.readouterr().err


def test_the_profile_times_each_step_of_a_read_and_of_from_texts(bench):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--profile", "--corpora", "planted", "--planted-docs", "300", "--repeats", "2", "--vocab", "100"])
    text = out.getvalue()
    for step in ("join the texts", "the kernel's scan (with the web-address check)", "the whole read",
                 "Corpus.from_texts(texts)", "its content digests", "its read into the bag"):
        assert re.search(rf"{re.escape(step)}\s+[\d.]+ [\d.]+\s+[\d,]+", text), text
