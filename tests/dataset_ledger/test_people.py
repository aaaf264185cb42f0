"""The pure linking rules (dataset_ledger/people.py): which documents are one document, which person ids are one
person, and the alias files that say so, refused in one line when they cannot be read as one map."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dptopic.corpus.identity import SKETCH_PARAMS, token_keys, token_list_ids
from dptopic.dataset_ledger.people import (
    ID_LINK_PARAMS,
    SKETCH_THRESHOLD,
    UnionFind,
    case_links,
    components,
    document_links,
    id_links,
    read_aliases,
    sketch_agreement,
)
from dptopic.errors import DPTopicError

WORDS = [f"w{i}" for i in range(500)]


def _doc(rng, n=40):
    return [WORDS[j] for j in rng.integers(0, len(WORDS), n)]


# ------------------------------------------------------------------------------------------------ union-find
def test_union_find_joins_sets_rooted_at_their_least_key():
    uf = UnionFind([5, 9])
    assert uf.union(9, 3) and uf.union(5, 3) and not uf.union(9, 5)
    assert uf.find(9) == uf.find(5) == 3 and uf.find(42) == 42 and 42 not in uf
    assert uf.sets() == {3: [3, 5, 9]}
    assert uf.roots(np.array([9, 42])).tolist() == [3, 42]
    assert components(5, [(4, 1), (1, 2)]).tolist() == [0, 1, 1, 3, 1]


# ------------------------------------------------------------------------------------------------ documents
def test_equal_digests_link_by_kind():
    digests = np.array([1, 2, 1, 3, 0, 0], np.uint64)       # zeros: no key
    bags = np.array([10, 11, 12, 13, 0, 0], np.uint64)
    read = np.array([0, 0, 0, 0, 11, 0], np.uint64)          # document 4's bag as read is document 1's token bag
    pairs = document_links(digests=digests, bags=bags, read_bags=read)
    assert {tuple(p) for p in pairs.tolist()} == {(0, 2), (1, 4)}
    # a text digest never matches a bag digest of the same value
    assert not len(document_links(digests=np.array([7, 0], np.uint64), bags=np.array([0, 7], np.uint64)))


def test_the_sketch_links_one_word_edited_and_not_another_document():
    rng = np.random.default_rng(0)
    docs = [_doc(rng) for _ in range(50)]
    edited = []
    for ts in docs:
        ts = ts[:]
        ts[int(rng.integers(len(ts)))] = "changed"
        edited.append(ts)
    keys = token_keys(*token_list_ids(docs + edited))
    pairs = document_links(bags=keys.bags, bands=keys.bands, signatures=keys.signatures)
    assert {tuple(p) for p in pairs.tolist()} == {(d, 50 + d) for d in range(50)}


def test_a_band_in_common_below_the_threshold_is_no_link():
    rng = np.random.default_rng(1)
    a = _doc(rng, 60)
    b = a[:36] + _doc(rng, 24)        # Jaccard about 0.43: candidates often, never one document
    keys = token_keys(*token_list_ids([a, b]))
    share = sketch_agreement(keys.signatures[:1], keys.signatures[1:])[0]
    assert share < SKETCH_THRESHOLD
    forced = keys.bands.copy()
    forced[1, 0] = forced[0, 0]          # a band collision: verified by the signatures, refused
    assert not len(document_links(bands=forced, signatures=keys.signatures))
    assert len(document_links(bands=forced, signatures=keys.signatures, threshold=share - 0.01)) == 1


def test_agreement_is_corrected_for_bytes():
    a = np.zeros((1, 256), np.uint8)
    b = np.arange(256, dtype=np.uint8)[None, :]      # one position of 256 agrees: chance alone
    assert sketch_agreement(a, b)[0] == 0.0
    assert sketch_agreement(b, b)[0] == 1.0
    assert SKETCH_PARAMS["threshold"] == SKETCH_THRESHOLD


def test_copies_of_one_bag_are_verified_once():
    rng = np.random.default_rng(2)
    doc = _doc(rng)
    keys = token_keys(*token_list_ids([doc] * 200 + [_doc(rng)]))
    pairs = document_links(bags=keys.bags, bands=keys.bands, signatures=keys.signatures)
    assert len(pairs) == 199 and set(components(201, pairs).tolist()) == {0, 200}


# ------------------------------------------------------------------------------------------------ people
def _person_rows(holdings):
    """persons, groups, lengths from {person: [(group, tokens), ...]}."""
    rows = [(p, g, n) for p, docs in holdings.items() for g, n in docs]
    return (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array([r[2] for r in rows]))


def test_a_rekeyed_copy_is_one_person():
    docs = [(g, 12) for g in range(10)]
    links = id_links(*_person_rows({1: docs, 2: docs[:6], 3: [(100, 12), (101, 12), (102, 12)]}))
    assert links.tolist() == [[1, 2, 6, 6]]


def test_one_common_short_text_links_no_one():
    """"Fix typo" (2 tokens) written by many, and one long shared document, are no evidence."""
    holdings = {p: [(0, 2), (1000 + p, 12), (2000 + p, 12)] for p in range(300)}     # everyone: "fix typo"
    holdings[1] += [(7, 30)]
    holdings[2] += [(7, 30)]                                                           # one shared long text
    assert not len(id_links(*_person_rows(holdings)))
    many = {p: [(g, 12) for g in range(5)] for p in range(ID_LINK_PARAMS["max_holders"] + 1)}  # boilerplate
    assert not len(id_links(*_person_rows(many)))


def test_the_share_is_of_the_id_with_fewer_documents():
    big = [(g, 12) for g in range(100)]
    small = [(g, 12) for g in range(3)] + [(500 + g, 12) for g in range(7)]     # 3 of its 10 found under big
    assert not len(id_links(*_person_rows({1: big, 2: small})))
    assert id_links(*_person_rows({1: big, 2: small}), min_share=0.3).tolist() == [[1, 2, 3, 10]]


def test_known_aliases_count_as_one_holder():
    docs = [(g, 12) for g in range(5)]
    holdings = {1: docs, 2: docs, 3: docs, 4: docs}
    assert not len(id_links(*_person_rows(holdings)))                  # four holders: boilerplate
    known = UnionFind()
    known.union(1, 2)
    known.union(3, 4)                                                   # two people: each is the other's copy
    assert id_links(*_person_rows(holdings), known=known).tolist() == [[1, 3, 5, 5]]


def test_id_links_refuses_arrays_of_other_lengths():
    with pytest.raises(DPTopicError, match="one person, group and length per document"):
        id_links([1, 2], [0], [5, 5])


def test_case_links_join_an_address_in_another_case():
    assert case_links(["Jane@Example.org", "jane@example.org", "bob@x.org", "JANE@EXAMPLE.ORG"]) == [
        ("JANE@EXAMPLE.ORG", "Jane@Example.org"), ("jane@example.org", "Jane@Example.org")]


# ------------------------------------------------------------------------------------------------ alias files
MAILMAP = """# a comment
Jane Doe <jane@example.org> <jdoe@old.example.org>
Jane Doe <jane@example.org> Jane D <JANE@laptop.local>
Bob <bob@example.org>
Carol <> carol <>
Dan <dan@x.org> dan <dan@x.org>
Eve <eve@x.org> Eve <eve@y.org> trailing words
"""


def test_mailmap_pairs(tmp_path):
    p = tmp_path / ".mailmap"
    p.write_text(MAILMAP)
    assert read_aliases(p) == [("JANE@laptop.local", "jane@example.org"), ("eve@y.org", "eve@x.org"),
                               ("jdoe@old.example.org", "jane@example.org")]


def test_csv_pairs_with_or_without_a_header(tmp_path):
    p = tmp_path / "aliases.csv"
    p.write_text("alias,canonical\na1,p1\n\na2 , p1\n")
    assert read_aliases(p) == [("a1", "p1"), ("a2", "p1")]
    p.write_text("b,c\nc,d\n")       # a chain: one person
    assert read_aliases(p) == [("b", "c"), ("c", "d")]


@pytest.mark.parametrize("name, text, line, what", [
    ("aliases.csv", "a,b\na,c\n", 2, "mapped to 'c' here and to 'b' on line 1"),
    ("aliases.csv", "a,b\nb,c\nc,a\n", 1, "maps back to itself"),
    ("aliases.csv", "a,b\nb,a\n", 1, "maps back to itself"),
    ("aliases.csv", "a,b\na,b,c\n", 2, "is not two ids"),
    ("aliases.csv", "a,\n", 1, "is not two ids"),
    (".mailmap", "Jane <jane@x.org> <j@y.org>\nJane <jane2@x.org> <j@y.org>\n", 2, "mapped to 'jane2@x.org'"),
    (".mailmap", "Jane <jane@x.org> <j@y.org>\nJane jane@x.org\n", 2, "is not a .mailmap line"),
])
def test_a_bad_alias_file_is_refused_in_one_line(tmp_path, name, text, line, what):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(DPTopicError) as e:
        read_aliases(p)
    msg = str(e.value)
    assert "\n" not in msg and f"alias file {str(p)!r}, line {line}:" in msg and what in msg


def test_a_missing_or_unreadable_alias_file_is_refused(tmp_path):
    for path, what in ((tmp_path / "none.csv", "does not exist"), (tmp_path, "is a folder")):
        with pytest.raises(DPTopicError, match=what):
            read_aliases(path)
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DPTopicError, match="not UTF-8"):
        read_aliases(tmp_path / "bin.csv")


def _candidates_as_row_pairs(bands, window):
    """sketch_candidates' rule written out with row pairs: in each band, each sketched document and the next
    ``window`` of its run of equal values."""
    bands = np.asarray(bands, dtype=np.uint64)
    sketched = np.flatnonzero(bands[:, 0] != 0)
    out = set()
    for col in range(bands.shape[1]):
        v = bands[sketched, col]
        order = np.argsort(v, kind="stable")
        v, docs = v[order], sketched[order]
        for i in range(len(v)):
            for step in range(1, window + 1):
                if i + step < len(v) and v[i + step] == v[i]:
                    out.add((min(docs[i], docs[i + step]), max(docs[i], docs[i + step])))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)


def test_the_candidate_pairs_are_each_bands_neighbours_in_its_runs_sorted_once():
    """Bands of few values (long runs, so the window cuts them), rows left unsketched: the candidates are the pairs
    the rule gives, each once, in the order of (i, j)."""
    from dptopic.dataset_ledger import people

    rng = np.random.default_rng(4)
    bands = rng.integers(1, 6, (400, 5)).astype(np.uint64)
    bands[rng.random(400) < 0.1] = 0
    got = people.sketch_candidates(bands)
    want = _candidates_as_row_pairs(bands, people.WINDOW)
    assert len(want) > 1000
    assert got.dtype == np.int64 and np.array_equal(got, want)
    assert people.sketch_candidates(np.zeros((3, 4), np.uint64)).shape == (0, 2)


def test_the_candidate_pairs_are_found_as_one_code_a_pair():
    """4.2 x 10^6 candidate pairs (20,000 documents, bands of 199 values): the traced peak stays under 50 bytes a pair
    (25 measured with the codes sorted, the 16 of the answer included; 40 with np.unique's hash table; pairs of
    rows joined and sorted as rows took 66)."""
    import tracemalloc

    from dptopic.dataset_ledger import people

    bands = np.random.default_rng(4).integers(1, 200, (20000, 8)).astype(np.uint64)
    tracemalloc.start()
    try:
        pairs = people.sketch_candidates(bands)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(pairs) > 4_000_000
    assert peak / len(pairs) < 50, f"{peak / len(pairs):.0f} bytes a pair"


def _clustered_sketches(n=3000, clusters=150, seed=8):
    """Compact sketches of ``n`` documents in ``clusters`` families (each a family's sketch with 0 to 60% of its
    positions redrawn: some pairs above the threshold, many candidates below it) and their 32 bands of 4 values."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (clusters, 128))
    sig = base[rng.integers(0, clusters, n)]
    redraw = rng.random((n, 128)) < rng.uniform(0, 0.6, (n, 1))
    sig = np.where(redraw, rng.integers(0, 256, (n, 128)), sig).astype(np.uint8)
    quads = sig.astype(np.uint64).reshape(n, 32, 4)
    bands = (quads[..., 0] | quads[..., 1] << np.uint64(8) | quads[..., 2] << np.uint64(16)
             | quads[..., 3] << np.uint64(24)) + np.uint64(1)
    bands[rng.random(n) < 0.05] = 0                        # some documents not sketched
    return bands, sig


