"""dp-accounting's modules, imported on first use: importing them costs about a second, which a contributor's
``dptopic randomize`` (that never composes anything) should not pay."""
from __future__ import annotations

import importlib


class LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


pldlib = LazyModule("dp_accounting.pld.privacy_loss_distribution")
pld_common = LazyModule("dp_accounting.pld.common")
pld_privacy_accountant = LazyModule("dp_accounting.pld.pld_privacy_accountant")
rdp_privacy_accountant = LazyModule("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = LazyModule("dp_accounting.dp_event")
mechanism_calibration = LazyModule("dp_accounting.mechanism_calibration")
