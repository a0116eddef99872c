"""``manage.py jobs``: list background jobs, mark those of dead workers interrupted, resume one."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotate.services.permissions import may_resume_job
from casebook.jobs import JobError, reap_stale, resume
from casebook.models import Job


class Command(BaseCommand):
    help = ("List recent background jobs (`jobs`), or resume an interrupted one (`jobs --resume ID --as USERNAME`): "
            "ingest continues at the first page not OCR'd yet, distractor generation skips finished questions.")

    def add_arguments(self, parser):
        parser.add_argument("--resume", dest="resume_id", type=int, metavar="ID", help="queue this interrupted job again")
        parser.add_argument("--as", dest="as_user", metavar="USERNAME", required=False,
                            help="who resumes it: the job's owner, a manager of its game or a superuser")
        parser.add_argument("--limit", type=int, default=20, help="how many recent jobs to list (default 20)")

    def handle(self, *args, resume_id: int | None = None, as_user: str | None = None, limit: int = 20, **options):
        for pk in reap_stale():
            self.stdout.write(f"job {pk}: its worker stopped; marked interrupted")
        if resume_id is None:
            for job in Job.objects.select_related("game")[:limit]:
                game = job.game.slug if job.game_id else "-"
                self.stdout.write(f"{job.pk:>6}  {job.kind:<18} {job.state:<11} {job.done}/{job.total:<6} {game:<24} "
                                  f"{job.message[:80]}")
            return
        job = Job.objects.select_related("game").filter(pk=resume_id).first()
        if job is None:
            raise CommandError(f"there is no job {resume_id}")
        if not as_user:
            raise CommandError("say who resumes it with --as USERNAME (the job's owner, a game manager or a superuser)")
        user = get_user_model().objects.filter(username=as_user).first()
        if user is None:
            raise CommandError(f"there is no user {as_user!r}")
        if not may_resume_job(user, job):
            raise CommandError(f"{as_user} may not resume job {job.pk}: only its owner, a manager of its game or a superuser")
        try:
            job = resume(job)
        except JobError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"job {job.pk} ({job.kind}) queued again: it continues from {job.done}/{job.total}; "
                          f"state now {job.state}")
