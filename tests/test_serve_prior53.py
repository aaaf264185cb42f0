"""`dptopic serve --prior`: the public prior corpus is read in the server's vocabulary, so none of its words is lost
to a cap on words built from the prior's own text (which kept its 1,000 most common words)."""
import pytest


def test_serve_prior_keeps_a_rare_vocabulary_word(tmp_path):
    pytest.importorskip("starlette")
    from dptopic.cli.main import build_parser
    from dptopic.cli.serve import build_config

    import itertools
    letters = "bcdfghjklmnp"
    common = ["".join(t) + "a" for t in itertools.islice(itertools.product(letters, repeat=3), 1200)]  # 1,200 words
    vocab = common + ["zebrafish"]                       # the server's vocabulary holds a word the prior uses once
    docs = [" ".join(common[(j * 37 + k) % 1200] for k in range(60)) for j in range(400)]
    docs.append("zebrafish " + " ".join(common[:5]))
    (tmp_path / "prior.txt").write_text("\n".join(docs) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(vocab) + "\n")
    args = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--topics", "3",
            "--database", f"sqlite:///{tmp_path / 's.db'}", "--prior", str(tmp_path / "prior.txt"), "--format", "text"]
    cfg = build_config(build_parser().parse_args(args))
    prior = cfg.prior
    assert list(prior.vocabulary.words) == vocab
    col = prior.to_bow().tocsc()[:, vocab.index("zebrafish")]
    assert col.sum() == 1                                # the rare word's one occurrence survives
    assert prior.to_bow().sum() == 400 * 60 + 6
