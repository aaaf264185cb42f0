"""What a FedLDA guarantee covers, in words: the card's ``guarantee``, ``note``, ``scope`` and ``randomness``.

Read by the estimator (:mod:`dptopic.models.fedlda`), the trainer registry (``FED_SECURE``) and a participant's own
summary (:mod:`dptopic.contributor.fedlda`), one text for all three; importing it loads no numerical library.
"""
from __future__ import annotations

FED_SECURE = (
    "secure mode: every report's coins come from the operating system's CSPRNG (secrets), with the true word kept on a"
    " 53-bit integer coin so the realised ratio never exceeds e^epsilon; which entries a user samples and the labels"
    " (which the guarantee does not rest on) come from NumPy's PCG64, the labels from a generator of their own seeded"
    " from OS entropy, which no draw whose number depends on the text has moved")
"""What ``secure=True`` covers in FedLDA."""

FED_RRP_COINS = ("SIMULATION: the replacement coins come from xorshift128+ seeded from NumPy's PCG64, not a"
                 " cryptographic generator; the floor and tail rules have no secure sampler")

SCOPE = ("covers the word of every entry one user reports, composed over all entries and rounds. NOT covered:"
         " the topic label of each entry (sent as sampled; it depends on the user's text), the dependence of the"
         " replacement distribution on the user's local theta (replacement='mixture'), the server's held-out"
         " perplexity, and any guarantee for a whole document or user beyond this composition.")
SCOPE_TOPIC = ("covers the word of every entry one user reports, composed over all entries and rounds. NOT covered:"
               " the topic label of each entry (sent as sampled; it depends on the user's text; with"
               " replacement='topic' the replacement words depend on nothing else), the server's held-out"
               " perplexity, and any guarantee for a whole document or user beyond this composition.")
SCOPE_NONE = ("covers everything one user sends: the randomized report of each of its entries (subset selection,"
              " once; one word: k-ary randomized response) and the topic labels, which are post-processing of those"
              " reports and the broadcast model. The epsilon per user is already the whole user's: the per-entry"
              " epsilon composed over all of the user's entries, so it covers a user whose every word changes (a"
              " text longer than the pad length sends a sample of its tokens and nothing else); there is no further"
              " cost. NOT covered: reports randomized again (a client that does not keep the reports it drew spends"
              " the per-user epsilon again each time, docs/fedlda.md), the server's held-out perplexity and anything"
              " computed by the analyst from data other than the reports.")
FULL_NOTE = ("full guarantee for what a user sends: each entry's word is randomized once and the topic labels are"
             " post-processing of the randomized reports and the public model (docs/fedlda.md)")
DATA_VOCABULARY_NOTE = ("full guarantee for the reports a user sends: each entry's word is randomized once and the"
                        " topic labels are post-processing of the randomized reports and the public model; the model"
                        " as a whole is PARTIAL: its vocabulary was chosen from the training documents, which the"
                        " guarantee does not cover (pass a public vocabulary; docs/fedlda.md)")
PARTIAL_NOTE = ("partial guarantee: epsilon covers the words of a user's entries only; the topic labels go out"
                " unperturbed{mixture}, so a user's text is not protected as a whole (see scope and docs/fedlda.md)")


def coverage(replacement: str, exclusion: str = "floor") -> dict:
    """``guarantee`` ("partial": topic labels go out in the clear), ``note`` and ``scope`` of a FedLDA report."""
    if exclusion == "none":
        return {"guarantee": "full", "note": FULL_NOTE, "scope": SCOPE_NONE}
    mixture = replacement == "mixture"
    note = PARTIAL_NOTE.format(mixture=" and replacement='mixture' draws replacements from the user's local theta"
                               if mixture else "")
    if exclusion == "tail":
        note += ("; tail exclusion: the poster's (eps, 2 delta)-LDP per entry holds only if the model's word"
                 " probabilities follow Zipf's law with exponent gamma; not verified by construction")
    return {"guarantee": "partial", "note": note, "scope": SCOPE if mixture else SCOPE_TOPIC}
