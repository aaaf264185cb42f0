"""``dptopic.kernels.tokenize``: the scan of ASCII documents into word numbers and its table."""
import numpy as np

from dptopic.kernels.tokenize import (
    add_keys,
    ascii_letters,
    rehash,
    restrict_ids,
    take_documents,
    term_document_counts,
    tokenize_ascii,
    web_hint,
)


def _table(cap=8):
    return (np.full(2 * cap, -1, np.int32), np.zeros(cap, np.int64), np.zeros(cap + 1, np.int64),
            np.zeros(64, np.uint8), np.zeros(cap, np.uint8))


def _words(words):
    raw = [w.encode() for w in words]
    return np.frombuffer(b"".join(raw), np.uint8), np.concatenate([[0], np.cumsum([len(b) for b in raw])])


def test_the_scan_reads_runs_of_letters_folds_case_and_stops_before_a_document_that_may_not_fit():
    slots, h, ptr, raw, drop = _table(8)
    buf = np.frombuffer(b"Ab abc, ABC the! x" + b"new ones here and more", np.uint8)
    starts, ends = np.array([0, 18]), np.array([18, 40])
    w, wp = _words(["the"])
    n = add_keys(w, wp, slots, h, ptr, raw, drop, 0, True, True, np.empty(1, np.int64))   # a stop word
    out, out_ptr = np.empty(20, np.int32), np.zeros(3, np.int64)
    # document 0 (18 bytes) holds at most 6 new words of 2 letters or more: with 1 key, 7 fit in 8 keys of 16 slots;
    # document 1 (22 bytes, at most 7) may not fit beside the 3 keys then held
    no, web = np.zeros(2, np.uint8), np.zeros(2, np.uint8)
    d, n, k = tokenize_ascii(buf, starts, ends, 0, ascii_letters(True), 2, slots, h, ptr, raw, drop, n, True,
                             out, out_ptr, 0, no, web)
    assert (d, n, k) == (1, 3, 3)           # "ab", "abc" new; "ABC" is "abc"; "the" dropped; "x" short
    assert out[:3].tolist() == [1, 2, 2] and out_ptr[1] == 3
    assert bytes(raw[ptr[1]:ptr[3]]) == b"ababc"
    bigger = np.full(64, -1, np.int32)                           # the caller's room, then on from document 1
    h2, p2, drop2 = np.zeros(32, np.int64), np.zeros(33, np.int64), np.zeros(32, np.uint8)
    h2[:n], p2[:n + 1], drop2[:n] = h[:n], ptr[:n + 1], drop[:n]
    rehash(bigger, h2, n)
    d, n, k = tokenize_ascii(buf, starts, ends, d, ascii_letters(True), 2, bigger, h2, p2, raw, drop2, n, True,
                             out, out_ptr, k, no, web)
    assert (d, n, k) == (2, 8, 8) and out_ptr.tolist() == [0, 3, 8]
    # without growing, a word not in the table is skipped; without folding, "ABC" is another word
    d, n2, k = tokenize_ascii(buf, starts, ends, 0, ascii_letters(False), 2, bigger, h2, p2, raw, drop2, n, False,
                              out, out_ptr, 0, no, web)
    assert (d, n2) == (2, n) and out[:k].tolist() == [2, 3, 4, 5, 6, 7] and out_ptr.tolist() == [0, 1, 6]
    assert not web.any()


def test_a_document_that_may_hold_a_web_address_is_left_to_the_caller_when_checked():
    texts = [b"plain words", b"a@b", b"x://y", b"x:/ /y", b"WwW.site", b"ww.w", b"MailTo:me", b"mail:to", b"www",
             b"email me at noon"]
    assert [web_hint(np.frombuffer(t, np.uint8), 0, len(t)) for t in texts] == [
        False, True, True, False, True, False, True, False, False, False]
    slots, h, ptr, raw, drop = _table(32)
    buf = np.frombuffer(b"".join(texts), np.uint8)
    ends = np.cumsum([len(t) for t in texts])
    out, out_ptr, web = np.empty(40, np.int32), np.zeros(len(texts) + 1, np.int64), np.zeros(len(texts), np.uint8)
    check = np.ones(len(texts), np.uint8)
    check[2] = 0                                    # read whatever it holds
    _, n, k = tokenize_ascii(buf, ends - [len(t) for t in texts], ends, 0, ascii_letters(True), 1, slots, h, ptr,
                             raw, drop, 0, True, out, out_ptr, 0, check, web)
    assert web.tolist() == [0, 1, 0, 0, 1, 0, 1, 0, 0, 0]
    assert np.diff(out_ptr).tolist() == [2, 0, 2, 2, 0, 2, 0, 2, 1, 4]


def test_add_keys_looks_up_adds_and_marks_words():
    slots, h, ptr, raw, drop = _table(8)
    out = np.empty(3, np.int64)
    w, wp = _words(["café", "abc", "café"])
    n = add_keys(w, wp, slots, h, ptr, raw, drop, 0, True, False, out)
    assert n == 2 and out.tolist() == [0, 1, 0]
    n = add_keys(*_words(["abc"]), slots, h, ptr, raw, drop, n, False, True, out[:1])       # now a stop word
    assert n == 2 and drop[:2].tolist() == [0, 1]
    n = add_keys(w, wp, slots, h, ptr, raw, drop, n, False, False, out)
    assert out.tolist() == [0, -1, 0]
    n = add_keys(*_words(["nope"]), slots, h, ptr, raw, drop, n, False, False, out[:1])
    assert n == 2 and out[0] == -1


def test_restrict_and_counts():
    ids, ptr = np.array([3, 1, 3, 0, 2, 2], np.int32), np.array([0, 3, 3, 6])
    new_ptr, new_ids = restrict_ids(ids, ptr, np.array([-1, 0, 1, 2]))
    assert new_ptr.tolist() == [0, 3, 3, 5] and new_ids.tolist() == [2, 0, 2, 1, 1]
    tf, df = term_document_counts(ids, ptr, 4)
    assert tf.tolist() == [1, 1, 2, 2] and df.tolist() == [1, 1, 1, 1]


def test_restrict_ids_is_numpys_cut_at_the_kept_size():
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 30, 400)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 50, ptr[-1]).astype(np.int32)
    remap = np.where(rng.random(50) < 0.4, -1, rng.permutation(50)).astype(np.int64)
    new_ptr, new_ids = restrict_ids(ids, ptr, remap)
    mapped = remap[ids]
    kept = mapped >= 0
    doc = np.repeat(np.arange(len(lengths)), lengths)
    assert new_ids.dtype == np.int32 and new_ids.tolist() == mapped[kept].tolist()
    assert new_ptr.tolist() == np.concatenate([[0], np.cumsum(np.bincount(doc[kept], minlength=len(lengths)))]).tolist()


def test_take_documents_is_numpys_gather_of_the_documents_rows():
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 25, 300)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 1000, ptr[-1]).astype(np.int32)
    for index in (rng.permutation(300)[:120], np.array([5, 5, 0, 299]), np.flatnonzero(lengths == 0)):
        out_ptr = np.concatenate([[0], np.cumsum(lengths[index])])
        got = take_documents(ids, ptr, index.astype(np.int64), out_ptr)
        want = np.concatenate([ids[ptr[d]:ptr[d + 1]] for d in index]) if len(index) else ids[:0]
        assert got.dtype == ids.dtype and got.tolist() == want.tolist()
