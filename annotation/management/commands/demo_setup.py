"""python manage.py demo_setup: a demo corpus, two keyword classifiers and a topic; does nothing if present."""
from django.core.management.base import BaseCommand

from annotation.demo.setup import demo_setup_run


class Command(BaseCommand):
    help = "Create the demo corpus, classifiers, topic and role groups (idempotent)."

    def handle(self, *args, **options):
        result = demo_setup_run()
        for message in result.messages:
            self.stdout.write(message)
