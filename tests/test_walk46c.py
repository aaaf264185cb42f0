"""Walk-through C (privacy cards, evaluate/report/audit): what the pages and notes claim, pinned."""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

import dptopic
from dptopic.cli.main import build_parser, main
from dptopic.errors import DPTopicError
from dptopic.reporting import privacy_card, render_report

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students",
         "students teachers education college"] * 8


def _fit(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeds, a vocabulary from the data: not what these tests look at
        return model.fit(corpus, **kw)


def _subparser(name):
    parser = build_parser()
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict) and name in action.choices:
            return action.choices[name]
    raise AssertionError(name)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("walk46c")
    text = d / "docs.txt"
    text.write_text("\n".join(TEXTS))
    private = d / "hdp"
    assert main(["train", "--corpus", str(text), "--algorithm", "hdp", "--epsilon-laplace", "1", "--topics", "3",
                 "--iterations", "3", "--out", str(private), "--quiet"]) == 0
    return d, text, private


# ---------------------------------------------------------------- finding 3: "held-out" perplexity
def test_report_reference_perplexity_is_not_called_held_out(planted):
    from dptopic.cli.report import evaluate_on

    model = _fit(dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=0), planted.corpus)
    ev = evaluate_on(model, planted.corpus, False, "the training corpus itself")
    keys = " ".join(ev)
    # nothing knows whether the reference was held out of training (here it was not): a neutral label
    assert "held-out" not in keys and "perplexity on the reference corpus (document completion)" in ev
    assert "note" not in ev     # not private: no guarantee to be outside of


# ---------------------------------------------------------------- finding 7: evaluate's note, --reference-public
def test_evaluate_says_which_figures_read_the_corpus_and_takes_reference_public(files, capsys):
    _, text, private = files
    capsys.readouterr()
    assert main(["evaluate", str(private), "--corpus", str(text), "--json"]) in (0, None)
    note = json.loads(capsys.readouterr().out)["note"]
    assert note.startswith("outside the guarantee: the reference corpus's exact size, NPMI, C_v, UMass and perplexity read the documents of --corpus")
    assert "topic diversity reads only the released topics" in note and "--reference-public" in note
    # a public corpus: the same flag as report's, and nothing is labelled outside the guarantee
    assert main(["evaluate", str(private), "--corpus", str(text), "--json", "--reference-public"]) in (0, None)
    assert "note" not in json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(private), "--corpus", str(text), "--reference-public"]) in (0, None)
    assert "outside the guarantee" not in capsys.readouterr().out


def test_report_reference_note_keeps_diversity_inside(files, tmp_path, capsys):
    _, text, private = files
    out = tmp_path / "r.html"
    assert main(["report", str(private), "--reference", str(text), "--out", str(out)]) == 0
    html = out.read_text()
    assert "perplexity on the reference corpus" in html and "held-out perplexity" not in html
    assert "topic diversity reads only the released topics" in html
    assert "topic diversity reads only the released topics" in capsys.readouterr().err


# ---------------------------------------------------------------- finding 4: what an audit attacks
def test_audit_wording_says_the_procedure_was_audited_not_the_saved_model():
    from dptopic.attacks.lira import attacked_caption
    from dptopic.attacks.provenance import describe

    audited = {"what": "saved model", "model": "runs/m_doc", "class": "DocDPCooccurrence",
               "fingerprint": "sha256:08b1b12e209f2ea53a5a44", "params": {"n_topics": 20, "epsilon": 1.0}}
    corpus = {"spec": "demo", "read": "into the model's vocabulary"}
    line = describe(audited, corpus, 4)
    assert line.startswith("the training procedure of the saved model runs/m_doc (DocDPCooccurrence")
    assert "by retraining 4 shadow models on the corpus demo" in line
    assert line.endswith("the released model itself was not scored")
    assert "attacked the saved model" not in line
    procedure = describe({"what": "procedure", "algorithm": "lda", "class": "LDA",
                          "params": {"n_topics": 3, "alpha": 0.1}}, corpus, 4)
    assert "LDA: alpha = 0.1, n_topics = 3" in procedure and "{" not in procedure   # no dict repr
    caption = attacked_caption({"audited": audited, "corpus": corpus, "n_docs_audited": 10})
    assert caption.startswith("procedure of m_doc (DocDPCooccurrence") and " from m_doc" not in caption
    model_help = next(a.help for a in _subparser("audit")._actions if "--model" in a.option_strings)
    assert "training procedure" in model_help and "not scored" in model_help
    doc = (ROOT / "docs" / "auditing.md").read_text()
    assert "the saved model itself is\nnever scored" in doc or "the saved model itself is never scored" in doc


