"""What ``dptopic export`` writes, computed in the library (``reporting/export.py``)."""
import argparse
import html as html_text
import json
import os
import re
import stat
import warnings

import numpy as np
import pytest

import dptopic
from conftest import TWO_TOPIC_TEXTS as TRAIN
from dptopic.accounting.card import privacy_card
from dptopic.cli.main import build_parser, main
from dptopic.corpus import Corpus, Vocabulary
from dptopic.reporting.export import kept_words, pyldavis_data, spread_summary
from dptopic.reporting.html import render_report
from helpers import run_dptopic


class _Model:
    """A fitted model as the export reads it: topics over 4 words, proportions from ``transform``."""

    def __init__(self, components):
        self.components_ = np.asarray(components, dtype=np.float64)
        self.vocabulary_ = Vocabulary(["a", "b", "c", "d"])

    def transform(self, docs):
        return np.tile([0.25, 0.75], (docs.n_docs, 1))


def _docs():   # documents [a a b], [d], [c b]
    return Corpus(np.array([0, 3, 4, 6]), np.array([0, 0, 1, 3, 2, 1]), Vocabulary(["a", "b", "c", "d"]))


def test_pyldavis_data_by_hand():
    m = _Model([[2, 1, 1, 0], [0, 1, 1, 2]])
    d = pyldavis_data(m, _docs())
    assert np.allclose(d["topic_term_dists"], [[0.5, 0.25, 0.25, 0], [0, 0.25, 0.25, 0.5]])
    assert d["doc_lengths"] == [3, 1, 2] and d["term_frequency"] == [2, 2, 1, 1] and d["vocab"] == ["a", "b", "c", "d"]
    # only words a and d: each topic renormalised over them, lengths and frequencies count their tokens only
    w = pyldavis_data(m, _docs(), words=np.array([0, 3]))
    assert np.allclose(w["topic_term_dists"], [[1, 0], [0, 1]])
    assert w["doc_lengths"] == [2, 1, 0] and w["term_frequency"] == [2, 1] and w["vocab"] == ["a", "d"]
    # only topic 1: each document's proportions renormalised over it
    t = pyldavis_data(m, _docs(), topics=[1])
    assert np.allclose(t["doc_topic_dists"], 1.0) and len(t["topic_term_dists"]) == 1


def test_spread_summary_and_kept_words_of_another_model():
    m = _Model([[4, 2, 1, 1], [1, 1, 2, 4]])
    s = spread_summary(m, np.array([0, 3]))
    assert s["kept_words"] == 2 and s["vocabulary_words"] == 4
    assert s["weight_outside_kept_words"] == round(1 - (5 / 8 + 5 / 8) / 2, 4)
    assert s["weight_on_top_10_words"] == 1.0           # 4 words: all of the weight
    assert kept_words(m) is None                         # not a document-level trainer


def test_the_export_is_refused_in_the_callers_names_before_it_is_built(tmp_path):
    import pytest

    from dptopic.errors import ParameterError
    from dptopic.reporting.export import check_export_out, pyldavis_export

    class _Plain(_Model):
        privacy_ = {"private": False}

    with pytest.raises(ParameterError) as e:
        pyldavis_export(_Plain([[1, 1, 1, 1], [1, 2, 3, 4]]), _docs(), kept_words_only=True, source="m")
    assert e.value.parameter == "kept_words_only" and "the model is _Plain" in str(e.value)
    assert "--model 'm' is _Plain, which estimates every word: drop --kept-words-only." in e.value.message(
        {"kept_words_only": "--kept-words-only", "model": "--model"})
    with pytest.raises(ParameterError) as e:
        check_export_out(tmp_path / "x.txt")
    assert e.value.message({"out": "--out"}) == f"--out {str(tmp_path / 'x.txt')!r} must end in .json: the export is one JSON file."
    assert check_export_out(tmp_path / "x.json") == tmp_path / "x.json"


