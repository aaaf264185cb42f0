"""The dataset ledger: every private release made from a set of documents, kept across runs, processes and hosts, with
the documents and people it read, their totals and the caps on them (docs/budget.md).

- the ledger itself, :class:`~dptopic.dataset_ledger.ledger.DatasetLedger` (:mod:`~dptopic.dataset_ledger.ledger`:
  opening, the key, recording documents, debits and caps), its parts by what they do: every read checked
  (:mod:`~dptopic.dataset_ledger.checked_state`), the owners' rows (:mod:`~dptopic.dataset_ledger.owner_rows`),
  totals and the cap check (:mod:`~dptopic.dataset_ledger.owner_totals`), plans (:mod:`~dptopic.dataset_ledger.plans`)
  and what ``dptopic budget show`` shows (:mod:`~dptopic.dataset_ledger.views`);
- where it is stored, a SQLite file or a shared PostgreSQL database (:mod:`~dptopic.dataset_ledger.store`), and
  which one a run uses (:mod:`~dptopic.dataset_ledger.location`);
- what it knows documents and people by, keyed with its own key (:mod:`~dptopic.dataset_ledger.identity`), and the
  rule for dataset names (:mod:`~dptopic.dataset_ledger.names`);
- a release as stored, its events as JSON and its own figure (:mod:`~dptopic.dataset_ledger.releases`), and the
  totals per person or document (:mod:`~dptopic.dataset_ledger.totals`);
- a private fit charged to it (:mod:`~dptopic.dataset_ledger.charge`).

It sits just above ``accounting`` (the privacy arithmetic it composes with) and below ``corpus``, which tells it the
documents an input holds. Nothing is imported here: ``dptopic budget`` opens a ledger without numpy, and each
caller imports the module it needs.
"""
