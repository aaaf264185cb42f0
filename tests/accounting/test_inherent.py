"""``dptopic.accounting.inherent``."""
import math

import numpy as np
import pytest
from hypothesis import given

from dptopic.accounting import (
    eps_iter_state,
    eps_iter_static,
    eps_related,
    eps_replaced_state,
    eps_total,
    eps_total_static,
    hdp_clip_bound,
    hdp_epsilon_inherent,
)
from dptopic.errors import DPTopicError
from helpers import CALCULATORS, FAST, NASTY, works_or_refuses


def test_spec_sanity_values():
    assert eps_related(0.01) == pytest.approx(9.230, abs=5e-4)  # 2 ln(101)
    n = np.array([100.0, 5000.0])
    assert eps_iter_static(n, 0.01, 0, cmax=3000) == pytest.approx(47090.2, abs=0.1)
    assert hdp_clip_bound(10, 0.01) == pytest.approx(147.413 * 0.01, rel=1e-5)
    assert hdp_clip_bound(10, 1.0) == pytest.approx(147.413, rel=1e-5)
    assert hdp_epsilon_inherent(hdp_clip_bound(7.3, 0.3), 0.3) == pytest.approx(7.3)


def test_state_calculators():
    N = np.array([[5, 0, 2], [0, 3, 1]], float)  # K=2, V=3
    assert eps_replaced_state(N[:, 0], N[:, 1], 0.5) == pytest.approx(2 * math.log(5.5 / 0.5))
    n_tok = N.sum(0)
    expect = max(eps_replaced_state(N[:, 0], N[:, u], 0.5) + (n_tok[0] - 1 + n_tok[u]) * eps_related(0.5)
                 for u in (1, 2))
    assert eps_iter_state(N, n_tok, 0, 0.5) == pytest.approx(expect)
    assert eps_total([[1, 2], [3, 1]]) == 4
    assert eps_total_static(n_tok, 0.5, 3) == pytest.approx(3 * max(eps_iter_static(n_tok, 0.5, t) for t in range(3)))


@pytest.mark.parametrize("bad", [0, -1.0])
def test_calculators_reject_bad_input(bad):
    with pytest.raises(DPTopicError, match="beta"):
        eps_related(bad)
    with pytest.raises(DPTopicError, match="clip"):
        hdp_epsilon_inherent(bad, 0.1)


@pytest.mark.parametrize("name", list(CALCULATORS))
@FAST
@given(v=NASTY)
def test_calculators(name, v):
    ok, out = works_or_refuses(lambda: CALCULATORS[name](v))
    if ok:
        assert isinstance(out, float) and 0 <= out < math.inf, (name, v, out)