def test_audit_run_records_the_procedure_and_the_page_reads_well(files, tmp_path, capsys):
    _, text, private = files
    out = tmp_path / "a"
    assert main(["audit", "--model", str(private), "--corpus", str(text), "--shadows", "4", "--seed", "0",
                 "--quiet", "--out", str(out)]) == 0
    s = json.loads((out / "audit.json").read_text())["settings"]
    assert "not scored" in s["attacked"] and "4 shadow models" in s["attacked"]
    assert "{" not in s["trainer"] and "n_topics = 3" in s["trainer"]     # readable, not a dict's repr
    capsys.readouterr()
    page = tmp_path / "p.html"
    assert main(["report", str(private), "--audit", str(out), "--out", str(page)]) == 0
    html = page.read_text()
    assert "what was audited" in html and "the released model itself was not scored" in html
    trainer_row = re.search(r"<tr><th>trainer</th><td>(.*?)</td></tr>", html).group(1)
    assert trainer_row.startswith("HDPLDA: ") and "n_topics = 3" in trainer_row and "{" not in trainer_row
    # readable attack columns; the audit.json key stays in the tooltip
    assert ">TPR at FPR 0.1%</th>" in html and ">AUC SE over documents</th>" in html
    assert ">tpr_at_fpr_0.001</th>" not in html and "title='tpr_at_fpr_0.001'" in html
    assert "<table class='wide'>" in html


# ---------------------------------------------------------------- finding 5: the paper's moments accountant
def test_the_papers_moments_accountant_is_none_outside_abadi_lemma_3():
    from dptopic.accounting import moments_accountant_epsilon

    # sigma < 1: the cap floor(sigma^2 ln(1/(q sigma))) is >= 1 here, but Lemma 3 is stated for sigma >= 1
    with pytest.raises(DPTopicError, match="Lemma 3"):
        moments_accountant_epsilon(0.997, 0.001, 100, 1e-5, code_cap=True)
    # q >= 1/(16 sigma): outside it too (the cap is 3 here)
    with pytest.raises(DPTopicError, match="sigma >= 1 and q < 1/\\(16 sigma\\)"):
        moments_accountant_epsilon(1.24, 0.06, 20, 1e-4, code_cap=True)
    assert moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, code_cap=True) == pytest.approx(2.441, abs=2e-3)
    # orders 1..64 stay valid for any sigma (a cross-check, not the paper's figure)
    assert moments_accountant_epsilon(0.997, 0.001, 100, 1e-5, max_order=64) > 0


def test_dpsvi_report_says_none_below_sigma_one(planted):
    m = _fit(dptopic.DPSVI(n_topics=3, noise_multiplier=0.997, sampling_rate=0.01, n_epochs=0.1, seed=0, verbose=0),
             planted.corpus)
    rep = m.privacy_
    assert rep["epsilon_moments_accountant_paper"] is None and rep["epsilon_moments_accountant"] is not None
    assert "Lemma 3: sigma >= 1 and q < 1/(16 sigma)" in rep["paper_figures_note"]


# ---------------------------------------------------------------- finding 6: CDP's covered / not covered rows
def test_cdp_card_puts_the_model_in_the_not_covered_row(tiny):
    m = _fit(dptopic.CDPLDA(n_topics=3, n_iter=2, seed=0, verbose=0), tiny.corpus)
    card = privacy_card(m.privacy_, "CDPLDA")
    assert "count_release_epsilon" not in card["covered"] and "count_release_epsilon" not in card["not_covered"]
    assert "Phi" not in card["covered"] and "not covered" not in card["covered"].lower()
    assert card["not_covered"].startswith("NOT covered: the sampled topics z, Phi (the whole released model)")
    assert card["covered"].startswith("only the noisy count releases")
    assert "count_release_epsilon" in m.privacy_        # the figure itself is still reported (its own row)


# ---------------------------------------------------------------- finding 8: print and layout
def _card():
    return privacy_card({"private": True, "unit": "document", "neighbouring_relation": "add/remove", "theorem": "t",
                         "delta": 1e-5, "epsilon": 1.0, "epsilon_pld": 1.0, "scope": "covers it. NOT covered: that."},
                        "DocDPEM")


def test_the_page_prints_its_json_card_colours_and_long_lines():
    card = _card()
    html = render_report(title="t", trainer="DocDPEM", card=card, topics=[[("tax", 0.5)]])
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    assert "@media print" in css and "print-color-adjust:exact" in css and "white-space:pre-wrap" in css
    assert ".print-only{display:block}" in css and "details{display:none}" in css.split("@media print")[1]
    # the card's JSON twice: in the <details> on screen, and in a block only print shows (a closed <details>
    # does not print)
    printed = re.search(r'<div class="print-only">.*?<pre>(.*?)</pre></div>', html, re.S).group(1)
    assert json.loads(printed.replace("&quot;", '"').replace("&#x27;", "'").replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))["schema"] == card["schema"]
    # still nothing run and nothing fetched
    assert "<script" not in html and "url(" not in html and "@import" not in html and " src='http" not in html


