"""`privacy verify` holds a model built by `from_budget` to its budget after save and load too: the budget lived only
in the session that fitted it (``_budget``), so a saved report whose events spend more than the budget it records
still read as verified."""
import json
import warnings

from dptopic.cli.main import main
from dptopic.corpus import lda_corpus


def _corpus():
    return lda_corpus(n_docs=120, vocab_size=40, n_topics=3, doc_length=30, seed=0).corpus


def test_verify_checks_a_saved_dpsvi_against_its_recorded_budget(tmp_path, capsys):
    from dptopic.models import DPSVI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPSVI.from_budget(2.0, 1e-5, n_epochs=1, sampling_rate=0.2, n_topics=3, seed=0, verbose=0).fit(_corpus())
    d = tmp_path / "m"
    m.save(d)
    assert main(["privacy", "verify", str(d)]) in (0, None)
    capsys.readouterr()
    doc = json.loads((d / "model.json").read_text())
    assert doc["privacy"]["budget"]["epsilon"] == 2.0
    doc["privacy"]["budget"]["epsilon"] = 1.5          # a budget below what the recorded events spend
    (d / "model.json").write_text(json.dumps(doc))
    assert main(["privacy", "verify", str(d)]) not in (0, None)
    out = " ".join((capsys.readouterr().out + "").split()).lower()
    assert "budget" in out


def test_verify_checks_a_saved_hdplda_against_its_recorded_budget(tmp_path, capsys):
    from dptopic.models import HDPLDA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = HDPLDA.from_budget(60.0, 1e-5, 5, n_topics=3, seed=0, verbose=0).fit(_corpus())
    d = tmp_path / "m"
    m.save(d)
    assert main(["privacy", "verify", str(d)]) in (0, None)
    capsys.readouterr()
    doc = json.loads((d / "model.json").read_text())
    doc["privacy"]["budget"]["epsilon"] = 40.0
    (d / "model.json").write_text(json.dumps(doc))
    assert main(["privacy", "verify", str(d)]) not in (0, None)
