"""Membership inference on a topic-model-based classifier (Zhao et al. 2021, Sec. VII-C2, Fig. 7).

The topic model is wrapped into a classifier — θ features by fold-in with the learned Φ,
then logistic regression — and attacked with the shadow-model attack of Shokri et al.
(2017): shadow classifiers trained the same way on random halves of a shadow pool
provide labelled (prediction vector, in/out) records, and one attack model per class
learns to tell members from non-members. Zhao et al. do not fix the classifier, the
number of shadows or the attack model; the choices here are documented in
``docs/auditing.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._progress import progress_bar
from ..corpus import Corpus
from ..dataset_ledger.charge import shadow_runs
from ..errors import DPTopicError
from ..evaluation import infer_theta
from .lira import (
    _check_corpus,
    _check_seed,
    _check_train_fn,
    check_phi,
    outside_guarantee_label,
    phi_and_privacy,
    shadow_claim,
)


@dataclass
class TopicClassifier:
    """Φ + logistic regression on fold-in θ; ``predict_proba(corpus)`` is the black box an attacker sees."""

    phi: np.ndarray
    clf: object
    privacy: dict | None = None
    classes: np.ndarray | None = None  # every label of the attacked corpus: a shadow may miss some of them


    def features(self, corpus: Corpus) -> np.ndarray:
        K = self.phi.shape[0]
        return infer_theta(self.phi, corpus.word_ids, corpus.doc_ptr, 1.0 / K, 30, 10, 0)

    def predict_proba(self, corpus: Corpus) -> np.ndarray:
        """One column per label of ``classes`` (a label this classifier never saw gets probability 0), so every
        shadow's prediction vectors have the same length."""
        p = self.clf.predict_proba(self.features(corpus))
        if self.classes is None:
            return p
        out = np.zeros((p.shape[0], len(self.classes)))
        out[:, np.searchsorted(self.classes, self.clf.classes_)] = p
        return out

    def predict(self, corpus: Corpus) -> np.ndarray:
        labels = self.clf.classes_ if self.classes is None else self.classes
        return labels[np.argmax(self.predict_proba(corpus), axis=1)]


