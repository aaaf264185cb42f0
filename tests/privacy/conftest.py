"""The neighbouring-datasets harness: a catalogue of adversarial pairs of datasets (D, D') that differ by one unit (a
document, or one person's documents), each trained through a front door with the noise held fixed, and the check that
every release moved by at most the sensitivity its noise was calibrated for.

Holding the noise fixed. Every release goes through a mechanism of ``dptopic.mechanisms``, which hands it to an
observer (:mod:`dptopic.mechanisms.observer`) with the statistic before the noise and the calibrated sensitivity. The
run on D records its releases; the run on D' records its statistics and *replays* D's outputs, so both runs follow the
same public history (adaptive composition conditions on the earlier outputs) and every later statistic is comparable.
``||stat(D') - stat(D)||`` (L2 for Gaussian noise, L1 for Laplace) must stay within the sensitivity.

The test modules reach this harness only through fixtures and the ``pair`` parameter that ``pytest_generate_tests``
fills from :data:`PAIRS` (CONTRIBUTING.md: no test module imports another).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

from dptopic.corpus import Corpus, Vocabulary
from dptopic.errors import DPTopicError
from dptopic.mechanisms.observer import observing

WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(48)]
"""The public vocabulary of every dataset (pseudo-words the tokenizer keeps as they are)."""


@dataclass
class Dataset:
    """Documents (lists of words) and each one's person."""
    docs: list
    users: list

    def without_user(self, user):
        keep = [i for i, u in enumerate(self.users) if u != user]
        return Dataset([self.docs[i] for i in keep], [self.users[i] for i in keep])

    def without_document(self, i):
        return Dataset(self.docs[:i] + self.docs[i + 1:], self.users[:i] + self.users[i + 1:])

    def plus(self, docs, user):
        return Dataset(self.docs + [list(d) for d in docs], self.users + [user] * len(docs))

    def corpus(self, vocabulary) -> Corpus:
        ids = [np.array([vocabulary.id(w) for w in d], dtype=np.int64) for d in self.docs]
        lengths = np.array([len(d) for d in ids], dtype=np.int64)
        ptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        flat = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        return Corpus(ptr, flat.astype(np.int32), vocabulary, user_ids=list(self.users))

    def write_jsonl(self, path):
        path.write_text("".join(json.dumps({"text": " ".join(d), "user": u}) + "\n"
                                for d, u in zip(self.docs, self.users)))
        return path


def background(seed: int = 0, people: int = 30, per_person: int = 3, length: int = 12) -> Dataset:
    """Ordinary people: two topics over halves of the words."""
    rng = np.random.default_rng(seed)
    docs, users = [], []
    for p in range(people):
        half = WORDS[:24] if p % 2 else WORDS[24:]
        for _ in range(per_person):
            docs.append(list(rng.choice(half, size=length)))
            users.append(f"p{p}")
    return Dataset(docs, users)


@dataclass
class Pair:
    """Two neighbouring datasets. ``d`` is the larger; ``d2`` lacks one unit of it (``unit``: "document" or "user").
    ``split``: train on the training part of a held-out split, as a training run does; ``options``: what else the
    fit takes (``public``: a public corpus; ``secure``; ``shards``: fit from a shard folder of that many shards;
    ``private_vocabulary``: CLI only); ``refused``: ``d`` must be refused in one line before anything is released
    (person ids that differ by a control or format character would let one id pass for another)."""
    name: str
    unit: str
    d: Dataset
    d2: Dataset
    split: bool = False
    options: dict = field(default_factory=dict)
    fronts: tuple = ("library", "cli")
    slow: bool = False
    refused: bool = False


M = ["waa", "wab", "wac", "wad", "wae", "waf", "wag", "wah", "wai", "waj", "wak", "wal"]   # one message


def _copies(n_others: int) -> Dataset:
    """Person "P" writes the message first in the file; ``n_others`` people write a copy of it after, each with two
    documents of their own (so a copy that changes side changes its writer's contribution)."""
    base = background(1, people=20)
    own = background(12, people=n_others, per_person=2)
    d = Dataset([list(M)] + base.docs, ["P"] + base.users)
    for i in range(n_others):
        d = d.plus([M] + own.docs[2 * i:2 * i + 2], f"copy{i}")
    return d


def _invisible(suffix: str) -> tuple:
    """Person "v" writes one document; person "v" + ``suffix`` writes 20 copies of another on other words. Removing
    the second person moves a release by exactly 1 when the two are two people, and by about 1.38 when they are
    grouped as one (the sum of both, scaled to norm 1, against "v"'s own document)."""
    base = background(2, people=10)
    d = base.plus([["wba", "wbb"]], "v").plus([["wbc", "wbd"]] * 20, "v" + suffix)
    return d, d.without_user("v" + suffix)


