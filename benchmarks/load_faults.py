"""Load and fault drills: 20 annotators writing at once, a killed worker, a held lock, a killed web server.

Everything runs on loopback in a scratch data dir (SQLite) or on the ``DATABASE_URL`` you give
(PostgreSQL; a ``load-bench`` game is rebuilt there), with gunicorn and ``manage.py worker`` as
``scripts/run.sh`` runs them, on ports 8240-8249 (``--port``).

    .venv/bin/python benchmarks/load_faults.py                       # SQLite: workload + drills
    DATABASE_URL=postgres://u:p@127.0.0.1:5432/db .venv/bin/python benchmarks/load_faults.py
    options: --clients 20 --seconds 60 --drills worker,lock,gunicorn (or none) --lock-seconds 30

Figures: requests, responses >= 500, p50/p95 per operation, writes acknowledged vs read back from
the database; per drill, what it left behind (job state, processes, temporary folders, files).
Target: 0 × 5xx, 0 lost writes; every drill ends with work resumed or clearly marked.
"""
from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from latency import p50_p95, wait_ready  # benchmarks/latency.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
SLUG = "load-bench"
CSRF = "loadbenchcsrftokenloadbenchcsrf0"  # 32 characters: sent as cookie and header
SCRIPT_LINE = "那天晚上十点，我看见管家拿着一把钥匙走进书房。At ten I saw the butler enter the study.\n"
VERSION_RE = re.compile(r'name="version" value="(\d+)"')


# -- the workload (also run for a few seconds by tests/test_load_faults.py) --------------------------------

@dataclass
class ClientPlan:
    """One simulated annotator: its login and the items it owns (so its writes never conflict)."""

    username: str
    cookie: str
    question: int
    relationship: int
    chain: int
    character: int
    source: int
    target: int
    span: int  # the evidence its chain nodes cite


@dataclass
class Tally:
    times: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # what the server acknowledged, per client: last question stem, last relationship note, node texts, span ids
    stems: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, list[str]] = field(default_factory=dict)
    spans: dict[str, list[int]] = field(default_factory=dict)
    transitions: int = 0
    acknowledged: int = 0  # writes the server confirmed (every edit, node, span, transition)
    refused: list[str] = field(default_factory=list)  # writes answered with a form error (not a 5xx)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)


