"""certification_decide on a locked plan whose sample is judged: wall time and how long the plan's row lock is held.

    python bench/bench_certification_decide.py [--documents 20000] [--repeats 5]

Uses a throw-away test database (PostgreSQL when DATABASE_URL is set, else SQLite). Builds a pair world
(tests.factories.make_pair_world: 10% relevant, C1 recall 0.85, C2 0.6), judges a pilot of 100 documents per
region, then per repeat plans a pair-recall certification (τ 0.6, declared δ1 band 0.8–1.25), locks it (cost
confirmed by the caller, as the page does), gives every certification document its true label and times
``certification_decide``. Each decide is a different plan (a verdict is computed once). The row lock is the
``transaction.atomic`` block of the decide (select_for_update of the plan, the check that nothing moved, the
insert): its duration is measured by wrapping that block. Prints the medians of ``--repeats`` runs; with
``--dependence`` the plans also sample region N and are decided on the design-based bound.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def main() -> None:
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dependence", action="store_true", help="plans with a dependence check (region N)")
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        run(documents=args.documents, repeats=args.repeats, dependence=args.dependence)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(*, documents: int, repeats: int, dependence: bool) -> None:
    from annotation.models import SampleDraw
    from annotation.services.sampling.draws import samples_draw
    from estimation.services import certification_verdicts
    from estimation.services.certification_locks import certification_plan_lock
    from estimation.services.certification_plans import certification_plan_create
    from tests.factories import UserFactory, c1, certification_ids, judge, make_pair_world, pilot

    started = time.perf_counter()
    world = make_pair_world(n=documents, prevalence=0.1, recall1=0.85, recall2=0.6, noise=0.01, seed=11)
    pilot(world, per_region=100)
    if dependence:
        samples_draw(topic=world.topic, per_region=100, complement=400, seed=5)
        judge(world, SampleDraw.objects.filter(topic=world.topic, region="N")
              .values_list("documents__document_id", flat=True))
    manager = UserFactory.create(username="bench-manager")
    print(f"vendor {connection.vendor}, {documents:,} documents, set-up {time.perf_counter() - started:.1f} s "
          f"(untimed)")

    held: list[float] = []
    real_atomic = certification_verdicts.transaction.atomic

    @contextlib.contextmanager
    def timed_atomic(*a, **k):
        # The lock is released at commit; on_commit callbacks (the report recompute, eager in tests) run after
        # it, in registration order, so the first one registered marks the commit.
        begin = time.perf_counter()
        with real_atomic(*a, **k):
            real_on_commit(lambda: held.append(time.perf_counter() - begin))
            yield

    real_on_commit = certification_verdicts.transaction.on_commit

    class TransactionShim:
        atomic = staticmethod(timed_atomic)
        on_commit = staticmethod(real_on_commit)

    certification_verdicts.transaction = TransactionShim  # type: ignore[assignment]
    decide_times, plan_times, sizes = [], [], []
    for repeat in range(repeats):
        t0 = time.perf_counter()
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6,
                                         dependence_check=dependence, user=manager)
        plan_times.append(time.perf_counter() - t0)
        if not plan.pilot["feasible"]:
            raise SystemExit(f"plan infeasible: {plan.pilot['reason']}")
        plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=1000 + repeat, publish=False)
        judge(world, certification_ids(plan))
        held_before = len(held)
        t0 = time.perf_counter()
        verdict = certification_verdicts.certification_decide(plan_id=plan.pk)
        decide_times.append(time.perf_counter() - t0)
        assert verdict is not None and len(held) == held_before + 1
        sizes.append(plan.sample_size["total"])
        print(f"  plan {plan.pk}: {plan.sample_size} (fresh {plan.pilot['fresh']}, enumerated "
              f"{plan.pilot['enumerated']}), decide {decide_times[-1] * 1000:.0f} ms, row lock held "
              f"{held[-1] * 1000:.1f} ms, passed={verdict.passed} bound {verdict.lower_bound:.3f}")
    print(f"certification_decide: median {statistics.median(decide_times) * 1000:.0f} ms over {repeats} plans "
          f"(median sample {statistics.median(sizes):.0f} documents); plan's row lock held: median "
          f"{statistics.median(held) * 1000:.1f} ms, max {max(held) * 1000:.1f} ms; "
          f"certification_plan_create: median {statistics.median(plan_times):.2f} s")


if __name__ == "__main__":
    main()
