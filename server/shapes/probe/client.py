"""The server's side of the shape probe: one sandboxed worker process, started lazily.

`ProbeClient.probe(request)` sends one request to the worker (`worker.py`, run by the
user's own interpreter) and returns its answer as a dict; it never raises for anything
the worker or the user's code does.  What keeps the server safe:

  * the worker runs in its own process group (a timeout kills the group: nothing the
    model spawned survives), with a scrubbed environment (no tokens or keys), its
    address space capped at `memory` MB (except on `cuda`, whose driver reserves far more
    address space than it uses) and its CPU time capped;
  * every request has a wall-clock timeout; past it the worker is killed and the next
    request starts a new one;
  * the protocol is read on a descriptor of its own (user prints are captured apart), so
    a garbage line costs that request, not the server;
  * `close()` (and interpreter exit) kills the group: no orphan survives the server.

States: stopped -> starting (torch is imported: seconds) -> ready <-> busy; a timeout,
a crash or a broken answer -> stopped, and the next request starts it again.
"""
from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")
PROBE_DEVICES = ("meta", "cpu", "cuda")
START_TIMEOUT_S = 60.0  # importing torch cold, from a slow disk
CPU_SECONDS_CAP = 3600  # a worker's whole life; a busy loop is stopped by the wall clock long before
KEPT_ENVIRONMENT = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "PYTHONPATH",
    "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
)


@dataclass(frozen=True)
class ProbeOptions:
    python: str | None = None  # None: the workspace's virtual environment, else python3
    device: str = "meta"  # "meta" | "cpu" | "cuda"
    timeout: float = 10.0  # seconds per request
    memory: int = 4096  # MB of address space (not applied on cuda)


def probe_python(options: ProbeOptions, workspace: str | None, editor_python: str | None = None) -> str:
    """The interpreter that runs the worker: the setting, the workspace's virtual environment,
    the one the editor passes, else `python3` on PATH."""
    if options.python:
        return options.python
    for folder in (".venv", "venv", "env"):
        for candidate in ("bin/python", "Scripts/python.exe"):
            path = Path(workspace or ".") / folder / candidate
            if workspace and path.exists():
                return str(path)
    return editor_python or shutil.which("python3") or sys.executable


def worker_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key in KEPT_ENVIRONMENT or key.startswith("LC_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def resource_limits(memory_mb: int | None):
    """The function the child runs before exec: caps its address space and CPU time."""
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS_CAP, CPU_SECONDS_CAP))
        if memory_mb:
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def failed(message: str, **extra) -> dict:
    return {"ok": False, "error": message, "shape_error": False, **extra}


class ProbeClient:
    """One worker for one interpreter; thread-safe (requests are served one at a time)."""

    def __init__(self, python: str, options: ProbeOptions, cwd: str | None = None):
        self.python = python
        self.options = options
        self.cwd = cwd
        self.process: subprocess.Popen | None = None
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.hello: dict | None = None
        self.lock = threading.Lock()
        self.next_id = 0
        self.starts = 0
        atexit.register(self.close)

    # -- life cycle -----------------------------------------------------------------
    def start(self) -> dict:
        """Start the worker and wait for its greeting (`ready`, torch's version)."""
        memory = None if self.options.device == "cuda" else self.options.memory
        self.answers = queue.Queue()
        self.process = subprocess.Popen(
            [self.python, str(WORKER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.cwd, env=worker_environment(), start_new_session=True,
            preexec_fn=resource_limits(memory), text=True, encoding="utf-8", errors="replace",
        )
        self.starts += 1
        threading.Thread(target=self.read_answers, args=(self.process, self.answers), daemon=True).start()
        hello = self.next_answer(START_TIMEOUT_S)
        if hello is None or not hello.get("ready"):
            self.stop()
            return hello or failed(f"the probe's Python ({self.python}) did not start within {START_TIMEOUT_S:.0f} s.")
        self.hello = hello
        return hello

    @staticmethod
    def read_answers(process: subprocess.Popen, answers: queue.Queue) -> None:
        for line in process.stdout:
            answers.put(line)
        answers.put(None)  # end of output: the worker is gone

    def next_answer(self, timeout: float) -> dict | None:
        try:
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            return {"ok": False, "gone": True}
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            return {"ok": False, "garbage": line[:200]}

    def stop(self) -> None:
        process, self.process = self.process, None
        self.hello = None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        with self.lock:
            self.stop()

    def kill(self) -> None:
        """Kill the worker's process group without waiting for a request under way (it then
        reads the end of the worker's output and fails): the server is going away."""
        process = self.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    # -- requests -------------------------------------------------------------------
    def probe(self, request: dict) -> dict:
        """The worker's answer to `request` (see `worker.Probe`), or a failure that says why."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                hello = self.start()
                if not hello.get("ready"):
                    return self.not_started(hello)
            self.next_id += 1
            request = {**request, "id": self.next_id, "device": self.options.device}
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
            except (BrokenPipeError, OSError):
                self.stop()
                return failed("the probe worker stopped before it could be asked; it restarts on the next probe.")
            started = time.monotonic()
            answer = self.next_answer(self.options.timeout)
            if answer is None:
                self.stop()
                return failed(f"the probe did not finish within {self.options.timeout:g} s; its process was "
                              "stopped and a new one starts on the next probe.", timeout=True)
            if answer.get("gone") or answer.get("garbage") is not None or answer.get("id") != self.next_id:
                code = self.process.poll() if self.process else None
                self.stop()
                return failed(self.gone_message(code), crashed=True)
            answer["elapsed_ms"] = (time.monotonic() - started) * 1000
            answer["torch"] = self.hello.get("torch") if self.hello else None
            return answer

    def not_started(self, hello: dict) -> dict:
        if hello.get("error", "").startswith(("ModuleNotFoundError", "ImportError")):
            return failed(f"torch is not installed in the probe's Python ({self.python}); install it there "
                          "(`pip install torch`) or point the probe at an interpreter that has it (the `probe.python` "
                          "setting, or `--probe-python` on the command line).",
                          no_torch=True)
        return failed(hello.get("error") or f"the probe's Python ({self.python}) could not start the worker.")

    def gone_message(self, code: int | None) -> str:
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        if code == -signal.SIGKILL or code == -signal.SIGXCPU:
            how += " (a resource limit: memory or CPU time)"
        return f"the probe worker stopped ({how}) while running the model; it restarts on the next probe."