def test_the_topics_table_and_document_of_a_fitted_model(tmp_path):
    import json

    import dptopic
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.reporting.export import privacy_card_line, topics_csv, topics_document

    model = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
        lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus)
    doc = topics_document(model, 3, tmp_path / "m")
    assert doc["model"] == str(tmp_path / "m") and doc["class"] == "LDA" and len(doc["topics"]) == 2
    assert len(doc["topics"][0]["words"]) == 3 and "support" not in doc and doc["privacy_card"]["guarantee"] == "none"
    json.dumps(doc)
    table, notes = topics_csv(model, 3, "a b")
    assert table.splitlines()[0] == "topic,rank,word,weight" and len(table.splitlines()) == 7
    assert notes == [f"{privacy_card_line(model, 'a b')}; words {doc['words'].split(';')[0]} (weight: P(word | topic))"]
    assert "--" not in notes[0] and "privacy_ of the model saved at 'a b'" in notes[0]      # Python's names
    flags = {"model": "--model", "format": "--format"}                 # the command line's
    notes = topics_csv(model, 3, "a b", names=flags)[1]
    assert notes[0].startswith(privacy_card_line(model, "a b", flags))
    assert "'dptopic topics --model '\"'\"'a b'\"'\"''" not in notes[0] and "--model 'a b'" in notes[0]


def test_topics_and_the_pyldavis_export_mark_the_words_the_release_never_estimated(tmp_path):
    import json
    import warnings

    import dptopic
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.reporting.export import UNESTIMATED, pyldavis_export, topics_document

    c = lda_corpus(n_docs=600, vocab_size=1000, n_topics=3, doc_length=40, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, unit="user", seed=0).fit(
            c, user_ids=[str(i // 5) for i in range(600)])
        doc = pyldavis_export(m, c, show_unsupported=True)
    mask = m.estimated_words()
    estimated = mask.any(axis=0)
    assert all(v.endswith(UNESTIMATED) != bool(estimated[i]) for i, v in enumerate(doc["vocab"]))
    assert doc["estimated_words"]["estimated"] == int(estimated.sum())
    shown = topics_document(m, 10, tmp_path, show_unsupported=True)
    assert "only the words its release estimated" in shown["words"]
    words = list(m.vocabulary_.words)
    assert all(mask[t["topic"], words.index(w)] for t in shown["topics"] for w in t["words"])
    json.dumps(doc)


def test_the_models_that_keep_words_are_the_document_level_trainers_under_a_name_of_their_own():
    """``DOCUMENT_LEVEL`` meant registry names in training/ and class names here: one name, one meaning."""
    from dptopic.models.registry import TRAINERS
    from dptopic.reporting import export
    from dptopic.training.build import DOCUMENT_LEVEL

    assert not hasattr(export, "DOCUMENT_LEVEL")
    assert set(export.KEPT_WORDS_ESTIMATORS) == {TRAINERS[n].class_name for n in DOCUMENT_LEVEL}


def test_a_refused_table_path_names_the_parameter_not_the_flag(tmp_path):
    """check_theta_out told a Python caller to choose "another --out": it names ``out``, which the command line
    writes as --out."""
    from dptopic.cli._flags import OUTPUT_FLAGS, flag_message
    from dptopic.errors import ParameterError
    from dptopic.reporting.export import check_theta_out

    (tmp_path / "mine.npy").write_bytes(b"\x93NUMPY")
    for path, overwrite in ((tmp_path / "t.txt", False), (tmp_path / "mine.npy", True)):
        with pytest.raises(ParameterError) as e:
            check_theta_out(path, overwrite)
        assert e.value.parameter == "out" and "--" not in str(e.value) and str(e.value).startswith("out '"), e.value
        assert flag_message(e.value, OUTPUT_FLAGS).startswith("--out '")


# --------------------------------------------------------------------------------------------------------------
# What a walk-through of `dptopic report`, the privacy card, `export` and the commands' help found, pinned.
def _cli(*args):
    return run_dptopic(*args)


def _fit(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeds, a vocabulary from the data, refits: what these tests look at
        return model.fit(corpus, **kw)


def _commands(parser, path=()):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


COMMANDS = list(_commands(build_parser()))


def test_the_command_tree_is_walked():
    assert ("audit",) in COMMANDS and ("privacy", "verify") in COMMANDS and len(COMMANDS) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "dptopic")
def test_every_command_and_subcommand_prints_its_help(path, capsys):
    # a '%' in a help text that argparse reads as a format ('10% of' in audit --restrict) was a TypeError
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    out = capsys.readouterr()
    assert done.value.code == 0 and "usage: dptopic" in out.out and "Traceback" not in out.err


# ---------------------------------------------------------------- the card
def test_a_seeded_fit_says_on_the_card_and_the_page_that_its_noise_is_reproducible(planted, tmp_path):
    words = planted.corpus.vocabulary.words
    m = _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, seed=7, verbose=0),
             planted.corpus, vocabulary=words)
    assert m.privacy_["noise_reproducible"] is True
    card = privacy_card(m.privacy_, "HDPLDA")
    assert card["noise_reproducible"] is True and "seed" in card["seed_warning"]
    html = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    badge = re.search(r'<div class="badge (\w+)">(.*?)</div>', html)
    assert badge.group(1) != "full" and "seed stays secret" in badge.group(2)   # not a clean guarantee
    assert "Noise reproducible" in html
    m.save(tmp_path / "m")      # the card saved in model.json (and `topics --format json`) carries it too
    assert json.loads((tmp_path / "m" / "model.json").read_text())["privacy_card"]["noise_reproducible"] is True
    unseeded = _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
                    planted.corpus, vocabulary=words)
    card = privacy_card(unseeded.privacy_, "HDPLDA")
    assert "noise_reproducible" not in card
    page = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    # unseeded, but a word-level epsilon: never the green box, which is kept for a strong per-document (or larger)
    # guarantee; the badge says what a whole document gets
    badge = re.search(r'<div class="badge (\w+)">(.*?)</div>', page)
    assert badge.group(1) == "weak" and "per word only" in badge.group(2) and "seed" not in badge.group(2)


