"""The sandbox a hosted bot's code runs in: bubblewrap, resource limits, one process.

    box = Sandbox(code_dir, "mybot:MyBot")
    box.start()                         # the bot's module imported, its class found: ready
    line, cpu_ms, problem = box.exchange(decision, cpu_ms=..., wall_s=...)
    box.kill()                          # the whole sandbox, whatever it left running

What runs: the bot's code with the SDK's `Bot` class unchanged, in
`sdk/hosted_runner.py`, speaking the bot protocol's JSON one message per line
over its stdin and stdout (docs/architecture.md "Hosted bots").

How it is held (the threat model is in docs/architecture.md):

* **bubblewrap** (`bwrap`, Debian's `bubblewrap`) builds the sandbox: new user,
  PID, network (loopback only, down), IPC, UTS and cgroup namespaces
  (`--unshare-all`), no further user namespaces (`--disable-userns`), no
  capabilities, `no_new_privs`, a new session (no terminal to inject into),
  no environment (`--clearenv`), killed with the process that started it
  (`--die-with-parent`). The bot is PID 1 of its namespace (`--as-pid-1`):
  when it ends, the kernel kills every process it left.
* **Files**: a root of its own holding only the Python runtime's libraries and
  interpreter (read-only, the interpreter's site-packages hidden), the `sdk` and
  `games` packages and the few packages `import sdk` needs (read-only), the
  bot's code (read-only, `/bot`), a private tmpfs (`/tmp`, `TMPFS_BYTES`: the
  one place it writes), and a minimal read-only `/dev`. No `/proc`, no `/etc`, no checkout, no archive, no other
  bot's code.
* **Who**: run by root (as the workers are in CI and in the image), each
  sandbox drops to a uid of its own (`sandbox_uid`) before bubblewrap starts,
  so the kernel's per-user process limit counts that sandbox alone and no file
  of the host is its own. Run by another user, the sandbox runs as that user:
  the process limit is then that user's, shared (docs/operate.md says how to
  bound it in a container: `pids_limit`).
* **Limits** (`prlimit`, inherited by everything inside): address space
  (`MEMORY_BYTES`, default 512 MB, `CARDARENA_SANDBOX_MEMORY_MB`), processes
  and threads (`TASKS`), file size (`FILE_BYTES`), open files (`OPEN_FILES`),
  no core files; an answer line is read up to `MAX_LINE` (64 KB), more is a
  `too_large` fault and the process is killed.
* **Time**: `exchange` measures the CPU time the bot's process used for the
  message (`cpu_seconds`: the kernel's per-process CPU clock, all its threads,
  plus its children reaped), and gives up after a wall-time ceiling: a
  sleeping bot is killed, never waited on.

Where bubblewrap is missing or cannot build a sandbox (no user namespaces),
`unavailable()` says why, and hosted bots are refused: nothing runs unsandboxed.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

#: the sandbox's address space (bytes), unless CARDARENA_SANDBOX_MEMORY_MB says otherwise
MEMORY_BYTES = 512 << 20
MEMORY_ENV = "CARDARENA_SANDBOX_MEMORY_MB"
#: processes and threads of one sandbox (bubblewrap's own included)
TASKS = 32
#: the largest file it may write (its tmpfs is bounded too)
FILE_BYTES = 1 << 20
#: the size of its private /tmp
TMPFS_BYTES = 8 << 20
#: open files at once
OPEN_FILES = 64
#: the longest line read from it: an answer, or its start's report
MAX_LINE = 64 * 1024
#: how long its start (the interpreter, `import sdk`, the bot's module) may take, wall time
START_S = 20.0
#: how long bubblewrap may take to end once the bot's process is killed
KILL_WAIT_S = 5.0
#: the packages importable inside besides the standard library: the SDK, the engines, and
#: what `import sdk` imports (its Client's HTTP library); the bot's own code is `/bot`
PACKAGES = ("sdk", "games", "requests", "urllib3", "idna", "charset_normalizer", "certifi")
#: where they are inside
LIB = "/opt/cardarena/lib"
BOT_DIR = "/bot"
#: sandbox uids when the worker runs as root: one per sandbox, above every uid a system gives out
UID_BASE = 1_000_000_000
#: clock ticks of /proc/<pid>/stat's times
TICK_S = 1 / os.sysconf("SC_CLK_TCK")

BWRAP = "bwrap"
PRLIMIT = "prlimit"


class SandboxError(Exception):
    """The sandbox could not be started (a platform problem, or the bot's code failing to load:
    `bot_failed`)."""

    def __init__(self, message: str, bot_failed: bool = False) -> None:
        super().__init__(message)
        self.bot_failed = bot_failed


def memory_bytes() -> int:
    configured = os.environ.get(MEMORY_ENV, "").strip()
    return int(configured) << 20 if configured.isdigit() and int(configured) > 0 else MEMORY_BYTES


# -- the command ---------------------------------------------------------------

def interpreter() -> str:
    """The Python the sandbox runs: the worker's own, unless an unprivileged user cannot reach
    it (a runtime under /root, as pyenv installs it), then the system's `/usr/bin/python3`."""
    own = os.path.realpath(sys.executable)
    if os.getuid() != 0 or _reachable_by_others(own):
        return own
    return os.path.realpath("/usr/bin/python3")


