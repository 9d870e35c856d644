"""Does the notebook help? A benchmark: noisy files with planted facts, a six-prompt session, a quiz.

``make_bench(dir, seed)`` writes, deterministically for a seed:

- ``workspace/``: logs, configs, a lock file, a report, an OWNERS file, an e-mail thread, thousands
  of lines of noise in which each planted fact sits beside near-miss decoys (the staging timeout
  next to the production one, later errors after the first, other sockets, other ports, ...);
- ``session.md``: six prompts for the agent, one per turn; one of them corrects an earlier fact
  and one gives a decision that exists only in the conversation;
- ``quiz.md``: the questions, asked after the runtime compacts the conversation;
- ``bench.json``: the seed and a hash of every file, and nothing that gives the answers away.

``size="long"`` adds 24 prompts (30 questions); ``size="scale"`` adds *survive* values that must survive
three compactions (``notebook_scale``).

``grade_answers(dir, answers)`` rebuilds the key from the seed and scores each answer: right when
it holds the planted value and none of its decoys (an answer that hedges between the production
and the staging value is wrong), and, for a count or a time, no second value of that shape
("4 or 5" is wrong).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from ..model.numbers import whole_number
from .bench_manifest import read_manifest, write_workspace
from .notebook_scale import scale_session

__all__ = [
    "FORMAT",
    "SUMMARY_CHARS_DEFAULT",
    "Bench",
    "Question",
    "build_bench",
    "grade_answers",
    "load_bench",
    "make_bench",
    "parse_answers",
]

FORMAT = "notewell-notebook-bench/1"
_SERVICES = ["ledgerd", "tallyman", "courier", "ingestor", "vaultsync", "shardkeeper", "mailroom", "beacon"]
_LIBS = ["libshard", "fastframe", "wirecodec", "blobstore-client", "pagecache", "tokenring"]
_COMPONENTS = ["shard-rebalancer", "ingest-gateway", "checksum-worker", "lease-manager", "replay-queue"]
_PEOPLE = [
    "Amara Okafor",
    "Lin Wei",
    "Tomás Ferreira",
    "Priya Natarajan",
    "Jonas Berg",
    "Sofia Marín",
    "Kenji Watanabe",
    "Olena Kovalenko",
    "Mateo Rossi",
    "Aisha Rahman",
    "Emil Novak",
    "Hana Sato",
]
_FLAGS = ["--skip-shard-verify", "--defer-index-build", "--no-lease-steal", "--replay-from-checkpoint"]
_WORDS = (
    "request served cache warm flush lease renewed compaction scheduled shard healthy heartbeat "
    "replica caught-up gc pause snapshot written queue depth worker idle batch committed"
).split()


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    expect: tuple[str, ...]  # every one must appear in the answer
    reject: tuple[str, ...] = ()  # none may appear (the decoys)
    kind: str = "fact"  # early, corrected, conversation, counted, ruled_out, quote
    single: bool = False  # the answer may name no other value shaped like the expected one (another count, time)
    group: str = "re-readable"  # or what must survive a compaction: conversation-only, output-only


@dataclass
class Bench:
    seed: int
    noise: int
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    prompts: list[str] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    size: str = "short"
    changing: list[str] = field(default_factory=list)  # the scale size's state files and rotated logs
    compact_after: tuple[int, ...] = ()  # prompts after which the conversation is compacted (before the last)

    @property
    def mutable(self) -> tuple[str, ...]:
        """Files the session itself changes (a script moves the lease on, rotates a log)."""
        return tuple(p for p in ("tools/lease.txt", "logs/current.log", *self.changing) if p in self.files)

    @property
    def survive(self) -> int:
        """How many values must survive the compactions: they exist only in the conversation or in output."""
        return sum(q.group != "re-readable" for q in self.questions)


def _stamp(rng: random.Random, day: str, second: int) -> str:
    second %= 86400
    return f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.{rng.randrange(1000):03d}Z"


def _noise_line(rng: random.Random, svc: str, day: str, second: int) -> str:
    level = rng.choice(["INFO"] * 6 + ["DEBUG"] * 3 + ["WARN"])
    words = " ".join(rng.sample(_WORDS, 3))
    extra = rng.choice(
        [
            f"latency_ms={rng.randint(3, 900)}",
            f"shard={rng.randint(0, 63)}",
            f"req={rng.getrandbits(48):012x}",
            f"connect_timeout_ms={rng.choice([500, 750, 1000, 1500])}",
            f"port={rng.choice([9090, 9100, 8080])}",
            f"bytes={rng.randint(100, 10**6)}",
            f"retry={rng.randint(0, 3)}",
        ]
    )
    return f"{_stamp(rng, day, second)} {level:5} {svc}[{rng.randint(100, 999)}] {words} {extra}"


SIZES = ("short", "long", "scale")
# What the protocol allows the compacted conversation: a runtime's summary of at most this many words.
COMPACTION_WORDS = {"short": 80, "long": 150, "scale": 150}
_TALK: dict[str, Any] = {"kind": "conversation", "group": "conversation-only"}  # a decision said, not written
SURVIVE_DEFAULT = 20  # the scale size's must-survive values unless --survive says otherwise
# The scale size's budget is counted in characters: agents packed 40 values into 150 "words" of
# comma-joined key=value runs (1.3-1.8 KB). 900 characters is about 150 words of English prose
# (six characters a word with its space), the budget the word count meant.
SUMMARY_CHARS_DEFAULT = 900


def build_bench(seed: int = 1, noise: int = 4000, size: str = "short", survive: int | None = None) -> Bench:
    """The benchmark for *seed*, in memory (``make_bench`` writes it). *size* ``long``: thirty
    prompts and 41 questions, with decisions and corrections that exist only in the conversation
    and values that exist only in output that does not come back. ``scale``: *survive* (5 to 80,
    default 20) such values, and three compactions."""
    survive = _checked(seed, noise, size, survive)
    rng = random.Random(seed)
    svc = rng.choice(_SERVICES)
    lib = rng.choice(_LIBS)
    component = rng.choice(_COMPONENTS)
    owner, *others = rng.sample(_PEOPLE, len(_PEOPLE))
    flag, *other_flags = rng.sample(_FLAGS, len(_FLAGS))
    day = f"2026-{rng.randint(1, 9):02d}-{rng.randint(10, 28):02d}"
    staging_timeout = rng.randrange(1200, 3000, 50)
    prod_timeout = rng.randrange(3100, 9000, 10) + rng.choice([3, 7])  # never a round number: typed, not guessed
    first_code, *later_codes = [f"E-{n}" for n in rng.sample(range(1000, 9999), 4)]
    first_shard, *later_shards = rng.sample(range(64), 4)
    version = f"{rng.randint(1, 4)}.{rng.randint(10, 30)}.{rng.randint(0, 9)}"
    fixed_version = f"{version.rsplit('.', 1)[0]}.{int(version.rsplit('.', 1)[1]) + 2}"
    sock_n, admin_n = rng.sample(range(2, 40), 2)
    socket_path = f"/run/{svc}/ingest-{sock_n}.sock"
    admin_socket = f"/run/{svc}/admin-{admin_n}.sock"
    canary_port, taken_port = rng.sample(range(7001, 7999), 2)
    pool_p99 = f"{rng.randint(21, 48) / 10:.1f}"
    base_p99 = f"{float(pool_p99) + rng.randint(1, 4) / 10:.1f}"
    files: dict[str, str] = {}

    first_time = _deploy_log(
        rng, files, noise, svc, day, (first_code, first_shard), list(zip(later_codes, later_shards, strict=True))
    )
    _configs(rng, files, svc, taken_port, staging_timeout, prod_timeout)
    _lock_file(rng, files, lib, version, fixed_version)
    _trace(rng, files, noise, socket_path, admin_socket)
    owned = _owners(rng, files, component, owner, others)
    failed = _nightly(rng, files, noise)

    _threads(files, svc, (base_p99, pool_p99), flag, others[0], other_flags)

    prompts = [
        f"You are debugging a failed deploy of {svc}; the files are under workspace/. Read config/app.yaml and "
        f"logs/deploy-{day}.log. Report the production request timeout, and the first error in the deploy "
        "log: its code, its shard and its time.",
        f"Check deps/lock.txt for the pinned version of {lib}, and find in logs/strace-ingest.txt the unix "
        "socket the ingest path connected to.",
        f"Decision: the canary will run on port {canary_port}, not {taken_port} ({taken_port} is the metrics "
        f"port). Also: who owns the {component} component (see OWNERS)?",
        "Correction: config/app.yaml is the staging copy (config/README says so); the production settings are "
        "in deploy/prod/app.yaml. Update what you know. Then count the failed jobs in reports/nightly.csv.",
        "Someone tried raising pool_size to 64; the result is in experiments/pool-64.txt. Record what happened. "
        "Then read notes/email-thread.txt: which flag does the DBA want on the migration run?",
        "Summarize where this stands: the likely cause and the next step, in a few lines.",
    ]
    questions = [
        Question(
            "Q01",
            "What is the production request timeout (request_timeout_ms)?",
            (str(prod_timeout),),
            (str(staging_timeout),),
            "corrected",
        ),
        Question(
            "Q02", "What is the code of the first error in the deploy log?", (first_code,), tuple(later_codes), "early"
        ),
        Question(
            "Q03",
            "On which shard did the first error happen?",
            (str(first_shard),),
            tuple(str(s) for s in later_shards),
            "early",
        ),
        Question(
            "Q04", "At what time (HH:MM:SS, UTC) did the first error happen?", (first_time,), (), "early", single=True
        ),
        Question("Q05", f"Which version of {lib} is pinned in deps/lock.txt?", (version,), (fixed_version,), "early"),
        Question("Q06", "Which unix socket did the ingest path connect to?", (socket_path,), (admin_socket,), "early"),
        Question("Q07", "On which port will the canary run?", (str(canary_port),), (str(taken_port),), **_TALK),
        Question("Q08", f"Who owns the {component} component?", (owner,), tuple(p for _, p in owned), "early"),
        Question("Q09", "How many jobs failed in the nightly report?", (str(failed),), (), "counted", single=True),
        Question(
            "Q10",
            "Which change was tried and ruled out, and what was the p99 latency with it (seconds)?",
            ("64", pool_p99),
            (base_p99,),  # the baseline's p99 is the other latency in the same file
            "ruled_out",
        ),
        Question("Q11", "Which flag does the DBA want on the migration run?", (flag,), tuple(other_flags), "quote"),
    ]
    bench = Bench(seed, noise, files, prompts, questions, size=size)
    # Each longer size draws from a stream of its own: the short benchmark of a seed stays byte for byte what it was.
    if size == "long":
        _long_session(random.Random(f"long-{seed}"), bench, svc)
    elif size == "scale":
        _scale_session(random.Random(f"scale-{seed}-{survive}"), bench, survive or SURVIVE_DEFAULT, svc)
    return bench


def _scale_session(rng: random.Random, bench: Bench, survive: int, svc: str) -> None:
    """The short session, the long one's ten services to re-read, and *survive* values that must survive."""
    number = iter(range(12, 1000))

    def ask(
        text: str, expect: tuple[str, ...], reject: tuple[str, ...], kind: str, single: bool = False,
        group: str = "re-readable",
    ) -> None:  # fmt: skip
        bench.questions.append(Question(f"Q{next(number):02d}", text, expect, reject, kind, single, group))

    reading = _service_files(rng, bench.files, ask)
    changing, compact = scale_session(rng, bench.prompts, bench.files, reading, survive, ask, _noise_line, svc)
    bench.changing, bench.compact_after = changing, compact


