"""The notebook benchmark's scale size: as many values that must survive the compactions as asked.

``scale_session`` adds to a benchmark (see ``notebook_bench``) decisions that exist only in the
conversation, each with the alternative it was chosen over, about a third of them corrected by a later
prompt (the corrected value becomes one more decoy), and values that exist only in output that does not
come back: probes that print a value once and move it on, logs read once before they are rotated away.
It orders the prompts (every correction after its decision) and picks the two points of compaction
before the last. It imports nothing of the benchmark: the caller hands it ``ask`` and ``noise_line``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

__all__ = ["leader_chain", "scale_session"]

Ask = Callable[..., None]  # ask(text, expect, reject, kind, group=...): a question added
NoiseLine = Callable[[random.Random, str, str, int], str]  # noise_line(rng, service, day, second)

_ENTITIES = ["ledgerd", "tallyman", "courier", "ingestor", "vaultsync", "shardkeeper", "mailroom", "beacon"]
# What a decision settles, and the kind of value it takes (how it is drawn and written).
_ATTRS = [
    ("canary port", "port"),
    ("change ticket", "ticket"),
    ("approver", "person"),
    ("canary region", "region"),
    ("freeze date", "date"),
    ("window start (UTC)", "time"),
    ("budget in node-hours", "budget"),
    ("status channel", "channel"),
    ("rollback threshold in percent", "percent"),
    ("release tag", "tag"),
]
_FIRST = ["Amara", "Lin", "Tomás", "Priya", "Jonas", "Sofia", "Kenji", "Olena", "Mateo", "Aisha", "Emil", "Hana"]
_LAST = ["Okafor", "Wei", "Ferreira", "Natarajan", "Berg", "Marín", "Watanabe", "Kovalenko", "Rossi", "Rahman"]


def _draw(rng: random.Random, kind: str) -> str:
    if kind == "port":
        return str(rng.randrange(10000, 60000))
    if kind == "ticket":
        return f"OPS-{rng.randrange(1000, 10000)}"
    if kind == "person":
        return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    if kind == "region":
        area, side = rng.choice(["eu", "us", "ap", "sa", "ca", "me"]), rng.choice(["west", "east", "north", "south"])
        return f"{area}-{side}-{rng.randint(1, 9)}"
    if kind == "date":
        return f"2026-{rng.randint(10, 12)}-{rng.randint(10, 28)}"
    if kind == "time":
        minutes = rng.randrange(0, 24 * 60, 15)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    if kind == "budget":
        return str(rng.randrange(100, 1000))
    if kind == "channel":
        return f"#{rng.choice(['ops', 'deploy', 'release', 'infra', 'rollout', 'oncall'])}-" + rng.choice(
            ["watch", "bridge", "train", "status", "room", "desk"]
        )
    if kind == "percent":
        return f"{rng.randrange(5, 100) / 10:.1f}"
    if kind == "checkpoint":
        return f"CKP-{rng.randrange(16**5, 16**6):06x}"
    return f"v{rng.randint(1, 9)}.{rng.randint(10, 40)}.{rng.randint(0, 20)}"  # a release tag


def _distinct(rng: random.Random, kind: str, used: set[str], n: int) -> list[str]:
    """*n* values of *kind* that no other planted value of the session has (so no value is another's decoy)."""
    found: list[str] = []
    while len(found) < n:
        value = _draw(rng, kind)
        if value not in used:
            used.add(value)
            found.append(value)
    return found


def _shown(kind: str, value: str) -> str:
    return value + {"percent": "%", "budget": " node-hours"}.get(kind, "")


def _decisions(
    rng: random.Random, count: int, used: set[str], ask: Ask, deployed: str
) -> tuple[list[list[str]], list[str]]:
    """*count* decisions (three to a prompt), a third of them corrected; the correction prompts (two to a
    prompt), each on a first line naming the decision prompts it corrects (``3,0``)."""
    pool = [(a, k, e) for a, k in _ATTRS for e in _ENTITIES if (k, e) != ("port", deployed)]
    topics = rng.sample(pool, count)
    corrected = set(rng.sample(range(count), count // 3))
    lines, fixes = [], []
    for i, (attr, kind, entity) in enumerate(topics):
        value, decoy, new = _distinct(rng, kind, used, 3)
        lines.append(
            f"Decision: the {attr} of the {entity} rollout is {_shown(kind, value)} (not {_shown(kind, decoy)})."
        )
        question = f"What is the {attr} of the {entity} rollout?"
        if i in corrected:
            shown = f"{_shown(kind, new)}, not {_shown(kind, value)}"
            fixes.append((i // 3, f"Correction: the {attr} of the {entity} rollout is {shown}."))
            ask(question, (new,), (value, decoy), "corrected", group="conversation-only")
        else:
            used.discard(new)
            ask(question, (value,), (decoy,), "conversation", group="conversation-only")
    prompts = [lines[i : i + 3] for i in range(0, len(lines), 3)]
    rng.shuffle(fixes)
    grouped = [fixes[i : i + 2] for i in range(0, len(fixes), 2)]
    return prompts, [",".join(str(n) for n, _ in g) + "\n" + "\n".join(t for _, t in g) for g in grouped]


def leader_chain(entity: str, secret: str, runs: int) -> list[str]:
    """The leaders a probe prints on its first *runs* runs: each from a secret the run before replaced by its
    hash, so the state file after a run holds nothing the leader it printed can be computed from."""
    leaders = []
    for _ in range(runs):
        digest = hashlib.sha256(secret.encode("ascii")).hexdigest()
        leaders.append(f"{entity}-{10 + int(digest[:8], 16) % 89}{'abcdef'[int(digest[8:16], 16) % 6]}")
        secret = hashlib.sha256(("next:" + secret).encode("ascii")).hexdigest()
    return leaders


def _probe(rng: random.Random, entity: str, files: dict[str, str], ask: Ask) -> tuple[str, str]:
    """A probe that prints the entity's leader once and passes the leadership on; its state file.

    The state file holds a secret, not a leader, and each run replaces it by a one-way hash of itself:
    once the probe has run, neither its source nor its state tells which leader it printed first."""
    while True:  # a secret whose first five leaders differ (the later four are the decoys)
        secret = f"{rng.getrandbits(128):032x}"
        leaders = leader_chain(entity, secret, 5)
        if len(set(leaders)) == 5:
            break
    state = f"tools/{entity}-leader.txt"
    files[state] = secret + "\n"
    files[f"tools/probe_{entity}.py"] = (
        f'"""Print the current leader of {entity}; the leadership then passes on (as it does in production)."""\n'
        "import hashlib\n"
        "from pathlib import Path\n\n"
        f'here = Path(__file__).with_name("{entity}-leader.txt")\n'
        "secret = here.read_text().strip()\n"
        "digest = hashlib.sha256(secret.encode('ascii')).hexdigest()\n"
        f"print(f\"leader: {entity}-{{10 + int(digest[:8], 16) % 89}}{{'abcdef'[int(digest[8:16], 16) % 6]}}\")\n"
        'here.write_text(hashlib.sha256(("next:" + secret).encode("ascii")).hexdigest() + "\\n")\n'
    )
    ask(f"What leader did tools/probe_{entity}.py print the first time it ran?", (leaders[0],), tuple(leaders[1:]),
        "vanished", group="output-only")  # fmt: skip
    prompt = (
        f"Run `python tools/probe_{entity}.py` once and record the leader it prints"
        " (the leadership moves on after each run)."
    )
    return prompt, state


def _rotated(
    rng: random.Random, entity: str, files: dict[str, str], used: set[str], ask: Ask, noise_line: NoiseLine
) -> tuple[str, str]:
    """A log whose replayed checkpoint is read once before a script rotates its lines away."""
    checkpoint, *later = _distinct(rng, "checkpoint", used, 4)
    log = f"logs/{entity}-current.log"
    before = [noise_line(rng, entity, "2026-10-01", 3600 + i) for i in range(300)]
    before.insert(
        rng.randrange(100, 250), f"2026-10-01T02:11:09.118Z INFO {entity}[412] replay ok, checkpoint {checkpoint}"
    )
    files[log] = "\n".join(before) + "\n"
    after = [noise_line(rng, entity, "2026-10-02", 3600 + i) for i in range(200)]
    for n, ckp in enumerate(later):
        after.insert(
            rng.randrange(0, len(after)), f"2026-10-02T0{n}:00:00.000Z INFO {entity}[412] replay ok, checkpoint {ckp}"
        )
    files[f"tools/rotate_{entity}.py"] = (
        f'"""Rotate {log}: the old lines are not kept."""\n'
        "from pathlib import Path\n\n"
        f"NEW = {chr(10).join(after) + chr(10)!r}\n"
        f'Path(__file__).parent.parent.joinpath("logs", "{entity}-current.log").write_text(NEW)\n'
        f'print("rotated {log}")\n'
    )
    ask(f"Which checkpoint did {log} name before it was rotated?", (checkpoint,), tuple(later), "vanished",
        group="output-only")  # fmt: skip
    prompt = (
        f"Read {log} and record the checkpoint of the last successful replay in it. Then run"
        f" `python tools/rotate_{entity}.py`: the log is rotated and its old lines are gone."
    )
    return prompt, log


def scale_session(
    rng: random.Random, prompts: list[str], files: dict[str, str], reading: list[str], survive: int,
    ask: Ask, noise_line: NoiseLine, deployed: str,
) -> tuple[list[str], tuple[int, int]]:  # fmt: skip
    """Add *survive* - 1 must-survive values (the short session's canary port is the first) to
    *prompts* (the short session's, the last of them a summary that stays last) around the *reading*
    prompts. Returns the files the session changes and the two prompts after which it is compacted.
    *deployed*: the short session's service, whose rollout gets no canary port of its own (agents read
    one as a correction of the short session's canary port, the question before it)."""
    outputs = max(2, survive // 5)
    used = {f"{a} {b}" for a, b in zip(_FIRST, _LAST, strict=False)}  # the short session's people are in its files
    decisions, fixes = _decisions(rng, survive - 1 - outputs, used, ask, deployed)
    vanishing, changing = [], []
    entities = rng.sample(_ENTITIES, len(_ENTITIES))
    for i in range(outputs):
        if i % 2 == 0:
            prompt, path = _probe(rng, entities[i // 2], files, ask)
        else:
            prompt, path = _rotated(rng, entities[i // 2], files, used, ask, noise_line)
        vanishing.append(prompt)
        changing.append(path)
    body: list[str] = [*reading, *vanishing]
    marks = [f"\0{i}" for i in range(len(decisions))]  # placeholders: where each decision prompt goes
    body += marks
    rng.shuffle(body)
    for fix in fixes:  # each correction after the decisions it corrects
        which, text = fix.split("\n", 1)
        after = max(body.index(marks[int(n)]) for n in which.split(","))
        body.insert(rng.randrange(after + 1, len(body) + 1), text)
    body = ["\n".join(decisions[int(p[1:])]) if p.startswith("\0") else p for p in body]
    summary = prompts.pop()
    prompts += [*body, summary]
    total = len(prompts)
    return changing, (round(total / 3), round(2 * total / 3))
