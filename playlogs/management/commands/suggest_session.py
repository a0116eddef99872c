"""``manage.py suggest_session SESSION --as USER``: pre-fill a user's drafts for every turn with
suggestions (the configured LLM, concurrently, or ``--offline`` heuristics), with progress."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotate.services import permissions
from playlogs import assist, services
from playlogs.models import Session, TurnAnnotation


class Command(BaseCommand):
    help = "Suggest triplets, emotions and suspicions for every turn not yet annotated by the user (as drafts)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("session", type=int, help="session id")
        parser.add_argument("--as", dest="as_user", required=True, help="the annotator whose drafts are pre-filled")
        parser.add_argument("--offline", action="store_true", help="use the offline heuristics even with an endpoint")

    def handle(self, *args, session: int, as_user: str, offline: bool, **opts) -> None:
        row = Session.objects.select_related("game").filter(pk=session).first()
        if row is None:
            raise CommandError(f"No session #{session}.")
        if not get_user_model().objects.filter(username=as_user).exists():
            raise CommandError(f"No user {as_user!r}.")
        user = permissions.command_user(as_user, row.game, "create")
        done = set(TurnAnnotation.objects.filter(turn__session=row, annotator=user).values_list("turn_id", flat=True))
        turns = [t for t in row.turns.select_related("speaker", "session") if t.pk not in done]
        if not turns:
            self.stdout.write("Every turn already has an annotation by this user; nothing to do.")
            return
        from casebook.llm import LLMClient, LLMSettings

        use_llm = not offline and LLMSettings.from_settings().configured
        if use_llm:
            client = LLMClient()
            contexts = [(t, assist.llm_context(t)) for t in turns]  # database reads stay in this thread
            results = ((pair[0], s, e) for pair, s, e in
                       client.map(lambda pair: assist.llm_suggestion_from(pair[1], client), contexts))
        else:
            results = ((t, assist.heuristic_suggestion(t), None) for t in turns)
        saved = failed = 0
        for n, (turn, suggestion, error) in enumerate(results, start=1):
            if error is None:
                try:
                    services.save_annotation(turn, user, suggestion, expected_version=None, source=suggestion["source"])
                    saved += 1
                except services.AnnotationError as exc:
                    error = exc
            if error is not None:
                failed += 1
                self.stderr.write(f"turn {turn.index + 1}: {error}")
            self.stdout.write(f"\r{n}/{len(turns)} turns", ending="")
        self.stdout.write(f"\n{saved} drafts pre-filled by {'the LLM' if use_llm else 'offline heuristics'} "
                          f"for {as_user}; {failed} failed. Review them on /g/{row.game.slug}/sessions/{row.pk}/.")
        if failed:
            raise CommandError(f"{failed} turns got no suggestion (see above); rerun to retry only those.")
