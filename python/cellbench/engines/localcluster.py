"""A Dask cluster of separate processes on loopback, made of Dask's own commands
(``dask scheduler``, ``dask worker``), for the tests and ``scripts/bench_dask.py``:
each worker is a process of its own, so one can be killed mid-sweep as a machine
would be lost. Everything it starts it ends (``close``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cellbench

#: How long the scheduler and its workers may take to come up (s): an interpreter
#: importing Dask on a busy 2-core machine takes a few seconds.
START_TIMEOUT_S = 60


def _dask(command: str, *args: str, log: Path) -> subprocess.Popen:
    # The same interpreter, with this cellbench importable (the workers unpickle its
    # functions); Dask's commands as `python -m`, as the `dask` entry point runs them.
    env = dict(os.environ)
    here = str(Path(cellbench.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    module = f"distributed.cli.dask_{command}"
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


class LocalCluster:
    """``workers`` worker processes of ``threads`` threads each (no nanny: a killed
    worker stays dead) and their scheduler, on 127.0.0.1; with ``tls`` (the CA's file,
    a certificate and its key) they speak TLS only, as README's cluster across machines
    does."""

    def __init__(self, workers: int, threads: int = 1, tls: tuple[str, str, str] | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="cellbench-dask-"))
        self.log = self.dir / "cluster.log"
        self.workers: list[subprocess.Popen] = []
        self.tls = tls
        file = self.dir / "scheduler.json"
        secure: list[str] = []
        if tls is not None:
            secure = ["--tls-ca-file", tls[0], "--tls-cert", tls[1], "--tls-key", tls[2]]
        host = "127.0.0.1" if tls is None else "tls://127.0.0.1"
        scheduler = ["--host", host, "--port", "0", "--no-dashboard", "--scheduler-file"]
        self.scheduler = _dask("scheduler", *scheduler, str(file), *secure, log=self.log)
        try:
            self.address = self._wait_for(file)
            worker = ["--nthreads", str(threads), "--no-nanny", "--no-dashboard"]
            for i in range(workers):
                where = ["--host", "127.0.0.1", "--name", f"w{i}"]
                self.workers.append(
                    _dask("worker", self.address, *worker, *where, *secure, log=self.log)
                )
            self._wait_for_workers(workers)
        except BaseException:
            self.close()
            raise

    def _wait_for(self, file: Path) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler exited: {self.log.read_text()[-2000:]}")
            try:
                return json.loads(file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        raise RuntimeError(f"no dask scheduler within {START_TIMEOUT_S} s")

    def _wait_for_workers(self, n: int) -> None:
        from dask.distributed import Client
        from distributed.security import Security

        security = None
        if self.tls is not None:
            ca, cert, key = self.tls
            security = Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key)
        with Client(
            self.address, set_as_default=False, timeout=START_TIMEOUT_S, security=security
        ) as c:
            c.wait_for_workers(n, timeout=START_TIMEOUT_S)

    def kill_worker(self, i: int) -> None:
        """Worker ``i`` killed (SIGKILL), as a machine lost: no goodbye to the scheduler."""
        self.workers[i].kill()
        self.workers[i].wait()

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.terminate()
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self.dir.iterdir():
            f.unlink()
        self.dir.rmdir()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
