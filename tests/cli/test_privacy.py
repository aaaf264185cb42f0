"""The privacy calculators (``dptopic privacy``) and what they print: the re-used-documents fingerprint, the
local trainer's clone and pickling messages, the estimator checks' claims, ``dptopic recommend`` and the privacy
calculators' input checks and help."""
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main
import os
import subprocess
import sys
from pathlib import Path
import json
from dptopic.accounting.verify import recompute_report, verify_report
from dptopic.errors import CorruptModelError
import contextlib
import io
from hypothesis import HealthCheck, given, settings, strategies as st
from dptopic.corpus import lda_corpus
from dptopic.models import FedLDA

def _error(capsys, *argv) -> str:
    """The one line a refused command prints: exit 2 (argparse's refusals exit, the others return 2), nothing on
    stdout."""
    try:
        code = main([str(v) for v in argv])
    except SystemExit as e:
        code = e.code
    assert code == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert out == "" and len(lines) == 1 and lines[0].startswith("error: "), (out, err)
    return lines[0]


def _out(capsys, *argv) -> str:
    assert main([str(v) for v in argv]) in (0, None)
    return " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------- findings 6-9, 11: the privacy calculators
@pytest.mark.parametrize("extra", [["--epsilon", "100", "--iterations", "50"], ["--epsilon-laplace", "1e300"],
                                   ["--epsilon-laplace", "500", "--iterations", "1000000000"]])
def test_privacy_hdp_prints_nothing_before_an_error(capsys, extra):
    _error(capsys, "privacy", "hdp", "--epsilon-inherent", "10", *extra)


def test_privacy_compose_unit_is_checked_and_printed(capsys):
    assert "invalid choice: 'banana'" in _error(capsys, "privacy", "compose", "--laplace", "1", "10", "--unit", "banana")
    assert _out(capsys, "privacy", "compose", "--laplace", "1", "10", "--unit", "document").startswith("per document:")


def test_calculator_wording_plural_and_small_clip(capsys):
    out = _out(capsys, "privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1000", "--users", "1",
               "--entries", "1")
    assert "1 user x 1 entry:" in out
    out = _out(capsys, "privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1000", "--users", "3")
    assert "3 users x 512 entries:" in out
    out = _out(capsys, "privacy", "hdp", "--epsilon-inherent", "1e-300")
    assert "warning: a clip C = 5e-301 under one token" in out
    assert "warning" not in _out(capsys, "privacy", "hdp", "--epsilon-inherent", "10")


def test_calculator_help_names_defaults_ranges_and_the_noise(capsys):
    for argv, phrases in ((["privacy", "hdp"], ["discrete Laplace", "default 1e-5", "at most 1e7", "(0, 500]",
                                                "clip bound C"]),
                          (["privacy", "inherent"], ["default 0.01"]),
                          (["privacy", "compose"], ["default 1e-5", "default word"])):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for p in phrases:
            assert p in text, (argv, p)


def test_a_negative_number_in_exponent_form_reaches_the_range_check(capsys):
    line = _error(capsys, "privacy", "compose", "--laplace", "1", "10", "--delta", "-1e-5")
    assert "must lie in (0, 1), got -1e-5" in line


def test_a_non_private_models_topics_copied_into_a_private_folder_are_refused(tmp_path, capsys):
    # walk C, finding 2: components.npy was not tied to model.json; a swapped file loaded, and verified, under the
    # private model's card
    import shutil

    import numpy as np

    from dptopic.cli.main import main
    from dptopic.errors import CorruptModelError

    X = np.random.default_rng(0).poisson(1.0, size=(60, 12))
    words = [f"w{i}" for i in range(12)]
    dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(X, vocabulary=words).save(tmp_path / "plain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, seed=0).fit(X, vocabulary=words).save(tmp_path / "priv")
    assert main(["privacy", "verify", str(tmp_path / "priv")]) in (0, None)
    capsys.readouterr()
    shutil.copy(tmp_path / "plain" / "components.npy", tmp_path / "priv" / "components.npy")
    with pytest.raises(CorruptModelError, match="components.npy is not the file this model.json was saved with"):
        dptopic.load(tmp_path / "priv")
    assert main(["privacy", "verify", str(tmp_path / "priv")]) == 2
    err = capsys.readouterr().err
    assert "components.npy" in err and "does not describe the topics" in err and len(err.strip().splitlines()) == 1


SRC = str(Path(__file__).resolve().parents[2] / "src")


def _cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# ----------------------------------------------------------------- 5: privacy fed-report-words --epsilon
@pytest.mark.parametrize("eps", ["1e-300", "1e-10", "700", "1e300", "nan", "inf", "0"])
def test_fed_report_words_epsilon_range(eps):
    _one_line_error(_cli("privacy", "fed-report-words", "--epsilon-per-entry", eps, "--vocab-size", 10, "--users", 5),
                    "epsilon")


def test_fed_report_words_still_answers():
    r = _cli("privacy", "fed-report-words", "--epsilon-per-entry", 5, "--vocab-size", 1000, "--users", 100)
    assert r.returncode == 0 and "--report-words" in r.stdout, r.stderr


# ----------------------------------------------------------------- 7: privacy compose too long to compute
def test_compose_too_large_to_compute():
    _one_line_error(_cli("privacy", "compose", "--laplace", 500, 10000000), "too large to compute")


SRC_2 = str(Path(__file__).resolve().parents[2] / "src")


def _cli_2(*args):
    env = dict(os.environ, PYTHONPATH=SRC_2 + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=180)


@pytest.fixture(scope="module")
def corpus():
    return dptopic.lda_corpus(n_docs=300, vocab_size=60, n_topics=4, seed=0).corpus


def _trainers(corpus):
    from dptopic.local import Randomizer
    from dptopic.models.fdptm import fit_fdptm

    reports = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3).randomize(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield dptopic.HDPLDA(n_topics=4, n_iter=4, epsilon_laplace=1, verbose=0).fit(corpus)
        yield dptopic.DPSVI.from_budget(1, 1e-5, n_topics=4, verbose=0).fit(corpus)
        yield dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.DocDPEM(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, exclusion="tail", verbose=0).fit(corpus)
        yield dptopic.LPLDA(n_topics=4, n_iter=3, epsilon_word=3, verbose=0).fit(reports)
        yield fit_fdptm(dptopic.HDPLDA(n_topics=4, n_iter=3, epsilon_laplace=1, verbose=0), corpus, 0.5, 5e-6)[0]
        yield fit_fdptm(dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0), corpus, 0.5, 5e-6)[0]


