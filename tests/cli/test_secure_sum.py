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