def _reachable_by_others(path: str) -> bool:
    """Whether every folder above `path` lets others through and `path` lets them execute it."""
    p = Path(path)
    try:
        return all(q.stat().st_mode & 0o001 for q in p.parents) and bool(p.stat().st_mode & 0o005)
    except OSError:
        return False


def _runtime(python: str) -> tuple[list[str], list[str]]:
    """What the interpreter `python` needs (folders to bind read-only) and what to hide under
    them (its site-packages: installed packages are not the bot's)."""
    prefix = _prefix_of(python)
    binds = [p for p in ("/usr/lib", "/usr/lib64", "/usr/local/lib") if os.path.isdir(p)]
    if not any(prefix == b or prefix.startswith(b + "/") or prefix in ("/usr", "/usr/local") for b in binds):
        binds.append(prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}" if python == os.path.realpath(
        sys.executable) else Path(python).name
    hidden = [p for p in (os.path.join(prefix, "lib", version, "site-packages"),
                          os.path.join(prefix, "lib", "python3", "dist-packages"),
                          "/usr/lib/python3/dist-packages", "/usr/local/lib/" + version + "/site-packages")
              if os.path.isdir(p)]
    return binds, sorted(set(hidden))


def _prefix_of(python: str) -> str:
    """The installation prefix of the interpreter at `python` (its `bin`'s parent)."""
    if python == os.path.realpath(sys.executable):
        return sys.base_prefix
    return str(Path(python).parent.parent)


def package_dirs() -> dict[str, str]:
    """Each of `PACKAGES` -> the folder it is imported from here."""
    import importlib.util

    out = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SandboxError(f"the package {name} is not installed")
        out[name] = list(spec.submodule_search_locations)[0]
    return out


