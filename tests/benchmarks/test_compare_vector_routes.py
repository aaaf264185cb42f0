"""benchmarks/compare_vector_routes.py: per corpus and epsilon, the presence, the signal, the route ``auto`` takes
on them, the three routes' medians and the paired coverage differences, read off bench_utility.py's files."""
import contextlib
import io
import json


def rows(points):
    """Rows of ``epsilon -> (coverage, accuracy, supported)``; three runs each, their coverage shares the median and
    ``spread`` either side."""
    return {"rows": [{"epsilon": e, "coverage_share": c, "accuracy_share": a, "supported": s,
                      "runs": [{"coverage_share": c + d, "supported": s} for d in (-spread, 0.0, spread)]}
                     for e, (c, a, s, spread) in points.items()]}


def test_each_corpus_and_epsilon_gives_its_route_medians_and_differences(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "presence", lambda corpus, V: {"big": 60_000.0, "small": 40_000.0}[corpus])
    files = []
    for corpus in ("small", "big"):
        r = {"corpus": corpus, "n_topics": 20, "vocab_size": 2000,
             "trainers": {"docdp-cooc-groups": rows({1: (0.70, 0.8, 17, 0.01), 2: (0.72, 0.9, 20, 0.01)}),
                          "docdp-cooc-vectors-spread": rows({1: (0.69, 0.6, 9, 0.01), 2: (0.74, 0.7, 16, 0.02)}),
                          "docdp-cooc": rows({1: (0.66, 0.5, 9, 0.0), 2: (0.71, 0.6, 16, 0.01)})}}
        files.append(tmp_path / f"utility_{corpus}.json")
        files[-1].write_text(json.dumps(r))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main([str(f) for f in files])
    lines = out.getvalue().splitlines()
    # sigma 3.93 at epsilon 1 and 2.10 at 2 (delta 1e-5): 60,000 gives signals 87 and 163, the groups; 40,000 stays
    # below the presence cut at both, whatever its signal (58, 109)
    assert lines[2] == ("| small | 40,000 | 1 | 58 | spread | 0.70 / 0.80 / 17 | 0.69 / 0.60 / 9 | 0.66 / 0.50 / 9"
                        " | +0.010 ± 0.008 | **+0.040 ± 0.006** |")
    assert lines[3].startswith("| small | 40,000 | 2 | 109 | spread |")
    assert lines[4].startswith("| big | 60,000 | 1 | 87 | groups |")
    # the differences of the runs' means: standard errors sqrt(0.01^2/3 + 0.02^2/3) = 0.013, sqrt(2 0.01^2/3); in
    # bold beyond 2 of them (+0.040 against 0.006 above; -0.020 against 0.013 not)
    assert lines[5].endswith("| 0.72 / 0.90 / 20 | 0.74 / 0.70 / 16 | 0.71 / 0.60 / 16 | −0.020 ± 0.013"
                             " | +0.010 ± 0.008 |")