def build_workload(clients: int) -> list[ClientPlan]:
    """The ``load-bench`` game and one annotator per client, each with its own question, relationship and chain."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotate.models import (
        Character,
        EvidenceSpan,
        Game,
        Membership,
        Option,
        Question,
        ReasoningChain,
        Relationship,
    )

    Game.objects.filter(slug=SLUG).delete()
    game = Game.objects.create(slug=SLUG, title="负载测试 load bench", language="zh", truth_text="真相" * 200)
    script = SCRIPT_LINE * 200
    people = [Character.objects.create(game=game, name=f"角色{i}", position=i, script=script) for i in range(4)]
    User = get_user_model()
    plans = []
    for i in range(clients):
        name = f"load{i:02d}"
        user = User.objects.filter(username=name).first() or User.objects.create_user(name)
        Membership.objects.create(user=user, game=game, role=Membership.Role.ANNOTATOR)
        q = Question.objects.create(game=game, kind="reasoning", sub_type="why", stem=f"{name} 第0版", answer="a",
                                    position=i, author=user, status="draft")
        Option.objects.bulk_create([Option(question=q, position=j, text=f"选项{j}", is_correct=j == 0) for j in range(3)])
        source, target = people[i % 4], people[(i + 1) % 4]
        rel = Relationship.objects.create(game=game, source=source, target=target, labels=["father of x"],
                                          author=user, note="")
        chain = ReasoningChain.objects.create(game=game, title=f"{name} 的链", author=user)
        span = EvidenceSpan.objects.create(game=game, document="script", character=people[i % 4], start=0,
                                           end=12, quote=SCRIPT_LINE[:12])
        web = Client()
        web.force_login(user)
        plans.append(ClientPlan(name, web.cookies["sessionid"].value, q.pk, rel.pk, chain.pk, people[i % 4].pk,
                                source.pk, target.pk, span.pk))
    return plans


class _Session:
    def __init__(self, base_url: str, plan: ClientPlan, tally: Tally) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.plan, self.tally = plan, tally
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=90)
        self.headers = {"Cookie": f"sessionid={plan.cookie}; csrftoken={CSRF}", "X-CSRFToken": CSRF,
                        "Connection": "keep-alive"}

    def request(self, op: str, method: str, path: str, body: str | None = None,
                content_type: str = "application/x-www-form-urlencoded") -> tuple[int, str, dict]:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = content_type
        started = time.perf_counter()
        try:
            self.conn.request(method, path, body=body.encode() if body is not None else None, headers=headers)
            response = self.conn.getresponse()
            text = response.read().decode("utf-8", "replace")
            status = response.status
            location = response.getheader("Location") or ""
        except (OSError, http.client.HTTPException) as exc:
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=90)
            with self.tally.lock:
                self.tally.errors.append(f"{op}: {exc.__class__.__name__}: {exc}")
            return 0, "", {}
        elapsed = (time.perf_counter() - started) * 1000
        with self.tally.lock:
            self.tally.times.setdefault(op, []).append(elapsed)
            self.tally.statuses[status] = self.tally.statuses.get(status, 0) + 1
            if status >= 500:
                self.tally.errors.append(f"{op}: HTTP {status} {path}")
        return status, text, {"location": location}

    def version(self, page: str = "question page", path: str = "") -> int | None:
        """The version the editor page carries, as a browser would post it back."""
        status, text, _ = self.request(page, "GET", path or f"/g/{SLUG}/questions/{self.plan.question}/")
        found = VERSION_RE.search(text) if status == 200 else None
        return int(found.group(1)) if found else None

    def _acknowledge(self, ok: bool, op: str, text: str, status: int) -> None:
        with self.tally.lock:
            if ok:
                self.tally.acknowledged += 1
            elif 0 < status < 500:
                found = re.search(r'class="(?:error|msg error)[^"]*"[^>]*>([^<]{0,120})', text)
                self.tally.refused.append(f"{op}: HTTP {status} {found.group(1).strip() if found else ''}")

    # -- the operations ------------------------------------------------------------------------------

    def edit_question(self, token: str) -> None:
        version = self.version()
        if version is None:
            return
        stem = f"{self.plan.username} {token}：谁在十点进了书房？"
        body = urlencode({"version": version, "kind": "reasoning", "sub_type": "why", "stem": stem, "status": "draft",
                          "option_row": ["1", "2", "3"], "option_text_1": "管家", "option_text_2": "厨师",
                          "option_text_3": "园丁", "option_correct_1": "on", "weight": ""}, doseq=True)
        status, _text, _ = self.request("question edit", "POST", f"/g/{SLUG}/questions/{self.plan.question}/", body)
        self._acknowledge(status == 302, "question edit", _text, status)
        if status == 302:
            with self.tally.lock:
                self.tally.stems[self.plan.username] = stem

    def submit_withdraw(self) -> None:
        for action in ("submit", "withdraw"):
            version = self.version()
            if version is None:
                return
            path = f"/g/{SLUG}/review/question/{self.plan.question}/transition/"
            status, _text, meta = self.request(action, "POST", path, urlencode({"action": action, "version": version}))
            if status != 302:
                return
            status, text, _ = self.request("question page", "GET", meta["location"] or path.rsplit("transition/", 1)[0])
            if 'class="msg error' in text:
                with self.tally.lock:
                    self.tally.errors.append(f"{action} refused: {re.search(r'msg error[^>]*>([^<]*)', text).group(1)}")
                return
            with self.tally.lock:
                self.tally.transitions += 1
                self.tally.acknowledged += 1

    def edit_relationship(self, token: str) -> None:
        note = f"{self.plan.username} {token}"
        path = f"/g/{SLUG}/relationships/{self.plan.relationship}/"
        version = self.version("relationship page", path)
        if version is None:
            return
        body = urlencode({"source": self.plan.source, "target": self.plan.target, "labels": ["father of x"],
                          "note": note, "version": version}, doseq=True)
        status, _t, _ = self.request("relationship edit", "POST", path, body)
        self._acknowledge(status == 302, "relationship edit", _t, status)
        if status == 302:
            with self.tally.lock:
                self.tally.notes[self.plan.username] = note

    def add_node(self, token: str) -> None:
        text = f"{self.plan.username} {token} 推理"
        body = urlencode({"kind": "direct", "text": text, "evidence": self.plan.span})
        status, _t, _ = self.request("chain node", "POST", f"/g/{SLUG}/chains/{self.plan.chain}/", body)
        self._acknowledge(status == 302, "chain node", _t, status)
        if status == 302:
            with self.tally.lock:
                self.tally.nodes.setdefault(self.plan.username, []).append(text)

    def add_span(self, rng: random.Random) -> None:
        line = rng.randrange(150)
        start = line * len(SCRIPT_LINE)
        quote = SCRIPT_LINE[:12]
        body = json.dumps({"document": "script", "owner_id": self.plan.character, "start": start,
                           "end": start + len(quote), "quote": quote, "unit": "codepoint"})
        status, text, _ = self.request("span create", "POST", f"/g/{SLUG}/spans/new/", body, "application/json")
        self._acknowledge(status == 200, "span create", text, status)
        if status == 200:
            with self.tally.lock:
                self.tally.spans.setdefault(self.plan.username, []).append(json.loads(text)["id"])


def run_workload(base_url: str, plans: list[ClientPlan], seconds: float, seed: int = 1, think: float = 0.0) -> Tally:
    """Every client loops over a weighted mix of writes until ``seconds`` have passed."""
    tally = Tally()
    deadline = time.monotonic() + seconds

    def client(n: int, plan: ClientPlan) -> None:
        rng = random.Random(seed * 1000 + n)
        session = _Session(base_url, plan, tally)
        step = 0
        while time.monotonic() < deadline:
            step += 1
            token = f"v{step}"
            op = rng.choices(["question", "review", "relationship", "node", "span"], [4, 2, 2, 1, 2])[0]
            if op == "question":
                session.edit_question(token)
            elif op == "review":
                session.submit_withdraw()
            elif op == "relationship":
                session.edit_relationship(token)
            elif op == "node":
                session.add_node(token)
            else:
                session.add_span(rng)
            if think:
                time.sleep(rng.uniform(0.5, 1.5) * think)
        session.conn.close()

    threads = [threading.Thread(target=client, args=(n, plan)) for n, plan in enumerate(plans)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally


def read_back(plans: list[ClientPlan], tally: Tally) -> dict[str, int]:
    """Acknowledged writes compared with the database: ``lost`` must be 0."""
    from annotate.models import ChainNode, EvidenceSpan, Question, Relationship

    made = lost = 0
    by_name = {p.username: p for p in plans}
    for name, stem in tally.stems.items():
        made += 1
        lost += Question.objects.get(pk=by_name[name].question).stem != stem
    for name, note in tally.notes.items():
        made += 1
        lost += Relationship.objects.get(pk=by_name[name].relationship).note != note
    for name, texts in tally.nodes.items():
        saved = set(ChainNode.objects.filter(chain_id=by_name[name].chain).values_list("text", flat=True))
        made += len(texts)
        lost += sum(1 for t in texts if t not in saved)
    span_ids = {i for ids in tally.spans.values() for i in ids}  # an identical span comes back with the same id
    made += len(span_ids)
    lost += len(span_ids) - EvidenceSpan.objects.filter(pk__in=span_ids).count()
    return {"made": tally.acknowledged, "checked": made, "lost": lost, "transitions": tally.transitions}



def report(tally: Tally, back: dict[str, int], seconds: float) -> list[str]:
    all_times = [t for ts in tally.times.values() for t in ts]
    lines = [f"requests {tally.requests} ({tally.requests / seconds:.0f}/s), responses >= 500: {tally.server_errors}, "
             f"connection errors: {sum(1 for e in tally.errors if 'HTTP' not in e and 'refused' not in e)}, "
             "p50 {:.0f} ms, p95 {:.0f} ms".format(*p50_p95(all_times)),
             f"writes acknowledged {back['made']} (incl. {back['transitions']} submit/withdraw, checked on the "
             f"next page); read back: latest value of every edited item and every created node/span "
             f"({back['checked']}), lost {back['lost']}; refused with a form error: {len(tally.refused)}"]
    for op, ts in sorted(tally.times.items()):
        lines.append("  {:18} n={:5}  p50 {:6.0f} ms  p95 {:6.0f} ms".format(op, len(ts), *p50_p95(ts)))
    lines += [f"  error: {e}" for e in tally.errors[:5]] + [f"  refused: {e}" for e in tally.refused[:5]]
    return lines


# -- processes as run.sh runs them ------------------------------------------------------------------------

def start_gunicorn(port: int, threads: int = 4) -> subprocess.Popen:
    return subprocess.Popen([str(ROOT / ".venv/bin/gunicorn"), "casebook.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1",
                             "--threads", str(threads), "--timeout", "120", "--log-level", "warning",
                             "--no-control-socket"], cwd=ROOT, env=os.environ.copy())


def start_worker() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "worker", "--queue-name", "*", "--interval", "0.5"],
                            cwd=ROOT, env=os.environ.copy(), stderr=subprocess.PIPE, text=True)



def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def scanned_package(folder: Path, pages: int) -> Path:
    """English page images (a phone-scanned package): each needs OCR."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 34)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(pages):
        img = Image.new("L", (1700, 2200), 255)
        draw = ImageDraw.Draw(img)
        for line in range(40):
            draw.text((120, 120 + line * 50), f"Page {n + 1}, line {line + 1}: the butler entered the study at ten.",
                      fill=0, font=font)
        img.save(folder / f"page{n + 1:02d}.png")
    return folder


