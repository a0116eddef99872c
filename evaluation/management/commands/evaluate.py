"""``manage.py evaluate``: the same runner as ``python -m evaluation`` (see evaluation.cli)."""
from django.core.management.base import BaseCommand, CommandError

from evaluation.cli import add_evaluate_arguments, run_evaluate
from evaluation.management.output import PlainWriter


class Command(BaseCommand):
    help = "Evaluate a model or an offline baseline on an export directory (WellPlay or WhodunitBench)."

    def add_arguments(self, parser):
        add_evaluate_arguments(parser)

    def handle(self, *args, **options):
        import argparse

        code = run_evaluate(argparse.Namespace(**options), stdout=PlainWriter(self.stdout), stderr=PlainWriter(self.stderr))
        if code == 2:
            raise CommandError("evaluation not run (see the message above)", returncode=2)
        if code == 3:
            raise CommandError("evaluation stopped: the endpoint refused the key (see the message above)", returncode=3)
        if code:
            raise CommandError("evaluation finished with failed requests (see the report)", returncode=code)