def train_topic_classifier(corpus: Corpus, train_fn, rng: np.random.Generator, classes=None) -> TopicClassifier:
    """Fit the topic model with ``train_fn`` (as in :mod:`dptopic.attacks.lira`) and a classifier on θ."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn: heavy, loaded when used

    if corpus.labels is None:
        raise DPTopicError("the classifier attack needs a labelled corpus: give a corpus read with its labels"
                           " (label_field=).")

    with shadow_runs():     # a shadow's release goes on its own dataset of the ledger
        phi, priv = phi_and_privacy(train_fn(corpus, rng))
    phi = check_phi(phi, corpus.vocab_size)
    phi = phi / phi.sum(axis=1, keepdims=True)
    tc = TopicClassifier(phi, None, priv, None if classes is None else np.asarray(sorted(classes)))
    y = np.asarray(corpus.labels)
    if len(np.unique(y)) < 2:
        # a random half of a small or skewed corpus may hold one class only: logistic regression cannot fit it (a
        # ValueError), and the classifier that sees one class predicts it with probability 1
        from sklearn.dummy import DummyClassifier  # scikit-learn: heavy, loaded when used

        tc.clf = DummyClassifier(strategy="prior").fit(tc.features(corpus), y)
    else:
        tc.clf = LogisticRegression(max_iter=1000).fit(tc.features(corpus), y)
    return tc


def _attack_features(proba: np.ndarray) -> np.ndarray:
    # Shokri et al.: the full prediction vector, here sorted (class-agnostic) plus its entropy
    p = np.clip(proba, 1e-12, 1)
    return np.column_stack([np.sort(p, axis=1)[:, ::-1], -(p * np.log(p)).sum(axis=1)])


SE_SINGLE = ("one replicate (one target split, one target, one set of shadows): attack_accuracy_se and"
             " target_accuracy_se are binomial, sqrt(p(1 - p)/n) over the records scored (n_eval, n_test), and"
             " target_f1_macro_se a bootstrap over the test documents; they leave out the spread from drawing the"
             " split and training the target and the shadows (their sampling and noise), which only independent"
             " replicates measure (n_replicates >= 2)")
"""What the standard errors of a single-replicate attack count (``se_method`` of its result)."""

SE_REPLICATES = ("{r} independent replicates (each a fresh target split, target, shadows and scored records, from its"
                 " own child of the seed): each figure is their mean, its standard error their sample standard"
                 " deviation / sqrt({r}), which counts the spread from training as well as from the records scored")
"""What the standard errors of a replicated attack count (``se_method`` of its result)."""

_REPLICATED = ("attack_accuracy", "target_accuracy", "target_f1_macro")


def classifier_mia(corpus: Corpus, train_fn, test_size: float = 0.25, n_shadows: int = 10, seed=None,
                   verbose: int = 1, n_replicates: int = 1) -> dict:
    """Target on a train/test split, ``n_shadows`` shadow classifiers on random halves of the whole corpus,
    per-class attack models; returns attack accuracy on a balanced member/non-member set, with the target's
    test accuracy and macro F1.

    ``n_replicates=1`` (default): one attack; its standard errors are those of the records scored only
    (``se_method`` says so: :data:`SE_SINGLE`). ``n_replicates >= 2``: the whole attack repeated on independent
    child streams of ``seed``; each figure is the replicates' mean with the standard error of their spread
    (:data:`SE_REPLICATES`), and ``replicates`` lists every replicate's own figures."""
    _check_corpus(corpus)
    if isinstance(n_shadows, bool) or not isinstance(n_shadows, (int, np.integer)) or n_shadows < 1:
        raise DPTopicError(f"invalid n_shadows={n_shadows!r}: need a whole number >= 1 of shadow classifiers.")
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)) or n_replicates < 1:
        raise DPTopicError(f"invalid n_replicates={n_replicates!r}: need a whole number >= 1 of replicates of the"
                           " attack (2 or more for a standard error that counts training).")
    if corpus.labels is None:
        raise DPTopicError("the classifier attack needs a labelled corpus: give a corpus read with its labels"
                           " (label_field=).")
    _check_train_fn(train_fn)
    seed = _check_seed(seed)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if n_replicates == 1:
        out = _one_attack(corpus, train_fn, test_size, n_shadows, rng, verbose)
        out.update({"n_replicates": 1, "se_method": SE_SINGLE})
        return out
    runs = [_one_attack(corpus, train_fn, test_size, n_shadows, child, verbose)
            for child in rng.spawn(int(n_replicates))]
    out = dict(runs[0])
    for key in _REPLICATED:
        vals = np.array([r[key] for r in runs], dtype=np.float64)
        out[key] = float(vals.mean())
        out[key + "_se"] = float(vals.std(ddof=1) / np.sqrt(len(vals)))
    out["target_majority_class_accuracy"] = float(np.mean([r["target_majority_class_accuracy"] for r in runs]))
    out["replicates"] = [{k: r[k] for k in ("attack_accuracy", "attack_accuracy_se", "target_accuracy",
                                             "target_accuracy_se", "target_f1_macro", "target_f1_macro_se")}
                         for r in runs]
    out.update({"n_replicates": int(n_replicates), "se_method": SE_REPLICATES.format(r=int(n_replicates))})
    return out


