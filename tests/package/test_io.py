"""``dptopic.io``."""
import pytest
from dptopic.errors import DPTopicError


def test_a_model_out_that_holds_another_commands_results_does_not_say_dptopic_did_not_write_them(tmp_path):
    # walk C, finding 11: an audit's folder given to train was said to hold files "which dptopic did not write"
    from dptopic._io import check_output_dir
    from dptopic.errors import DPTopicError

    d = tmp_path / "X"
    d.mkdir()
    (d / ".dptopic-output").write_text("{}")
    (d / "audit.json").write_text("{}")
    with pytest.raises(DPTopicError) as e:
        check_output_dir(d, overwrite=True)
    assert "did not write" not in str(e.value) and "another dptopic command's output folder" in str(e.value)
    (d / ".dptopic-output").unlink()
    with pytest.raises(DPTopicError, match="which dptopic did not write"):
        check_output_dir(d, overwrite=True)
