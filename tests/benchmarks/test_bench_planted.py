"""benchmarks/bench_planted.py end to end on a tiny setting: it plants a fitted LDA's topics, fits both trainers to the
drawn documents and prints each one's recovery (topic_coverage against the planted topics) with the ratio to LDA."""
import contextlib
import io

import pytest


def test_bench_planted_prints_recovery_and_ratio_to_lda(bench, planted, monkeypatch):
    # the source corpus: the small synthetic one of conftest, standing in for the State of the Union (read elsewhere)
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--docs", "300", "--epsilon", "4", "--topics", "3", "--iters", "3"])
    text = out.getvalue()
    assert "planted topics: LDA K=3, 3 sweeps" in text
    rows = [line.split("  ") for line in text.splitlines() if line.startswith("sotu    300")]
    lda, private, floor = ([c.strip() for c in r if c.strip()] for r in rows)
    assert lda[4].startswith("LDA") and lda[-1] == "1.00"
    assert private[4].startswith("DocDPCooccurrence") and private[5] == "4"
    assert floor[4].startswith("floor")
    for r in (lda, private, floor):
        assert 0 <= float(r[-3]) <= 1 and 0 <= float(r[-2]) <= 1        # coverage, precision
    assert float(private[-1]) == pytest.approx(float(private[-3]) / float(lda[-3]), abs=0.01)
    assert "ratio = coverage / non-private LDA's coverage" in text


@pytest.mark.parametrize("argv, fragment", [(["--docs", "0"], "--docs: every value must be above 0"),
                                            (["--epsilon", "-1"], "--epsilon: every value must be above 0"),
                                            (["--corpora", "reuters"], "invalid choice: 'reuters'")])
def test_bench_planted_refuses_bad_settings_before_loading_anything(bench, argv, fragment, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2 and fragment in capsys.readouterr().err


def test_bench_planted_takes_the_median_of_runs_beside_the_earlier_recovery(bench, planted, monkeypatch):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--docs", "300", "--epsilon", "4", "--topics", "3", "--iters", "3", "--runs", "2",
                    "--recovery", "default", "nmf"])
    text = out.getvalue()
    rows = [[c.strip() for c in line.split("  ") if c.strip()] for line in text.splitlines()
            if line.startswith("sotu    300")]
    private = [r for r in rows if r[4].startswith("DocDPCooccurrence")]
    assert [r[4] for r in private] == ["DocDPCooccurrence (delta=1e-05, defaults, median of 2)",
                                       "DocDPCooccurrence (delta=1e-05, recovery=nmf, median of 2)"]
    for r in private:      # the median, then the range of the runs
        median, spread = r[-3].split(" ", 1)
        low, high = (float(x) for x in spread.strip("()").split("-"))
        assert low <= float(median) <= high
    assert "peak memory of this process" in text


def test_bench_planted_refuses_zero_runs(bench, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--runs", "0"])
    assert e.value.code == 2 and "--runs" in capsys.readouterr().err


def test_the_ceiling_reads_the_truth_back_when_there_is_no_noise(bench):
    """With (almost) no noise and topics that each hold a word of their own, the ceiling's release is the exact
    moment of a separable model: the recovery returns the planted topics."""
    from types import SimpleNamespace

    import numpy as np

    from dptopic.evaluation import topic_coverage

    K, V = 3, 30
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.ones(V), size=K)
    phi[:, :K] = 0.0
    phi[np.arange(K), np.arange(K)] = 0.2                   # an anchor word per topic
    phi /= phi.sum(axis=1, keepdims=True)
    model = SimpleNamespace(kept_words_=np.arange(V), noise_std_=1e-12, components_=np.full((K, V), 1.0 / V))
    beta = bench.oracle_topics(model, phi, rng.dirichlet(np.full(K, 0.3), size=2000), rng)
    vocab = [f"w{i}" for i in range(V)]
    assert topic_coverage((beta, vocab), (phi, vocab))["coverage"] > 0.999


def test_bench_planted_streams_shard_files_and_prints_the_ceiling(bench, planted, monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    argv = ["--docs", "300", "--epsilon", "4", "--topics", "3", "--iters", "3"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(argv + ["--shards", str(tmp_path), "--shard-docs", "120", "--peer-docs", "200"])
    text = out.getvalue()
    assert sorted(p.name for p in (tmp_path / "sotu-300").glob("shard-*.npz")) == [
        "shard-00000.npz", "shard-00001.npz", "shard-00002.npz"]
    assert "wrote 3 shards of 120 documents" in text and "streamed 3 shards: peak RSS of the fitting process" in text
    assert "LDA (collapsed Gibbs, non-private) on the first 200 documents" in text
    # the same settings: the shards are read again (the fit in this process: the spawned child ran above)
    monkeypatch.setattr(bench, "fit_shards", bench._fit_shards_child)
    with contextlib.redirect_stdout(io.StringIO()) as again:
        bench.main(argv + ["--shards", str(tmp_path), "--shard-docs", "120", "--peer-docs", "200"])
    assert "wrote" not in again.getvalue()
    with contextlib.redirect_stdout(io.StringIO()) as oracle:
        bench.main(argv + ["--oracle"])
    rows = [[c.strip() for c in line.split("  ") if c.strip()] for line in oracle.getvalue().splitlines()
            if line.startswith("sotu    300") and "ceiling" in line]
    assert len(rows) == 1 and 0 <= float(rows[0][-3]) <= 1
    assert "along its expected direction (cosine" in oracle.getvalue()


def test_bench_planted_never_replaces_files_it_did_not_write(bench, planted, monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    (tmp_path / "sotu-300").mkdir()
    (tmp_path / "sotu-300" / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="holds files this benchmark did not write"):
        with contextlib.redirect_stdout(io.StringIO()):
            bench.main(["--docs", "300", "--topics", "3", "--iters", "3", "--shards", str(tmp_path)])
    assert (tmp_path / "sotu-300" / "notes.txt").read_text() == "mine"
    assert not list((tmp_path / "sotu-300").glob("shard-*"))
