"""``cellbench daemon``: a named Dask worker for one testbed host.

Without ``--scheduler`` the daemon also hosts the scheduler (on ``--listen``),
so the first host needs one command and every other host one more. Everything
listens on loopback unless ``--listen`` names an address, and only over TLS
with the credentials given: a peer without a certificate from the same set
is refused at the handshake.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import sys

from cellbench.real import agents, credentials

DEFAULT_PORT = 8786
#: Agents a daemon runs at once (one thread each, started as needed).
DEFAULT_AGENTS = 512


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
        return host, int(port) if port is not None else None
    except ValueError:
        raise ValueError(
            f"--listen {text}: expected an IP address, optionally with :PORT"
        ) from None


def _url(host: str, port: int) -> str:
    return f"tls://[{host}]:{port}" if ":" in host else f"tls://{host}:{port}"


async def _serve(
    name: str,
    listen: str,
    scheduler: str | None,
    creds: str,
    agents_n: int,
) -> None:
    import dask
    from distributed import Scheduler, Worker

    sec = credentials.security(creds)
    host, port = parse_listen(listen)
    # Dask starts an HTTP server beside every scheduler and worker whatever `dashboard`
    # says (the scheduler's on port 8787 of the listening address), with pages about
    # the cluster and no authentication: here it serves nothing, on a loopback port.
    dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []})
    http = {"dashboard_address": "127.0.0.1:0"}
    if scheduler is None:
        async with Scheduler(
            host=host,
            port=DEFAULT_PORT if port is None else port,
            protocol="tls",
            security=sec,
            dashboard=False,
            **http,
        ) as s:
            async with Worker(
                s.address,
                name=name,
                nthreads=agents_n,
                security=sec,
                host=host,
                protocol="tls",
                **http,
            ) as w:
                _ready(name, s.address, w.address)
                await _until_stopped(w)
        return
    async with Worker(
        scheduler,
        name=name,
        nthreads=agents_n,
        security=sec,
        host=host,
        port=port,
        protocol="tls",
        **http,
    ) as w:
        _ready(name, scheduler, w.address)
        await _until_stopped(w)


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


def _ready(name: str, scheduler: str, worker: str) -> None:
    # One line a script (or a test) can wait for.
    print(
        f"cellbench daemon: host {name} ready; scheduler {scheduler}; worker {worker}",
        file=sys.stderr,
        flush=True,
    )


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
    credentials.security(creds)  # missing files: a one-line error before anything listens
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
    agents.LIMITS.update(
        max_duration_s=max_duration_s, max_rate_bps=max_rate_bps, allow=nets, realtime=realtime
    )
    if quiet:
        logging.getLogger("distributed").setLevel(logging.WARNING)
    asyncio.run(_serve(name, listen, scheduler, creds, agents_n))
