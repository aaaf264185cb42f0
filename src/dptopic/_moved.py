"""Module paths that moved, importable under their old names for one release.

``import dptopic.recovery`` (an old path) gives the module at its new path, ``dptopic.moments``, the same module
object, with a :class:`DeprecationWarning` that names the new path. A package's old path carries its submodules with
it (``dptopic.recovery.support`` is ``dptopic.moments.support``) unless a submodule moved on its own (listed below).
Remove an entry one release after the move; the table is the only place an old path lives.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

MOVED_MODULES = {
    "dptopic.recovery": "dptopic.moments",                      # topics from a released co-occurrence matrix
    "dptopic.recovery.cooccurrence": "dptopic.moments.document_statistics",
    "dptopic.evaluation.recovery": "dptopic.evaluation.topic_matching",
    "dptopic.kernels.local": "dptopic.kernels.client",          # FedLDA's client-side sweep ('local' is local DP)
    "dptopic.kernels.cooccurrence": "dptopic.kernels.window_counts",    # coherence's sliding-window counts
    "dptopic.models.ldp_document": "dptopic.models.local_document_lda",     # each estimator's file named after it
}
"""old dotted path -> new dotted path (the release that moved them: 0.2)."""

SPLIT_MODULES = {
    "dptopic.models.private": ("dptopic.models.hdp_lda", "dptopic.models.cdp_lda", "dptopic.models._private_gibbs"),
    "dptopic.models.online": ("dptopic.models.online_lda", "dptopic.models.olp_lda"),
    "dptopic.models.svi": ("dptopic.models.dpsvi", "dptopic.models.online_vb", "dptopic.models._variational"),
}
"""old dotted path -> the modules its estimators moved to, one file each (0.2): the old path imports a module that
holds every name of them, with the same :class:`DeprecationWarning`."""


def new_path(name: str) -> str | None:
    """The new dotted path of the moved module ``name``, or None when ``name`` did not move: an entry of
    :data:`MOVED_MODULES`, or a submodule of a moved package."""
    if name in MOVED_MODULES:
        return MOVED_MODULES[name]
    head, _, tail = name.rpartition(".")
    while head:
        if head in MOVED_MODULES:
            return f"{MOVED_MODULES[head]}.{name[len(head) + 1:]}"
        head, _, tail = head.rpartition(".")
    return None


class _MovedLoader:
    """An import loader (as importlib.abc.Loader, not imported here: it pulls in a dozen modules at start-up)."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        return None         # a placeholder module, replaced in sys.modules by exec_module

    def exec_module(self, module):
        name = module.__spec__.name
        warnings.warn(f"{name} moved to {self.new}: import {self.new} instead ({name} goes in the next release).",
                      DeprecationWarning, stacklevel=2)
        # the module at its new path, the same object (the import system returns what sys.modules holds)
        sys.modules[name] = importlib.import_module(self.new)


class _SplitLoader:
    """The loader of a split module's old path: a new module object holding the names of every module it became."""

    def __init__(self, parts: tuple):
        self.parts = parts

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__spec__.name
        warnings.warn(f"{name} was split into {', '.join(self.parts)}: import from those (or from dptopic.models)"
                      f" instead ({name} goes in the next release).", DeprecationWarning, stacklevel=2)
        for part in reversed(self.parts):       # the first module's names win
            module.__dict__.update({k: v for k, v in vars(importlib.import_module(part)).items()
                                    if not k.startswith("__")})


class MovedModuleFinder:
    """Finds an old path of :data:`MOVED_MODULES` before the file system is searched (the new package's folder would
    otherwise load a second copy of a submodule under the old package's name)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in SPLIT_MODULES:
            return importlib.util.spec_from_loader(fullname, _SplitLoader(SPLIT_MODULES[fullname]))
        new = new_path(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _MovedLoader(new))


def install() -> None:
    """Put :class:`MovedModuleFinder` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
