"""FedLDA on a corpus whose documents name their people: the epsilon its card states per user, and what one person
actually gets (60 people of 5 documents each, FedLDA at epsilon = 20 per user).

A person whose documents went to c simulated users sends c users' reports, each at the card's epsilon: basic
composition gives the person c x epsilon. The script prints the card's figure, the number of simulated users, and
the largest per-person figure. Run it against another checkout with PYTHONPATH=OTHER/src.

    .venv/bin/python benchmarks/fed_people.py
"""
from __future__ import annotations

import warnings

import numpy as np

from dptopic.accounting.card import privacy_card
from dptopic.corpus import Corpus
from dptopic.models import FedLDA

PEOPLE, PER_PERSON, EPSILON = 60, 5, 20.0


def main() -> None:
    warnings.simplefilter("ignore")      # the vocabulary note: this corpus is made up
    rng = np.random.default_rng(0)
    topics = [["river", "water", "boat", "fish", "shore"], ["money", "loan", "bank", "credit", "market"]]
    texts = [" ".join(rng.choice(topics[p % 2], 20)) for p in range(PEOPLE) for _ in range(PER_PERSON)]
    ids = [f"person{p}" for p in range(PEOPLE) for _ in range(PER_PERSON)]
    corpus = Corpus.from_texts(texts, user_ids=ids)
    m = FedLDA(n_topics=2, epsilon=EPSILON, rounds=3, pad_length=16, verbose=0).fit(corpus)
    card = privacy_card(m.privacy_, "FedLDA")
    users = m.n_clients_
    # the simulated users are formed from the documents in order: a person's documents fall into (at most) this many
    clients_per_person = PER_PERSON if users == PEOPLE * PER_PERSON else 1 if users == PEOPLE else None
    print(f"{PEOPLE} people x {PER_PERSON} documents, FedLDA epsilon = {EPSILON:g} per user")
    print(f"  simulated users: {users}; the card's epsilon: {card['epsilon']:.4g} per {card['privacy_unit']}")
    print(f"  the card's user line: {card.get('user_bound', '(none)')}")
    if clients_per_person is not None:
        print(f"  epsilon per person (basic composition over the person's {clients_per_person} user(s)):"
              f" {clients_per_person * card['epsilon']:.4g}")


if __name__ == "__main__":
    main()
