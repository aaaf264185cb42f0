"""The report page's audit (``reporting/page.py``): refused in the library's parameter, ``audit``, which ``dptopic
report`` writes as its flag."""
import pytest

from dptopic.errors import ParameterError
from dptopic.reporting.page import read_audit


def test_an_audit_that_is_not_one_is_refused_naming_the_audit_parameter(tmp_path):
    (tmp_path / "a.json").write_text("[1, 2]")
    with pytest.raises(ParameterError, match=r"^audit '.*a\.json' is JSON but not a dptopic audit") as e:
        read_audit(str(tmp_path / "a.json"))
    assert e.value.parameter == "audit" and "--" not in str(e.value)
    assert e.value.message({"audit": "--audit"}).startswith(f"--audit {str(tmp_path / 'a.json')!r} is JSON but not")
    with pytest.raises(ParameterError,
                       match=r"^audit '.*' holds no audit\.json: give the folder 'dptopic audit' wrote"):
        read_audit(str(tmp_path))
