"""``python manage.py load_demo``: load the bilingual demo game and the demo manager account."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from annotate.demo import DemoError, load_demo


class Command(BaseCommand):
    help = (
        "Load the demo game (Chinese and English, linked as counterparts) from fixtures/demo/, create the "
        "'demo' superuser as manager of both, and print its login. Safe to run again: it changes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--replace", action="store_true",
                            help="Overwrite demo games whose stored content differs from the fixtures.")
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="Address printed for logging in.")

    def handle(self, *args, replace: bool = False, url: str = "", **options) -> None:
        try:
            result = load_demo(replace=replace)
        except DemoError as exc:
            raise CommandError(str(exc)) from exc
        except DatabaseError as exc:
            raise CommandError(
                f"the database is not ready ({exc}); run `python manage.py migrate` first (scripts/setup.sh does)"
            ) from exc

        for game, status in result.games:
            self.stdout.write(f"  {game.title} [{game.language}] ({game.slug}): {status}")
        for problem in result.problems:
            self.stderr.write(f"  {problem}")
        if any(status == "exists" for _, status in result.games):
            self.stderr.write("  A stored demo game differs from fixtures/demo/; kept it. Use --replace to reset it.")
        if result.changed:
            parts = []
            if result.linked:
                parts.append("linked the two languages")
            if result.user_created:
                parts.append("created the demo user")
            elif result.user_changed:
                parts.append("updated the demo user's password or admin rights")
            if result.memberships_changed:
                parts.append(f"gave the demo user the manager role on {result.memberships_changed} game(s)")
            if parts:
                self.stdout.write(f"  Also {', '.join(parts)}.")
            self.stdout.write(self.style.SUCCESS("Demo loaded."))
        else:
            self.stdout.write(self.style.SUCCESS("Demo already loaded: nothing changed."))
        base = url.rstrip("/")
        self.stdout.write(
            "\n"
            f"  Log in at   {base}/accounts/login/   (admin: {base}/admin/)\n"
            f"  username    {result.username}\n"
            f"  password    {result.password}   (from {result.password_source})\n"
        )