def _pairs() -> list:
    out = []
    for unit in ("document", "user"):
        copies = _copies(400)
        d2 = copies.without_user("P") if unit == "user" else copies.without_document(0)
        out.append(Pair("copies of one message across people, held-out split", unit, copies, d2, split=True))
        out.append(Pair("copies of one message across people, no split", unit, copies, d2))
        big = background(3).plus([list(np.random.default_rng(4).choice(WORDS, 12)) for _ in range(2000)], "big")
        out.append(Pair("one person with thousands of documents", unit, big,
                        big.without_user("big") if unit == "user" else big.without_document(len(big.docs) - 1),
                        slow=unit == "document"))
        huge = background(5).plus([list(np.random.default_rng(6).choice(WORDS, 50_000))], "huge")
        out.append(Pair("one huge document", unit, huge, huge.without_user("huge")))
        base = background(7)
        empty = base.plus([[], [], []] if unit == "user" else [[]], "empty")
        out.append(Pair("empty documents", unit, empty, base, fronts=("library",)))
        if unit == "document":      # a user-level fit groups people in memory and refuses shards without their ids
            sharded = background(8, people=12)
            out.append(Pair("shards", unit, sharded, sharded.without_document(18), options={"shards": 3},
                            fronts=("library",)))
            out.append(Pair("Dask partitions", unit, sharded, sharded.without_document(18),
                            options={"shards": 3, "dask": True}, fronts=("library",), slow=True))
        out.append(Pair("the public prior", unit, base.plus([M], "m"), base, options={"public": True}))
        # a co-occurrence release over public word groups (vectors_route="groups"): the document's group counts
        out.append(Pair("public word groups", unit, base.plus([M], "m"), base, options={"vectors": True},
                        fronts=("library",)))
        if unit == "document":      # the rectangular release (vectors_route="rectangular"): document unit only
            out.append(Pair("public word vectors, rectangular release", unit, base.plus([M], "m"), base,
                            options={"vectors": "rectangular"}, fronts=("library",)))
        out.append(Pair("secure mode", unit, base.plus([M], "m"), base, options={"secure": True}, fronts=("library",)))
        if unit == "document":      # DP set union selects per document: train refuses it with --unit user
            many = background(13, people=150)
            out.append(Pair("the private vocabulary", unit, many.plus([M], "m"), many,
                            options={"private_vocabulary": True}, fronts=("cli",), slow=True))
        if unit == "user":
            for suffix, name in (("\u0000", "a trailing NUL"), ("\u200b", "a zero-width space"),
                                 (" ", "a trailing space"), ("\u0000\u0000", "two trailing NULs")):
                d, d2 = _invisible(suffix)
                out.append(Pair(f"ids differing by {name}", unit, d, d2, refused=suffix != " "))
    return out


PAIRS = _pairs()
TRAINERS = ("docdp-cooc", "docdp")
"""The trainers whose releases are a function of the data and the earlier releases alone (the Gibbs samplers' draws,
DP-SVI's Poisson batches and the local randomizers are random in the data itself; their guarantee is checked through
the ledger: test_ledger_epsilon.py)."""
FRONTS = ("library", "cli")


def pytest_generate_tests(metafunc):
    if "pair" in metafunc.fixturenames:
        params = []
        for p in PAIRS:
            for trainer in TRAINERS:
                for front in FRONTS:
                    if front not in p.fronts or (trainer == "docdp" and (p.options.get("public")
                                                                         or p.options.get("vectors"))):
                        continue            # DocDPEM takes no public corpus and no public vectors
                    if p.options.get("secure") and trainer == "docdp":
                        continue            # secure refuses a seed; DocDPEM's start would differ
                    # the fast set: the library front door; the CLI for the defects it must catch and a few more
                    slow = p.slow or (front == "cli" and not ("split" in p.name or "NUL" in p.name
                                                              or p.name.startswith("one huge")))
                    marks = ([pytest.mark.slow] if slow else []) + ([pytest.mark.dask] if p.options.get("dask")
                                                                      else [])
                    params.append(pytest.param(p, trainer, front, marks=marks,
                                               id=f"{p.unit}-{trainer}-{front}-{p.name.replace(' ', '_')}"))
        metafunc.parametrize("pair, trainer, front", params)


@dataclass
class Run:
    releases: list
    report: dict


