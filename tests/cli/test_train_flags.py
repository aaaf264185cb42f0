"""``dptopic.cli._train_flags``: which ``train`` option each trainer reads, read from the trainer registry."""

from pathlib import Path

import pytest

from dptopic.cli import _train_flags as tf
from dptopic.cli._trainers import own_options, trainer_flag
from dptopic.models.registry import TRAINERS
from helpers import loaded_in_a_new_process

CLI_TRAINERS = [t for t in TRAINERS.values() if t.cli]


def test_every_rule_and_trainer_option_is_an_option_of_train():
    options = tf._train_options()
    assert [d for d in tf._READS if d not in options] == []
    assert [(t.name, d) for t in CLI_TRAINERS for d in own_options(t.name) if d not in options] == []
    assert [d for d in tf.algorithm_only() if d not in options] == []


@pytest.mark.parametrize("name", [t.name for t in CLI_TRAINERS])
def test_a_trainer_reads_the_option_of_each_of_its_parameters(name):
    t = TRAINERS[name]
    options = tf._train_options()
    for p in t.parameters():
        flag = trainer_flag(name, p)
        if flag is not None and flag[2:].replace("-", "_") in options:
            assert tf.flag_applies(flag[2:].replace("-", "_"), name), (name, p, flag)
    # and the error messages name that option (and fit's public_corpus=, set by --public-corpus)
    expected = {p: trainer_flag(name, p) for p in (*t.parameters(), *t.fit_parameters())
                if trainer_flag(name, p) and trainer_flag(name, p)[2:].replace("-", "_") in options
                and (p in t.parameters() or p in tf._READS)}
    assert tf.algorithm_flags()[name] == expected


def test_an_option_set_to_none_in_the_trainer_table_is_not_read():
    assert not tf.flag_applies("iterations", "docdp")      # flags={"n_iter": None}
    assert not tf.flag_applies("alpha", "ldp-doc")          # flags={"alpha": None}
    assert tf.flag_applies("iterations", "lda") and tf.flag_applies("alpha", "docdp")
    assert tf.flag_applies("out", "ldp-doc")                # named by no trainer: every trainer reads it


def test_registry_facts_decide_the_options_that_set_no_parameter():
    assert tf.algorithm_only()["reports"][1] == tuple(t.name for t in CLI_TRAINERS if t.reads == "reports")
    assert tf.algorithm_only()["scheduler"][1] == tuple(t.name for t in CLI_TRAINERS if t.dask)
    assert set(tf._STREAMS_SHARDS) == {t.name for t in CLI_TRAINERS if t.streams_shards}
    assert tf.algorithm_only()["public_corpus"][1] == ("docdp-cooc",)
    assert tf.algorithm_only()["user_field"][1] == tf._DOC
    assert tf.algorithm_only()["rounds"][0] == 50          # the default is the parser's


def test_building_the_command_line_imports_no_estimator():
    """The top level's parser: each command's module, which imports the library it runs, is imported only when that
    command runs (cli/main.py's command table)."""
    assert loaded_in_a_new_process("from dptopic.cli.main import build_parser; build_parser(only='')",
                                   ("numpy", "numba", "sklearn", "dptopic.models.lda")) == []


def test_the_trainer_facts_table_is_what_the_classes_say():
    """``train``'s help reads the trainers' parameters from cli/_trainer_facts.py, so that it imports no trainer;
    after a change to a trainer's signature, ``python -m dptopic.cli._trainer_facts`` writes the table again."""
    from dptopic.cli import _trainer_facts

    assert _trainer_facts.FACTS == _trainer_facts.facts_of_classes(), "run: python -m dptopic.cli._trainer_facts"
    assert _trainer_facts.source(_trainer_facts.FACTS) == Path(_trainer_facts.__file__).read_text(encoding="utf-8")