def wait_for(predicate, timeout: float, every: float = 0.2):
    """The tests' poll (``tests.ingest.workers``), checking every 0.2 s by default here."""
    from tests.ingest.workers import wait_for as poll

    return poll(predicate, timeout, every)


def drill_kill_worker(pages: int) -> list[str]:
    """SIGKILL the worker while OCR is half-way; a new worker (as run.sh restarts it) takes its page batches
    over once their lease expires (resuming by hand only if the job was marked interrupted meanwhile)."""
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from casebook.models import Job
    from ingest.fanout import stage_dir
    from ingest.models import IngestPlan
    from ingest.pipeline import IngestOptions
    from ingest.tasks import start_upload_job, upload_dir_of

    user = get_user_model().objects.get(username="load00")
    with tempfile.TemporaryDirectory() as tmp:
        package = scanned_package(Path(tmp), pages)
        files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(package.iterdir())]
        title = f"Killed mid-ingest {time.time():.0f}"
        job = start_upload_job(user, files, IngestOptions(title=title, language="en"))
    upload = upload_dir_of(job)
    worker = start_worker()
    reached = wait_for(lambda: Job.objects.filter(pk=job.pk, message="OCR", done__gte=2).first(), 300)
    pool = children_of(worker.pid)
    tmpdir = Path(os.environ["CASEBOOK_DATA_DIR"]) / "tmp" / f"worker-{socket.gethostname()}-{worker.pid}"
    worker.kill()
    worker.wait()
    killed_at = time.monotonic()
    time.sleep(1)
    job.refresh_from_db()
    lines = [f"killed the worker at OCR {reached.done if reached else '?'}/{reached.total if reached else '?'}; "
             f"job state right after: {job.state}; OCR pool processes alive 1 s later: {len(alive(pool))} of {len(pool)}"]
    restarted = start_worker()  # what run.sh's supervisor does
    try:
        ended = wait_for(lambda: Job.objects.filter(pk=job.pk, state__in=["done", "failed", "interrupted"]).first(), 300)
        took = time.monotonic() - killed_at
        plan = IngestPlan.objects.get(job=job)
        lines.append(f"the restarted worker went on: job {ended.state if ended else 'NOT finished'} {took:.0f} s after the "
                     f"kill (“{ended.message if ended else ''}”); {plan.batches.filter(attempts__gt=1).count()} of "
                     f"{plan.batches.count()} page batch(es) ran again after their lease expired, build ran "
                     f"{plan.build_runs}×; the dead worker's temp folder {'removed' if not tmpdir.exists() else 'STILL THERE'}")
        if ended is not None and ended.state == Job.State.INTERRUPTED:  # no live worker noticed in time: resume
            call_command("jobs", "--resume", str(job.pk), "--as", "load00", stdout=io.StringIO())
            ended = wait_for(lambda: Job.objects.filter(pk=job.pk, state__in=["done", "failed"]).first(), 300)
            lines.append(f"resumed: job {ended.state if ended else 'NOT finished'}")
        lines.append(f"upload folder {'removed' if not upload.exists() else 'STILL THERE'}, staged pages "
                     f"{'removed' if not stage_dir(upload).exists() else 'STILL THERE'}, saved page results left: "
                     f"{plan.results.count()}")
    finally:
        pool2 = children_of(restarted.pid)
        stop(restarted)
    leftovers = [p for p in (Path(os.environ["CASEBOOK_DATA_DIR"]) / "tmp").glob("worker-*")]
    lines.append(f"after stopping the worker: processes left {len(alive(pool + pool2))}, worker temp folders left "
                 f"{len(leftovers)}")
    return lines


