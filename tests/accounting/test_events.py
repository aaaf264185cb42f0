"""``dptopic.accounting.events``."""
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import logsumexp

from dptopic.accounting import LaplaceEvent, PrivacyLedger, PureDPEvent
from helpers import FAST, NASTY, works_or_refuses


def test_two_cell_laplace_is_no_worse_than_l1_bound():
    ev = LaplaceEvent(scale=2.0, changes=(1, 1))
    assert ev.epsilon == 1.0
    led = PrivacyLedger()
    led.spend(ev, 1)
    assert led.epsilon_tight(1e-6) <= 1.0 + 1e-3


# ----------------------------------------------------- 3. discrete-Laplace RDP
def _brute_rdp(order, scale, c):
    x = np.arange(-3000, 3001)
    t = 1.0 / scale
    logz = np.log(-np.expm1(-t)) - np.log1p(np.exp(-t))
    lp, lq = logz - t * np.abs(x), logz - t * np.abs(x - c)
    return logsumexp(order * lp + (1 - order) * lq) / (order - 1)


@pytest.mark.parametrize("scale", [0.5, 2.0, 7.3])
@pytest.mark.parametrize("c", [1, 2, 3])
def test_discrete_laplace_rdp_is_exact(scale, c):
    orders = np.array([1.5, 2.0, 10.0, 64.0])
    got = LaplaceEvent(scale=scale, changes=(c,), discrete=True).rdp(orders)
    assert np.allclose(got, [_brute_rdp(a, scale, c) for a in orders], rtol=1e-10, atol=1e-12)
    if c == 1:  # the closed form of the issue
        lam = 1 / scale
        closed = (np.logaddexp((orders - 1) * lam, -orders * lam) - np.log1p(np.exp(-lam))) / (orders - 1)
        assert np.allclose(got, closed, rtol=1e-12)


@FAST
@given(v=NASTY, discrete=st.booleans())
def test_events(v, discrete):
    for fn in (lambda: LaplaceEvent(scale=v, discrete=discrete), lambda: LaplaceEvent(scale=1.0, changes=(v,)),
               lambda: PureDPEvent(v)):
        ok, ev = works_or_refuses(fn)
        if ok:
            assert 0 <= ev.epsilon < math.inf
            json.dumps(ev.describe(), default=float)
