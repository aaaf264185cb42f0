"""``dptopic.models.lplda``."""
import json

import numpy as np
import pytest

from helpers import corrupt_model_line


def _edited(src, dst, edit_meta=None, arrays=None, drop=None):
    import shutil

    shutil.copytree(src, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta.pop("array_sha256", None)          # the arrays' digests are optional
    if drop:
        meta["arrays"].remove(drop)
        (dst / f"{drop}.npy").unlink()
    for name, value in (arrays or {}).items():
        np.save(dst / f"{name}.npy", value)
    if edit_meta:
        edit_meta(meta)
    (dst / "model.json").write_text(json.dumps(meta))
    return dst


@pytest.mark.filterwarnings('ignore')
def test_damaged_local_models_are_refused_in_one_line(saved_local_models, tmp_path):
    def set_training(key, value):
        return lambda m: m["training"].__setitem__(key, value)

    cases = [
        _edited(saved_local_models / "doc", tmp_path / "d1", set_training("n_reports", "x")),
        _edited(saved_local_models / "doc", tmp_path / "d2", lambda m: m["privacy"].pop("epsilon_doc")),
        _edited(saved_local_models / "olp", tmp_path / "o1", set_training("n_batches", None)),
        _edited(saved_local_models / "olp", tmp_path / "o2", set_training("n_docs_seen", 1.5)),
        _edited(saved_local_models / "olp", tmp_path / "o3", arrays={"stream_state": np.array([np.nan, 0.5, np.nan, np.nan])}),
        _edited(saved_local_models / "olp", tmp_path / "o4", arrays={"stream_state": np.float64(1.0)}),
        _edited(saved_local_models / "olp", tmp_path / "o5", drop="stream_state"),
        _edited(saved_local_models / "lp", tmp_path / "l1", arrays={"report_stats": np.float64(0.5)}),
        _edited(saved_local_models / "lp", tmp_path / "l2", drop="noisy_counts"),
        _edited(saved_local_models / "lp", tmp_path / "l3", arrays={"estimates": np.zeros((2, 2, 2))}),
        _edited(saved_local_models / "lp", tmp_path / "l4", arrays={"targets": np.array([True] * 12)}),
        _edited(saved_local_models / "lp", tmp_path / "l5", arrays={"variance_paper": np.full(12, np.nan)}),
        _edited(saved_local_models / "lp", tmp_path / "l6", arrays={"report_stats": np.array([2.0, 4.0, 1.0])}),
    ]
    for folder in cases:
        corrupt_model_line(folder)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("trainer", ["LPLDA", "OLPLDA"])
def test_local_trainers_plan_one_report_per_contributor_and_the_report_states_it(trainer):
    """The randomizer's release per contributor (randomized response on the V presence bits, Zhao et al. Thm 4): the
    events the report states are the plan's, and for contributors of several reports the plan counts them."""
    import warnings

    import dptopic
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.corpus import lda_corpus
    from helpers import assert_fit_spent_its_plan

    c = lda_corpus(n_docs=30, vocab_size=12, n_topics=2, doc_length=10, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = Randomizer.for_simulation(c.vocabulary, epsilon_word=3.0, seed=0).randomize(c)
    m = (dptopic.LPLDA(n_topics=2, n_iter=5, seed=0, verbose=0) if trainer == "LPLDA" else
         dptopic.OLPLDA("none", n_topics=2, n_iter=2, batch_size=10, seed=0, verbose=0)).fit(reports)
    plan = assert_fit_spent_its_plan(m)
    assert plan.releases[0].mechanism == "randomized_response" and plan.releases[0].sensitivity == 12
    m.for_contributors(3)
    plan = assert_fit_spent_its_plan(m)
    assert plan.releases[0].count == 3 and plan.unit.startswith("contributor")
