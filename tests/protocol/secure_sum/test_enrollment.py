"""``dptopic.protocol.secure_sum.enrollment``: the operator's invitations and signed directory."""
import json
import os
import stat

import pytest

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import enrollment as en
from dptopic.protocol.secure_sum.crypto import new_signing_key, signing_public
from dptopic.protocol.secure_sum.graph import default_collusion

pytest.importorskip("cryptography")


def test_invitations_and_directory_are_written_and_verify(tmp_path):
    s = en.make_invitations(tmp_path / "enroll.key", 5, tmp_path / "inv", round_id="r-1", collusion=1)
    assert s["key_created"] and s["count"] == 5
    for name in ("enroll.key", "inv/invitation-0001.json"):      # private keys: readable by their owner only
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
    d = en.read_directory(tmp_path / "inv" / "directory.json")
    assert d["round_id"] == "r-1" and sorted(d["members"]) == en.contributor_ids(5)
    inv = en.read_invitation(tmp_path / "inv" / "invitation-0003.json")
    assert inv["contributor"] == "0003" and inv["count"] == 5
    assert d["members"]["0003"] == signing_public(inv["signing_key"]).hex()
    assert en.check_directory(d, inv["enrollment_key"]) is d
    # the same key signs a second round; a key file is reused, not replaced
    again = en.make_invitations(tmp_path / "enroll.key", 3, tmp_path / "inv2", collusion=0)
    assert not again["key_created"]
    assert en.read_directory(tmp_path / "inv2" / "directory.json")["enrollment_key"] == d["enrollment_key"]


def test_a_directory_altered_or_signed_by_another_key_is_refused(tmp_path):
    en.make_invitations(tmp_path / "k", 4, tmp_path / "a", round_id="r", collusion=1)
    en.make_invitations(tmp_path / "other", 4, tmp_path / "b", round_id="r", collusion=1)
    d = json.loads((tmp_path / "a" / "directory.json").read_text())
    mine = en.read_invitation(tmp_path / "a" / "invitation-0001.json")["enrollment_key"]
    stranger = {**d, "members": {**d["members"], "0002": signing_public(new_signing_key()).hex()}}
    with pytest.raises(DPTopicError, match="altered"):
        en.check_directory(stranger, mine)
    theirs = json.loads((tmp_path / "b" / "directory.json").read_text())
    with pytest.raises(DPTopicError, match="another enrollment key"):
        en.check_directory(theirs, mine)
    dup = {**d, "members": {**d["members"], "0002": d["members"]["0001"]}}
    with pytest.raises(DPTopicError, match="one signing key for two"):
        en.check_directory(dup)
    for broken in ({**d, "format": "x"}, {**d, "round_id": "../x"}, {**d, "members": []}, [1]):
        with pytest.raises(DPTopicError):
            en.check_directory(broken)


def test_bad_inputs_are_one_line(tmp_path):
    with pytest.raises(ParameterError, match="count"):
        en.make_invitations(tmp_path / "k", 2, tmp_path / "x")
    with pytest.raises(ParameterError, match="round_id"):
        en.make_invitations(tmp_path / "k", 3, tmp_path / "x", round_id="a/b", collusion=0)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(ParameterError, match="never overwritten"):
        en.make_invitations(tmp_path / "k", 3, tmp_path / "full", collusion=0)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(DPTopicError, match="not a secure-sum invitation"):
        en.read_invitation(tmp_path / "bad.json")
    with pytest.raises(DPTopicError, match="cannot read"):
        en.read_invitation(tmp_path / "missing.json")
    (tmp_path / "key.json").write_text('{"format": "x"}')
    with pytest.raises(DPTopicError, match="not a secure-sum enrollment key"):
        en.load_enrollment_key(tmp_path / "key.json")