def _model(trainer: str, unit: str, secure: bool = False):
    from dptopic.attacks.lira import ALGORITHMS

    kw = {"n_topics": 2, "epsilon": 1.0, "unit": unit}
    if trainer == "docdp":
        kw["n_iter"] = 2
    if secure:
        kw["secure"] = True
    else:
        kw["seed"] = 1
    return ALGORITHMS[trainer](**kw)


def _observer(records: list, replay: Run | None):
    def watch(release):
        records.append(release)
        if replay is None:
            return None
        i = len(records) - 1
        assert i < len(replay.releases), f"D' made more releases than D ({i + 1} > {len(replay.releases)})"
        return replay.releases[i].noisy
    return watch


def train_library(pair: Pair, trainer: str, data: Dataset, tmp_path, replay: Run | None = None) -> Run:
    import warnings

    from dptopic.training.by_unit import split_for

    tmp_path.mkdir(parents=True, exist_ok=True)
    vocab = Vocabulary(WORDS)
    model = _model(trainer, pair.unit, bool(pair.options.get("secure")))
    corpus = data.corpus(vocab)
    if pair.split:
        corpus, _ = split_for(model, corpus, 0.2)
    kw = {}
    if pair.options.get("public"):
        kw["public_corpus"] = background(99, people=6).corpus(vocab)
    if pair.options.get("vectors"):     # 10 words released, 3 of them alone, the others in groups by vector
        rng = np.random.default_rng(0)
        path = tmp_path / "vectors.txt"
        path.write_text("\n".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) for w in WORDS) + "\n")
        route = pair.options["vectors"] if isinstance(pair.options["vectors"], str) else "groups"
        model.set_params(public_vectors=str(path), vectors_route=route, n_words=10)
        if route == "rectangular":      # 10 rows whatever the noise, so that the document's words are among them
            model.set_params(max_false_words=None)
    X = corpus
    if pair.options.get("shards"):
        from dptopic.corpus.shards import write_shards

        folder = tmp_path / f"shards-{len(data.docs)}"
        write_shards(corpus, folder, int(pair.options["shards"]))
        X = folder
        if pair.unit == "user":
            kw["user_ids"] = list(corpus.user_ids)
    records: list = []
    with warnings.catch_warnings(), observing(_observer(records, replay)):
        warnings.simplefilter("ignore")
        if pair.refused:    # refused before the first release
            try:
                model.fit(X, **kw)
            finally:
                assert not records, f"{len(records)} release(s) drawn before the refusal"
        if pair.options.get("dask"):    # one task per shard on the cluster; the noise is added on this thread
            from distributed import Client

            with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
                model.set_params(backend="dask", client=client)
                model.fit(X, **kw)
        else:
            model.fit(X, **kw)
    if pair.options.get("vectors") == "rectangular":     # the kept words' rows against fewer columns than words
        columns, groups = model.rectangular_columns_
        assert records[-1].values.shape == (10, int(groups.max()) + 1)
        assert groups.max() + 1 < len(columns)
    elif pair.options.get("vectors"):
        assert model.word_groups_ is not None and model.word_groups_.max() + 1 < len(model.kept_words_)
    return Run(records, model.privacy_)


def train_cli(pair: Pair, trainer: str, data: Dataset, tmp_path, replay: Run | None = None) -> Run:
    import helpers

    tag = "b" if replay is not None else "a"
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "words.txt").write_text("\n".join(WORDS) + "\n")
    src = data.write_jsonl(tmp_path / f"{tag}.jsonl")
    argv = ["train", "--algorithm", trainer, "--corpus", src, "--vocabulary", tmp_path / "words.txt",
            "--topics", "2", "--epsilon", "1", "--seed", "1", "--out", tmp_path / f"model-{tag}", "--quiet"]
    if pair.unit == "user":
        argv += ["--unit", "user", "--user-field", "user"]
    if not pair.split:
        argv += ["--test-size", "0"]
    if pair.options.get("public"):
        pub = background(99, people=6).write_jsonl(tmp_path / "public.jsonl")
        argv += ["--public-corpus", pub]
    if pair.options.get("private_vocabulary"):
        argv = [a for a in argv if a not in ("--vocabulary", tmp_path / "words.txt")]
        argv += ["--private-vocabulary", "8,1e-5"]
    records: list = []
    with observing(_observer(records, replay)):
        res = helpers.run_dptopic(*argv)
    if pair.refused:        # refused in one line, exit 2, before the first release
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.returncode == 2 and len(lines) == 1 and not records, (res.returncode, res.stderr, len(records))
        raise DPTopicError(lines[0])
    assert res.returncode == 0, res.stderr
    report = json.loads((tmp_path / f"model-{tag}" / "model.json").read_text()).get("privacy", {})
    return Run(records, report)


