"""``dptopic.accounting.inherent``."""
import math
import numpy as np
import pytest
from dptopic.accounting import (eps_iter_state, eps_iter_static, eps_related, eps_replaced_state, eps_total,
                                eps_total_static, hdp_clip_bound, hdp_epsilon_inherent)
from dptopic.errors import DPTopicError
from hypothesis import HealthCheck, given, settings, strategies as st
from dptopic.accounting import hdp_total_epsilon, smallest_hdp_budget


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


FAST = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


SPECIAL = [float("nan"), np.float32("nan"), np.float64("nan"), float("inf"), -float("inf"), np.float32("inf"),
           -np.float64("inf"), 0, 0.0, -0.0, -1, -1.5, np.int64(-3), 1e308, -1e308, 5e-324, 1e-300, 10**30, -(10**30),
           2**63, 10**400, np.float32(1e38), np.int32(0), True, False, np.bool_(True), None, "1", "nan", "abc", b"1", [1],
           {"a": 1}, 1 + 1j, np.complex64(1), (), object()]


NASTY = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True),
                  st.integers(-(10**20), 10**20), st.floats(-1e-3, 1e3), st.integers(-3, 12), st.text(max_size=3))


def works_or_refuses(fn):
    """Run ``fn``: return ``(True, result)``, or ``(False, None)`` after a one-line DPTopicError. Any other
    exception propagates and fails the test."""
    try:
        return True, fn()
    except DPTopicError as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) < 500, msg
        return False, None


CALCULATORS = {
    "eps_related": lambda v: eps_related(v),
    "hdp_clip_bound eps": lambda v: hdp_clip_bound(v, 1.0),
    "hdp_clip_bound beta": lambda v: hdp_clip_bound(10.0, v),
    "hdp_epsilon_inherent": lambda v: hdp_epsilon_inherent(v, 0.5),
    "eps_iter_static beta": lambda v: eps_iter_static([3, 5, 2], v, 0),
    "eps_iter_static t": lambda v: eps_iter_static([3, 5, 2], 0.1, v),
    "eps_iter_static cmax": lambda v: eps_iter_static([3, 5, 2], 0.1, 1, cmax=v),
    "eps_iter_static n_tok": lambda v: eps_iter_static([3, v, 2], 0.1, 0),
    "eps_total_static n_iter": lambda v: eps_total_static([3, 5], 0.1, v),
    "smallest_hdp_budget eps": lambda v: smallest_hdp_budget(v, 3, 1e-5),
    "smallest_hdp_budget n_iter": lambda v: smallest_hdp_budget(1.0, v, 1e-5),
    "hdp_total_epsilon eps_L": lambda v: hdp_total_epsilon(v, 1.0, 3, 1e-5),
    "hdp_total_epsilon delta": lambda v: hdp_total_epsilon(1.0, 1.0, 3, v),
}


@pytest.mark.parametrize("name", list(CALCULATORS))
@FAST
@given(v=NASTY)
def test_calculators(name, v):
    ok, out = works_or_refuses(lambda: CALCULATORS[name](v))
    if ok:
        assert isinstance(out, float) and 0 <= out < math.inf, (name, v, out)