def _one_attack(corpus: Corpus, train_fn, test_size: float, n_shadows: int, rng: np.random.Generator,
                verbose: int) -> dict:
    """One replicate of :func:`classifier_mia`, every draw from ``rng``."""
    from sklearn.ensemble import GradientBoostingClassifier  # scikit-learn: heavy, loaded when used
    from sklearn.metrics import accuracy_score, f1_score  # scikit-learn: heavy, loaded when used

    train, test = corpus.train_test_split(test_size, seed=rng)
    classes = sorted(set(corpus.labels))
    if len(classes) < 2:
        raise DPTopicError(f"the classifier attack needs at least two classes; every document is labelled"
                           f" {classes[0]!r}: give a corpus with documents of two or more labels.")
    if len(set(train.labels)) < 2:
        raise DPTopicError(f"the target classifier's training split ({train.n_docs} of the {corpus.n_docs} documents,"
                           f" drawn at random) holds only class {train.labels[0]!r}: give more documents of every"
                           " class (a larger corpus or sample of it, or classes with more even counts).")
    target = train_topic_classifier(train, train_fn, rng, classes)
    y_test = np.asarray(test.labels)
    pred = target.predict(test)
    recs, lab, cls = [], [], []
    with progress_bar(n_shadows, "shadow classifiers", verbose) as bar:
        for _ in range(n_shadows):
            perm = rng.permutation(corpus.n_docs)
            s_in, s_out = corpus.subset(np.sort(perm[: corpus.n_docs // 2])), corpus.subset(np.sort(perm[corpus.n_docs // 2:]))
            sh = train_topic_classifier(s_in, train_fn, rng, classes)
            for part, flag in ((s_in, 1), (s_out, 0)):
                recs.append(_attack_features(sh.predict_proba(part)))
                lab.append(np.full(part.n_docs, flag))
                cls.append(np.asarray(part.labels))
            bar.advance(1)
    R, L, C = np.vstack(recs), np.concatenate(lab), np.concatenate(cls)
    attack = {}
    for c in np.unique(C):
        m = C == c
        attack[c] = GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=0).fit(R[m], L[m]) \
            if len(np.unique(L[m])) == 2 else None
    n = min(train.n_docs, test.n_docs)
    mem = train.subset(np.sort(rng.choice(train.n_docs, n, replace=False)))
    non = test.subset(np.sort(rng.choice(test.n_docs, n, replace=False)))
    correct = []
    for part, flag in ((mem, 1), (non, 0)):
        F = _attack_features(target.predict_proba(part))
        ys = np.asarray(part.labels)
        guess = np.array([attack[c].predict(F[i:i + 1])[0] if attack.get(c) is not None else 1
                          for i, c in enumerate(ys)])
        correct.append(guess == flag)
    acc = float(np.mean(np.concatenate(correct)))
    n_eval = 2 * n
    target_acc = float(accuracy_score(y_test, pred))
    _, counts = np.unique(y_test, return_counts=True)
    chance = float(counts.max() / len(y_test))      # always guessing the test set's most frequent class
    return {"attack_accuracy": acc, "attack_accuracy_se": float(np.sqrt(acc * (1 - acc) / n_eval)),
            "n_eval": n_eval, "target_accuracy": target_acc,
            "target_accuracy_se": float(np.sqrt(target_acc * (1 - target_acc) / len(y_test))),
            "target_f1_macro": float(f1_score(y_test, pred, average="macro")),
            "target_f1_macro_se": _f1_bootstrap_se(y_test, pred, rng), "n_test": int(len(y_test)),
            "target_majority_class_accuracy": chance, "n_shadows": n_shadows,
            "claimed_privacy": shadow_claim(target.privacy),   # the audit seeded the target itself
            "metrics_guarantee": outside_guarantee_label()}


F1_BOOTSTRAP = 200
"""Resamples of the test documents for the standard error of the target's macro F1."""


def _f1_bootstrap_se(y_true, y_pred, rng, n_boot: int = F1_BOOTSTRAP) -> float:
    """Standard error of the macro F1 by a bootstrap over the test documents (its spread over resamples).

    Each resample's macro F1 is scikit-learn's ``f1_score(average="macro", zero_division=0)``: the mean, over the
    labels present in that resample's truth or predictions, of ``2 tp / (n_true + n_pred)``; counted here with
    ``np.bincount`` (scikit-learn's per-call input checks cost ~4 ms a resample, most of an attack's time)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    n = len(y_true)
    if n < 2:
        return float("nan")
    _, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    codes = codes.reshape(-1)
    t, p = codes[:n], codes[n:]
    k = int(codes.max()) + 1
    vals = []
    for i in (rng.integers(n, size=n) for _ in range(n_boot)):
        ti, pi = t[i], p[i]
        tp = np.bincount(ti[ti == pi], minlength=k)
        both = np.bincount(ti, minlength=k) + np.bincount(pi, minlength=k)
        present = both > 0
        vals.append(float(np.mean(2.0 * tp[present] / both[present])))
    return float(np.std(vals, ddof=1))
