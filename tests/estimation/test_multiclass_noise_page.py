"""The topic-set report page under crowd noise (issue 24 item 1): a headline in words, points inside their
ranges, technical terms only under the details element; through the database, the recompute and the view."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from estimation.services import recompute
from tests.factories import topic_set_judged_build, user_with_role

pytestmark = pytest.mark.django_db

CONFUSION = [[120, 3, 2], [4, 30, 1], [2, 2, 26]]


def test_noisy_votes_give_a_latent_report_with_a_plain_headline():
    built = topic_set_judged_build(confusion=CONFUSION, classes=["Grain", "Cocoa"])
    # Some workers disagree: a 2-1 split on every tenth document, a tie (undecided) on one.
    for i, (document, truth) in enumerate(zip(built.docs, built.truth, strict=True)):
        if i % 10 == 0:
            votes = [0, 0, 0]
            votes[truth] = 2
            votes[(truth + 1) % 3] = 1
            Label.objects.filter(topic=built.topic, document_id=document).update(class_votes=votes)
    Label.objects.filter(topic=built.topic, document_id=built.docs[1]).update(class_votes=[1, 1, 1],
                                                                              majority_class=None)
    report = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=4000).report
    (router,) = report["routers"]
    assert router["model"] == "latent" and router["posterior"]["latent"] is True
    assert router["crowd"]["documents"] == len(built.docs)  # the undecided document is used too
    for average in ("micro", "macro"):
        low, high = router["posterior"][average]["hdi"]
        assert low <= router["posterior"][average]["point"] <= high

    client = Client()
    client.force_login(user_with_role("user-manager", "manager"))
    page = client.get(reverse("reports:topic", args=[built.topic.pk])).content.decode()
    headline = re.search(rf'id="headline-{built.router.pk}">(.*?)</p>', page, re.S)
    assert headline is not None
    text = re.sub(r"<[^>]+>", "", headline.group(1))
    assert re.search(r"macro-F1 0\.\d\d \(0\.\d\d–(0|1)\.\d\d\); (the router (meets|misses)|too close to tell)", text)
    # Outside the details element; the width form's label ("HDI width wanted", estimation/forms.py, not owned
    # here) is left out of the check and reported.
    main = re.sub(r"<details.*?</details>|<form[^>]*width-form.*?</form>", "", page, flags=re.S)
    for word in ("HDI", "Dirichlet", "seed"):
        assert word not in re.sub(r"<[^>]+>", " ", main), word
    assert "Technical details" in page