def test_each_bands_candidates_verified_as_made_link_what_the_one_list_of_candidates_linked():
    """document_links verifies each band's candidate pairs as it makes them (never the one list of every distinct
    candidate): the same pairs as that list verified by sketch_agreement, for compact and full signatures, with
    the verification in batches of 3 pairs and of 2^18."""
    from dptopic.dataset_ledger import people

    bands, sig = _clustered_sketches()
    for signatures in (sig, sig.astype(np.uint32) * 7919):
        cand = people.sketch_candidates(bands)
        ok = sketch_agreement(signatures[cand[:, 0]], signatures[cand[:, 1]]) >= SKETCH_THRESHOLD
        want = np.unique(cand[ok], axis=0)
        assert 100 < len(want) < len(cand) // 3
        assert np.array_equal(document_links(bands=bands, signatures=signatures), want)
        people.PAIRS_PER_CHECK, kept = 3, people.PAIRS_PER_CHECK
        try:
            assert np.array_equal(document_links(bands=bands, signatures=signatures), want)
        finally:
            people.PAIRS_PER_CHECK = kept
    # with bags: a copy's sketch is not paired (its bag joins it), as when its bands were zeroed
    bags = np.arange(1, len(bands) + 1, dtype=np.uint64)
    bags[1::9] = bags[0]
    bags[5::50] = 0
    seen, zeroed = set(), bands.copy()
    for i, g in enumerate(bags.tolist()):                  # each bag's first document keeps its bands
        if g and g in seen:
            zeroed[i] = 0
        seen.add(g)
    cand = people.sketch_candidates(zeroed)
    ok = sketch_agreement(sig[cand[:, 0]], sig[cand[:, 1]]) >= SKETCH_THRESHOLD
    copies = np.array([(0, j) for j in range(1, len(bags)) if bags[j] == bags[0]])
    want = np.unique(np.concatenate([cand[ok], copies]), axis=0)
    assert np.array_equal(document_links(bags=bags, bands=bands, signatures=sig), want)


