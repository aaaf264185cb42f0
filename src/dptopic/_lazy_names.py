"""Names a package exports but imports only on first use (PEP 562 module ``__getattr__``).

A package's ``__init__`` maps each public name to the submodule that defines it and calls :func:`lazy_names`; the
command line then loads only the submodules a command touches (``dptopic randomize`` needs neither the Gaussian
accountant nor the Gibbs samplers)."""
from __future__ import annotations

import importlib
import sys
import types


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

    if any(name == module for name, module in where.items()):
        sys.modules[package].__class__ = _named_like_their_modules(package, where)
    return __getattr__, __dir__


def _named_like_their_modules(package: str, where: dict) -> type:
    """A module class for ``package`` whose exported names include one named as the submodule that defines it
    (``dptopic.attacks.classifier_mia``, a function): once that submodule is imported, by anyone, the import system
    binds it on the package under that name, which would hide the function behind the module. The binding gives way to
    the exported object, as the eager ``from .classifier_mia import classifier_mia`` of an ``__init__`` made it."""
    def __setattr__(self, name, value):
        if (where.get(name) == name and isinstance(value, types.ModuleType)
                and value.__name__ == f"{package}.{name}" and hasattr(value, name)):
            value = getattr(value, name)
        types.ModuleType.__setattr__(self, name, value)

    return type("PackageExports", (types.ModuleType,), {"__setattr__": __setattr__})
