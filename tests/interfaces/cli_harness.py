"""The command line in the test process: ``main(argv)`` called as ``python -m notewell`` would call it.

A new interpreter costs about a second a command (start-up and imports); a call costs
milliseconds. What the real process would have had to itself is lent to the call and taken
back afterwards, so that the next call and the next test start from the same process state:
the standard streams, the environment, the working directory, the signal handlers and the
logging handlers. A call that leaves a thread running fails: the next test would share it.

What needs a process of its own (the ``-m`` entry point, exit status, a real stdout's
encoding, watchers and servers, signals) goes through :func:`run_process` instead.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import notewell

__all__ = ["Finished", "call", "run", "run_process", "where"]

# The handlers a command may set (notewell watch does, before it even opens the store).
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)
# How long a thread the call started may take to finish after it: a thread pool's worker or an
# HTTP server's request thread can still be closing its connection.
_THREAD_GRACE = 5.0


@dataclass
class Finished:
    """The parts of ``subprocess.CompletedProcess`` the tests read."""

    args: list[str]
    returncode: int
    stdout: bytes | str
    stderr: bytes | str


def call(
    argv: Sequence[str],
    *,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    unset: Iterable[str] = (),
    cwd: str | os.PathLike[str] | None = None,
    text: bool = False,
) -> Finished:
    """Run ``notewell ARGV`` in this process with *input* on stdin, the variables in *unset*
    removed from the environment and then *env* set, in *cwd*; like ``subprocess.run(...,
    capture_output=True, text=text)``. Everything it changed is put back before returning."""
    argv = [str(a) for a in argv]
    # Standard streams as the interpreter makes them on POSIX (newline="\n": no translation),
    # with its encodings and error handlers: a child process would inherit the same locale.
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    out_errors = getattr(sys.__stdout__, "errors", None) or "strict"
    err_errors = getattr(sys.__stderr__, "errors", None) or "backslashreplace"
    raw_in = input.encode(encoding) if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(raw_in), encoding=encoding, errors=out_errors, newline="\n")
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out_bytes, encoding=encoding, errors=out_errors, newline="\n", write_through=True)
    stderr = io.TextIOWrapper(err_bytes, encoding=encoding, errors=err_errors, newline="\n", write_through=True)

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    saved_handlers = list(logging.root.handlers)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    threads_before = set(threading.enumerate())
    try:
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            # Imported at the call, not at import time: a cli.py that fails to import fails the
            # commands (exit 1 with the traceback, as a process would), not the collection of
            # every test module that uses this harness.
            from notewell.interfaces.cli.app import main

            returncode = main(argv)
        except SystemExit as exc:  # argparse's errors, --help and --version
            returncode = _exit_status(exc.code, stderr)
        except Exception:  # noqa: BLE001 - what the interpreter does with an exception main lets out
            stderr.write(traceback.format_exc())
            returncode = 1
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        replaced = [s for s in (sys.stdout, sys.stderr) if s not in (stdout, stderr)]
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for stream in replaced:  # main points sys.stdout at os.devnull after a broken pipe
            stream.close()
        os.chdir(saved_cwd)
        _restore_environ(saved_env)
        for sig, handler in saved_signals.items():
            if signal.getsignal(sig) is not handler and handler is not None:
                signal.signal(sig, handler)
        logging.root.handlers[:] = saved_handlers
    left = _threads_left(threads_before)
    assert not left, f"notewell {' '.join(argv)} left threads running: {left}"
    stdout_data, stderr_data = out_bytes.getvalue(), err_bytes.getvalue()
    if text:
        return Finished(argv, returncode, _as_text(stdout_data, encoding), _as_text(stderr_data, encoding))
    return Finished(argv, returncode, stdout_data, stderr_data)


def _exit_status(code: object, stderr: io.TextIOBase) -> int:
    """The status a process exits with on ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code % 256
    print(code, file=stderr)
    return 1


def _restore_environ(saved: dict[str, str]) -> None:
    for name in set(os.environ) - set(saved):
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _threads_left(before: set[threading.Thread]) -> list[str]:
    started = [t for t in threading.enumerate() if t not in before]
    for thread in started:
        thread.join(_THREAD_GRACE)
    return [t.name for t in started if t.is_alive()]


def _as_text(data: bytes, encoding: str) -> str:
    """Output decoded as ``subprocess.run(text=True)`` decodes it (universal newlines)."""
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


# -- the tests' ``run``: one command on a store ------------------------------------------


def where(store: object) -> list[str]:
    """The options naming *store*: a postgresql:// URL is a database, anything else a folder."""
    if not store:
        return []
    return ["--database" if str(store).startswith("postgresql://") else "--store", str(store)]


def run(args, store=None, input=None, env_extra=None, check=True) -> Finished:
    """``notewell [--store|--database STORE] ARGS`` in this process; stdout and stderr in bytes.
    NOTEWELL_STORE is unset first, so a store the tests' environment names is never used."""
    done = call([*where(store), *args], input=input, env=env_extra, unset=("NOTEWELL_STORE",))
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done


def run_process(args, store=None, input=None, env_extra=None, check=True) -> subprocess.CompletedProcess:
    """:func:`run` in a new ``python -m notewell`` process, for what only a real process shows."""
    env = dict(os.environ)
    env.pop("NOTEWELL_STORE", None)
    src = str(Path(notewell.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    if env_extra:
        env.update(env_extra)
    cmd = [sys.executable, "-m", "notewell", *where(store), *args]
    done = subprocess.run(cmd, input=input, capture_output=True, env=env, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done
