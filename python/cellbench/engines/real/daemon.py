"""``cellbench daemon``: a named Dask worker for one testbed host.

Without ``--scheduler`` the daemon also hosts the scheduler (on ``--listen``),
so the first host needs one command and every other host one more. Everything
listens on loopback unless ``--listen`` names an address, and only over TLS
with the credentials given: a peer without a certificate from the same set
is refused at the handshake, and a peer with one may do only its role's part
(``guard``). Started as root, the daemon gives root up before it listens
(``drop_privileges``). A start that cannot complete (the port taken, the name
taken, credentials the scheduler refuses) ends with one line (``StartError``).
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib
import ipaddress
import logging
import os
import re
import sys

from cellbench import scratch
from cellbench.engines.real import agents, credentials, guard

DEFAULT_PORT = 8786
#: Agents a daemon runs at once (one thread each, started as needed).
DEFAULT_AGENTS = 512
#: How long a daemon tries to join its scheduler before it gives up with a message
#: (Dask's own connect timeout, distributed.comm.timeouts.connect, is 30 s).
JOIN_TIMEOUT_S = 30.0
#: Who a daemon started as root runs as once it has read its credentials.
UNPRIVILEGED_USER = "nobody"
#: The modules a daemon needs after it has given up root, which may leave it unable
#: to read the Python installation (a root-only home): all of Dask's distributed
#: and tornado but the parts a daemon never uses (their tests, dashboards,
#: deployment, GPU and array protocols), and those the honest runs of
#: tests/test_real_*.py import late. Imported before, nothing loads afterwards.
PRELOAD_PACKAGES = ("distributed", "tornado")
PRELOAD_SKIP = re.compile(
    r"\.(tests?|testing|dashboard|bokeh|http|cli|deploy|diagnostics|widgets|_version)(\.|$)"
    r"|\.(cuda|rmm|cupy|numba|numpy|arrow|torch|keras|sparse|netcdf4|h5py|scipy|ucx)$"
    r"|\.shuffle\._(merge|shuffle|rechunk)$|\.comm\.asyncio_tcp$"
    r"|tornado\.(platform\.(twisted|caresresolver)|curl_httpclient|autoreload|wsgi)$"
)
PRELOAD = (
    "cellbench._native",
    "dask._expr",
    "dask._task_spec",
    "concurrent.futures.thread",
    "encodings.idna",
)


class StartError(RuntimeError):
    """The daemon could not start: one line saying why."""


def parse_listen(text: str) -> tuple[str, int | None]:
    """``HOST``, ``HOST:PORT`` or ``[V6]:PORT`` -> (host, port or None)."""
    host, port = text, None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif text.count(":") == 1:
        host, port = text.split(":")
    try:
        ipaddress.ip_address(host)
        number = int(port) if port is not None else None
    except ValueError:
        raise ValueError(
            f"--listen {text}: expected an IP address, optionally with :PORT"
        ) from None
    # A TCP port is 16 bits (RFC 9293 §3.1); the kernel would take 70000 as 4464.
    if number is not None and not 1 <= number <= 65535:
        raise ValueError(f"--listen {text}: port {number} is not a TCP port (1 to 65535)")
    return host, number


def _url(host: str, port: int) -> str:
    return f"tls://[{host}]:{port}" if ":" in host else f"tls://{host}:{port}"


async def _serve(
    name: str,
    listen: str,
    scheduler: str | None,
    sec,
    agents_n: int,
    workdir: str,
    user: str | None,
) -> None:
    import dask

    Scheduler, Worker = guard.scheduler_class(), guard.worker_class()
    host, port = parse_listen(listen)
    # Dask starts an HTTP server beside every scheduler and worker whatever `dashboard`
    # says (the scheduler's on port 8787 of the listening address), with pages about
    # the cluster and no authentication: here it serves nothing, on a loopback port.
    dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []})
    # The scheduler's scratch space too (the worker's is its local_directory): Dask's
    # default, TMPDIR/dask-scratch-space, stayed behind owned by nobody, and another
    # user's Dask then could not take its lock there.
    dask.config.set({"temporary-directory": workdir})
    http = {"dashboard_address": "127.0.0.1:0"}
    worker = {
        "name": name,
        "nthreads": agents_n,
        "security": sec,
        "host": host,
        "protocol": "tls",
        "local_directory": workdir,
        "death_timeout": JOIN_TIMEOUT_S,
        **http,
    }
    if scheduler is None:
        address = _url(host, DEFAULT_PORT if port is None else port)
        s = Scheduler(
            host=host,
            port=DEFAULT_PORT if port is None else port,
            protocol="tls",
            security=sec,
            dashboard=False,
            **http,
        )
        await _start(s, f"cannot listen on {address}")
        try:
            w = Worker(s.address, **worker)
            await _start(w, f"the daemon of host {name} did not start")
            try:
                _ready(name, s.address, w.address, user)
                await _until_stopped(w)
            finally:
                await w.close()
        finally:
            await s.close()
        return
    w = Worker(scheduler, port=port, **worker)
    await _start(w, f"cannot join the scheduler at {scheduler}")
    try:
        _ready(name, scheduler, w.address, user)
        await _until_stopped(w)
    finally:
        await w.close()


async def _start(server, what: str) -> None:
    """Start a Dask server; a failure as one line (StartError), from the first cause
    that says something: the port taken, the name taken, the join timing out."""
    try:
        await server
    except Exception as e:
        cause: BaseException | None = e
        why = None
        while cause is not None:
            text = str(cause)
            if "name taken" in text:
                name = server.name if hasattr(server, "name") else "?"
                why = f"a daemon for host {name} is at the scheduler already (--name is taken)"
                break
            if isinstance(cause, OSError) and cause.errno is not None:
                why = os.strerror(cause.errno).lower()
                break
            if isinstance(cause, TimeoutError | asyncio.TimeoutError):
                why = (
                    f"no answer in {JOIN_TIMEOUT_S:g} s (is the scheduler running, and do "
                    "--credentials hold this testbed's ca.pem and this host's certificate?)"
                )
                break
            cause = cause.__cause__ or cause.__context__
        await server.close()
        raise StartError(f"{what}: {why or e}") from None


async def _until_stopped(worker) -> None:
    """Until SIGINT/SIGTERM or the worker ends; then the contexts close it cleanly."""
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    done = asyncio.ensure_future(worker.finished())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait([done, stopped], return_when=asyncio.FIRST_COMPLETED)
    for f in (done, stopped):
        f.cancel()


def _ready(name: str, scheduler: str, worker: str, user: str | None) -> None:
    dask_log = logging.getLogger("distributed")
    if dask_log.level == logging.CRITICAL:
        dask_log.setLevel(logging.ERROR)
    # One line a script (or a test) can wait for.
    as_user = f"; running as {user}, without root" if user else ""
    print(
        f"cellbench daemon: host {name} ready; scheduler {scheduler}; worker {worker}{as_user}",
        file=sys.stderr,
        flush=True,
    )


#: capability(7) numbers and prctl(2) options (linux/capability.h, linux/prctl.h).
CAP_SYS_NICE = 23
CAP_LAST = 63
PR_CAPBSET_DROP = 24
PR_SET_KEEPCAPS = 8
PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _capset(caps: set[int]) -> None:
    """This thread's permitted and effective capabilities: exactly ``caps``."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [(f, ctypes.c_uint32) for f in ("effective", "permitted", "inheritable")]

    mask = sum(1 << c for c in caps)
    data = (Data * 2)()
    for i in range(2):
        data[i].effective = data[i].permitted = (mask >> (32 * i)) & 0xFFFFFFFF
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(ctypes.byref(Header(_LINUX_CAPABILITY_VERSION_3, 0)), data) != 0:
        raise StartError(f"cannot set capabilities: {os.strerror(ctypes.get_errno())}")


