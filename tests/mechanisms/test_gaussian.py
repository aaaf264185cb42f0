"""``dptopic.mechanisms.gaussian``."""
import math

import numpy as np
import pytest

from dptopic.accounting.events import SubsampledGaussianEvent
from dptopic.accounting.ledger import PrivacyLedger
from dptopic.errors import DPTopicError
from dptopic.mechanisms.gaussian import gaussian_mechanism


def test_secure_mechanisms_refuse_a_generator_in_one_line():
    """Secure mode's noise comes from the OS CSPRNG; a Generator given beside secure=True used to be ignored silently
    (a caller would believe it had seeded the noise)."""
    from dptopic.mechanisms.gaussian import gaussian_mechanism
    from dptopic.mechanisms.laplace import laplace_mechanism, laplace_with_scale
    rng = np.random.default_rng(0)
    calls = [lambda: laplace_mechanism(np.zeros(3, dtype=np.int64), 1.0, rng, secure=True),
             lambda: laplace_with_scale(np.zeros(3), 1.0, rng, discrete=False, secure=True),
             lambda: gaussian_mechanism(np.zeros(3), 1.0, 1.0, rng, secure=True)]
    for call in calls:
        with pytest.raises(DPTopicError, match="refuses a numpy Generator") as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="Generator is required"):
        gaussian_mechanism(np.zeros(3), 1.0, 1.0, None)


# ------------------------------------------------------------------ 2. the Gaussian mechanism's noise range
@pytest.mark.parametrize("sigma", [0.2, 0.01, 2000.0])
def test_gaussian_mechanism_refuses_unaccountable_noise_before_drawing(sigma):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(DPTopicError) as e:
        gaussian_mechanism(np.zeros(3), sigma, 1.0, rng)
    msg = str(e.value)
    assert "\n" not in msg and "the accountant handles [0.25, 1000]" in msg
    assert rng.bit_generator.state == before                  # no noise was drawn
    # the ledger's own refusal of the same event says the same
    with pytest.raises(DPTopicError) as led:
        PrivacyLedger(unit="document", relation="x", budget=(1.0, 1e-5)).spend(SubsampledGaussianEvent(sigma, 1.0))
    assert str(led.value) == msg


def test_gaussian_mechanism_accepts_the_range_and_an_unaccounted_release():
    noisy, ev = gaussian_mechanism(np.zeros(3), 0.25, 1.0, np.random.default_rng(0))
    assert ev.noise_multiplier == 0.25 and noisy.shape == (3,)
    # a caller with its own theorem (DP set union) may use less noise; its event is not for the ledger
    noisy, _ = gaussian_mechanism(np.zeros(3), 0.1, 1.0, np.random.default_rng(0), accounted=False)
    assert np.all(np.isfinite(noisy))


def test_frequency_oracle_and_gaussian_refuse_bad_parameters_in_one_line():
    from dptopic.mechanisms import gaussian_mechanism
    from dptopic.mechanisms.frequency_oracle import subset_selection, subset_selection_estimate

    rng = np.random.default_rng(0)
    with pytest.raises(DPTopicError, match="n_reports"):          # was ValueError: math domain error
        subset_selection_estimate(np.zeros(5), -3, 5, 1.0)
    with pytest.raises(DPTopicError, match="n_reports"):          # fewer reports than an item's inclusions
        subset_selection_estimate(np.full(5, 4.0), 3, 5, 1.0)
    with pytest.raises(DPTopicError, match="epsilon"):            # True was taken for epsilon 1
        subset_selection(np.array([0]), 5, True, rng)
    with pytest.raises(DPTopicError, match="l2_sensitivity"):     # was TypeError
        gaussian_mechanism(np.zeros(2), 1.0, "1", rng)
    with pytest.raises(DPTopicError, match="sampling_rate"):
        gaussian_mechanism(np.zeros(2), 1.0, 1.0, rng, sampling_rate="0.5")
    est, _ = subset_selection_estimate(np.ones(5), 3.0, 5, 1.0)   # a whole number as a float still counts
    assert est.shape == (5,)


# ----------------------------------------------------------------------------- mechanism
def test_gaussian_noise_std_within_standard_error():
    rng = np.random.default_rng(5)
    x = np.zeros(200_000)
    noisy, ev = gaussian_mechanism(x, 1.5, 2.0, rng, sampling_rate=0.1)
    n, sd = len(x), noisy.std()
    assert abs(sd - 3.0) < 4 * 3.0 / math.sqrt(2 * n)   # SE of a sample std = sigma / sqrt(2n)
    assert abs(noisy.mean()) < 4 * 3.0 / math.sqrt(n)
    assert ev == SubsampledGaussianEvent(1.5, 0.1, label=ev.label)
    for bad in (dict(noise_multiplier=0.0), dict(noise_multiplier=-1.0), dict(sampling_rate=0.0),
                dict(sampling_rate=1.5)):
        kw = dict(noise_multiplier=1.0, l2_sensitivity=1.0, rng=rng, sampling_rate=0.5) | bad
        with pytest.raises(DPTopicError):
            gaussian_mechanism(x[:3], **kw)
