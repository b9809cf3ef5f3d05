"""Crowd integrations that talk to the outside world.

Only Amazon Mechanical Turk lives here: `mturk_client` builds the boto3 client and
the exact requests. The business logic (publish, reconcile, the external HIT page's
writes, the price of an assignment) is in `annotation.services.crowd.mturk`, which
`annotation.services.crowd.crowds` calls for topics whose crowd is "mturk"; docs/mturk.md
explains it all.
"""
