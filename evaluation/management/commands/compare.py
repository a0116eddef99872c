"""``manage.py compare``: put evaluation reports side by side (same code as ``python -m evaluation compare``)."""
from django.core.management.base import BaseCommand, CommandError

from evaluation.cli import add_compare_arguments, run_compare
from evaluation.management.output import PlainWriter


class Command(BaseCommand):
    help = "Compare evaluation report directories side by side."

    def add_arguments(self, parser):
        add_compare_arguments(parser)

    def handle(self, *args, **options):
        import argparse

        if run_compare(argparse.Namespace(**options), stdout=PlainWriter(self.stdout), stderr=PlainWriter(self.stderr)):
            raise CommandError("comparison failed (see the message above)", returncode=2)