@pytest.fixture(scope="module")
def models(corpus):
    return list(_trainers(corpus))


def _edited(rep, **changes):
    rep = json.loads(json.dumps(rep))
    rep.update(changes)
    return rep


def _recomputed_consistently(rep):
    """``rep`` with every figure recomputed from its (edited) events, as someone editing a report would."""
    new = recompute_report(rep)
    rep.update({k: v for k, v in new.items() if k in rep or k in ("epsilon", "delta")})
    return rep


def test_cli_verify(models, tmp_path):
    d = tmp_path / "m"
    models[0].save(d)
    r = _cli_2("privacy", "verify", d)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "verified:" in out and "epsilon_pld" in out
    r = _cli_2("report", "--model", d, "--out", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    assert "recomputed from the report's events: verified" in " ".join(r.stdout.split())
    report = tmp_path / "report.json"                         # a bare report (model.privacy_) as JSON
    report.write_text(json.dumps(_edited(models[0].privacy_, epsilon_pld=1.0)))
    r = _cli_2("privacy", "verify", report)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "does not match its own events" in lines[0]
    assert "BELOW" in r.stdout
    r = _cli_2("privacy", "verify", report, "--format", "json")
    assert r.returncode == 2 and json.loads(r.stdout)["status"] == "failed"
    r = _cli_2("privacy", "verify", d, "--format", "json")
    got = json.loads(r.stdout)
    assert r.returncode == 0 and got["status"] == "verified" and got["figures"]["epsilon_pld"]["recomputed"] > 0
    meta = json.loads((d / "model.json").read_text())
    meta["privacy_card"]["epsilon"] = 0.001                   # the card a reader of the file sees
    (tmp_path / "card.json").write_text(json.dumps(meta))
    r = _cli_2("privacy", "verify", tmp_path / "card.json")
    assert r.returncode == 2 and "privacy card saved in model.json" in r.stderr
    old = _edited(models[0].privacy_)
    del old["events"][0]["changes"]
    (tmp_path / "old.json").write_text("\ufeff" + json.dumps(old))     # a byte-order mark is read as text
    r = _cli_2("privacy", "verify", tmp_path / "old.json")
    assert r.returncode == 2 and "cannot be verified" in r.stderr and "Traceback" not in r.stderr
    for name, text in (("bad.json", "{bad"), ("empty.json", ""), ("lines.jsonl", '{"text": "a"}\n{"text": "b"}\n')):
        (tmp_path / name).write_text(text)
        r = _cli_2("privacy", "verify", tmp_path / name)
        assert r.returncode == 2 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = _cli_2("privacy", "verify", tmp_path / "missing")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "plain.json").write_text("[1, 2]")
    r = _cli_2("privacy", "verify", tmp_path / "plain.json")
    assert r.returncode == 2 and "holds no privacy report" in r.stderr


@pytest.mark.parametrize("i, what", [(0, "fewer iterations"), (1, "fewer steps"), (2, "more noise"), (3, "more noise"),
                                     (4, "fewer entries")])
def test_events_edited_with_their_figures_are_caught_by_the_plan(models, tmp_path, i, what):
    # an edit that recomputes every figure from the edited events passes the recomputation; the plan catches it
    m = models[i]
    rep = json.loads(json.dumps(m.privacy_))
    if what == "more noise":
        rep["events"][0]["noise_multiplier"] *= 1.5
    else:
        rep["events"][0]["count"] = max(1, rep["events"][0]["count"] // 2)
    rep = _recomputed_consistently(rep)
    assert verify_report(rep).status == "verified"
    d = tmp_path / "m"
    m.save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"] = rep
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="do not match the run its parameters describe"):
        dptopic.load(d)
    r = _cli_2("privacy", "verify", d)
    assert r.returncode == 2 and "parameters plan" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "differs" in r.stdout


