"""What a review board reads: the HTML report (:mod:`.html`, which renders the privacy card of
:mod:`dptopic.accounting.card`), the card and topics as terminal text (:mod:`.terminal`), and what the commands write
and read beside a model (:mod:`.export`, :mod:`.page`).

Each name is imported from the module that defines it: the command line imports :mod:`dptopic.reporting.terminal`
on its start-up path, which must not load the card's accountants and numpy."""
