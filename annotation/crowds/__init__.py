"""Crowd integrations that talk to the outside world.

Only Amazon Mechanical Turk lives here: `mturk_client` builds the boto3 client and
the exact requests, `mturk` is the adapter `annotation.services.crowds` loads for
topics whose crowd is "mturk". The business logic (publish, reconcile, the external
HIT page's writes) is in `annotation.services.mturk`; docs/mturk.md explains it all.
"""
