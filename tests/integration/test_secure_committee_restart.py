"""``dptopic serve --report-kind secure-sum --secure-committee auto`` killed with SIGKILL after step 0's uploads (before
the committee's signatures and the unmasking) and again in the middle of step 1's uploads, and started again on the
same SQLite file each time: the committee round resumes from its stored state and releases the exact sums of the
uploads."""
from __future__ import annotations

import numpy as np
import pytest

from committee_helpers import CommitteeOverHttp, InProcessCommitteeRound, committee_serve_class

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")


CommitteeServe = committee_serve_class()


def test_a_committee_server_killed_resumes_and_releases_the_exact_sums(tmp_path):
    rnd = InProcessCommitteeRound(tmp_path, n=10, dropouts=1, collusion=1, seed=3)
    srv = CommitteeServe(tmp_path, rnd).start()
    rnd.server = CommitteeOverHttp(srv.url)

    def kill_and_start():
        srv.kill()
        srv.start()
    uploaded = {}
    try:
        assert rnd.server._call("GET", "/v1/config")["secure_sum"] == rnd.plan.to_dict()
        rnd.prekeys()
        rnd.open()
        ordinary = [i for i in sorted(rnd.by_id) if i not in rnd.committee]
        rnd.upload(0, drop=ordinary[:1])
        kill_and_start()                        # after step 0's uploads: its running sum and blobs are on disk
        uploaded[0] = rnd.server.view()["uploaded"]
        rnd.consistency(0)
        rnd.unmask(0)
        view = rnd.server.view()
        assert view["state"] == "upload1", view
        for c in rnd.people[:4]:
            if c.me not in ordinary[:1]:
                rnd.server.post_upload(1, c.me, *c.committee_upload(1, view))
        kill_and_start()                        # in the middle of step 1's uploads
        rnd.upload(1)                           # the first four again: replays
        uploaded[1] = rnd.server.view()["uploaded"]
        rnd.consistency(1)
        assert rnd.unmask(1)["state"] == "released"
    finally:
        srv.stop()
    from sqlalchemy import create_engine, select

    from dptopic.service.secure_sum.committee_store import c_sums
    engine = create_engine(srv.database)
    with engine.connect() as conn:
        sums = {r.phase: np.frombuffer(r.data, dtype=np.int64) for r in conn.execute(select(c_sums))}
    engine.dispose()
    for p in (0, 1):
        assert np.array_equal(sums[p], np.sum([rnd.shares[(u, p)] for u in uploaded[p]], axis=0))
    assert uploaded[0] == sorted(set(rnd.by_id) - set(ordinary[:1]))
