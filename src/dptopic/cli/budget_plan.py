"""``budget plan``: what a run or a search would add to each total of the dataset ledger it touches, and what would
refuse it (the library's :func:`dptopic.training.budget.plan_budget`). Apart from cli/budget.py, whose ``show`` and
``cap`` load no trainer."""
from __future__ import annotations

import json

from ..corpus.readers import read_corpus
from ..errors import DPTopicError
from ..reporting.ledger import print_plan
from ..reporting.terminal import make_console
from ..training.budget import plan_budget
from ._flags import flag_errors
from .budget import LEDGER_FLAGS


def cmd_budget_plan(a):
    if a.algorithm is None and a.unit is None:
        raise DPTopicError("budget plan needs the trainer: --algorithm NAME or --unit UNIT (as train takes them).")
    # both: as train takes them (a unit picks its trainer itself, so the two cannot be combined but where --unit user
    # takes a trainer that bounds a person), the library's rule in these flags' names
    params = {}
    if a.topics is not None:
        params["n_topics"] = a.topics
    with flag_errors({**LEDGER_FLAGS, "n_topics": "--topics", "algorithm": "--algorithm", "unit": "--unit",
                      "n_words": "--words"}):
        corpus = None
        if a.corpus is not None:
            with flag_errors({"user_field": "--user-field", "path": "--corpus", "format": "--format"}):
                corpus = read_corpus(a.corpus, a.format, text_field=a.text_field, user_field=a.user_field)
        elif a.dataset is None:
            raise DPTopicError("budget plan needs what the run reads: --dataset NAME (a recorded dataset) or"
                               " --corpus FILE (a corpus the ledger may not have seen).")
        elif a.user_field is not None:
            raise DPTopicError("--user-field reads the people of --corpus FILE: give --corpus, or drop --user-field.")
        out = plan_budget(a.dataset, algorithm=a.algorithm, unit=a.unit, epsilon=a.epsilon, delta=a.delta,
                          ledger=a.ledger, search_runs=a.search_runs, n_words=a.words, corpus=corpus, **params)
    if a.json:
        print(json.dumps(out, indent=2, allow_nan=False))
    else:
        print_plan(out, make_console())
    if out["refused"]:
        raise SystemExit(3)
