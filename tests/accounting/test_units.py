"""The privacy units' bounds and defaults (``accounting/units.py``): what ``dptopic.for_unit`` builds with, each
documented where it is defined."""
import inspect
from pathlib import Path


def test_the_unit_constants_are_for_unit_s_defaults_and_documented_in_order():
    import ast

    import dptopic.accounting.units as units
    from dptopic.models.docdp_cooc import resolve_ranking_noise
    from dptopic.training.by_unit import for_unit

    body = ast.parse(Path(units.__file__).read_text("utf-8")).body
    docs = {a.targets[0].id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.Assign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)}
    assert "largest epsilon" in docs["UNIT_EPSILON_MAX"] and "delta" in docs["TRAIN_DELTA"]
    assert "two noise multipliers" in docs["DOCUMENT_RANKING_NOISE"]
    assert inspect.signature(for_unit).parameters["delta"].default == units.TRAIN_DELTA
    model = for_unit("document", epsilon=1.0)
    assert resolve_ranking_noise(model.ranking_noise, model.word_choice) == units.DOCUMENT_RANKING_NOISE
    from dptopic.models import HDPLDA

    assert units.WORD_EPSILON_INHERENT == HDPLDA.DEFAULT_EPSILON_INHERENT
