"""What the contributors' commands print of their summaries (``service/status.py``): epsilons rounded up, the
documents' total by basic composition, and whether the reports were kept."""
from dptopic.service.status import fed_client_lines, submit_lines


def _submitted(**kw):
    s = {"n_documents": 2, "state": None, "contributor": "c1", "already_acknowledged": 0, "reports": 4,
         "uploads": 1, "replayed_acks": 0, "vocab_size": 30, "epsilon_word": 1.0, "epsilon_doc": 3.0}
    return {**s, **kw}


def test_submit_lines_total_the_documents_epsilon_and_say_the_reports_were_not_kept():
    lines = submit_lines(_submitted(), "http://server")
    assert "reports not kept (--state none)" in lines[0]
    assert lines[1] == "4 randomized reports uploaded to http://server in 1 upload."
    assert "eps_word=2 for one word's presence in each and eps=6 for the documents" in lines[-1]
    assert "spent again by every run" in lines[-1]
    kept = submit_lines(_submitted(state="/s", already_acknowledged=4, reports=0), "http://server")
    assert "nothing was sent, nothing more spent." in kept[1] and len(kept) == 3
    assert "spent once however often" in kept[-1]


def test_fed_client_lines_name_the_rounds_and_whether_reports_were_reused():
    s = {"state": "/s", "reused_reports": True, "rounds": [1, 2], "client": "c", "epsilon_basic": 1.00001,
         "epsilon_pld": 0.5, "delta": 1e-5, "note": "a note"}
    took_part, note = fed_client_lines(s)
    assert took_part.startswith("took part in 2 round(s) as c; epsilon of your reports (this user): 1.001 basic")
    assert "reused the reports drawn before" in took_part and note == "a note"


def test_pull_says_which_model_it_wrote_and_what_reads_it():
    from dptopic.service.status import pull_line

    assert pull_line({"model_id": 3, "model_version": 7, "class": "OLPLDA", "out": "m"}) == (
        "model 3 (version 7, OLPLDA) written to m: read it with 'dptopic topics', 'evaluate' or 'report'")
    assert pull_line({"round": 2, "out": "f"}, fed=True).startswith("FedLDA model of round 2 written to f:")
