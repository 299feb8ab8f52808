"""Validation and campaigns: a model checked against a device, case by case.

``validate`` runs the suites on a device and a model and compares the words;
``shrink`` cuts a mismatch to a minimal reproducer; ``scoring`` scores models
against a capture's recorded words, and ``replay`` runs a capture's inputs on a
device; ``campaign`` runs validate over many datapaths (the named
``targets``), resumably, and ``merge`` joins a campaign's shards; ``counts``
parses the case counts all of them take.
"""