PURE_USER_REPORT = {"private": True, "unit": "user", "neighbouring_relation": "one user's reports", "theorem": "t",
                    "delta": 1e-5, "epsilon_basic": 2560.0, "epsilon_pld": 2560.0, "epsilon_rdp": 2560.0,
                    "epsilon": 2560.0, "epsilon_method": "basic composition (pure epsilon-DP: holds with delta = 0 too)",
                    "epsilon_nominal": 5.0, "epsilon_per_entry": 5.0, "guarantee": "partial", "scope": "covers it."}


def _figure_rows(html):
    table = html.split("Composition figures side by side")[1].split("</table>")[0]
    return {html_text.unescape(re.sub("<.*?>", "", what)): (eps, delta) for what, eps, delta in
            re.findall(r"<tr><td>(.*?)</td><td class='num'>(.*?)</td><td class='num'>(.*?)</td></tr>", table)}


def test_each_composition_figure_shows_its_own_delta_never_the_headlines():
    card = privacy_card(PURE_USER_REPORT, "FedLDA", check=False)
    assert card["delta"] == 0.0      # the headline is pure
    rows = _figure_rows(render_report(title="t", trainer="FedLDA", card=card, topics=[[("tax", 0.5)]]))
    assert rows["tight: privacy loss distributions (PLD)"] == ("2560", "1e-05")     # computed at 1e-05, not 0
    assert rows["cross-check: Renyi DP"] == ("2560", "1e-05")
    assert rows["basic sequential composition"] == ("2560", "0")
    per_entry = next(k for k in rows if "per reported entry" in k)
    assert rows[per_entry] == ("5", "—") and "not per user" in per_entry   # 5 is per entry, at no delta of its own
    # under an approximate headline the nominal claim does not borrow its delta either
    cdp = {k: v for k, v in PURE_USER_REPORT.items() if k != "epsilon_per_entry"}
    card = privacy_card(dict(cdp, epsilon_method="PLD", epsilon=2559.0), "CDPLDA", check=False)
    rows = _figure_rows(render_report(title="t", trainer="CDPLDA", card=card, topics=[[("tax", 0.5)]]))
    assert rows["the paper's nominal claim (not proven)"] == ("5", "—")


