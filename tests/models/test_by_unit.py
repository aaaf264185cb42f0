"""``dptopic.models.by_unit``."""
import pytest
import dptopic
from dptopic.errors import DPTopicError


@pytest.mark.parametrize("make, suggestion", [
    (lambda: dptopic.LDA(n_topic=5), "n_topics"),
    (lambda: dptopic.DocDPCooccurrence(epsilion=2), "epsilon"),
    (lambda: dptopic.HDPLDA.from_budget(1000, 1e-5, 20, n_topic=5), "n_topics"),
    (lambda: dptopic.for_unit("document", 1, n_topic=5), "n_topics"),
])
def test_a_misspelt_parameter_is_one_line_that_names_the_right_one(make, suggestion):
    with pytest.raises(DPTopicError, match=f"did you mean {suggestion}=") as e:
        make()
    assert isinstance(e.value, TypeError)          # still what Python and scikit-learn raise for it
    with pytest.raises(TypeError, match="its parameters are"):
        dptopic.for_unit("document", 1, algorithm="docdp")
