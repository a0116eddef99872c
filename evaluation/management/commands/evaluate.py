"""``manage.py evaluate``: the same runner as ``python -m evaluation`` (see evaluation.cli)."""
from django.core.management.base import BaseCommand, CommandError

from evaluation.cli import add_evaluate_arguments, run_evaluate


class _Plain:
    """Lets ``print(..., file=...)`` write through Django's OutputWrapper without extra newlines."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text):
        self.wrapper.write(text, ending="")

    def flush(self):
        self.wrapper.flush()


class Command(BaseCommand):
    help = "Evaluate a model or an offline baseline on an export directory (WellPlay or WhodunitBench)."

    def add_arguments(self, parser):
        add_evaluate_arguments(parser)

    def handle(self, *args, **options):
        import argparse

        code = run_evaluate(argparse.Namespace(**options), stdout=_Plain(self.stdout), stderr=_Plain(self.stderr))
        if code == 2:
            raise CommandError("evaluation not run (see the message above)", returncode=2)
        if code:
            raise CommandError("evaluation finished with failed requests (see the report)", returncode=code)
