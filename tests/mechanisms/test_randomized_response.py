"""``dptopic.mechanisms.randomized_response``."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError


@pytest.mark.parametrize("ids,ptr,V,match", [
    ([0], [0, 1], 0, "vocab_size"),                # V = 0 made an event of epsilon 0
    ([5], [0, 1], 2, "word_ids"),                  # an id beyond V was silently dropped
    ([-1], [0, 1], 2, "word_ids"),
    ([0, 1], [0, 1], 2, "doc_ptr"),                # a pointer that stops short ignored the last word
    ([0, 1], [1, 2], 2, "doc_ptr"),
])
def test_randomized_response_refuses_a_malformed_corpus(ids, ptr, V, match):
    from dptopic.mechanisms.randomized_response import randomized_response

    with pytest.raises(DPTopicError, match=match):
        randomized_response(np.array(ids, dtype=np.int32), np.array(ptr), V, 0.5, np.random.default_rng(0))