def moved(a, b) -> list:
    """``[(label, moved, sensitivity, norm)]`` for each release of two runs, the second replaying the first."""
    assert len(a.releases) == len(b.releases), f"D made {len(a.releases)} releases, D' {len(b.releases)}"
    out = []
    for ra, rb in zip(a.releases, b.releases):
        assert ra.values.shape == rb.values.shape, (f"release {ra.label!r}: shapes {ra.values.shape} and"
                                                    f" {rb.values.shape} differ under the same public history")
        diff = np.asarray(rb.values, float) - np.asarray(ra.values, float)
        norm = float(np.sqrt(np.sum(diff ** 2))) if ra.norm == "l2" else float(np.sum(np.abs(diff)))
        out.append((ra.label, norm, planned_sensitivity(a.report, ra.label), ra.norm))
    return out


def planned_sensitivity(report: dict, label: str):
    """The sensitivity the trainer's release plan (the report's ``plan``, which its fit reserved) calibrated the
    release ``label`` for; None for a release outside the plan (the DP set union that chose a private vocabulary)."""
    for r in (report.get("plan") or {}).get("releases") or []:
        if (r.get("event") or {}).get("label") == label:
            return float(r["sensitivity"])
    return None


def within_sensitivity(a, b, skip: int = 0) -> None:
    """Assert that every release (after the first ``skip``) moved by at most its calibrated sensitivity."""
    for label, norm, sens, kind in moved(a, b)[skip:]:
        assert sens is not None, f"release {label!r} is not in the trainer's release plan"
        assert norm <= sens * (1 + 1e-9) + 1e-9, (f"release {label!r} moved {norm:.4g} in {kind.upper()} between"
                                                  f" the neighbours, sensitivity {sens:g}")


# ------------------------------------------------------------------ the card's epsilon, recomputed
def recomputed_epsilon(report: dict) -> tuple[float, bool]:
    """``(epsilon, exact)``: the (epsilon, delta) guarantee of the report's events at its delta, composed here by
    privacy loss distributions built with dp_accounting from the events' parameters alone, independently of dptopic's
    ledger. A (Poisson-subsampled) Gaussian, a (discrete) Laplace per coordinate change, and any event stated as
    (epsilon, delta) (a private vocabulary's set union, a pure-DP step) by the worst-case PLD of those parameters.
    ``exact`` is False when an event is of a kind the harness composes only through its stated (epsilon, delta)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    step = 1e-4
    events = list(report.get("events", []))
    vocab = report.get("vocabulary_selection")
    if isinstance(vocab, dict) and vocab.get("type"):
        events.append({**vocab, "count": 1})
    total, exact = None, True
    for ev in events:
        n = int(ev.get("count", 1))
        kind = ev["type"]
        if kind == "poisson_subsampled_gaussian":
            pld = pldlib.from_gaussian_mechanism(float(ev["noise_multiplier"]),
                                                 sampling_prob=float(ev["sampling_rate"]),
                                                 value_discretization_interval=step)
        elif kind == "laplace":
            pld = None
            for c in ev["changes"]:
                one = pldlib.from_laplace_mechanism(float(ev["scale"]), sensitivity=float(c),
                                                    value_discretization_interval=step)
                pld = one if pld is None else pld.compose(one)
        elif kind == "discrete_laplace":
            pld = None
            for c in ev["changes"]:
                one = pldlib.from_discrete_laplace_mechanism(1.0 / float(ev["scale"]), sensitivity=int(c),
                                                             value_discretization_interval=step)
                pld = one if pld is None else pld.compose(one)
        elif "epsilon" in ev:
            exact = exact and kind in ("pure_dp", "approximate_dp")
            pld = pldlib.from_privacy_parameters(common.DifferentialPrivacyParameters(
                float(ev["epsilon"]), float(ev.get("delta", 0.0))), value_discretization_interval=step)
        else:
            raise AssertionError(f"an event the harness cannot compose: {ev}")
        pld = pld.self_compose(n) if n > 1 else pld
        total = pld if total is None else total.compose(pld)
    assert total is not None, "the report lists no event"
    return float(total.get_epsilon_for_delta(float(report["delta"]))), exact


@pytest.fixture
def harness():
    """The harness's functions, for the test modules (which import no other test module)."""
    return SimpleNamespace(train={"library": train_library, "cli": train_cli}, moved=moved,
                           within_sensitivity=within_sensitivity, recomputed_epsilon=recomputed_epsilon,
                           background=background, WORDS=WORDS, Pair=Pair, PAIRS=PAIRS, TRAINERS=TRAINERS)