def _preload() -> None:
    import pkgutil

    for m in PRELOAD:
        importlib.import_module(m)
    for name in PRELOAD_PACKAGES:
        pkg = importlib.import_module(name)
        for m in pkgutil.walk_packages(pkg.__path__, name + "."):
            if not PRELOAD_SKIP.search(m.name):
                try:
                    importlib.import_module(m.name)
                except ImportError:
                    pass  # an optional dependency this host lacks: not used
    # The installed versions the scheduler and workers report to clients, read from
    # the installation's metadata: read now, as they will be.
    import distributed.versions
    import distributed.worker

    versions = distributed.versions.get_versions()

    def get_versions(packages=None) -> dict:
        return versions

    distributed.versions.get_versions = get_versions
    distributed.worker.get_versions = get_versions


def drop_privileges(realtime: bool, user: str = UNPRIVILEGED_USER) -> str | None:
    """Give up root, for good, before any thread starts (capabilities are per thread
    and new threads inherit them): the daemon needs root for nothing once its
    credentials are read (its ports are above 1024; its sockets, TCP_INFO and /proc
    readings are any user's), except the real-time pacer's SCHED_FIFO (pacer.rs),
    for which it keeps CAP_SYS_NICE alone, and with --no-realtime nothing. (The
    unprivileged way, RLIMIT_RTPRIO, needs CAP_SYS_RESOURCE to raise, which a
    container's root may lack.) Returns the user now running, or None when not root."""
    import pwd

    if os.geteuid() != 0:
        return None
    _preload()
    pw = pwd.getpwnam(user)
    keep = {CAP_SYS_NICE} if realtime else set()
    libc = ctypes.CDLL(None, use_errno=True)
    # The bounding set: nothing it could ever execute gets anything else back.
    for cap in range(CAP_LAST + 1):
        if cap not in keep:
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.chdir("/")
    os.setgroups([])
    os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
    # capabilities(7): once no user ID is 0 any more, the permitted and effective
    # sets are cleared, unless PR_SET_KEEPCAPS keeps the permitted set.
    libc.prctl(PR_SET_KEEPCAPS, 1 if keep else 0, 0, 0, 0)
    os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
    if keep:
        _capset(keep)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise StartError("cannot set no_new_privs after dropping root")
    with open("/proc/self/status") as f:
        status = {k: v.strip() for k, _, v in (line.partition(":") for line in f)}
    want = sum(1 << c for c in keep)
    if int(status["CapEff"], 16) != want or int(status["CapPrm"], 16) != want:
        raise StartError("capabilities left after dropping root: refusing to run")
    return user


