from helpers import run_dptopic


def test_serve_secure_sum_needs_the_user_unit(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("serve", "--report-kind", "secure-sum", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon", "1",
                    "--min-contributors", "100", "--database", f"sqlite:///{tmp_path}/db")
    assert r.returncode == 2 and "--unit user" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_secure_sum_flags_are_refused_for_other_kinds(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("serve", "--epsilon-word", "2", "--vocabulary", str(tmp_path / "v.txt"), "--min-contributors",
                    "10", "--database", f"sqlite:///{tmp_path}/db")
    assert r.returncode == 2 and "--report-kind secure-sum" in r.stderr


def test_too_large_a_dropout_tolerance_is_refused(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(f"word{i:02d}" for i in range(30)))
    r = run_dptopic("serve", "--report-kind", "secure-sum", "--unit", "user", "--vocabulary", str(tmp_path / "v.txt"),
                    "--epsilon", "1", "--min-contributors", "10", "--dropout-tolerance", "9",
                    "--database", f"sqlite:///{tmp_path}/db")
    assert r.returncode == 2 and "--dropout-tolerance" in r.stderr


def test_experiment_plays_a_round_over_http(tmp_path):
    import json

    import numpy as np
    from service_helpers import SecureSumServer

    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(30)]
    rng = np.random.default_rng(0)
    with open(tmp_path / "people.jsonl", "w") as f:
        for p in range(8):
            for _ in range(3):
                f.write(json.dumps({"author": f"a{p}", "text": " ".join(rng.choice(words, 12))}) + "\n")
    with SecureSumServer(tmp_path, words, n=8, dropouts=2) as srv:
        r = run_dptopic("experiment", "secure-sum", "--server", srv.url, "--corpus", str(tmp_path / "people.jsonl"),
                        "--user-field", "author", "--dropout", "0.2", "--token-file", str(tmp_path / "token"),
                        "--out", str(tmp_path / "out"), "--seed", "1")
        assert r.returncode == 0, r.stderr
        assert "released" in r.stdout and "outside the guarantee" in r.stdout
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["dropped"] == 2 and summary["state"] == "released"
        r = run_dptopic("pull", "--server", srv.url, "--out", str(tmp_path / "pulled"))
        assert r.returncode == 0, r.stderr


def test_submit_refuses_a_larger_epsilon_than_accepted(tmp_path):
    from service_helpers import SecureSumServer

    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(30)]
    (tmp_path / "mine.txt").write_text("waax wabx wacx\n")
    with SecureSumServer(tmp_path, words) as srv:
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--max-epsilon", "1",
                        "--state", str(tmp_path / "state.json"))
        assert r.returncode == 2 and "above your --max-epsilon" in r.stderr
    assert not (tmp_path / "state.json").exists()


def test_recommend_user_names_the_secure_sum_for_many_people():
    many = run_dptopic("recommend", "--unit", "user", "--epsilon", "1", "--docs", "5000")
    few = run_dptopic("recommend", "--unit", "user", "--epsilon", "1", "--docs", "300")
    assert "--report-kind secure-sum" in many.stdout and "same guarantee without one" in many.stdout
    assert "needs thousands of people" in few.stdout


def test_submit_takes_part_and_a_rerun_sends_nothing_new(tmp_path):
    import threading

    import numpy as np
    from service_helpers import SecureSumServer

    from dptopic.contributor.secure_client import take_part

    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(30)]
    (tmp_path / "mine.txt").write_text("waax wabx wacx wadx\nwaax wafx wagx\n")
    with SecureSumServer(tmp_path, words, n=3, dropouts=0) as srv:
        def other(seed):
            rng = np.random.default_rng(seed)
            ids = np.unique(rng.integers(0, 30, 8))
            take_part(srv.url, (np.array([0, len(ids)]), ids, np.ones(len(ids), np.int64)), poll=0.05, timeout=60)

        threads = [threading.Thread(target=other, args=(s,)) for s in (1, 2)]
        for t in threads:
            t.start()
        state = tmp_path / "state.json"
        r = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--state", str(state))
        for t in threads:
            t.join(60)
        assert r.returncode == 0, r.stderr
        assert "took part in the secure sum" in r.stdout and "upload0" in r.stdout
        import time

        for _ in range(600):        # the server releases off the request's thread
            if srv.call("GET", "/v1/secure/round")[1]["state"] in ("released", "failed"):
                break
            time.sleep(0.05)
        assert srv.call("GET", "/v1/secure/round")[1]["state"] == "released"
        again = run_dptopic("submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--state",
                            str(state))
        assert again.returncode == 0, again.stderr
        assert "nothing new sent" in again.stdout
