"""``manage.py compare``: put evaluation reports side by side (same code as ``python -m evaluation compare``)."""
from django.core.management.base import BaseCommand, CommandError

from evaluation.cli import add_compare_arguments, run_compare


class _Plain:
    """Lets ``print(..., file=...)`` write through Django's OutputWrapper without extra newlines."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text):
        self.wrapper.write(text, ending="")

    def flush(self):
        self.wrapper.flush()


class Command(BaseCommand):
    help = "Compare evaluation report directories side by side."

    def add_arguments(self, parser):
        add_compare_arguments(parser)

    def handle(self, *args, **options):
        import argparse

        if run_compare(argparse.Namespace(**options), stdout=_Plain(self.stdout), stderr=_Plain(self.stderr)):
            raise CommandError("comparison failed (see the message above)", returncode=2)