def test_fedlda_trust_model_says_it_was_a_simulation_and_which_randomizer(planted):
    c = planted.corpus
    none = _fit(dptopic.FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, verbose=0), c)
    floor = _fit(dptopic.FedLDA(n_topics=2, epsilon_per_entry=3.0, rounds=1, pad_length=16, n_clients=4, exclusion="floor",
                                verbose=0), c)
    a, b = privacy_card(none.privacy_, "FedLDA")["trust_model"], privacy_card(floor.privacy_, "FedLDA")["trust_model"]
    for t in (a, b):
        assert "simulated" in t and "one process" in t and "simulation generator" in t
        assert not t.startswith("federated with local DP: each client perturbs")
    assert "subset selection" in a and "RRP" not in a       # exclusion="none" is subset selection
    assert "RRP word replacement" in b


def test_the_card_shows_the_figures_the_docs_promise(planted):
    c = planted.corpus
    cdp = privacy_card(_fit(dptopic.CDPLDAPlus(n_topics=3, n_iter=3, paper_epsilon=1.0, verbose=0), c).privacy_, "CDPLDAPlus")
    part = cdp["figures"]["count_release_epsilon"]
    assert part["epsilon"] == pytest.approx(5.9999, abs=1e-3) and part["delta"] == 1e-5 and "NOT the model" in part["what"]
    assert cdp["figures"]["epsilon_nominal"]["epsilon"] == 3.0 and "not proven" in cdp["figures"]["epsilon_nominal"]["what"]
    svi = _fit(dptopic.DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.02, verbose=0), c)
    card = privacy_card(svi.privacy_, "DPSVI")
    for key in ("epsilon_moments_accountant_paper", "epsilon_moments_accountant", "epsilon_strong_composition"):
        assert card["figures"][key]["epsilon"] == pytest.approx(svi.privacy_[key])
        assert card["figures"][key]["delta"] == svi.privacy_["delta"] and "not the guarantee" in card["figures"][key]["what"]
    assert card["figures_note"] == svi.privacy_["paper_figures_note"]
    assert card["fits"].startswith("this report covers this fit alone")
    html = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]])
    assert "covers this fit alone" in html and "moments accountant" in html
    local = {"private": True, "unit": "document (local DP)", "delta": 1e-5, "epsilon_basic": 180.0, "epsilon_pld": 180.0,
             "epsilon_rdp": 180.0, "epsilon": 180.0, "epsilon_method": "PLD", "epsilon_word": 3.0,
             "epsilon_word_relation": "two documents that differ in the presence of one vocabulary word"}
    word = privacy_card(local, "LPLDA", check=False)["figures"]["epsilon_word"]
    assert word["epsilon"] == 3.0 and word["delta"] == 0.0 and "presence of one vocabulary word" in word["what"]


def test_a_private_vocabularys_card_marks_the_trainers_own_figures_as_the_topic_model_alone(planted):
    # (review, 2026-11-24) DP-SVI's moments-accountant figure, without epsilon_V, stood beside the composed guarantee
    # at the composed delta, below the headline as if it covered the whole release
    from dptopic.training.fdptm import fit_fdptm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svi, _ = fit_fdptm(dptopic.DPSVI(n_topics=3, noise_multiplier=2.0, sampling_rate=0.02, verbose=0),
                           planted.corpus, 1.0, 1e-6)
    rep = svi.privacy_
    figures = privacy_card(rep, "DPSVI")["figures"]
    own = figures["epsilon_moments_accountant"]
    assert "topic model ALONE" in own["what"] and own["delta"] == rep["topic_model"]["delta"] != rep["delta"]
    assert "ALONE" not in figures["epsilon_pld"]["what"] and figures["epsilon_pld"]["delta"] == rep["delta"]


