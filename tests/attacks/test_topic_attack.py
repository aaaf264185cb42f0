import numpy as np

from dptopic import HDPLDA, LDA
from dptopic.attacks import TopicAttack, run_topic_attack
from dptopic.models import IterationInfo


def test_attack_scores_by_hand():
    # V=3, K=2; the target token sits in topic 0 where word 2 dominates
    rel = np.array([[1, 5], [1, 5], [8, 0]], float)
    atk = TopicAttack([0], [2], 3, beta_a=0.0 + 1e-12)
    atk(IterationInfo(0, np.array([0]), rel))
    assert np.isclose(atk.prob_true[0][0], 0.8) and atk.top1[0][0] == 1.0
    atk(IterationInfo(1, np.array([0]), rel))
    # normalised product: 0.8² / (0.1² + 0.1² + 0.8²)
    assert np.isclose(atk.prob_true[1][0], 0.64 / 0.66)


def test_attack_is_stronger_on_non_private_cgs(planted):
    c = planted.corpus
    common = dict(n_topics=5, n_iter=25, verbose=0)
    np_res = run_topic_attack(lambda s: LDA(seed=s, beta=0.01, **common), c, seeds=range(3), n_targets=15)
    hdp_res = run_topic_attack(lambda s: HDPLDA(epsilon_laplace=1.0, epsilon_inherent=10, seed=s, **common), c,
                               seeds=range(3), n_targets=15)
    assert np_res.mean_prob[-1] > hdp_res.mean_prob[-1]
    assert np_res.mean_prob[-1] > np_res.mean_prob[0]  # leakage accumulates with iterations
