"""``dptopic.contributor.pull``: ``dptopic pull``'s client fetches a released model and checks the message, without
the models (loading it is ``reporting.pull``'s)."""
import base64
import json

import numpy as np
import pytest

from dptopic.contributor.client import ServiceClient
from dptopic.contributor.pull import fetch_model
from dptopic.errors import DPTopicError
from helpers import loaded_in_a_new_process


class _Answers(ServiceClient):
    """A client whose GETs are answered from a dict (path -> document)."""

    def __init__(self, answers):
        super().__init__("http://127.0.0.1:9")
        self.answers = answers

    def get_json(self, path):
        return self.answers[path]


def test_the_fetch_loads_no_model_code():
    assert loaded_in_a_new_process("from dptopic.contributor.pull import fetch_model",
                                   ("sklearn", "dptopic.models", "dptopic.reporting")) == []


def test_a_model_is_fetched_as_its_text_and_decoded_arrays():
    arrays = {"components": np.arange(6, dtype=np.float64).tobytes()}
    doc = {"model_json": json.dumps({"format": "dptopic-model"}), "model_id": 3, "model_version": "v",
           "arrays": {k: base64.b64encode(v).decode() for k, v in arrays.items()}, "round": 2}
    got = fetch_model("http://127.0.0.1:9", _Answers({"/v1/config": {"api_version": "v1"}, "/v1/model": doc}))
    assert got["arrays"] == arrays and got["model_json"] == doc["model_json"]
    assert (got["path"], got["model_id"], got["model_version"], got["round"]) == ("/v1/model", 3, "v", None)
    fed = {"/v1/config": {"api_version": "v1", "fed": {"epsilon": 1.0}}, "/v1/fed/model": {**doc, "round": True}}
    assert fetch_model("http://127.0.0.1:9", _Answers(fed), fed=True)["round"] is None     # a bool is no round
    fed["/v1/fed/model"]["round"] = 2
    assert fetch_model("http://127.0.0.1:9", _Answers(fed), fed=True)["path"] == "/v1/fed/model"


@pytest.mark.parametrize("answers, words", [
    ({"/v1/config": {"api_version": "v2"}}, 'speaks API "v2"'),
    ({"/v1/config": {"api_version": "v1"}, "/v1/model": {"round": 1}}, "malformed model"),
    ({"/v1/config": {"api_version": "v1"}, "/v1/model": {"model_json": "{}", "arrays": {"a": "!!"}}},
     "malformed model"),
    ({"/v1/config": {"api_version": "v1"}, "/v1/model": {"model_json": 3, "arrays": {}}}, "malformed model"),
])
def test_a_malformed_answer_is_refused_in_one_line_naming_the_server(answers, words):
    with pytest.raises(DPTopicError) as e:
        fetch_model("http://127.0.0.1:9", _Answers(answers))
    assert words in str(e.value) and "127.0.0.1:9" in str(e.value) and "\n" not in str(e.value)


def test_the_fed_model_of_a_server_without_fed_rounds_is_refused_before_it_is_asked_for():
    client = _Answers({"/v1/config": {"api_version": "v1", "fed": None}})
    with pytest.raises(DPTopicError, match="runs no FedLDA rounds"):
        fetch_model("http://127.0.0.1:9", client, fed=True)
