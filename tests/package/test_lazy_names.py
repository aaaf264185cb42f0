"""The packages that import their names on first use export exactly what they did when they imported them all."""
import importlib
import subprocess
import sys

import pytest

EXPORTS = {
    "dptopic.kernels": ["dense_sweep", "sparse_sweep", "fold_in", "vb_estep", "kernel_state", "subset_select",
                        "ShardedSweeper", "randomize_presence", "add_discrete_laplace", "count_assignments"],
    "dptopic.accounting": ["PrivacyLedger", "SubsampledGaussianEvent", "RandomizedResponseEvent", "fdptm_report",
                           "hdp_total_epsilon", "eps_total", "rrp_event", "LaplaceEvent", "compose_pld"],
    "dptopic.mechanisms": ["gaussian_mechanism", "laplace_mechanism", "randomized_response", "rrp_perturb", "clamp"],
    "dptopic.models": ["LDA", "HDPLDA", "DocDPCooccurrence", "LocalDocumentLDA", "SecureSumTopics", "TopicModel", "load", "TRAINERS"],
}


@pytest.mark.parametrize("package", sorted(EXPORTS))
def test_every_exported_name_resolves(package):
    mod = importlib.import_module(package)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
    assert set(EXPORTS[package]) <= set(mod.__all__) and set(mod.__all__) <= set(dir(mod))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(mod, "nope")


def test_the_local_randomizers_load_without_the_gaussian_accountant_or_the_samplers():
    code = ("import sys, dptopic.contributor.randomizer, dptopic.contributor.document_randomizer; bad = [m for m in ('dptopic.accounting.gaussian', 'dptopic.kernels.sparse',"
            " 'dptopic.kernels.dense', 'dptopic.mechanisms.laplace') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_a_name_exported_from_a_submodule_of_the_same_name_stays_the_name_once_that_submodule_is_imported(
        tmp_path, monkeypatch):
    # as dptopic.attacks.classifier_mia (a function in attacks/classifier_mia.py): importing the submodule first binds
    # the module on the package, which hid the function once the package imported its names on first use
    pkg = tmp_path / "lazy_pkg_same_name"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from dptopic._lazy_names import lazy_names\n"
                                     "__getattr__, __dir__ = lazy_names(__name__, {'thing': 'thing', 'other': 'more'},"
                                     " globals())\n")
    (pkg / "thing.py").write_text("def thing():\n    return 'the function'\n")
    (pkg / "more.py").write_text("other = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("lazy_pkg_same_name.thing")
    importlib.import_module("lazy_pkg_same_name.more")
    package = sys.modules["lazy_pkg_same_name"]
    assert package.thing() == "the function" and package.other == 2
    assert isinstance(package.more, type(sys))          # a submodule of another name stays the module