class _SketchesOnDisk:
    """Signatures as the ledger's record reads them from disk (dptopic.corpus.key_file.SignaturesOnDisk): in order a
    chunk at a time, or some rows; never as one array."""

    def __init__(self, sig, chunk=7):
        self.sig, self.chunk, self.taken = sig, chunk, []
        self.shape, self.dtype, self.ndim = sig.shape, sig.dtype, 2

    def __len__(self):
        return len(self.sig)

    def chunks(self):
        return ((s, self.sig[s:s + self.chunk]) for s in range(0, len(self.sig), self.chunk))

    def take(self, rows):
        self.taken.append(len(rows))
        return self.sig[rows]

    def __array__(self, *args, **kwargs):
        raise AssertionError("the signatures read whole")


def test_candidates_bounded_on_one_bit_link_what_their_signatures_link_held_and_read_any_way(monkeypatch):
    """The one-bit bound lets through every candidate that reaches the threshold (and not every other: on these
    families of close sketches, most; two bits would let fewer through): the links are those of the signatures
    verified directly, whether the passing pairs are verified at once or a few at a time, on signatures in memory or
    on disk (read a few rows at a time, never whole)."""
    from dptopic.dataset_ledger import people
    from dptopic.kernels.sketch_pairs import bounded_agreements, low_bits

    bands, sig = _clustered_sketches()
    cand = people.sketch_candidates(bands)
    ok = sketch_agreement(sig[cand[:, 0]], sig[cand[:, 1]]) >= SKETCH_THRESHOLD
    want = np.unique(cand[ok], axis=0)
    bound = bounded_agreements(people._low_bits_of(sig), 128, cand[:, 0], cand[:, 1])
    need = people._least_agreement(128, True, SKETCH_THRESHOLD)
    passed = bound >= need
    assert passed[ok].all() and ok.sum() <= passed.sum() < len(cand)
    two = bounded_agreements(low_bits(sig, bits=2), 128, cand[:, 0], cand[:, 1], bits=2) >= need
    assert passed[two].all() and two.sum() < passed.sum()
    for held, rows in ((1 << 20, 1 << 19), (5, 4)):
        monkeypatch.setattr(people, "HELD_PAIRS", held)
        monkeypatch.setattr(people, "VERIFIED_ROWS", rows)
        assert np.array_equal(document_links(bands=bands, signatures=sig), want)
        disk = _SketchesOnDisk(sig)
        assert np.array_equal(document_links(bands=bands, signatures=disk), want)
        assert disk.taken and max(disk.taken) <= rows


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), redraw=st.floats(0.0, 0.5), threshold=st.sampled_from([0.3, 0.5, 0.7, 0.9]),
       wide=st.booleans())