def test_no_guarantee_names_no_unit_and_no_noise():
    card = privacy_card({"private": False, "epsilon": float("inf"), "unit": "word", "neighbouring_relation": "word-level",
                         "reason": "plain CGS"}, "LDA")
    assert card["privacy_unit"] is None and card["neighbouring_relation"] is None
    html = render_report(title="t", trainer="LDA", card=card, topics=[[("tax", 0.5)]])
    assert "<th>privacy unit</th><td>none: no differential privacy guarantee</td>" in html
    assert "noise: None" not in html and "noise: none added" in html and "word-level" not in html


def test_an_epsilon_shown_is_never_rounded_down():
    card = privacy_card({"private": True, "unit": "document", "delta": 1e-5, "epsilon_pld": 0.99994, "epsilon_rdp": 1.2,
                         "epsilon_basic": 40.0, "scope": "covers it."}, "DPSVI", check=False)
    html = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]])
    assert "0.9999" not in html.split('<h2 id="card-json">')[0]      # the card's JSON keeps the exact figure
    assert "ε = 1, δ = 1e-05 per document" in html
    from dptopic.accounting.card import epsilon_text

    assert (epsilon_text(0.99994), epsilon_text(599.9), epsilon_text(17.38721), epsilon_text(2560.0)) == \
        ("1", "599.9", "17.39", "2560")
    # the terminal's privacy table and the verification's detail round up too (they printed 0.9999 and 2089.15)
    from dptopic.accounting.verify import rounded_up
    from dptopic.reporting.terminal import epsilon_cell as _g

    assert (_g(0.99994), _g(2089.156), _g(float("inf")), _g("edited")) == ("1", "2090", "inf", "edited")
    assert rounded_up(2089.1551, 6) == 2089.16
    # a delta shown is never below the one proven either: delta_T + delta_V = 1.0333e-5 read 1.03e-05
    card = privacy_card({"private": True, "unit": "document", "delta": 1.0333e-5, "epsilon_pld": 1.5,
                         "epsilon_basic": 3.0, "scope": "covers it."}, "DPSVI", check=False)
    page = render_report(title="t", trainer="DPSVI", card=card, topics=[[("tax", 0.5)]]).split('<h2 id="card-json">')[0]
    assert "1.04e-05" in page and "1.03e-05" not in page


def test_the_embedded_card_json_keeps_non_ascii_text_readable_and_escaped():
    card = privacy_card({"private": True, "unit": "word", "delta": 1e-5, "epsilon_pld": 2.0, "epsilon_basic": 2.0,
                         "scope": "covers straße </pre><script>x</script>."}, "HDPLDA", check=False)
    html = render_report(title="t", trainer="HDPLDA", card=card, topics=[[("tax", 0.5)]])
    embedded = re.search(r"<pre>(.*?)</pre>", html, re.S).group(1)
    assert "straße" in embedded and "\\u00df" not in embedded
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;" in embedded


# ---------------------------------------------------------------- the page
def test_a_long_word_is_cut_visibly_at_its_end_and_shown_whole_in_a_tooltip():
    long = "internationalization"
    html = render_report(title="t", trainer="LDA", card=privacy_card({}, "LDA"),
                         topics=[[(long, 0.3), ("tax", 0.1)]])
    labels = re.findall(r"<text [^>]*><title>(.*?)</title>(.*?)</text>", html)
    assert (long, "international…") in labels and ("tax", "tax") in labels
    shown = dict(labels)[long]
    assert long.startswith(shown[:-1]) and len(shown) <= 14      # its start, never its end
    assert 'text-anchor="end"' not in html.split('<div class="topics">')[1]