def drill_lock(port: int, seconds: float, plans: list[ClientPlan]) -> list[str]:
    """Hold SQLite's write lock for ``seconds`` while annotators write and the worker polls."""
    from django.conf import settings

    from annotate.models import Game
    from casebook.models import Job
    from generation.jobs import start_distractor_job

    path = settings.DATABASES["default"]["NAME"]
    worker = start_worker()
    server = start_gunicorn(port)
    try:
        wait_ready(port)
        time.sleep(2)
        holder = sqlite3.connect(path, timeout=60, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the write lock; readers go on (WAL)
        held = time.monotonic()
        tally_box: list[Tally] = []
        load = threading.Thread(target=lambda: tally_box.append(
            run_workload(f"http://127.0.0.1:{port}", plans[:5], seconds + 5, seed=7, think=0.5)))
        load.start()
        time.sleep(seconds)
        holder.execute("COMMIT")
        holder.close()
        released = time.monotonic() - held
        load.join()
        worker_alive = worker.poll() is None
        game = Game.objects.get(slug=SLUG)
        job = start_distractor_job(game, list(game.questions.values_list("pk", flat=True)[:2]), mode="offline")
        done = wait_for(lambda: Job.objects.filter(pk=job.pk, state__in=["done", "failed"]).first(), 60)
        tally = tally_box[0]
        back = read_back(plans[:5], tally)
        return [f"held the write lock {released:.0f} s: 5 clients made {tally.requests} requests, "
                f"{tally.server_errors} × 5xx, lost writes {back['lost']} of {back['made']}",
                f"worker {'still running' if worker_alive else 'DIED'}; a job queued after the lock: "
                f"{done.state if done else 'NOT run'}"]
    finally:
        stop(server)
        stop(worker)


def drill_kill_gunicorn(port: int, plans: list[ClientPlan]) -> list[str]:
    """SIGKILL gunicorn (master and workers) under write load; restart it; check what was acknowledged."""
    server = start_gunicorn(port)
    wait_ready(port)
    box: list[Tally] = []
    load = threading.Thread(target=lambda: box.append(run_workload(f"http://127.0.0.1:{port}", plans, 8, seed=9)))
    load.start()
    time.sleep(3)
    workers = children_of(server.pid)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    server.kill()
    server.wait()
    time.sleep(0.5)
    server = start_gunicorn(port)
    try:
        wait_ready(port)
        load.join()
        tally = box[0]
        back = read_back(plans, tally)
        cut = sum(1 for e in tally.errors if "HTTP" not in e and "refused" not in e)
        return [f"killed gunicorn mid-load: {cut} requests cut off, {tally.server_errors} × 5xx; "
                f"acknowledged writes {back['made']}, lost {back['lost']}; restarted and serving; "
                f"processes left of the killed server: {len(alive(workers))}"]
    finally:
        stop(server)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--port", type=int, default=8240, help="loopback port for gunicorn (default 8240; 0: any free one)")
    p.add_argument("--drills", default="worker,lock,gunicorn", help="comma-separated, or 'none'")
    p.add_argument("--lock-seconds", type=float, default=30)
    p.add_argument("--pages", type=int, default=6, help="scanned pages in the killed ingest")
    args = p.parse_args()
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    scratch = "" if os.environ.get("CASEBOOK_DATA_DIR") else tempfile.mkdtemp(prefix="casebook-loadfaults-")
    os.environ.setdefault("CASEBOOK_DATA_DIR", scratch)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
    os.environ.setdefault("CASEBOOK_JOB_LEASE", "20")  # a killed worker is noticed in ~20-35 s here
    os.environ.setdefault("CASEBOOK_JOB_HEARTBEAT", "5")
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    os.environ["DJANGO_DEBUG"] = "0"
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        plans = build_workload(args.clients)
        if args.port == 0:  # any free loopback port (the test suite)
            import socket

            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                args.port = probe.getsockname()[1]
        print(f"database: {connection.vendor}; {args.clients} clients, {args.seconds:.0f} s, gunicorn 1 worker × 4 threads "
              f"on 127.0.0.1:{args.port}, {os.cpu_count()} cores")
        server = start_gunicorn(args.port)
        try:
            wait_ready(args.port)
            started = time.monotonic()
            tally = run_workload(f"http://127.0.0.1:{args.port}", plans, args.seconds)
            elapsed = time.monotonic() - started
        finally:
            stop(server)
        print("mixed workload (question edits, submit/withdraw, relationship edits, chain nodes, spans):")
        for line in report(tally, read_back(plans, tally), elapsed):
            print("  " + line)
        drills = [] if args.drills == "none" else args.drills.split(",")
        if "worker" in drills:
            print("drill: kill -9 the worker mid-ingest")
            for line in drill_kill_worker(args.pages):
                print("  " + line)
        if "lock" in drills:
            if connection.vendor == "sqlite":
                print(f"drill: hold the database write lock for {args.lock_seconds:.0f} s")
                for line in drill_lock(args.port, args.lock_seconds, plans):
                    print("  " + line)
            else:
                print("drill: lock — SQLite only (PostgreSQL locks rows, not the database)")
        if "gunicorn" in drills:
            print("drill: kill -9 gunicorn under write load")
            for line in drill_kill_gunicorn(args.port, plans):
                print("  " + line)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