def test_any_sketches_bounded_then_verified_link_as_every_candidate_verified(seed, redraw, threshold, wide):
    """Property: for families of sketches at any spread, any threshold, bytes or 32-bit values, the links of
    document_links (the bound, then the signatures) are every band candidate verified on its signatures."""
    from dptopic.dataset_ledger import people

    rng = np.random.default_rng(seed)
    n, K = 120, 32
    sig = rng.integers(0, 256, (6, K))[rng.integers(0, 6, n)]
    sig = np.where(rng.random((n, K)) < redraw, rng.integers(0, 256, (n, K)), sig)
    sig = (sig * 65537 + 3).astype(np.uint32) if wide else sig.astype(np.uint8)
    quads = (sig.astype(np.uint64) & np.uint64(255)).reshape(n, 8, 4)
    bands = (quads[..., 0] | quads[..., 1] << np.uint64(8) | quads[..., 2] << np.uint64(16)
             | quads[..., 3] << np.uint64(24)) + np.uint64(1)
    cand = people.sketch_candidates(bands)
    ok = sketch_agreement(sig[cand[:, 0]], sig[cand[:, 1]]) >= threshold
    want = np.unique(cand[ok], axis=0).reshape(-1, 2)
    assert np.array_equal(document_links(bands=bands, signatures=sig, threshold=threshold), want)
    assert np.array_equal(document_links(bands=bands, signatures=_SketchesOnDisk(sig), threshold=threshold), want)


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 12), max_size=200), wide=st.booleans())
def test_equal_keys_sorted_in_place_join_each_run_to_its_first_index(keys, wide):
    """Property: _equal_pairs is the star of each run of equal nonzero keys to its least index, in the order a stable
    argsort of the keys gives (the reference written with NumPy)."""
    from dptopic.dataset_ledger.people import _equal_pairs

    k = np.array(keys, dtype=np.uint64) * (np.uint64(2**61 + 3) if wide else np.uint64(1))
    idx = np.flatnonzero(k)
    order = idx[np.argsort(k[idx], kind="stable")]
    want, start = [], 0
    for i in range(1, len(order)):
        if k[order[i]] != k[order[i - 1]]:
            start = i                   # a new run: its first index, in the stable order
        else:
            want.append((int(order[start]), int(order[i])))
    got = _equal_pairs(k)
    assert got.dtype == np.int64 and got.shape[1] == 2
    assert [tuple(p) for p in got.tolist()] == want


