"""dp-accounting's modules, imported on first use: importing them costs about a second, which a contributor's
``dptopic randomize`` (that never composes anything) should not pay."""
from __future__ import annotations

import importlib
import logging
import re


class LazyModule:
    def __init__(self, name: str, on_load=None):
        self._name = name
        self._module = None
        self._on_load = on_load

    def __getattr__(self, attr):
        if self._module is None:
            self._module = importlib.import_module(self._name)
            if self._on_load is not None:
                self._on_load()
        return getattr(self._module, attr)


_NEGATIVE_RDP = re.compile(r"Negative Renyi divergence of (-[0-9.eE+-]+)")
ROUNDING_RDP = 1e-12
"""A negative Rényi divergence this close to zero is rounding in dp-accounting's sums (tiny epsilons give such
values); the accountant then returns epsilon 0, which is right to that precision."""


class _RoundingRdpFilter(logging.Filter):
    """Drops dp-accounting's "Negative Renyi divergence ... Returning an epsilon of zero" warning when the divergence
    is rounding (|value| <= :data:`ROUNDING_RDP`): a ledger of tiny epsilons otherwise prints it once per order and
    per query. A larger negative value, which would be a real numerical problem, is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            m = _NEGATIVE_RDP.search(record.getMessage())
            return not (m and abs(float(m.group(1))) <= ROUNDING_RDP)
        except Exception:  # noqa: BLE001 - a filter must never stop a log record
            return True


def _quiet_rounding_rdp() -> None:
    log = logging.getLogger("absl")
    if not any(isinstance(f, _RoundingRdpFilter) for f in log.filters):
        log.addFilter(_RoundingRdpFilter())


pldlib = LazyModule("dp_accounting.pld.privacy_loss_distribution")
pld_common = LazyModule("dp_accounting.pld.common")
pld_privacy_accountant = LazyModule("dp_accounting.pld.pld_privacy_accountant")
rdp_privacy_accountant = LazyModule("dp_accounting.rdp.rdp_privacy_accountant", on_load=_quiet_rounding_rdp)
dp_event = LazyModule("dp_accounting.dp_event")
mechanism_calibration = LazyModule("dp_accounting.mechanism_calibration")
