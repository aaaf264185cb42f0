"""benchmarks/bench_secure_sum.py's curves on a tiny setting: the per-person helpers, and every route's recovery
printed and drawn by number of people and dropout rate."""
import contextlib
import io

import pytest

from dptopic.corpus import Corpus


def test_largest_person_words_counts_present_words_over_all_a_persons_documents(bench):
    corpus = Corpus.from_tokens([["a", "a", "b"], ["b", "c"], ["a"]], vocabulary=["a", "b", "c"])
    # person x: {a, b} + {b, c} = 4 present words (a word counts once a document); person y: {a} = 1
    assert bench.largest_person_words(corpus, ["x", "x", "y"]) == 4
    assert bench.largest_person_words(corpus, ["x", "y", "z"]) == 2


def test_people_corpora_gives_each_person_their_own_documents(bench):
    corpus = Corpus.from_tokens([["a"], ["b"], ["c"], ["a", "b"]], vocabulary=["a", "b", "c"])
    people = bench.people_corpora(corpus, ["y", "x", "y", "x"])
    assert [p.n_docs for p in people] == [2, 2]
    assert sorted(int(p.to_bow().sum()) for p in people) == [2, 3]


def test_curves_print_every_route_and_draw_the_png(bench, planted, monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    png = tmp_path / "curves.png"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--people", "40", "--dropout", "0", "0.25", "--topics", "3", "--iters", "3", "--lplda-iters", "2",
                    "--fedlda-rounds", "1", "--curves", str(png)])
    rows = [line.split() for line in out.getvalue().splitlines() if line.startswith("40  ")]
    assert [r[1] for r in rows] == ["0", "0.25"] * 2      # as each is measured, then in the table
    for r in rows:     # secure sum, central, LP-LDA, FedLDA and the unigram: coverages in [0, 1]
        assert all(0 <= float(r[i]) <= 1 for i in (2, 3, 5, 7, 9))
        assert r[6].startswith("1/") and int(r[6][2:]) >= 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_costs_are_timed_with_the_rounds_graph_and_threshold(bench):
    import numpy as np

    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 30, collusion=2)
    cpu, size = bench.upload_cost(plan, 30, np.random.default_rng(0))
    assert cpu > 0 and size == 4 * 30 * 31 // 2
    t_sum, t_unmask = bench.server_cost(plan, 50, 0.1)
    assert t_sum >= 0 and t_unmask > 0
    plan64 = SecureSumPlan(1.0, 1e-5, 40, 4, 30, collusion=2, bits=64)
    assert bench.upload_cost(plan64, 30, np.random.default_rng(0))[1] == 8 * 30 * 31 // 2
    assert bench.server_cost(plan64, 50, 0.1)[1] > 0


def test_the_plan_table_shows_the_32_bit_rule_beside_the_ring_the_plan_chose(bench):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--plan", "--plan-sizes", "1000", "10000000"])
    rows = [line.split() for line in out.getvalue().splitlines() if line.startswith(("1,000  ", "10,000,000  "))]
    small, huge = rows[0], rows[1]
    assert small[4] == "32" and float(small[6]) <= 1.01
    assert "refused" in huge and huge[-6] == "64" and float(huge[-4]) <= 1.01


@pytest.mark.slow
def test_a_round_in_cohorts_is_simulated_whole_and_released(bench, planted, monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--simulate", "200", "--cohort-size", "100", "--topics", "3", "--iters", "3", "--work",
                    str(tmp_path), "--workers", "2"])
    text = out.getvalue()
    assert "plan: 2 cohorts of 100-100" in text and "200 people in cohorts of 100, 2 worker processes: released" in text
    assert "coverage of the planted topics:" in text
    # wall, CPU and peak memory of each process (this one, each worker) and in all
    rows = [line.split() for line in text.splitlines() if line.startswith(("this process", "worker ", "total "))]
    assert [r[0] for r in rows] == ["this", "worker", "worker", "total"]
    assert all(float(r[-1]) > 0 and float(r[-2]) > 0 for r in rows)


def test_the_cohorts_release_is_paired_with_one_rounds_with_the_noise_held_fixed(bench, planted, monkeypatch):
    from dptopic.protocol.secure_sum.cohorts import CohortPlan

    monkeypatch.setattr(bench, "source", lambda name, vocab_size: planted.corpus)
    args = ["--people", "200", "--cohort-size", "100", "--hold-noise", "2", "--topics", "3", "--iters", "3",
            "--seeds", "0"]

    def rows(text):
        return [line.split() for line in text.splitlines() if line.startswith("0  200  ")]

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(args)
    paired = rows(out.getvalue())
    assert [r[2] for r in paired] == ["0", "1"] and all(0 <= float(r[i]) <= 1 for r in paired for i in (3, 4))
    assert "paired difference (cohorts - one round, noise held fixed)" in out.getvalue()
    # with the cohorts' plan made one round's, the common noise is all there is: the two releases are the same
    monkeypatch.setattr(CohortPlan, "round_plan", property(lambda self: bench_plan(self)))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(args)
    assert [r[5] for r in rows(out.getvalue())] == ["+0.000", "+0.000"]
    assert [r[3] for r in rows(out.getvalue())] == [r[3] for r in paired]       # the one round, drawn as before


def bench_plan(cohort_plan):
    """One round's plan with the cohort plan's people and expected dropouts."""
    from dptopic.protocol.secure_sum.plan import SecureSumPlan

    return SecureSumPlan(cohort_plan.epsilon, cohort_plan.delta, cohort_plan.n, cohort_plan.dropouts,
                         cohort_plan.vocab_size)


def test_several_server_processes_need_a_postgresql_database_and_consecutive_free_ports(bench, capsys):
    import socket

    with pytest.raises(SystemExit) as e:
        bench.main(["--http", "10", "--servers", "2"])
    assert e.value.code == 2 and "--servers K > 1 needs --database" in capsys.readouterr().err
    port = bench.free_port(3)
    for p in range(port, port + 3):     # each of the three is free now
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))