def test_a_directory_checked_once_is_checked_again_when_any_byte_changes(tmp_path, monkeypatch):
    en.make_invitations(tmp_path / "k", 4, tmp_path / "a", round_id="r", collusion=1)
    d = json.loads((tmp_path / "a" / "directory.json").read_text())
    mine = en.read_invitation(tmp_path / "a" / "invitation-0001.json")["enrollment_key"]
    en._CHECKED.clear()
    calls = []
    real = en.verify
    monkeypatch.setattr(en, "verify", lambda *a: calls.append(1) or real(*a))
    for _ in range(3):      # a process playing many contributors of one round: verified once
        assert en.check_directory(d, mine) is d
    assert len(calls) == 1
    d["members"]["0002"] = signing_public(new_signing_key()).hex()      # altered in place, after the check
    with pytest.raises(DPTopicError, match="altered"):
        en.check_directory(d, mine)
    d["members"]["0002"] = [1]      # unhashable where a key belongs: malformed, not a crash
    with pytest.raises(DPTopicError, match="malformed"):
        en.check_directory(d, mine)
    with pytest.raises(DPTopicError, match="another enrollment key"):
        en.check_directory(json.loads((tmp_path / "a" / "directory.json").read_text()), "0" * 64)


def test_an_invitation_says_whether_its_round_runs_a_committee(tmp_path):
    en.make_invitations(tmp_path / "k", 3, tmp_path / "plain", round_id="r", collusion=0)
    en.make_invitations(tmp_path / "k", 3, tmp_path / "committee", round_id="r", committee=True, collusion=0)
    plain = sorted((tmp_path / "plain").glob("invitation-*.json"))[0]
    assert json.loads(plain.read_text())["committee"] is False and en.read_invitation(plain)["committee"] is False
    older = {k: v for k, v in json.loads(plain.read_text()).items() if k != "committee"}
    (tmp_path / "older.json").write_text(json.dumps(older))
    assert en.read_invitation(tmp_path / "older.json")["committee"] is False     # a file written before the mode
    assert en.read_invitation(sorted((tmp_path / "committee").glob("invitation-*.json"))[0])["committee"] is True
    doc = json.loads(plain.read_text())
    doc["committee"] = "yes"
    plain.write_text(json.dumps(doc))
    with pytest.raises(DPTopicError, match="is not a secure-sum invitation"):
        en.read_invitation(plain)
    with pytest.raises(ParameterError, match="committee"):
        en.make_invitations(tmp_path / "k", 3, tmp_path / "bad", committee="yes", collusion=0)


def test_every_invitation_and_the_directory_pin_the_operators_plan(tmp_path):
    """The operator's F and t (default a tenth and ceil(log2 N) + 1) are in every invitation and the directory, read
    back as written; a plan no round can carry is refused before anything is written, and a file whose plan is
    malformed or for another size is refused in one line."""
    s = en.make_invitations(tmp_path / "k", 40, tmp_path / "inv", round_id="r", dropouts=4, collusion=7)
    pinned = {"count": 40, "dropouts": 4, "collusion": 7}
    assert s["layout"] == pinned and en.read_directory(tmp_path / "inv" / "directory.json")["layout"] == pinned
    first = tmp_path / "inv" / "invitation-0001.json"
    assert en.read_invitation(first)["layout"] == pinned
    assert en.make_invitations(tmp_path / "k", 100, tmp_path / "d", round_id="r")["layout"] == {
        "count": 100, "dropouts": 10, "collusion": default_collusion(100)}
    for kw, why in (({"collusion": 4}, "leave no honest noise share"), ({"dropouts": 5}, "must lie in"),
                    ({"dropouts": 4, "collusion": 1, "count": 10}, "no neighbour graph survives"),
                    ({"collusion": -1}, "collusion")):
        with pytest.raises(ParameterError, match=why):
            en.make_invitations(tmp_path / "k", kw.pop("count", 5), tmp_path / "bad", **kw)
    assert not (tmp_path / "bad").exists()
    for layout in ({"count": 40, "dropouts": 4}, {"count": 40, "dropouts": 4, "collusion": True},
                   {"count": 41, "dropouts": 4, "collusion": 7}, {"count": 40, "dropouts": 4, "collusion": 39}):
        doc = {**json.loads(first.read_text()), "layout": layout}
        (tmp_path / "edited.json").write_text(json.dumps(doc))
        with pytest.raises(DPTopicError, match="plan \\(layout\\)"):
            en.read_invitation(tmp_path / "edited.json")
    older = {k: v for k, v in json.loads(first.read_text()).items() if k != "layout"}     # an older dptopic's
    (tmp_path / "older.json").write_text(json.dumps(older))
    assert en.read_invitation(tmp_path / "older.json")["layout"] is None