def serve(
    name: str,
    *,
    listen: str = "127.0.0.1",
    scheduler: str | None = None,
    creds: str,
    agents_n: int = DEFAULT_AGENTS,
    max_duration_s: float = 300.0,
    max_rate_bps: float = 10e9,
    allow: list[str] | None = None,
    realtime: bool = True,
    quiet: bool = True,
) -> None:
    """Run a daemon until it is stopped (SIGINT/SIGTERM). ``allow``: networks it may
    send to besides loopback."""
    credentials.check_host_name(name)
    # Read now (missing files: a one-line error before anything listens), as root.
    sec = credentials.security(creds, "daemon", name, scheduler=scheduler is None)
    if scheduler is not None and not scheduler.startswith("tls://"):
        raise ValueError(f"--scheduler {scheduler}: expected tls://HOST:PORT (the channel is TLS)")
    parse_listen(listen)
    nets = ["127.0.0.0/8", "::1/128"]
    for text in allow or []:
        try:
            nets.append(str(ipaddress.ip_network(text, strict=False)))
        except ValueError:
            raise ValueError(
                f"--allow {text}: expected an address or a network (e.g. 10.1.0.0/24)"
            ) from None
    agents.set_limits(
        max_duration_s=max_duration_s,
        max_rate_bps=max_rate_bps,
        allow=nets,
        realtime=realtime,
        agents=agents_n,
    )
    guard.install_unpickler()
    guard.install_listener({"scheduler"} if scheduler is not None else {"scheduler", "daemon"})
    log = logging.getLogger("cellbench.daemon")
    log.addHandler(logging.StreamHandler(sys.stderr))
    log.setLevel(logging.INFO)
    if quiet:
        # Until it is ready a failure is StartError's one line; then Dask's errors show.
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
    user = drop_privileges(realtime)
    # (After dropping root: the directory is the unprivileged user's, and so is the
    # next daemon that removes it if this one is killed.)
    with scratch.directory("cellbench-daemon-") as workdir:
        asyncio.run(_serve(name, listen, scheduler, sec, agents_n, workdir, user))