def _checked(seed: int, noise: int, size: str, survive: int | None) -> int | None:
    """The parameters refused with a clear message; returns the scale size's must-survive count."""
    whole_number("the seed", seed, 0, 2**32 - 1)
    whole_number("noise (lines per log)", noise, 200, 200_000)
    if size not in SIZES:
        raise InvalidArgumentError(f"size is short, long or scale, got {size!r}")
    if survive is not None and size != "scale":
        raise InvalidArgumentError("survive is for --size scale (short and long have a fixed session)")
    if size == "scale":
        survive = SURVIVE_DEFAULT if survive is None else survive
        whole_number("survive (values that must survive the compactions)", survive, 5, 80)
    return survive


_REGIONS = ["eu-west-1", "eu-central-1", "us-east-2", "ap-southeast-1", "sa-east-1", "ca-central-1"]
_CHANNELS = ["#ops-rollout", "#deploy-watch", "#incident-bridge", "#release-train", "#infra-status"]
_KEYS = ["max_conns", "retention_days", "shard_count", "replica_port", "batch_size", "queue_depth"]


def _threads(
    files: dict[str, str], svc: str, p99: tuple[str, str], flag: str, dba: str, other_flags: list[str]
) -> None:
    """A ruled-out experiment and an e-mail thread with the exact flag (and the ones not wanted)."""
    base_p99, pool_p99 = p99
    files["experiments/pool-64.txt"] = (
        f"experiment: pool_size 32 -> 64 on {svc} canary, 30 min soak\n"
        f"baseline p99 {base_p99} s\nwith pool_size=64 p99 {pool_p99} s\n"
        "error rate unchanged; checksum mismatches continue\nverdict: does not fix it; reverted\n"
    )
    files["notes/email-thread.txt"] = (
        f"From: {dba}\nSubject: Re: {svc} migration\n\n"
        f"We looked at {other_flags[0]} last quarter and dropped it.\n"
        f"> Which flag do you want on the migration?\nUse {flag} on the migration run, nothing else.\n"
        f"({other_flags[1]} is for the other cluster.)\n\n-- {dba}\n"
    )


