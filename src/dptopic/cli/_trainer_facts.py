"""What ``dptopic train``'s help and its flag checks read of each trainer's class (cli/_train_flags.py): the
parameters it takes (``Trainer.parameters()``), the keywords of its ``fit`` (``Trainer.fit_parameters()``), whether
it marks the topics that stand above its noise and whether its fit spends a budget.

Reading them from the classes imports every trainer (numba, scipy, scikit-learn: seconds), and ``dptopic train
--help`` lists the options of each; so the command line reads this table, written from the classes by
``python -m dptopic.cli._trainer_facts``. tests/cli/test_train_flags.py compares it with the classes and names that
command when a trainer's signature changed and the table did not.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from ..models.registry import TRAINERS

FACTS = {
    'lda': {'parameters': ('n_topics', 'alpha', 'beta', 'n_iter', 'seed', 'n_jobs', 'sampler', 'eval_every',
        'verbose', 'backend', 'client', 'parallel'), 'fit_parameters': ('vocabulary', 'callback'),
        'marks_supported_topics': False, 'spends_budget': False},
    'hdp': {'parameters': ('n_topics', 'epsilon_laplace', 'epsilon_inherent', 'clip', 'alpha', 'beta', 'n_iter',
        'delta', 'noise', 'paper_literal', 'final_release', 'secure', 'seed', 'n_jobs', 'verbose', 'sampler',
        'backend', 'client', 'parallel', 'epsilon'), 'fit_parameters': ('vocabulary', 'callback'),
        'marks_supported_topics': False, 'spends_budget': True},
    'cdp': {'parameters': ('n_topics', 'paper_epsilon', 'every_iteration', 'alpha', 'beta', 'n_iter',
        'count_release_delta', 'noise', 'secure', 'seed', 'n_jobs', 'verbose', 'backend', 'client', 'parallel'),
        'fit_parameters': ('vocabulary', 'callback'), 'marks_supported_topics': False, 'spends_budget': True},
    'cdp+': {'parameters': ('n_topics', 'paper_epsilon', 'every_iteration', 'alpha', 'beta', 'n_iter',
        'count_release_delta', 'noise', 'secure', 'seed', 'n_jobs', 'verbose', 'backend', 'client', 'parallel'),
        'fit_parameters': ('vocabulary', 'callback'), 'marks_supported_topics': False, 'spends_budget': True},
    'docdp-cooc': {'parameters': ('n_topics', 'epsilon', 'delta', 'n_words', 'ranking_noise', 'threshold', 'tail',
        'background_share', 'n_background', 'word_choice', 'max_false_words', 'alpha', 'n_jobs', 'secure', 'seed',
        'verbose', 'unit', 'documents_per_user', 'backend', 'client', 'recovery', 'public_vectors', 'vectors_route',
        'person_statistic'), 'fit_parameters': ('vocabulary', 'user_ids', 'public_corpus'), 'marks_supported_topics':
        True, 'spends_budget': True},
    'docdp': {'parameters': ('n_topics', 'epsilon', 'delta', 'n_iter', 'threshold', 'alpha', 'inner', 'secure',
        'seed', 'n_jobs', 'verbose', 'init', 'unit', 'documents_per_user', 'backend', 'client'), 'fit_parameters':
        ('vocabulary', 'user_ids'), 'marks_supported_topics': True, 'spends_budget': True},
    'svi': {'parameters': ('n_topics', 'noise_multiplier', 'sampling_rate', 'n_epochs', 'clip', 'max_doc_len',
        'delta', 'alpha', 'eta', 'tau0', 'kappa', 'secure', 'seed', 'n_jobs', 'verbose', 'epsilon'), 'fit_parameters':
        ('vocabulary', 'eval_set'), 'marks_supported_topics': True, 'spends_budget': True},
    'online-vb': {'parameters': ('n_topics', 'alpha', 'eta', 'tau0', 'kappa', 'batch_size', 'n_epochs', 'total_docs',
        'shuffle', 'seed', 'n_jobs', 'verbose', 'max_doc_update_iter'), 'fit_parameters': ('vocabulary', 'eval_set'),
        'marks_supported_topics': False, 'spends_budget': False},
    'fed': {'parameters': ('n_topics', 'epsilon', 'epsilon_per_entry', 'failure_rate', 'gamma', 'rounds',
        'sample_ratio', 'pad_length', 'n_clients', 'alpha', 'beta', 'variant', 'exclusion', 'replacement',
        'local_iter', 'subset_size', 'report_delta', 'seed', 'n_jobs', 'verbose', 'local_inference', 'report_words',
        'secure', 'user_epsilon', 'vocab_size'), 'fit_parameters': ('vocabulary', 'heldout', 'callback'),
        'marks_supported_topics': False, 'spends_budget': True},
    'lp': {'parameters': ('n_topics', 'f', 'epsilon_word', 'alpha', 'beta', 'n_iter', 'delta', 'seed', 'n_jobs',
        'sampler', 'eval_every', 'verbose'), 'fit_parameters': ('vocabulary', 'callback'), 'marks_supported_topics':
        False, 'spends_budget': False},
    'olp': {'parameters': ('prior_corpus', 'f', 'epsilon_word', 'n_topics', 'alpha', 'beta', 'lam', 'omega', 'sigma2',
        'batch_size', 'n_iter', 'prior_iter', 'alg2_literal', 'delta', 'seed', 'n_jobs', 'verbose'), 'fit_parameters':
        (), 'marks_supported_topics': False, 'spends_budget': False},
    'ldp-doc': {'parameters': ('n_topics', 'threshold', 'reports_per_contributor', 'alpha', 'verbose'),
        'fit_parameters': (), 'marks_supported_topics': False, 'spends_budget': False},
}


def facts_of_classes() -> dict:
    """The facts of :data:`FACTS`, read from the classes themselves (this imports every trainer)."""
    return {t.name: {"parameters": t.parameters(), "fit_parameters": t.fit_parameters(),
                     "marks_supported_topics": t.marks_supported_topics, "spends_budget": t.spends_budget}
            for t in TRAINERS.values() if t.cli}


def source(facts: dict) -> str:
    """This module's text with ``facts`` as :data:`FACTS`."""
    path = Path(__file__)
    text = path.read_text(encoding="utf-8")
    rows = [textwrap.fill(f"    {name!r}: {entry!r},", 118, subsequent_indent=" " * 8, break_long_words=False,
                          break_on_hyphens=False) for name, entry in facts.items()]
    table = "\n".join(["FACTS = {", *rows, "}"]) + "\n"
    return re.sub(r"^FACTS = .*?\n(?=\n\ndef )", lambda _: table, text, count=1, flags=re.S | re.M)


def write() -> None:
    """Rewrite :data:`FACTS` from the classes."""
    Path(__file__).write_text(source(facts_of_classes()), encoding="utf-8")


if __name__ == "__main__":
    write()
