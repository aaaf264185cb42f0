"""The command line's own sentences for library lines it writes in its flags (``dptopic.errors.ParameterLine``'s
``key``): where a flag changes more than a name ("pass --overwrite" for Python's "pass overwrite=True"), the
library names its line by a key and the sentence is kept here, registered with
:func:`dptopic.errors.use_flag_templates` when ``dptopic.cli`` writes its first line (``_flags.py``). Same fields
as the library's template; each parameter a sentence names is one its line names."""

FLAG_TEMPLATES = {
    "_io.output.check_output_folder": ("{parameter} {path!r} already holds results of {writers}: pass {overwrite} to"
                                       " write this run's beside them (nothing they wrote is deleted), or choose"
                                       " another {parameter}."),
    "_io.output.check_output_folder.2": ("{parameter} {path!r} already holds a dptopic {what}: pass {overwrite} to"
                                         " write this run's files over it, or choose another {parameter}."),
    "_io.output.may_replace": ("{parameter} {path!r} already holds a dptopic {what}: pass {overwrite} to replace it,"
                               " or choose another {parameter}."),
    "_validation.validate_value": "invalid {parameter=}: must be {flag_allowed}.",
    "accounting.calculators.compose": "nothing to compose: give {laplace} EPS COUNT and/or {pure} EPS COUNT.",
    "accounting.calculators.pairs": "{parameter} {eps} {n}: EPS must be a number in {rng}.",
    "accounting.calculators.pairs.2": ("{parameter} {eps} {n}: EPS is so small that the Laplace scale 1/EPS"
                                       " overflows; give EPS of at least 1e-308 (an epsilon that small adds next to"
                                       " nothing)."),
    "accounting.calculators.pairs.3": "{parameter} {eps} {n}: COUNT must be a whole number in [1, {most:g}].",
    "accounting.events.post_init": ("{epsilon} is too large: the epsilon of each noisy release it sets"
                                    " (sensitivity/scale = {value}) must be {allowed}; lower {epsilon}."),
    "accounting.gaussian.unreachable_budget": ("budget unreachable: {delta=:g} is too small for the privacy"
                                               " accountant (no noise reaches a finite epsilon at it); give a larger"
                                               " {delta} (the default is 1e-5)."),
    "advice.recommend": "{head} (dptopic recommend {unit=}).",
    "advice.recommend.2": ("dptopic train {unit=} (dptopic.for_unit) cannot reach epsilon = {eps:g}: its trainer"
                           " makes two Gaussian releases (the word ranking with {noise:g} times the co-occurrence's"
                           " noise), and the smallest epsilon they reach at {at} {dlt:g} is {least:g}; give at least"
                           " that (or a larger delta)."),
    "advice.recommend.3": ("forecast with public word vectors (installed: docdp-cooc uses them by default when they"
                           " cover the vocabulary's language; {public_vectors} none turns them off): measured with"
                           " glove-6b-50d, the floor beside it the higher of public dictionaries' and the vectors'"
                           " alone (docs/research/public_vectors.md)."),
    "advice.recommend.4": ("with fewer documents, a word-level guarantee (dptopic recommend {unit=}) protects each"
                           " word rather than each document: a document of L words then has L x epsilon; local DP"
                           " needs far more contributors still (docs/choosing_a_guarantee.md)."),
    "advice.user_note": ("user-level (one person's documents added or removed; dptopic train {unit=}"
                         " {user_field=field}): each person's documents are summed and bounded as one document is,"
                         " so the figures here are the document level's with every count of documents read as a"
                         " count of people; on a planted corpus with people writing 1 to 60 documents each, N people"
                         " recovered the topics better than N documents did at the document level, so the figures"
                         " are conservative (docs/research/user_level.md)."),
    "advice.verdict": "outside what dptopic train {unit=} accepts (epsilon up to {top:g})",
    "advice.vocabulary_note": ("{vocabulary=public} (one word per line, from public text of the same domain) keeps"
                               " the words out of the private data; without a list of your domain,"
                               " {vocabulary=general} (a general English word list; it needs the wordfreq package)"
                               " does too, and the whole budget still goes to the topics: at epsilon 1 it gave more"
                               " coherent topics than DP set union on both corpora measured (docs/document_dp.md);"
                               " {private_vocabulary} EPS_V,DELTA_V chooses them by DP set union inside the budget"
                               " (e.g. {epsilon=e_t:.3g} {delta=half:.3g} {private_vocabulary} {e_v:.3g},{half:.3g}"
                               " for a total of epsilon {total:g}, delta {total_delta:g}: the trainer then has less,"
                               " so expect less than the figure above); with none of these, the words are chosen"
                               " from the private documents and the guarantee is partial (docs/privacy.md)."),
    "advice.vocabulary_note.large": ("{vocabulary=public} (one word per line, from public text of the same domain)"
                                     " keeps the words out of the private data; {private_vocabulary} EPS_V,DELTA_V"
                                     " chooses them by DP set union inside a budget of at most {most:g}"
                                     " (docs/privacy.md)."),
    "advice.vocabulary_note.user": ("{vocabulary=public} (one word per line, from public text of the same domain; or"
                                    " {general}) keeps the words out of the private data; {private_vocabulary}"
                                    " selects words per document, not per person, so {unit=} refuses it; without a"
                                    " public list the words are chosen from the private documents and the guarantee"
                                    " is partial (docs/privacy.md)."),
    "advice.vocabulary_note.word": ("{vocabulary=public} (one word per line, from public text of the same domain)"
                                    " keeps the words out of the private data; without it the words are chosen from"
                                    " the private documents and the guarantee is partial (docs/privacy.md)."),
    "attacks.release_audit.release_audit": ("a user-level model is audited on documents with their person: give"
                                            " {user_field} FIELD."),
    "corpus.corpus.empty_corpus": ("{head}; give more text, or keep more words: lower {min_df}, raise {max_df}, or"
                                   " check {stop_words} and {vocabulary}."),
    "corpus.corpus.parts": "the split put all {what} in one part: give more {unit}, or another {test_size}.",
    "corpus.readers.uci_vocabulary": ("a UCI corpus needs its vocabulary file, and {name} is not named docword.*, so"
                                      " no vocab.* file can be found beside it: name the pair docword.NAME.txt and"
                                      " vocab.NAME.txt, side by side (this command reads the UCI vocabulary from"
                                      " there; {vocabulary=} is the public word list the documents are read into)."),
    "dataset_ledger.ledger.init": "{ledger} '' names no ledger: give a file path.",
    "dataset_ledger.ledger.init.2": "invalid {ledger} {value!r}: give a file path.",
    "dataset_ledger.location.ledger_path": "{ledger} needs a file path (or give {no_ledger}).",
    "dataset_ledger.location.ledger_path.2": ("no ledger at {path}: nothing has been recorded there yet (give"
                                              " {ledger} PATH or {env} to read another)."),
    "dataset_ledger.location.ledger_path.3": "give {ledger} PATH or {no_ledger}, not both.",
    "dataset_ledger.names.no_ledger_error": ("{dataset} names the release a ledger records, and {no_ledger} records"
                                             " none: drop {dataset} (or {no_ledger})."),
    "dataset_ledger.store.ledger_url": "{ledger} {shown} {why}.",
    "datasets.user_corpus.built_in": ("{unit=} needs each document's person, and the built-in corpus {name!r} has"
                                      " none: give a JSONL/CSV file with {user_field} FIELD, or a folder of folders"
                                      " (one per person)."),
    "datasets.user_corpus.format": ("{unit=} needs each document's person, and a {fmt} corpus has none: give a"
                                    " JSONL/CSV file with {user_field} FIELD, or a folder of folders (one per"
                                    " person)."),
    "datasets.user_corpus.no_field": ("{unit=} needs {user_field} FIELD: the JSONL field / CSV column holding each"
                                      " document's person (a string in every record)."),
    "datasets.user_corpus.shards": ("{unit=} groups each person's documents in memory, and a shard folder is"
                                    " streamed: give the JSONL/CSV file the shards were prepared from, with"
                                    " {user_field} FIELD."),
    "mechanisms.laplace.check_scale": ("{epsilon} is too small: its noise scale {value:.4g} is beyond the Laplace"
                                       " samplers' range (0, {top:g}] (epsilon >= sensitivity/{top:g}); raise"
                                       " {epsilon}."),
    "mechanisms.laplace.check_scale.exact": ("{epsilon} is too small: its noise scale {value:} is beyond the Laplace"
                                             " samplers' range (0, {top:g}] (epsilon >= sensitivity/{top:g}); raise"
                                             " {epsilon}."),
    "models.docdp_cooc.background": ("{n_topics=} leaves no topic beside the {n_bg} background topics: raise"
                                     " {n_topics} or give {background_share} off."),
    "models.fedlda.from_user_budget": ("{user_epsilon=:g} is too large: it would give each user {pad} entries, more"
                                       " than the {most:g} an update may hold; give a smaller {user_epsilon}."),
    "models.fedlda.per_user_error": ("{epsilon=:g} is too small for a vocabulary of {V} words: at the epsilon per"
                                     " entry it leaves ({per:g}) {why}; give a larger {epsilon}."),
    "models.fedlda.validate": ("give {epsilon} (the per-user total, split over the entries) or {epsilon_per_entry}"
                               " (its figure per reported word), not both."),
    "models.hdp_lda.from_budget": ("give {epsilon} (the whole run's epsilon per word; eps_L is solved from it) or"
                                   " {epsilon_laplace} (eps_L per iteration), not both."),
    "models.olp_lda.validate": ("give {omega} or {sigma2}, not both: Theorem 6 ties them, omega = Mf(2-f)/(Mf(2-f) +"
                                " 4 sigma2 (1-f)^2)."),
    "models.online_vb.validate": ("invalid {n_epochs=:g} for online-vb: it makes whole passes over the corpus; give"
                                  " an integer >= 1 (svi takes fractional epochs: steps = round(epochs / q))."),
    "models.registry.unit_algorithm_error": ("{unit} picks the trainer itself: drop {algorithm}, or drop {unit} to"
                                             " choose one by hand."),
    "models.registry.unit_algorithm_error.2": ("{unit=} needs a trainer that bounds each person's documents as a"
                                               " whole: {default} (the default) or {alternatives}; {algorithm=}"
                                               " cannot give it: drop {algorithm}, or choose one of those."),
    "person_bound.check_unit": ("{person_statistic=} makes each person's contribution from all their documents: give"
                                " {unit} user with it, or leave it out."),
    "reporting.export.check_export": ("{kept_words_only} applies to a document-level model ({levels}), whose topics"
                                      " spread weight they did not estimate over the other words; {model} {source!r}"
                                      " is {cls}, which estimates every word: drop {kept_words_only}."),
    "reporting.export.check_export.2": ("{model} {source!r}: its release estimated no word above the noise, so there"
                                        " are no kept words to export: drop {kept_words_only}."),
    "reporting.export.check_export.3": ("{model} {source!r}: none of its {n} topics stands above the noise of its"
                                        " release, so there is nothing to export; pass {show_unsupported} to export"
                                        " them all, noise included."),
    "service.kinds.epsilon_of_other_kind": ("word-level reports need {epsilon_word}; document-level reports take"
                                            " {epsilon_doc} instead."),
    "service.startup.check_database": ("{database=} already holds tables that are not dptopic's ({tables}): give a"
                                       " new database, or pass {allow_foreign_tables} to add the service's tables"
                                       " beside them."),
    "service.startup.check_host": ("{host=} would expose the server beyond this machine: put it behind a TLS reverse"
                                   " proxy and pass {allow_remote} to confirm."),
    "service.startup.directory_plan": ("{directory} names a committee round (the operator invited with the committee"
                                       " mode): serve it with {committee} auto (or a size)."),
    "service.startup.secure_sum_settings": "{report_kind=} needs {unit} user (the guarantee is per person).",
    "service.startup.secure_sum_settings.2": ("{report_kind=} needs {epsilon} E (per person) and {min_contributors}"
                                              " N."),
    "service.startup.secure_sum_settings.3": "{parameter} is not for {report_kind=}: drop it.",
    "service.startup.serve_config": ("{parameter} has no effect without FedLDA: add {fed_epsilon_per_entry}"
                                     " EPS_ENTRY (or {fed_user_budget} EPS_USER) to run FedLDA rounds, or drop it."),
    "training.run.no_vocabulary_error": ("the report file does not embed its vocabulary: give {vocabulary} FILE (the"
                                         " public word list)."),
    "contributor.client.create_exclusive": ("cannot write the {what} {path!r} ({why}): give {state} a path you can"
                                            " write to, or {state} none."),
    "contributor.client.default_state_folder": ("cannot create {path!r} to keep your randomized reports ({why}): give"
                                                " {state} a file (or {state} none to draw new reports every run,"
                                                " which spends the per-user epsilon again)."),
    "contributor.client.fed_reports": ("{state} keeps reports drawn once, which only the 'none' rule does: this"
                                       " server's rule {rule!r} draws new entries every round; give {state} none."),
    "contributor.client.write_submit_state": ("cannot write the submit state file {path!r} ({why}): give {state} a"
                                              " path you can write to, or {state} none."),
    "contributor.randomizer.empty_vocabulary": ("empty vocabulary: give at least one word (one word per line in"
                                                " {vocabulary})."),
    "service.secure_sum.admin_disabled": "admin endpoints are disabled: start the server with {admin_token}.",
    "service.secure_sum.config.directory_size": ("{directory} lists {listed} invited contributors, but the round"
                                                 " takes {n} ({min_contributors}): give the same number, or invite"
                                                 " again."),
    "service.secure_sum.wrong_token": "send 'Authorization: Bearer TOKEN' (the token from {admin_token}).",
    "service.secure_sum.store.foreign_tables": ("{database=} already holds tables that are not the secure sum's"
                                                " ({tables}): give a new database, or pass {allow_foreign_tables} to"
                                                " add the round's tables beside them."),
}