@pytest.mark.parametrize("break_params", ["unknown class", "unknown parameter", "invalid parameters"])
def test_events_edited_with_their_figures_fail_verify_when_the_parameters_cannot_be_planned(models, tmp_path,
                                                                                             break_params):
    # with the trainer's parameters made unusable, the plan was skipped and `privacy verify` said "verified" (exit 0)
    # on events edited down with their figures
    m = models[0]                                              # HDP-LDA
    rep = json.loads(json.dumps(m.privacy_))
    rep["events"][0]["count"] = max(1, rep["events"][0]["count"] // 2)
    rep = _recomputed_consistently(rep)
    d = tmp_path / "m"
    m.save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"] = rep
    meta.pop("privacy_card", None)
    if break_params == "unknown class":
        meta["class"] = "Foo"
    elif break_params == "unknown parameter":
        meta["params"]["colour"] = "red"
    else:
        meta["params"]["n_iter"] = -3
    (d / "model.json").write_text(json.dumps(meta))
    r = _cli_2("privacy", "verify", d)
    assert r.returncode == 2 and "cannot be compared with what the trainer" in r.stderr, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


def test_a_run_over_its_budget_and_parameters_edited_down_are_caught(models, tmp_path):
    d = tmp_path / "m"
    models[3].save(d)                                          # DocDPEM at (1, 1e-5)
    meta = json.loads((d / "model.json").read_text())
    meta["params"]["epsilon"] = 0.5                            # the parameters claim a smaller budget than was spent
    (d / "model.json").write_text(json.dumps(meta))
    r = _cli_2("privacy", "verify", d, "--format", "json")
    got = json.loads(r.stdout)
    assert r.returncode == 2 and got["status"] == "failed"
    assert "asked for epsilon 0.5" in got["detail"] and got["figures"]["budget epsilon (requested)"]["verdict"] == "exceeds"
    d2 = tmp_path / "m2"
    models[0].save(d2)                                         # HDP-LDA, 4 iterations
    meta = json.loads((d2 / "model.json").read_text())
    meta["params"]["n_iter"] = 40
    (d2 / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="plan 40"):
        dptopic.load(d2)


FAST = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------ the CLI maps errors to exit 2
def run_cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse
            rc = e.code
    lines = err.getvalue().strip().splitlines()
    assert rc in (0, 2), (argv, rc, err.getvalue())
    if rc == 2:
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, lines)
    return rc


TOKENS = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-5", "0", "1e308", "1e-320", "abc", "", "2.5", "1", "10"]),
                   st.text(alphabet="0123456789.-e", max_size=5))


@FAST
@given(a=TOKENS, b=TOKENS, flag=st.sampled_from(["--laplace", "--pure"]), delta=TOKENS)
def test_cli_privacy_compose(a, b, flag, delta):
    run_cli(["privacy", "compose", flag, a, b, "--delta", delta])


@FAST
@given(v=TOKENS, flag=st.sampled_from(["--beta", "--clip", "--epsilon-inherent", "--epsilon", "--epsilon-laplace",
                                       "--iterations", "--delta"]))
def test_cli_privacy_hdp(v, flag):
    extra = [] if flag in ("--clip", "--epsilon-inherent") else ["--epsilon-inherent", "5"]
    run_cli(["privacy", "hdp", flag, v, *extra, "--iterations", "3"] if flag != "--iterations" else
            ["privacy", "hdp", "--epsilon-inherent", "5", flag, v])


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


def _flat(s: str) -> str:
    return " ".join(s.split())


def _letters(i: int) -> str:
    return "word" + "".join("abcdefghij"[int(d)] for d in str(i))


def _texts(n_docs, vocab_size, seed):
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(_letters(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def _fit(exclusion="none", **kw):
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(_texts(40, 30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FedLDA(n_topics=3, rounds=2, pad_length=kw.pop("pad_length_", 8), n_clients=10, exclusion=exclusion,
                      verbose=0, seed=0, **kw).fit(c)


# 8 ------------------------------------------------------------------------------------------------------------
def test_verify_on_no_guarantee_is_not_verified(tmp_path, capsys):
    from dptopic.accounting.ledger import claims_no_guarantee
    from dptopic.cli.privacy import NO_GUARANTEE_EXIT, _events_text

    assert _events_text({"events": [{"count": 256}]}) == "1 event repeated 256 times"
    m = _fit("tail", epsilon_per_entry=5.0, pad_length_=60)
    assert claims_no_guarantee(m.privacy_)      # 120 entries' own deltas add up past 1
    m.save(tmp_path / "t")
    assert main(["privacy", "verify", str(tmp_path / "t")]) == NO_GUARANTEE_EXIT == 3
    out = _flat(capsys.readouterr().out)
    assert "consistent, but NO (epsilon, delta) guarantee" in out and "verified:" not in out
    assert "1 event repeated 120 times" in out