def test_a_key_directory_or_invitation_that_is_not_json_is_one_line_naming_the_file(tmp_path):
    """A file that is not JSON (or a folder in its place) is one line naming the file and where it stops being JSON,
    not a ``JSONDecodeError``; the same for a round in cohorts' directory and invitation."""
    from dptopic.protocol.secure_sum import cohort_enrollment as ce

    (tmp_path / "junk.json").write_text("this is not JSON\n")
    (tmp_path / "folder").mkdir()
    readers = {"enrollment key": en.load_enrollment_key, "directory": en.read_directory,
               "invitation": en.read_invitation, "cohort directory": ce.read_cohort_directory,
               "cohort invitation": ce.read_cohort_invitation}
    for what, read in readers.items():
        with pytest.raises(DPTopicError) as e:
            read(tmp_path / "junk.json")
        assert "junk.json" in str(e.value) and "not JSON (line 1, column 1)" in str(e.value), (what, e.value)
        with pytest.raises(DPTopicError) as e:
            read(tmp_path / "folder")
        assert "folder" in str(e.value) and "is a folder" in str(e.value), (what, e.value)


def test_a_key_or_invitation_readable_by_others_is_used_with_a_warning_naming_it_and_chmod(tmp_path):
    """The enrollment key and an invitation hold signing keys: written 0600, and read with one warning naming the
    file and ``chmod 600`` when others can read them (used all the same, as a round's database is); a folder of
    invitations gives one warning for the folder; the public directory gives none."""
    import warnings

    en.make_invitations(tmp_path / "enroll.key", 3, tmp_path / "inv", round_id="r", collusion=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # 0600: not a word
        en.load_enrollment_key(tmp_path / "enroll.key")
        en.read_invitations(tmp_path / "inv")
    for f in [tmp_path / "enroll.key", *sorted((tmp_path / "inv").glob("*.json"))]:
        os.chmod(f, 0o644)
    for read, path in ((en.load_enrollment_key, tmp_path / "enroll.key"),
                       (en.read_invitation, tmp_path / "inv" / "invitation-0002.json")):
        with pytest.warns(UserWarning) as seen:
            read(path)
        assert len(seen) == 1, [str(w.message) for w in seen]
        line = str(seen[0].message)
        assert str(path) in line and "mode 0644" in line and f"chmod 600 {path}" in line and "\n" not in line
    with pytest.warns(UserWarning) as seen:
        assert len(en.read_invitations(tmp_path / "inv")) == 3
    assert [str(w.message) for w in seen] == [
        f"3 of the 3 invitations in {tmp_path / 'inv'} are readable by other users and each holds a contributor's"
        f" signing key: make them yours only with chmod 600 {tmp_path / 'inv'}/invitation-*.json."]
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # the directory is public
        en.read_directory(tmp_path / "inv" / "directory.json")


def test_invitations_into_a_folder_that_cannot_be_written_are_one_line_and_leave_nothing(tmp_path, monkeypatch):
    """A folder that cannot be written (read-only for this user: found before the key is made; a read-only disk or a
    full one: found as the files are written) is one line naming ``out`` and the folder with what to do, not a
    ``PermissionError``; nothing is left behind (no key made, no partial folder of invitations)."""
    real_access = os.access
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setattr(en.os, "access", lambda p, mode: False if str(p) == str(ro) else real_access(p, mode))
    with pytest.raises(ParameterError) as e:
        en.make_invitations(tmp_path / "enroll.key", 3, ro / "inv", collusion=0)
    assert e.value.message({"out": "--out"}).startswith(f"cannot write --out {ro / 'inv'}: the folder {ro} is"
                                                        " read-only for you")
    assert f"chmod u+w {ro}" in str(e.value)
    assert not (tmp_path / "enroll.key").exists() and not (ro / "inv").exists()
    monkeypatch.setattr(en.os, "access", real_access)
    en.load_enrollment_key(tmp_path / "enroll.key", create=True)

    def read_only_disk(path, data, private=False):
        raise PermissionError(13, "Read-only file system", str(path))
    monkeypatch.setattr(en, "atomic_write_bytes", read_only_disk)
    with pytest.raises(ParameterError) as e:
        en.make_invitations(tmp_path / "enroll.key", 3, tmp_path / "new" / "inv", collusion=0)
    assert "out" in e.value.parameters and "Read-only file system" in str(e.value)
    assert not (tmp_path / "new").exists()      # the folders it made are gone again