def compile_packages(python: str, folders: list[str]) -> None:
    """Write the bytecode of `folders` for the interpreter `python` where it is missing or stale.
    A sandbox reads them read-only and never writes bytecode, so without it every start compiles
    them again (a worker run with PYTHONDONTWRITEBYTECODE never writes it either). Best effort:
    a folder this process may not write keeps what its installer compiled (pip does)."""
    try:
        subprocess.run([python, "-I", "-m", "compileall", "-qq", *folders], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=START_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _staged(packages: dict[str, str]) -> dict[str, str]:
    """Copies of `packages` a sandbox's uid can read, for a checkout or environment it cannot
    reach (under a folder closed to others, as `mktemp -d` makes): one folder of this process's,
    made by it alone (`mkdtemp`), opened to others for reading, removed as it exits."""
    import atexit
    import tempfile

    root = tempfile.mkdtemp(prefix="cardarena-packages-")
    os.chmod(root, 0o755)
    atexit.register(shutil.rmtree, root, True)
    staged = {}
    for name, path in packages.items():
        copy = os.path.join(root, name)
        shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for folder, _, files in os.walk(copy):
            os.chmod(folder, 0o755)
            for file in files:
                os.chmod(os.path.join(folder, file), 0o644)
        staged[name] = copy
    return staged


@functools.lru_cache(maxsize=1)
def _layout() -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    python = interpreter()
    binds, hidden = _runtime(python)
    packages = package_dirs()
    if os.getuid() == 0 and not all(_reachable_by_others(path) for path in packages.values()):
        packages = _staged(packages)
    compile_packages(python, list(packages.values()))
    return python, tuple(binds), tuple(hidden), tuple(packages.items())


def command(code_dir: str | None, entrypoint: str | None, info_fd: int, limit_memory: int) -> list[str]:
    """The command that starts the sandbox: prlimit's limits, then bubblewrap, then the runner."""
    python, binds, hidden, packages = _layout()
    limits = [PRLIMIT, f"--as={limit_memory}", f"--nproc={TASKS}", f"--fsize={FILE_BYTES}",
              f"--nofile={OPEN_FILES}", "--core=0", "--"]
    box = [BWRAP, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
           "--new-session", "--as-pid-1", "--clearenv", "--cap-drop", "ALL",
           "--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--info-fd", str(info_fd)]
    for path in binds:
        box += ["--ro-bind", path, path]
    for path in hidden:
        box += ["--tmpfs", path, "--remount-ro", path]
    if os.path.isdir("/usr/lib64"):
        box += ["--symlink", "usr/lib64", "/lib64"]
    box += ["--symlink", "usr/lib", "/lib", "--ro-bind", python, python]
    for name, path in packages:
        box += ["--ro-bind", path, f"{LIB}/{name}"]
    if code_dir is not None:
        box += ["--ro-bind", code_dir, BOT_DIR]
    else:
        box += ["--dir", BOT_DIR]
    box += ["--dev", "/dev", "--remount-ro", "/dev", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
            "--remount-ro", "/", "--chdir", "/tmp", "--setenv", "HOME", "/tmp", "--setenv", "PYTHONHASHSEED", "0"]
    bootstrap = (f"import sys; sys.path[:0] = [{LIB!r}, {BOT_DIR!r}]; "
                 "import sdk.hosted_runner as r; r.main(sys.argv[1:])")
    run = [python, "-I", "-S", "-B", "-c", bootstrap]
    if entrypoint is not None:
        run.append(entrypoint)
    return limits + box + run


# -- who runs it ---------------------------------------------------------------

_uids_lock = threading.Lock()
_uids_used: set[int] = set()


def sandbox_uid() -> int | None:
    """A uid of its own for a new sandbox when running as root (None otherwise): the process's
    own range (by its pid), so no two worker processes on a machine hand out the same."""
    if os.getuid() != 0:
        return None
    with _uids_lock:
        for slot in range(1024):
            uid = UID_BASE + (os.getpid() % 4_000_000) * 1024 + slot
            if uid not in _uids_used:
                _uids_used.add(uid)
                return uid
    raise SandboxError("this process has 1024 sandboxes running")


def free_uid(uid: int | None) -> None:
    """Give back a uid `sandbox_uid` handed out, once its sandbox has ended."""
    with _uids_lock:
        _uids_used.discard(uid)


# -- availability ----------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why hosted bots cannot run here (None when they can): bubblewrap missing, user namespaces
    off, the runtime out of reach. Found by starting a real sandbox once per process."""
    for tool in (BWRAP, PRLIMIT):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install bubblewrap util-linux)"
    box = Sandbox(None, None)
    try:
        box.start()
    except SandboxError as exc:
        return f"a sandbox cannot be started here: {exc}"
    finally:
        box.kill()
    return None


# -- one sandbox -------------------------------------------------------------------

class Sandbox:
    """One sandboxed process running `entrypoint` from `code_dir` (None, None: the runner alone,
    as `unavailable` starts it)."""

    def __init__(self, code_dir: str | None, entrypoint: str | None, memory: int | None = None) -> None:
        self.code_dir = code_dir
        self.entrypoint = entrypoint
        self.memory = memory or memory_bytes()
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None  # the bot's process (PID 1 inside), as this process sees it
        self.uid: int | None = None
        self.started_s: float | None = None  # how long its start took, wall time
        self._buffer = b""
        self._stat: int | None = None  # /proc/<pid>/stat, open for the process's life: read twice a decision

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start it and wait for its runner's report: ready, or the bot's code failing to load
        (`SandboxError` with `bot_failed`, its traceback as the message)."""
        began = time.monotonic()
        info_r, info_w = os.pipe()
        self.uid = sandbox_uid()
        try:
            self.proc = subprocess.Popen(
                command(self.code_dir, self.entrypoint, info_w, self.memory),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                pass_fds=(info_w,), close_fds=True, env={"PATH": "/usr/bin:/bin"},
                user=self.uid, group=self.uid, extra_groups=[] if self.uid is not None else None)
        except OSError as exc:
            os.close(info_r)
            free_uid(self.uid)
            raise SandboxError(f"cannot run bubblewrap: {exc}") from None
        finally:
            os.close(info_w)
        try:
            info = _read_all(info_r, began + START_S)
        finally:
            os.close(info_r)
        try:
            self.pid = int(json.loads(info)["child-pid"])
            self._stat = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY)
        except (ValueError, KeyError, TypeError, OSError):
            self.kill()
            raise SandboxError("bubblewrap could not build the sandbox (are user namespaces allowed?)") from None
        os.set_blocking(self._pipes()[0].fileno(), False)  # `_write_all` gives up at its deadline
        line = self._read_line(began + START_S)
        self.started_s = time.monotonic() - began
        report = _parse(line)
        if report is None or not (report.get("ready") or "error" in report):
            self.kill()
            raise SandboxError("the sandbox did not start" if line is None else "the sandbox's start said nothing",
                               bot_failed=line is not None and line != b"")
        if "error" in report:
            self.kill()
            raise SandboxError(str(report["error"]), bot_failed=True)

    def cpu_seconds(self) -> float:
        """CPU time its process has used: every thread's (the kernel's per-process CPU clock,
        clock_getcpuclockid's id for the pid), plus the children it reaped (/proc's ticks, read
        from the file kept open since the start: the process's own, whatever pid comes next)."""
        pid = self.pid
        if pid is None or self._stat is None:  # not started: nothing used
            return 0.0
        clock = ((~pid) << 3) | 2  # CPUCLOCK_SCHED of the process `pid` (Linux's ABI, as glibc builds it)
        try:
            own = time.clock_gettime(clock)
            fields = os.pread(self._stat, 4096, 0).rpartition(b")")[2].split()
        except OSError:
            return 0.0
        return own + (int(fields[13]) + int(fields[14])) * TICK_S

    def exchange(self, message: dict | bytes, cpu_ms: int, wall_s: float) -> tuple[bytes | None, int, str | None]:
        """Send `message` (a dict, or its JSON line) and read the one line that answers it:
        (the line, the CPU ms it took, None), or (None, the CPU ms, why not: "timeout" past
        `cpu_ms` of CPU or `wall_s` of wall time, "too_large", "died"). Only the line read
        whole keeps the process in step: after any other outcome it is killed."""
        data = message if isinstance(message, bytes) else json.dumps(message, separators=(",", ":")).encode()
        before = self.cpu_seconds()
        began = time.monotonic()
        try:
            _write_all(self._pipes()[0], data + b"\n", began + wall_s)
        except (OSError, TimeoutError):
            died = not self.alive
            spent = self._spent(before)
            self.kill()
            return None, spent, "died" if died else "timeout"
        line: bytes | None = None
        problem: str | None = None
        deadline = began + wall_s
        while line is None and problem is None:
            try:
                line = self._read_line(min(deadline, time.monotonic() + 0.05))
            except _TooLarge:
                problem = "too_large"
                break
            if line is None:
                if not self.alive and b"\n" not in self._buffer:
                    problem = "died"
                elif time.monotonic() >= deadline or self._spent(before) > cpu_ms:
                    problem = "timeout"
        spent = self._spent(before)
        if problem is not None:
            self.kill()
            return None, spent, problem
        return line, spent, None

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        """Its process's stdin and stdout (`start` made them)."""
        if self.proc is None or self.proc.stdin is None or self.proc.stdout is None:
            raise SandboxError("the sandbox was not started")
        return self.proc.stdin, self.proc.stdout

    def _spent(self, before: float) -> int:
        return max(0, round((self.cpu_seconds() - before) * 1000))

    def _read_line(self, until: float) -> bytes | None:
        """The next line (without its newline) by `until`; None if none came (or it ended)."""
        out = self._pipes()[1].fileno()
        while b"\n" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([out], [], [], left)
            if not ready:
                return None
            chunk = os.read(out, 65536)
            if not chunk:
                return None
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE and b"\n" not in self._buffer[:MAX_LINE + 1]:
                raise _TooLarge
        line, _, self._buffer = self._buffer.partition(b"\n")
        if len(line) > MAX_LINE:
            raise _TooLarge
        return line

    def kill(self) -> None:
        """Kill the sandbox and wait until nothing of it runs: its PID 1 first (the kernel then
        kills every process of its namespace before that one's end is reported), which
        bubblewrap reaps and ends with; bubblewrap itself if it lingers. Safe to call twice."""
        proc = self.proc
        if proc is not None:
            if self.pid is not None and proc.poll() is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                    proc.wait(timeout=KILL_WAIT_S)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            try:
                proc.send_signal(signal.SIGKILL)
            except OSError:
                pass
            for stream in (proc.stdin, proc.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
            proc.wait()
        if self._stat is not None:
            os.close(self._stat)
            self._stat = None
        if self.uid is not None:
            free_uid(self.uid)
            self.uid = None


class _TooLarge(Exception):
    pass


def _parse(line: bytes | None) -> dict | None:
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_all(fd: int, until: float) -> bytes:
    """What `fd` gives until its end or `until`."""
    data = b""
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        if b"}" in data:
            break
    return data


def _write_all(stream, data: bytes, until: float) -> None:
    """Write `data` to the non-blocking pipe `stream` (as `Sandbox.start` leaves it) by `until`
    (TimeoutError: the bot stopped reading). A decision usually fits the pipe: one write."""
    fd = stream.fileno()
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
            continue
        except BlockingIOError:
            pass
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        select.select([], [fd], [], left)


# -- the probe at registration --------------------------------------------------------

#: a probe decision's CPU time (ms): the platform's default move time
PROBE_MS = 2000


def probe(code_dir: str, entrypoint: str, game: str) -> str | None:
    """Start the code in a sandbox and ask it the first decision of a match of `game`: None if it
    answered a legal action, else why not (the traceback of its import or its decision, for its
    owner). `SandboxError` (not the bot's) if no sandbox could be started at all."""
    import games
    from sdk.referee import MatchReferee, listed_action

    ref = MatchReferee(game, games.get(game).ladder_table, 1, {}, 1, PROBE_MS, 0)
    decision = ref.decision("probe")
    box = Sandbox(code_dir, entrypoint)
    try:
        try:
            box.start()
        except SandboxError as exc:
            if exc.bot_failed:
                return f"its code did not load:\n{exc}"
            raise
        line, _, problem = box.exchange(decision, PROBE_MS, 3 * PROBE_MS / 1000)
    finally:
        box.kill()
    if problem is not None:
        return {"timeout": f"no answer to the probe decision within {PROBE_MS} ms of CPU time",
                "too_large": f"an answer over {MAX_LINE // 1024} KB",
                "died": "its process ended during the probe decision"}[problem]
    answer = _parse(line)
    if answer is None:
        return "its answer was not a JSON object"
    if "error" in answer:
        return f"its decision raised:\n{answer['error']}"
    if "action" not in answer or listed_action(decision["legal_actions"], answer["action"]) is None:
        return f"its answer to the probe decision is not one of its legal actions: {str(answer)[:200]}"
    return None
