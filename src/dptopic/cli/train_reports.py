"""``train --algorithm lp|olp|ldp-doc``: the server's side of local DP, training on the randomized reports that
``dptopic randomize`` (cli/local.py, the contributor's side) writes."""
from __future__ import annotations

from ..datasets import PUBLIC_VOCABULARY_DECIDES
from ..errors import DPTopicError
from ..models.registry import TRAINERS
from ..protocol.document_reports import DocumentReportSet
from ..protocol.reports import ReportSet
from ..training import train
from ..training.run import no_vocabulary_error
from ._flags import flag_errors
from ._run_common import load_corpus, read_vocabulary
from ._training_output import print_local_result, print_reports


def train_local(a, console, params: dict) -> None:
    """``train --algorithm lp|olp|ldp-doc`` with the trainer's ``params`` (cli/train.py's, from its flags): read the
    reports (and olp's prior), train through :func:`dptopic.train`, print and save."""
    if a.reports is None:
        raise DPTopicError(f"--algorithm {a.algorithm} trains on randomized reports: give --reports FILE"
                           " (written by 'dptopic randomize').")
    if "prior_corpus" in TRAINERS[a.algorithm].parameters() and a.prior is None:     # olp
        raise DPTopicError("--algorithm olp needs --prior CORPUS: public prior documents disjoint from the"
                           " contributors ('none' to run without prior data).")
    vocab = read_vocabulary(a.vocabulary) if a.vocabulary else None
    document = "document" in TRAINERS[a.algorithm].units      # ldp-doc: document-level reports
    with flag_errors({"algorithm": "--algorithm"}):     # reports of the other level name the trainer that reads them
        reports = (DocumentReportSet if document else ReportSet).load(a.reports, vocabulary=vocab)
    print_reports(reports, console)
    vocab = vocab or reports.vocabulary
    if vocab is None:
        with flag_errors({"vocabulary": "--vocabulary"}):
            raise no_vocabulary_error()
    if params.get("prior_corpus") not in (None, "none"):      # olp's public prior, over the reports' words
        params["prior_corpus"] = load_corpus(a.prior, a.format, a.vocab, a.text_field, None, vocabulary=vocab,
                                             stop_words=PUBLIC_VOCABULARY_DECIDES)
    params["reports_per_contributor"] = getattr(a, "reports_per_contributor", None)
    result = train(reports, algorithm=a.algorithm, vocabulary=vocab, out=a.out, overwrite=a.overwrite, **params)
    print_local_result(result, console, batch_size=getattr(result.model, "batch_size", None), seeded=a.seed is not None)