def _deploy_log(
    rng: random.Random, files: dict[str, str], noise: int, svc: str, day: str, first: tuple[str, int],
    later: list[tuple[str, int]],
) -> str:  # fmt: skip
    """The deploy log: the first error hides behind retries that fail differently. Returns the
    first error's time (HH:MM:SS)."""
    first_code, first_shard = first
    lines, first_at = [], rng.randint(noise // 5, noise // 3)
    second = rng.randint(3600, 7200)
    first_time = ""
    errors_left = list(later)
    for i in range(noise):
        second += rng.choice([0, 0, 1, 1, 2])
        if i == first_at:
            stamp = _stamp(rng, day, second)
            first_time = stamp[11:19]
            lines.append(
                f"{stamp} ERROR {svc}[412] {first_code} checksum mismatch on shard {first_shard}"
                f" (expected {rng.getrandbits(32):08x}, got {rng.getrandbits(32):08x})"
            )
        elif i > first_at and errors_left and rng.random() < 0.002:
            code, shard = errors_left.pop(0)
            lines.append(
                f"{_stamp(rng, day, second)} ERROR {svc}[412] {code} upstream reset while"
                f" replaying shard {shard} (retry {rng.randint(1, 5)} of 5)"
            )
        else:
            lines.append(_noise_line(rng, svc, day, second))
    for code, shard in errors_left:  # every later error is written, at the end if not before
        lines.append(
            f"{_stamp(rng, day, second + 1)} ERROR {svc}[412] {code} upstream reset while replaying"
            f" shard {shard} (retry 5 of 5)"
        )
    files[f"logs/deploy-{day}.log"] = "\n".join(lines) + "\n"
    return first_time


def _configs(
    rng: random.Random, files: dict[str, str], svc: str, taken_port: int, staging_timeout: int, prod_timeout: int
) -> None:
    """Two configs: the one at the obvious path is staging (prompt 4 says so), prod is elsewhere."""

    def config(env: str, timeout: int) -> str:
        keys = [
            f"# {svc} service configuration",
            f"service: {svc}",
            f"connect_timeout_ms: {rng.choice([500, 750])}",
            f"request_timeout_ms: {timeout}",
            f"pool_size: {rng.choice([16, 24, 32])}",
            f"metrics_port: {taken_port}",
            f"log_level: {rng.choice(['info', 'debug'])}",
        ]
        keys += [f"feature_{w.replace('-', '_')}: {rng.choice(['true', 'false'])}" for w in rng.sample(_WORDS, 8)]
        head, tail = keys[:2], keys[2:]
        rng.shuffle(tail)
        return "\n".join([*head, f"environment_tag: {env}-eu1", *tail]) + "\n"

    files["config/app.yaml"] = config("stg", staging_timeout)
    files["deploy/prod/app.yaml"] = config("prd", prod_timeout)
    files["config/README"] = (
        f"config/app.yaml is the staging copy of {svc}'s settings, kept for local runs.\n"
        "Production settings live under deploy/prod/.\n"
    )


def _lock_file(rng: random.Random, files: dict[str, str], lib: str, version: str, fixed_version: str) -> None:
    """The lock file: one pin among many; the changelog names a newer version that fixes it."""
    pins = {
        f"{a}-{b}": f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
        for a, b in ((rng.choice(_WORDS), rng.choice(_WORDS)) for _ in range(400))
        if a != b
    }
    pins[lib] = version
    files["deps/lock.txt"] = "".join(f"{name}=={pins[name]}\n" for name in sorted(pins))
    files[f"deps/{lib}-CHANGELOG.md"] = (
        f"# {lib}\n\n## {fixed_version}\n- fix: checksum of shards written during"
        " lease hand-over\n\n## " + version + "\n- faster frame decoding\n"
    )


def _trace(rng: random.Random, files: dict[str, str], noise: int, socket_path: str, admin_socket: str) -> None:
    """An strace-like capture: the service connected to one socket among several."""
    trace = []
    for i in range(noise // 2):
        if i == noise // 7:
            trace.append(f'connect(7, {{sa_family=AF_UNIX, sun_path="{socket_path}"}}, 110) = 0')
        elif rng.random() < 0.01:
            trace.append(f'connect(9, {{sa_family=AF_UNIX, sun_path="{admin_socket}"}}, 110) = 0')
        else:
            trace.append(
                rng.choice(
                    [
                        f"read(7, ..., {rng.randint(64, 65536)}) = {rng.randint(0, 4096)}",
                        f"epoll_wait(4, [], 64, {rng.randint(0, 500)}) = 0",
                        f"write(7, ..., {rng.randint(16, 4096)}) = {rng.randint(16, 4096)}",
                        f"futex(0x{rng.getrandbits(40):x}, FUTEX_WAKE_PRIVATE, 1) = 1",
                    ]
                )
            )
    files["logs/strace-ingest.txt"] = "\n".join(trace) + "\n"


def _owners(
    rng: random.Random, files: dict[str, str], component: str, owner: str, others: list[str]
) -> list[tuple[str, str]]:
    """OWNERS: who owns the component the error points at; returns the other (component, owner) rows."""
    owned = [(c, p) for c, p in zip(rng.sample(_COMPONENTS, len(_COMPONENTS)), others, strict=False) if c != component]
    owners = [f"{c:<20} {p} <{p.split()[0].lower()}@example.org>" for c, p in owned]
    owners.insert(rng.randrange(len(owners) + 1), f"{component:<20} {owner} <{owner.split()[0].lower()}@example.org>")
    files["OWNERS"] = "# component          owner\n" + "\n".join(owners) + "\n"
    return owned


def _nightly(rng: random.Random, files: dict[str, str], noise: int) -> int:
    """The nightly report: the failed rows have to be counted. Returns how many failed."""
    failed = 0
    rows = ["job_id,component,status,duration_s"]
    for i in range(noise // 4):
        status = rng.choice(["ok"] * 12 + ["failed", "skipped", "retried"])
        failed += status == "failed"
        rows.append(f"J{100000 + i},{rng.choice(_COMPONENTS)},{status},{rng.randint(1, 900)}")
    files["reports/nightly.csv"] = "\n".join(rows) + "\n"
    return failed


_Ask = Callable[..., None]  # ask(text, expect, reject, kind, single=False): a question added
# In the long session, a decision or correction exists only in the conversation, a vanished value only in output.
_GROUPS = {"conversation": "conversation-only", "corrected": "conversation-only", "vanished": "output-only"}


def _long_session(rng: random.Random, bench: Bench, svc: str) -> None:
    """Twenty-four more prompts and thirty more questions (see build_bench)."""
    prompts, questions, files = bench.prompts, bench.questions, bench.files
    people = rng.sample(_PEOPLE, 4)
    number = iter(range(12, 100))

    def ask(text: str, expect: tuple[str, ...], reject: tuple[str, ...], kind: str, single: bool = False) -> None:
        group = _GROUPS.get(kind, "re-readable")
        questions.append(Question(f"Q{next(number):02d}", text, expect, reject, kind, single, group))

    reading = _service_files(rng, files, ask)
    decisions, corrections = _decisions(rng, people, ask)
    vanishing = _vanishing(rng, svc, files, ask)
    # Thirty prompts in all: the six of the short session keep their places around the new ones.
    extra = [
        *reading[:3], decisions[0], decisions[1], vanishing[0], *reading[3:5], decisions[2], decisions[3],
        corrections[0], reading[5], decisions[4], vanishing[1], reading[6], decisions[5], corrections[1],
        reading[7], decisions[6], corrections[2], reading[8], decisions[7], reading[9], corrections[3],
    ]  # fmt: skip
    summary = prompts.pop()  # "Summarize where this stands" stays the last
    prompts += extra + [summary]


def _service_files(rng: random.Random, files: dict[str, str], ask: _Ask) -> list[str]:
    """Facts in files: ten services, each with a production and a staging copy of its settings;
    the prompts that read them."""
    services = rng.sample([w.replace("-", "") for w in _WORDS if "-" not in w] + _SERVICES, 10)
    reading = []
    for name in services:
        keys = rng.sample(_KEYS, 2)
        prod = {k: rng.randrange(100, 9000) for k in _KEYS}
        stg = {k: v + rng.choice([-1, 1]) * rng.randrange(7, 90) for k, v in prod.items()}
        for env, values in (("prod", prod), ("staging", stg)):
            body = [f"# {name} settings ({env})", f"service: {name}", f"environment: {env}"]
            body += [f"{k}: {values[k]}" for k in rng.sample(_KEYS, len(_KEYS))]
            files[f"services/{name}/{env}.yaml"] = "\n".join(body) + "\n"
        reading.append(
            f"Read services/{name}/prod.yaml (services/{name}/staging.yaml is the staging copy). Record the"
            f" production {keys[0]} and {keys[1]} of {name}."
        )
        for key in keys:
            ask(f"What is the production {key} of {name}?", (str(prod[key]),), (str(stg[key]),), "fact")
    return reading


def _decisions(rng: random.Random, people: list[str], ask: _Ask) -> tuple[list[str], list[str]]:
    """Decisions that exist only in the conversation, four of them corrected later."""
    start = rng.randrange(0, 22 * 60, 15)
    alt = rng.choice([m for m in range(0, 23 * 60, 15) if m not in (start, start + 45)])
    hhmm = [f"{m // 60:02d}:{m % 60:02d}" for m in (start, alt, start + 50)]
    new_start = f"{(start + 45) // 60 % 24:02d}:{(start + 45) % 60:02d}"
    ticket, dry = rng.sample(range(1000, 9999), 2)
    threshold, old_threshold, new_threshold = (f"{x / 10:.1f}" for x in rng.sample(range(5, 60), 3))
    region, region2, new_region = rng.sample(_REGIONS, 3)
    freeze, freeze2 = (f"2026-{rng.randint(10, 12):02d}-{d:02d}" for d in rng.sample(range(10, 28), 2))
    budget, offered = rng.sample(range(120, 900, 10), 2)
    channel, channel2, new_channel = rng.sample(_CHANNELS, 3)
    approver, other_approver, new_approver = people[0], people[1], people[2]
    decisions = [
        f"Decision: the maintenance window starts at {hhmm[0]} UTC and ends at {hhmm[2]} (not {hhmm[1]}).",
        f"Decision: the change ticket is OPS-{ticket} (OPS-{dry} was the dry run).",
        f"Decision: {approver} approves the rollout, not {other_approver}.",
        f"Decision: roll back if the error rate goes over {threshold}% (the old threshold was {old_threshold}%).",
        f"Decision: the canary region is {region} (not {region2}).",
        f"Decision: the change freeze starts on {freeze} (it was {freeze2} until today).",
        f"Decision: the rollout budget is {budget} node-hours (finance offered {offered}).",
        f"Decision: status updates go to {channel} (not {channel2}).",
    ]
    corrections = [
        f"Correction: the maintenance window now starts at {new_start} UTC, not {hhmm[0]}.",
        f"Correction: roll back over {new_threshold}%, not {threshold}%.",
        f"Correction: the canary region is {new_region} after all, not {region}.",
        f"Correction: {new_approver} approves the rollout now; {approver} is away.",
    ]
    ask("At what time (HH:MM UTC) does the maintenance window start?", (new_start,), (hhmm[0], hhmm[1]), "corrected")
    ask("What is the change ticket?", (f"OPS-{ticket}",), (f"OPS-{dry}",), "conversation")
    ask("Who approves the rollout?", (new_approver,), (approver, other_approver), "corrected")
    ask("Over which error rate (%) is the rollout rolled back?", (new_threshold,), (threshold, old_threshold),
        "corrected")  # fmt: skip
    ask("Which region is the canary in?", (new_region,), (region, region2), "corrected")
    ask("On which date does the change freeze start?", (freeze,), (freeze2,), "conversation")
    ask("How many node-hours is the rollout budget?", (str(budget),), (str(offered),), "conversation")
    ask("Where do status updates go?", (channel,), (channel2,), "conversation")
    return decisions, corrections


def _vanishing(rng: random.Random, svc: str, files: dict[str, str], ask: _Ask) -> list[str]:
    """Output that does not come back: a value the first run of a script prints (each run moves
    it on), and a log read once before it is rotated away."""
    holders = rng.sample([f"node-{n}{c}" for n in range(10, 99) for c in "abcdef"], 6)
    files["tools/lease.txt"] = holders[0] + "\n"
    files["tools/probe.py"] = (
        '"""Print the current lease holder; the lease then passes on (as it does in production)."""\n'
        "from pathlib import Path\n\n"
        f"ORDER = {holders!r}\n"
        'here = Path(__file__).with_name("lease.txt")\n'
        "holder = here.read_text().strip()\n"
        'print(f"lease holder: {holder}")\n'
        "nxt = ORDER[(ORDER.index(holder) + 1) % len(ORDER)] if holder in ORDER else ORDER[1]\n"
        'here.write_text(nxt + "\\n")\n'
    )
    checkpoint, *later = (f"CKP-{n:06x}" for n in rng.sample(range(16**5, 16**6), 4))
    before = [_noise_line(rng, svc, "2026-10-01", 3600 + i) for i in range(400)]
    replayed = f"2026-10-01T02:11:09.118Z INFO {svc}[412] replay ok, checkpoint {checkpoint}"
    before.insert(rng.randrange(150, 350), replayed)
    files["logs/current.log"] = "\n".join(before) + "\n"
    after = [_noise_line(rng, svc, "2026-10-02", 3600 + i) for i in range(300)]
    for n, ckp in enumerate(later):
        line = f"2026-10-02T0{n}:00:00.000Z INFO {svc}[412] replay ok, checkpoint {ckp}"
        after.insert(rng.randrange(0, len(after)), line)
    files["tools/rotate.py"] = (
        '"""Rotate logs/current.log: the old lines are not kept."""\n'
        "from pathlib import Path\n\n"
        f"NEW = {chr(10).join(after) + chr(10)!r}\n"
        'Path(__file__).parent.parent.joinpath("logs", "current.log").write_text(NEW)\n'
        'print("rotated logs/current.log")\n'
    )
    vanishing = [
        "Run `python tools/probe.py` once and record the lease holder it prints (the lease moves on after each run).",
        "Read logs/current.log and record the checkpoint of the last successful replay in it. Then run"
        " `python tools/rotate.py`: the log is rotated and its old lines are gone.",
    ]
    ask("What lease holder did tools/probe.py print the first time it ran?", (holders[0],), tuple(holders[1:]),
        "vanished")  # fmt: skip
    ask("Which checkpoint did logs/current.log name before it was rotated?", (checkpoint,), tuple(later), "vanished")
    return vanishing


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_bench(
    directory: str | Path, *, seed: int = 1, noise: int = 4000, size: str = "short", survive: int | None = None,
    summary_chars: int | None = None,
) -> Bench:  # fmt: skip
    """Write the benchmark for *seed* (and *size*, *survive*) into *directory* (new or empty). The scale
    size's summaries are held to *summary_chars* characters (default 900)."""
    bench = build_bench(seed, noise, size, survive)
    if summary_chars is not None and size != "scale":
        raise InvalidArgumentError("summary_chars is for --size scale (short and long count words)")
    chars = summary_chars if summary_chars is not None else SUMMARY_CHARS_DEFAULT
    whole_number("summary_chars (the compaction budget in characters)", chars, 200, 20_000)
    root = Path(directory)
    write_workspace(root, bench.files)
    words = COMPACTION_WORDS[bench.size]
    budget = f"{chars} characters" if bench.size == "scale" else f"{words} words"
    (root / "session.md").write_text(_session_text(bench, budget), encoding="utf-8")
    quiz = [
        "# Quiz (after the conversation was compacted)\n",
        "Answer each question with the exact value and nothing else: an answer that also names another"
        ' candidate value ("8 or 9", "7000, not 7001") counts as wrong. Say "unknown" rather than guess.'
        ' Write one line per question, `Q01: answer`, or a JSON object {"Q01": "answer", ...}.\n',
    ]
    quiz += [f"- {q.id}: {q.text}" for q in bench.questions]
    (root / "quiz.md").write_text("\n".join(quiz) + "\n", encoding="utf-8")
    manifest = {
        "format": FORMAT,
        "seed": seed,
        "noise": noise,
        "size": bench.size,
        "compaction_words": words,
        "questions": len(bench.questions),
        "files": {f"workspace/{rel}": _sha(text) for rel, text in bench.files.items() if rel not in bench.mutable},
    }
    if bench.size == "scale":  # short and long manifests stay byte for byte what they were
        del manifest["compaction_words"]  # counted in characters instead
        manifest |= {
            "survive": bench.survive,
            "compact_after": [*bench.compact_after, len(bench.prompts)],
            "compaction_chars": chars,
        }
    (root / "bench.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return bench


def _session_text(bench: Bench, budget: str) -> str:
    """session.md: the protocol (where to compact, to how many words or characters), then the prompts."""
    if not bench.compact_after:
        protocol = (
            f"Protocol: send the prompts one per turn. After the last one, compact the conversation to at most {budget}"
            " (the runtime's own compaction with that budget, or a new session given only a summary of at"
            f" most that many {budget.split()[1]}), then send quiz.md."
        )
    else:
        points = ", ".join(f"after prompt {n}" for n in bench.compact_after)
        protocol = (
            f"Protocol: send the prompts one per turn. Compact the conversation {points} and after the last one"
            f" (prompt {len(bench.prompts)}), each time to at most {budget} (the runtime's own compaction"
            " with that budget, or a new session given only a summary of at most that many characters, which may"
            " carry on what the summary before it held); then send quiz.md. The places are marked below."
            " At each place the runner checks the summary (`notewell notebook bench summary-check`: a summary"
            " over the budget voids the run, or is cut at the limit before it is handed on) and runs"
            " `notewell notebook bench compact DIR --arm plain|notebook`, which puts workspace/ back as make"
            " wrote it (but for what the tools change by design) and removes every other file but the"
            " notebook arm's .agent-context/."
        )
    session = [
        f"# Session: {len(bench.prompts)} prompts, one per turn\n",
        protocol + " Nothing else of the conversation may carry over; the files may be read again, but some of"
        " what was read is gone by then.\n",
    ]
    for i, p in enumerate(bench.prompts, 1):
        session.append(f"## Prompt {i}\n\n{p}\n")
        if i in bench.compact_after:
            session.append(f"---\n\n**Compact here**: at most {budget} carry over.\n")
    return "\n".join(session)


# A line that starts an answer: list markers, numbering, a heading's # or bold before the id, then maybe a
# label in parentheses, then a separator or just a space. A "-" separates only before a space: in
# "Q11 --flag" it is part of the flag. (Atomic groups keep a long run of markers from backtracking.)
_SEP = r"(?:[:.)=|]|->|=>|[→–—]|-(?=\s|$))"
_START = re.compile(
    rf"""^(?>[\s>#*+-]*)(?>\d{{1,3}}[.)]\s+)?(?>[*_]*)
    Q(?P<id>[0-9]{{1,3}})(?![0-9a-z]|[.-][0-9a-z])(?>[*_]*)
    (?>\s*\([^()]*\)(?=\s*[*_]*\s*{_SEP}))?
    (?>\s*)(?>[*_]*)(?>\s*)(?>{_SEP}?)(?>[*_]*)(?>\s*)
    (?P<answer>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_MENTION = re.compile(r"(?<![\w-])Q(?P<id>[0-9]{1,3})(?!\w)", re.IGNORECASE)
_FENCED_JSON = re.compile(r"^[ \t]*```[ \t]*(?:json)?[ \t]*\n(\s*\{.*?)^[ \t]*```", re.I | re.S | re.M)


def parse_answers(text: str) -> dict[str, str]:
    """Answers as ``{"Q01": "..."}``: from a JSON object (bare or in a ``` fence), or from lines.

    A line that starts with a question id (after list markers, numbering, a heading's ``#`` or a table's
    ``|``) starts that answer; the lines after it continue it up to a blank line, a fence, a table row or
    a line that mentions another question. A heading alone (``### Q01``) takes its answer from the next lines.
    """
    stripped = text.strip()
    fenced = _FENCED_JSON.search(text)
    if stripped.startswith("{") or fenced:
        return _parse_json(stripped if stripped.startswith("{") else fenced.group(1))
    answers: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        line = line.strip()
        qid, answer = _start(line)
        if qid:
            last = qid
            answers[last] = answer
        elif last is None or line.startswith(("|", "```")) or (not line and answers[last]):
            last = None  # a blank line ends an answer; prose, tables and fences after it are not answers
        elif line and {_qid(m.group("id")) for m in _MENTION.finditer(line)} <= {last}:
            answers[last] = f"{answers[last]} {_unbold(line)}".strip()  # an answer that goes on over lines
    if not answers:
        raise InvalidArgumentError("no answers found: write one line per question, like `Q01: 4187`")
    return answers


def _parse_json(text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidArgumentError(f"the answers look like JSON but are not: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidArgumentError('the answers JSON is an object: {"Q01": "answer", ...}')
    return {_qid(k): "" if v is None else str(v) for k, v in data.items()}


def _start(line: str) -> tuple[str | None, str]:
    """The question a line starts and the answer on it, or ``(None, "")``."""
    if line.startswith("|"):  # a table row: | Q01 | 6353 |; the header and |---| rows start nothing
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = _START.match(cells[0])
        if not m or m.group("answer"):
            return None, ""
        return _qid(m.group("id")), _unbold(" ".join(c for c in cells[1:] if c))
    m = _START.match(line)
    return (_qid(m.group("id")), _unbold(m.group("answer"))) if m else (None, "")


def _unbold(text: str) -> str:
    return text.replace("**", "").strip().rstrip("|").strip()


def _qid(key: str) -> str:
    m = re.fullmatch(r"\s*[Qq]?(\d{1,3})\s*", str(key))
    if not m:
        raise InvalidArgumentError(f"{key!r} is not a question id (Q01, Q02, ...)")
    return f"Q{int(m.group(1)):02d}"


def _normal(text: str) -> str:
    # NFC: a name typed with combining accents ("Toma\u0301s") is the same name as the composed one.
    text = unicodedata.normalize("NFC", text.translate(str.maketrans("‘’“”`", "''\"\"'")).casefold())
    text = re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", text)  # 4,187 -> 4187
    return " ".join(text.split())


_TIME = re.compile(r"\d{1,2}:\d\d:\d\d")


def _whole(core: str, value: str, *, in_ranges: bool = False) -> str:
    """A regex for *core* (which matches *value* or values of its shape) as a whole value, not part of a longer one.

    A number is not inside 41870, 4.5 or 01:33, nor, unless *in_ranges*, inside a date or range
    (17 in 2026-05-17); a time may carry the log's fraction and Z (01:33:16.596Z is 01:33:16).
    """
    if value[0].isdigit():
        before = r"(?<![\d.:])" + ("" if in_ranges else r"(?<!\d-)")  # E-4657 and pool-64 still hold their numbers
    else:
        before = r"(?<![\w.-])"
    if value[-1].isdigit():
        after = r"(?:\.\d+)?" if _TIME.fullmatch(value) else ""
        after += r"(?!\d|[.:]\d" + ("" if in_ranges else r"|-\d") + ")"
    else:
        after = r"(?![\w-])"
    return f"{before}(?P<value>{core}){after}"


def _holds(answer: str, value: str) -> bool:
    """*value* appears in *answer* as a whole value: 4187 in "4187 ms" or "4187ms", not in "41870"."""
    value = _normal(value)
    return re.search(_whole(re.escape(value), value), answer) is not None


def _others(answer: str, value: str) -> list[str]:
    """The values in *answer* shaped like *value* (digits where it has digits) that are not *value*."""
    value = _normal(value)
    if not value[:1].isdigit() or not value[-1:].isdigit():
        return []
    shape = re.sub(r"\d+", lambda _: r"\d+", re.escape(value))
    numbers = [int(n) for n in re.findall(r"\d+", value)]  # 1:33:16 is 01:33:16
    found = []
    # in_ranges: both ends of "3-5" are values; a range is a hedge too
    for m in re.finditer(_whole(shape, value, in_ranges=True), answer):
        if [int(n) for n in re.findall(r"\d+", m.group("value"))] != numbers and m.group("value") not in found:
            found.append(m.group("value"))
    return found


def _tally(rows: list[dict[str, Any]], by: str) -> dict[str, dict[str, int]]:
    """Right and total per value of *by* (a question's kind or group), in the order met."""
    tally: dict[str, dict[str, int]] = {}
    for r in rows:
        counts = tally.setdefault(r[by], {"right": 0, "total": 0})
        counts["right"] += r["correct"]
        counts["total"] += 1
    return tally


def load_bench(directory: str | Path) -> tuple[dict[str, Any], Bench]:
    """The folder's manifest and the benchmark rebuilt from its seed (and size, N)."""
    manifest = read_manifest(Path(directory), "bench.json", FORMAT, "notewell notebook bench make DIR")
    bench = build_bench(
        manifest.get("seed"), manifest.get("noise"), manifest.get("size", "short"), manifest.get("survive")
    )
    return manifest, bench


def grade_answers(directory: str | Path, answers: dict[str, str]) -> dict[str, Any]:
    """Score *answers* against the key rebuilt from the benchmark's seed."""
    root = Path(directory)
    manifest, bench = load_bench(root)
    expected = {f"workspace/{rel}": _sha(text) for rel, text in bench.files.items() if rel not in bench.mutable}
    changed = sorted(p for p, h in expected.items() if manifest.get("files", {}).get(p) != h)
    on_disk = sorted(
        p for p, h in expected.items() if not (root / p).is_file() or _sha((root / p).read_text(encoding="utf-8")) != h
    )
    known = {q.id for q in bench.questions}
    rows = []
    for q in bench.questions:
        given = answers.get(q.id, "")
        norm = _normal(given)
        missing = [v for v in q.expect if not _holds(norm, v)]
        decoys = [v for v in q.reject if _holds(norm, v)]
        if q.single:
            decoys += _others(norm, q.expect[0])
        rows.append(
            {
                "id": q.id,
                "kind": q.kind,
                "group": q.group,
                "question": q.text,
                "answer": given,
                "expected": list(q.expect),
                "correct": bool(given.strip()) and not missing and not decoys,
                "decoys": decoys,
            }
        )
    right = sum(r["correct"] for r in rows)
    return {
        "seed": bench.seed,
        "size": bench.size,
        "survive": bench.survive,
        "score": right,
        "total": len(rows),
        "percent": round(100 * right / len(rows), 1),
        "by_kind": _tally(rows, "kind"),
        "by_group": _tally(rows, "group"),
        "questions": rows,
        "unknown_ids": sorted(set(answers) - known),
        "files_changed": sorted(set(changed) | set(on_disk)),
    }