def test_attack_columns_and_trainer_settings_are_readable():
    from dptopic.reporting.html import attack_column

    assert attack_column("tpr_at_fpr_0.01") == "TPR at FPR 1%" and attack_column("tpr_at_fpr_0") == "TPR at FPR 0"
    assert attack_column("auc_se_models") == "AUC SE over models" and attack_column("odd_key") == "odd key"
    audit = {"attacks": {"lira_online": {"auc": 0.5, "tpr_at_fpr_0.001": 0.001}}, "claimed_privacy": {},
             "settings": {"trainer": "DocDPCooccurrence {'n_topics': 20, 'tail': None}",   # an earlier audit.json
                          "audited": {"class": "DocDPCooccurrence", "params": {"n_topics": 20, "tail": None}}}}
    html = render_report(title="t", trainer="DocDPEM", card=_card(), topics=[[("tax", 0.5)]], audit=audit)
    assert "DocDPCooccurrence: n_topics = 20, tail = none" in html and "{&#x27;n_topics" not in html


# ---------------------------------------------------------------- finding 10: numba cannot cache
def test_numba_cache_folder_falls_back_to_a_private_temporary_folder(tmp_path, monkeypatch):
    from dptopic.kernels import numba_cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    unwritable = "/dev/null/x"      # not a folder: nothing can be made under it, even by root
    folder = numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})
    assert folder == str(tmp_path / f"dptopic-numba-{os.getuid()}")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={}) == folder     # reused next time
    # a folder of that name others can reach is not used: a fresh private one instead
    os.chmod(folder, 0o755)
    other = numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})
    assert other != folder and stat.S_IMODE(os.stat(other).st_mode) == 0o700
    # numba can cache as it is: nothing to do (and the user's own NUMBA_CACHE_DIR is kept)
    assert numba_cache_dir(str(tmp_path), lambda: "/dev/null/cache", environ={}) is None
    assert numba_cache_dir(unwritable, lambda: str(tmp_path / "user"), environ={}) is None
    assert numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={"NUMBA_CACHE_DIR": "/x"}) is None

    def no_home():
        raise KeyError("HOME")

    no_home_folder = numba_cache_dir(unwritable, no_home, environ={})     # no home folder: as if not writable
    assert no_home_folder is not None and stat.S_IMODE(os.stat(no_home_folder).st_mode) == 0o700
    monkeypatch.setattr(tempfile, "tempdir", "/dev/null/tmp")
    with pytest.raises(DPTopicError, match="NUMBA_CACHE_DIR"):
        numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})


SIMULATED = """
import os, sys, tempfile
root = os.environ["TMPDIR"]
real = tempfile.TemporaryFile
def refuse(*a, dir=None, **kw):     # every folder but the temporary one read-only, as for a service account
    if dir is not None and not os.path.abspath(dir).startswith(root):
        raise PermissionError(13, "Permission denied", dir)
    return real(*a, dir=dir, **kw)
tempfile.TemporaryFile = refuse
import numpy as np
from dptopic.kernels import count_assignments
ndk, nwk, nk = count_assignments(np.array([0, 1], np.int32), np.array([0, 2], np.int64), np.array([0, 1], np.int32),
                                 2, 2)
print(nk.tolist(), os.environ["NUMBA_CACHE_DIR"])
"""


def test_kernels_import_when_neither_the_package_nor_home_can_cache(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "HOME")}
    env.update(TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, "-c", SIMULATED], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    counts, folder = r.stdout.strip().rsplit(" ", 1)
    assert counts == "[1, 1]" and folder.startswith(str(tmp_path))
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700 and os.listdir(folder)     # it cached there


# ---------------------------------------------------------------- finding 12: FedLDA's not covered
def test_fedlda_scope_does_not_read_as_a_cost_beyond_the_per_user_figure():
    from dptopic.models.fedlda import coverage

    scope = coverage("mixture", "none")["scope"]
    card = privacy_card({"private": True, "unit": "user", "neighbouring_relation": "r", "theorem": "t",
                         "delta": 1e-5, "epsilon": 2560.0, "epsilon_basic": 2560.0, "scope": scope,
                         "vocabulary_source": "supplied"}, "FedLDA")
    assert "pays" not in scope and "beyond the per-entry composition" not in scope
    assert "already the whole user's" in card["covered"] and "no further cost" in card["covered"]
    assert card["not_covered"].startswith("NOT covered: reports randomized again")
    doc = (ROOT / "docs" / "research" / "fedlda.md").read_text()
    assert "a user changing all its\ntext pays" not in doc and "no further cost" in doc