@pytest.mark.parametrize("compact", [True, False])
def test_the_least_agreement_is_where_the_verified_share_first_reaches_the_threshold(compact):
    from dptopic.dataset_ledger import people

    for K in (1, 7, 128, 256):
        counts = np.arange(K + 1)
        for threshold in (0.0, 0.3, SKETCH_THRESHOLD, 0.999, 1.0, 1.5):
            need = people._least_agreement(K, compact, threshold)
            assert np.array_equal(people._share_score(counts / K, compact) >= threshold, counts >= need)


def test_verifying_the_candidates_holds_one_bands_pairs_not_every_pair():
    """4.2 x 10^6 candidate pairs of 20,000 documents (8 bands of 199 values): document_links' traced peak stays under
    4 bytes a candidate (0.4 measured: one step of one band's runs at a time, at most a pair a document; the one list
    of every distinct pair, verified in batches, took 25 to 40)."""
    import tracemalloc

    from dptopic.dataset_ledger import people

    rng = np.random.default_rng(4)
    bands = rng.integers(1, 200, (20000, 8)).astype(np.uint64)
    sig = rng.integers(0, 256, (20000, 16)).astype(np.uint8)
    document_links(bands=bands[:50], signatures=sig[:50])          # the kernel compiled before tracing
    n_cand = len(people.sketch_candidates(bands))
    tracemalloc.start()
    try:
        document_links(bands=bands, signatures=sig)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n_cand > 2_000_000
    assert peak / n_cand < 4, f"{peak / n_cand:.1f} bytes a candidate"
