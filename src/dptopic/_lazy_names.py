"""Names a package exports but imports only on first use (PEP 562 module ``__getattr__``).

A package's ``__init__`` maps each public name to the submodule that defines it and calls :func:`lazy_names`; the
command line then loads only the submodules a command touches (``dptopic randomize`` needs neither the Gaussian
accountant nor the Gibbs samplers)."""
from __future__ import annotations

import importlib


def lazy_names(package: str, where: dict, module_globals: dict):
    """``(__getattr__, __dir__)`` for ``package``: a name of ``where`` is imported from ``package.where[name]`` when
    first read, then kept in ``module_globals``."""
    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(f".{where[name]}", package), name)
            module_globals[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    def __dir__():
        return sorted(set(module_globals) | set(where))

    return __getattr__, __dir__