def test_the_audit_section_lists_its_bound_and_settings_one_per_line():
    emp = {"epsilon_lower_bound": 0.12345, "relation": "replace_one", "confidence": 0.95, "delta": 1e-5,
           "threshold": 1.5, "n_members": 100, "n_nonmembers": 100, "method": "Clopper-Pearson", "attack": "lira_online"}
    audit = {"attacks": {"lira_online": {"auc": 0.51}}, "empirical_epsilon": emp,
             "claimed_privacy": {"private": True, "epsilon": 2.0, "delta": 1e-5, "unit": "word"},
             "metrics_guarantee": "outside the guarantee: computed from documents of the private corpus",
             "settings": {"n_shadows": 64, "n_docs": 300, "trainer": "HDPLDA(n_topics=3)", "seed": None}}
    html = render_report(title="t", trainer="HDPLDA", card=privacy_card({}, "LDA"), topics=[[("tax", 0.5)]], audit=audit)
    section = html.split("<h2 id='audit'>")[1]
    assert "<b>0.123</b>" in section                    # a lower bound, rounded down
    assert "relation: replace_one, confidence" not in section and "confidence (see the note): 0.95" in section
    assert "Audit settings" in section and "<th>n shadows</th><td>64</td>" in section
    assert section.index("outside the guarantee") < section.index("empirical ε lower bound")


# ---------------------------------------------------------------- the command line


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("walk")
    corpus = dptopic.Corpus.from_texts(TRAIN)
    _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
         corpus).save(d / "data")                                                  # its vocabulary from the data
    _fit(dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=2, verbose=0),
         corpus, vocabulary=corpus.vocabulary.words).save(d / "public")
    docs = d / "docs.txt"
    docs.write_text("apple banana cherry\nriver valley mountain\n")
    return d, docs


def test_export_says_what_the_models_own_report_covers(tmp_path, saved):
    d, docs = saved
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "data"), "--corpus", str(docs), "--out",
             str(tmp_path / "a.json"))
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "a.json").read_text())
    assert "topic_term_dists and vocab are released under" not in v["privacy_note"]
    assert "vocab is NOT covered" in v["privacy_note"] and "PARTIAL" in v["privacy_note"]
    assert "vocab is NOT covered" in r.stderr
    p = v["privacy"]       # passed on alone, the file says what it is
    assert p["guarantee"] == "partial" and p["privacy_unit"] == "word" and p["delta"] == 1e-5 and p["epsilon"] > 0
    assert p["vocabulary_source"] == "data"
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "public"), "--corpus", str(docs), "--out",
             str(tmp_path / "b.json"))
    v = json.loads((tmp_path / "b.json").read_text())
    assert r.returncode == 0 and v["privacy"]["guarantee"] == "full"
    assert v["privacy_note"].startswith("topic_term_dists and vocab are released under the model's privacy guarantee")
    assert "NOT covered by the model's privacy report" in v["privacy_note"]    # the --corpus figures


def test_a_report_with_an_audit_is_owner_only_and_a_match_is_labelled(tmp_path, saved):
    from dptopic import load
    from dptopic.attacks.lira import claimed_epsilon

    d, _ = saved
    model = d / "public"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "audit.json").write_text(json.dumps({"attacks": {"lira_online": {"auc": 0.5}},
                                                           "claimed_privacy": claimed_epsilon(load(model).privacy_)}))
    old = os.umask(0o022)
    try:
        r = _cli("report", "--model", str(model), "--out", str(tmp_path / "r.html"), "--audit", str(tmp_path / "a"))
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(os.stat(tmp_path / "r.html").st_mode) == 0o600
        assert "readable by you only" in " ".join(r.stdout.split())
        r = _cli("report", "--model", str(model), "--out", str(tmp_path / "m.html"), "--compare-to", str(d / "data"))
        assert r.returncode == 0, r.stderr
    finally:
        os.umask(old)
    key = re.search(r"<th>(match to the topics of [^<]*)</th>", (tmp_path / "m.html").read_text()).group(1)
    assert "outside the guarantee" in key
