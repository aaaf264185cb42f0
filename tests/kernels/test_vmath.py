"""The vectorisable ``exp`` and ``exp(ψ)`` of the variational kernels (dptopic.kernels._vmath) against NumPy and
SciPy, and that loops of them compile to vector code."""
from __future__ import annotations

import numpy as np
from scipy.special import psi

from dptopic.kernels._jit import njit
from dptopic.kernels._vmath import exp_psi, vexp

EPS = np.finfo(float).eps


@njit(fastmath={"contract"}, error_model="numpy")
def _exps(x, out):
    for i in range(x.shape[0]):
        out[i] = vexp(x[i])


@njit(fastmath={"contract"}, error_model="numpy")
def _exp_psis(x, c, out):
    for i in range(x.shape[0]):
        out[i] = exp_psi(x[i], c)


def test_vexp_is_within_one_unit_in_the_last_place_of_exp():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-708.0, 709.0, 200_000), rng.uniform(-30.0, 5.0, 200_000),
                        rng.uniform(-0.4, 0.4, 50_000), [0.0, -0.0, 1.0, -1.0, 709.7, -708.3]])
    out = np.empty_like(x)
    _exps(x, out)
    want = np.exp(x)
    assert np.all(np.abs(out - want) <= np.spacing(want))
    assert out[-6:-4].tolist() == [1.0, 1.0]


def test_vexp_saturates_like_exp():
    x = np.array([-746.0, -800.0, -1e300, 710.0, 800.0, 1e300, -740.0])
    out = np.empty_like(x)
    _exps(x, out)
    assert out[:3].tolist() == [0.0, 0.0, 0.0] and np.all(np.isinf(out[3:6]))
    assert out[6] == np.exp(-740.0) or abs(out[6] - np.exp(-740.0)) <= 4 * np.spacing(np.exp(-740.0))    # subnormal


_UNITS = 12
"""exp_psi's error in units of ``eps · max(1, |ψ(x)|, |ψ(x) − c|)``: an absolute error of ψ (or of the exponent) is
the relative error of the exponential, and below x = 1 ψ's own size is about 1/x. The worst of 8 million draws over
x in [1e-3, 1e8] was 7 (near ψ's zero at 1.46, where the shifted sum cancels); SciPy's value carries its own."""


def test_exp_psi_is_exp_of_scipys_psi():
    """Within a few units in the last place of the exponent (the error of ψ itself, about 1/x below 1, becomes the
    relative error of the exponential, for SciPy too)."""
    rng = np.random.default_rng(1)
    x = np.concatenate([10 ** rng.uniform(-3, 8, 100_000), rng.uniform(0.01, 30.0, 100_000),
                        [1e-3, 0.5, 1.0, 9.999, 10.0, 10.001, 1e12, 1e200]])
    for c in (0.0, 3.7, -12.5):
        out = np.empty_like(x)
        _exp_psis(x, c, out)
        want = np.exp(psi(x) - c)
        normal = want >= np.finfo(float).tiny       # below it (x under about 1/700) both underflow towards 0
        assert normal.mean() > 0.99 and np.all(out[~normal] < 1e-300)
        rel = np.abs(out[normal] / want[normal] - 1)
        p = psi(x[normal])
        assert np.all(rel <= _UNITS * EPS * np.maximum.reduce([np.ones_like(p), np.abs(p), np.abs(p - c)]))


def test_loops_of_them_are_vectorised():
    """The point of the module: LLVM vectorises a loop over them (packed double instructions in the machine code)."""
    x = np.linspace(0.1, 5.0, 64)
    out = np.empty_like(x)
    _exps(x, out)
    _exp_psis(x, 0.0, out)
    for f in (_exps, _exp_psis):
        asm = f.inspect_asm(f.signatures[0])
        assert "pd\t" in asm or "pd " in asm, f"{f.__name__}: no packed instruction"