def test_an_earlier_audit_json_is_shown_as_an_audit_of_the_procedure():
    # written before this wording: "attacked: the saved model m_doc (...)"; the page rebuilds it from the record
    audit = {"attacks": {"lira_online": {"auc": 0.5}}, "claimed_privacy": {},
             "settings": {"n_shadows": 4, "attacked": "the saved model m_doc (DocDPCooccurrence, sha256:08b1…)",
                          "audited": {"what": "saved model", "model": "m_doc", "class": "DocDPCooccurrence",
                                      "fingerprint": "sha256:08b1b12e209f", "params": {"n_topics": 20}},
                          "corpus": {"spec": "demo", "read": "into the model's vocabulary"}}}
    html = render_report(title="t", trainer="DocDPEM", card=_card(), topics=[[("tax", 0.5)]], audit=audit)
    row = re.search(r"<tr><th>what was audited</th><td>(.*?)</td></tr>", html).group(1)
    assert row.startswith("the training procedure of the saved model m_doc") and "4 shadow models" in row
    assert "not scored" in row


def test_edited_text_claims_of_a_saved_report_are_refused(tmp_path):
    # walk C, finding 1: guarantee/vocabulary_source/secure_noise edited in model.json went onto the card as stored
    import json as _json
    import warnings as _warnings

    import numpy as np

    import dptopic
    from dptopic.errors import CorruptModelError

    X = np.random.default_rng(0).poisson(1.0, size=(60, 12))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, seed=0).fit(X).save(tmp_path / "m")   # data vocabulary
    meta = _json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["privacy"]["vocabulary_source"] == "data" and meta["privacy"]["guarantee"] == "partial"
    edits = {"full, supplied": lambda p: p.update(guarantee="full", vocabulary_source="supplied"),
             "full": lambda p: p.update(guarantee="full"),
             "private source": lambda p: p.update(vocabulary_source="private"),
             "odd source": lambda p: p.update(vocabulary_source="public"),
             "secure": lambda p: p.update(secure_noise=True)}
    for name, edit in edits.items():
        bad = _json.loads(_json.dumps(meta))
        edit(bad["privacy"])
        (tmp_path / "m" / "model.json").write_text(_json.dumps(bad))
        with pytest.raises(CorruptModelError, match="the file was edited|vocabulary source"):
            dptopic.load(tmp_path / "m")
    (tmp_path / "m" / "model.json").write_text(_json.dumps(meta))
    dptopic.load(tmp_path / "m")                                   # as saved: loads


def test_a_model_out_that_holds_another_commands_results_does_not_say_dptopic_did_not_write_them(tmp_path):
    # walk C, finding 11: an audit's folder given to train was said to hold files "which dptopic did not write"
    from dptopic._io import check_output_dir
    from dptopic.errors import DPTopicError

    d = tmp_path / "X"
    d.mkdir()
    (d / ".dptopic-output").write_text("{}")
    (d / "audit.json").write_text("{}")
    with pytest.raises(DPTopicError) as e:
        check_output_dir(d, overwrite=True)
    assert "did not write" not in str(e.value) and "another dptopic command's output folder" in str(e.value)
    (d / ".dptopic-output").unlink()
    with pytest.raises(DPTopicError, match="which dptopic did not write"):
        check_output_dir(d, overwrite=True)


def test_a_private_vocabularys_card_labels_the_added_figures_as_theorem_4_1_and_names_the_every_event_pld():
    # walk C, finding 9: "tight PLD" labelled eps_V + the trainer's PLD (1.5), above the claimed every-event PLD
    from dptopic.accounting.card import _figures

    rep = {"vocabulary_selection": {"epsilon": 0.5}, "topic_model": {"delta": 1e-5}, "delta": 1.1e-5,
           "epsilon_pld": 1.5, "epsilon_pld_tight": 1.469, "epsilon_rdp": 1.6, "epsilon_basic": 1.5}
    f = _figures(rep)
    assert "Thm 4.1" in f["epsilon_pld"]["what"] and not f["epsilon_pld"]["what"].startswith("tight")
    assert "every event" in f["epsilon_pld_tight"]["what"] and "Thm 4.1" in f["epsilon_rdp"]["what"]
    plain = _figures({"delta": 1e-5, "epsilon_pld": 1.0})
    assert plain["epsilon_pld"]["what"].startswith("tight")


def test_a_report_without_a_reference_still_shows_topic_diversity(tmp_path):
    # walk C, finding 7: diversity reads only the released topics, yet the page asked for --reference to show it
    import numpy as np

    import dptopic
    from dptopic.cli.main import main

    X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X, vocabulary=[f"w{i}" for i in range(12)]).save(
        tmp_path / "m")
    assert main(["report", str(tmp_path / "m"), "--out", str(tmp_path / "r.html")]) in (0, None)
    page = (tmp_path / "r.html").read_text()
    assert "topic diversity (top 25)" in page and "No evaluation was given" not in page
