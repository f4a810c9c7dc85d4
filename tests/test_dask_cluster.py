"""Sweeps on a real Dask cluster (issue 32): a scheduler and worker processes on
loopback, started with Dask's own commands by the test and ended by it
(``localcluster``). Runs go in batches and come back as Arrow, and the stored result
is the bytes of a local run at any batch size; a worker killed mid-sweep costs only
its batch; a controller killed mid-sweep resumes as locally."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cellbench
from cellbench.cli import main
from cellbench.engines import cluster
from cellbench.engines.loop import execute_plan
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan

pytest.importorskip("dask.distributed")
from cellbench.engines.localcluster import LocalCluster  # noqa: E402

# Real scheduler and worker processes, killed mid-sweep by the tests: they run after the
# parallel run, by themselves (tests/conftest.py), so a worker killed "mid-sweep" is one.
pytestmark = pytest.mark.alone

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LAN = EXAMPLES / "lan-buffers.netspec"
SMALL = ["snd=16K,32K,48K", "rcv=16K,32K", "nbytes=2M"]


def cloudpickle_plan() -> bytes:
    """A shipment of a small plan, as ``cluster.drive`` sends workers."""
    import cloudpickle

    from cellbench.engines.sim import SimEngine

    plan = make_plan(LAN, sets=SMALL, replications=1)
    return cloudpickle.dumps((plan, SimEngine(), results.MemoryResult(plan.meta()).columns))


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def two_workers():
    with LocalCluster(2) as c:
        yield c


@pytest.fixture
def batch(monkeypatch):
    def fix(runs: int | None) -> None:
        monkeypatch.setattr(cluster, "FIXED_BATCH_RUNS", runs)

    return fix


def test_batch_size_from_the_measured_cost():
    assert cluster.batch_runs(None, 1000, 2) == cluster.FIRST_BATCH_RUNS
    # 10 ms a run: a second is 100 runs, while plenty remain ...
    assert cluster.batch_runs(0.010, 10_000, 2) == 100
    # ... and toward the end what is left, over two batches a thread ...
    assert cluster.batch_runs(0.010, 100, 2) == 25
    # ... but not under a tenth of a second of runs.
    assert cluster.batch_runs(0.010, 20, 2) == 10
    assert cluster.batch_runs(0.010, 1, 8) == 10  # (a batch has at most what is left)
    assert cluster.batch_runs(1e-9, 10**9, 1) == cluster.MAX_BATCH_RUNS
    assert cluster.batch_runs(30.0, 10**6, 4) == 1


def test_stored_bytes_are_a_local_runs_at_any_batch_size(tmp_path, two_workers, batch):
    cellbench.run(LAN, set=SMALL, replications=3, out=tmp_path / "local", workers=1)
    local = files(tmp_path / "local")
    assert any(k.startswith("runs/part-") for k in local)
    for runs in (1, 4, 7, None):
        batch(runs)
        out = tmp_path / f"batch{runs}"
        cellbench.run(LAN, set=SMALL, replications=3, out=out, dask=two_workers.address)
        assert files(out) == local, f"batches of {runs} runs"
    # In memory (no --out) the same rows.
    batch(5)
    mem = cellbench.run(LAN, set=SMALL, replications=3, dask=two_workers.address)
    assert mem.to_pandas().equals(results.load(tmp_path / "local").to_pandas())


def test_a_worker_killed_mid_sweep_costs_only_its_batch(tmp_path, capsys, batch):
    args = {"set": ["nbytes=8M"], "replications": 1}  # 100 runs
    cellbench.run(LAN, **args, out=tmp_path / "local", workers=1)
    batch(2)
    out = tmp_path / "dask"
    journal = out / results.INCOMING / "journal"
    killed: list[bool] = []
    with LocalCluster(2) as c:

        def kill_when_runs_are_stored() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if journal.is_file() and journal.stat().st_size > 0:
                    c.kill_worker(0)
                    # Mid-sweep: the result was not complete when the worker died.
                    killed.append(results.stored_runs(out) < 100)
                    return
                time.sleep(0.005)

        watcher = threading.Thread(target=kill_when_runs_are_stored)
        watcher.start()
        try:
            cellbench.run(LAN, **args, out=out, dask=c.address)
        finally:
            watcher.join()
        assert c.workers[0].returncode == -signal.SIGKILL
    assert killed == [True]
    err = capsys.readouterr().err
    assert "cellbench: dask: 1 worker(s) lost mid-sweep (tcp://127.0.0.1:" in err
    held = int(err.split("the ")[1].split(" batch(es)")[0])
    assert 1 <= held <= 2 * cluster.WINDOW_PER_THREAD
    assert files(out) == files(tmp_path / "local")


def test_resume_after_the_controller_is_killed(tmp_path, two_workers):
    sets = sum((["--set", s] for s in ["nbytes=16M"]), [])
    common = ["run", str(LAN), *sets, "--replications", "2"]
    assert main([*common, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    out = tmp_path / "dask"
    env = dict(os.environ, PYTHONPATH=str(Path(cellbench.__file__).parent.parent))
    controller = subprocess.Popen(
        [sys.executable, "-m", "cellbench", *common, "--out", str(out)]
        + ["--dask", two_workers.address],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = out / results.INCOMING / "journal"
    try:
        deadline = time.monotonic() + 120
        while not (journal.is_file() and journal.stat().st_size > 0):
            assert controller.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
    finally:
        controller.kill()
        controller.wait()
    assert results.read_meta(out)["complete"] is False
    assert main([*common, "--out", str(out), "--resume", "--dask", two_workers.address]) == 0
    assert files(out) == files(tmp_path / "local")


def test_a_batch_line_cut_short_runs_again(tmp_path):
    """A kill in the middle of a batch's journal line: that batch runs again, the one
    before it is recovered, and the finished result is a local run's bytes."""
    import cloudpickle

    from cellbench.engines.sim import SimEngine

    cellbench.run(LAN, set=SMALL, replications=2, out=tmp_path / "local", workers=1)
    plan = make_plan(LAN, sets=SMALL, replications=2)
    out = tmp_path / "r"
    store = results.ResultDir(out, plan.meta(), resume=False)
    shipment = cloudpickle.dumps((plan, SimEngine(), store.columns))
    for runs in ([0, 1, 2], [3, 4, 5]):  # as workers return them
        done = cluster.run_batch("test", shipment, runs)
        assert done["runs"] == runs and done["failed"] is None
        store.write_batch(done["runs"], done["arrow"])
    journal = out / results.INCOMING / "journal"
    os.close(store._fd)  # the controller killed ...
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 2
    journal.write_bytes(lines[0] + lines[1][:-100])  # ... while it wrote the second line
    resumed = results.ResultDir(out, plan.meta(), resume=True)
    assert resumed.repairs == ["3 finished run(s) recovered from the journal"]
    assert [r for r in range(plan.runs_total) if r in resumed.done()] == [0, 1, 2]
    execute_plan(plan, resumed, SimEngine(), workers=1)
    assert files(out) == files(tmp_path / "local")


def _tls_files(d: Path) -> tuple[str, str, str]:
    """A CA and one certificate it signed (for 127.0.0.1), as PEM files: what README's
    cluster across machines uses (there one per host, from the site's own CA)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    span = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(hours=1))

    def cert(name: str, key, issuer, issuer_key, ca: bool):
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        b = x509.CertificateBuilder().subject_name(subject).issuer_name(issuer or subject)
        b = b.public_key(key.public_key()).serial_number(x509.random_serial_number())
        b = b.not_valid_before(span[0]).not_valid_after(span[1])
        b = b.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        if not ca:
            import ipaddress

            ip = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
            b = b.add_extension(x509.SubjectAlternativeName([ip]), critical=False)
        return b.sign(issuer_key or key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = cert("cellbench test CA", ca_key, None, None, True)
    leaf = cert("127.0.0.1", key, ca.subject, ca_key, False)
    pem = serialization.Encoding.PEM
    files = (d / "ca.pem", d / "node.pem", d / "node-key.pem")
    files[0].write_bytes(ca.public_bytes(pem))
    files[1].write_bytes(leaf.public_bytes(pem))
    files[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return tuple(str(f) for f in files)  # type: ignore[return-value]


def test_a_tls_cluster_with_the_certificates_dasks_config_names(tmp_path):
    """README's `--dask tls://...`: the controller's certificate from Dask's own
    configuration (the environment), nothing of cellbench's; without it, refused."""
    pytest.importorskip("cryptography")
    ca, cert, key = _tls_files(tmp_path)
    common = ["run", str(LAN), *sum((["--set", s] for s in SMALL), []), "--replications", "1"]
    assert main([*common, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    env = dict(os.environ, PYTHONPATH=str(Path(cellbench.__file__).parent.parent))
    env |= {
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": ca,
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": cert,
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": key,
    }
    with LocalCluster(1, tls=(ca, cert, key)) as c:
        assert c.address.startswith("tls://127.0.0.1:")
        cmd = [sys.executable, "-m", "cellbench", *common, "--dask", c.address]
        done = subprocess.run(
            [*cmd, "--out", str(tmp_path / "tls")], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        bare = {k: v for k, v in env.items() if not k.startswith("DASK_DISTRIBUTED__COMM__TLS")}
        refused = subprocess.run(
            [*cmd, "--out", str(tmp_path / "bare")], env=bare, capture_output=True, text=True
        )
    assert files(tmp_path / "tls") == files(tmp_path / "local")
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"cellbench: error: --dask {c.address}: no Dask scheduler")
    assert refused.stderr.count("\n") == 1
    assert not (tmp_path / "bare").exists()


def test_ctrl_c_mid_sweep_keeps_every_finished_batch(tmp_path, two_workers, batch):
    from cellbench.errors import Interrupted

    args = {"set": ["nbytes=8M"], "replications": 1}
    cellbench.run(LAN, **args, out=tmp_path / "local", workers=1)
    batch(2)
    out = tmp_path / "dask"
    journal = out / results.INCOMING / "journal"

    def interrupt_when_runs_are_stored() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if journal.is_file() and journal.stat().st_size > 0:
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=interrupt_when_runs_are_stored)
    watcher.start()
    try:
        with pytest.raises(Interrupted):
            cellbench.run(LAN, **args, out=out, dask=two_workers.address)
    finally:
        watcher.join()
    stored = results.stored_runs(out)
    assert 0 < stored < 100 and not (out / results.INCOMING / "journal").exists()
    # This process's simulations run again after the sweep stopped.
    assert cluster.run_batch("again", cloudpickle_plan(), [0])["failed"] is None
    cellbench.run(LAN, **args, out=out, resume=True, dask=two_workers.address)
    assert files(out) == files(tmp_path / "local")


@pytest.fixture(scope="module")
def batch_journal(tmp_path_factory):
    """A store's directory whose journal holds one batch's line (runs 0..2)."""
    import cloudpickle

    from cellbench.engines.sim import SimEngine

    plan = make_plan(LAN, sets=SMALL, replications=2)
    out = tmp_path_factory.mktemp("journal") / "r"
    store = results.ResultDir(out, plan.meta(), resume=False)
    shipment = cloudpickle.dumps((plan, SimEngine(), store.columns))
    done = cluster.run_batch("test", shipment, [0, 1, 2])
    store.write_batch(done["runs"], done["arrow"])
    os.close(store._fd)
    line = (out / results.INCOMING / "journal").read_bytes()
    return plan, out, line


@given(cut=st.integers(min_value=0), junk=st.binary(max_size=64))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_batch_line_torn_anywhere_never_fails_resume(batch_journal, cut, junk):
    """Whatever a kill leaves of a batch's line (any prefix, then anything), --resume
    recovers the whole batch or none of it, and never fails."""
    plan, out, line = batch_journal
    torn = line[: cut % (len(line) + 1)]
    (out / results.INCOMING).mkdir(exist_ok=True)
    (out / results.INCOMING / "journal").write_bytes(torn + (b"" if torn == line else junk))
    store = results.ResultDir(out, plan.meta(), resume=True)
    got = [r for r in range(plan.runs_total) if r in store.done()]
    store.close()  # (puts them in a part: the next example starts from none again)
    for t in results.TABLES:
        for f in (out / t).glob("*.parquet"):
            f.unlink()
    (out / "manifest.json").unlink()
    assert got in ([0, 1, 2], [])
    assert got == [0, 1, 2] or torn != line


def test_the_window_follows_the_clusters_threads(two_workers, batch, monkeypatch):
    """Batches in flight: WINDOW_PER_THREAD per worker thread the scheduler reports."""
    batch(1)
    seen: list[int] = []
    asked = cluster._Cluster.threads

    def threads(self) -> int:
        n = asked(self)
        seen.append(n)
        return n

    monkeypatch.setattr(cluster._Cluster, "threads", threads)
    plan = make_plan(LAN, sets=SMALL, replications=2)
    report = execute_plan(
        plan, results.MemoryResult(plan.meta()), SimEngine(), dask=two_workers.address
    )
    assert set(seen) == {2} and report.threads == 2
    assert report.most_in_flight == cluster.WINDOW_PER_THREAD * 2
    assert report.batches == report.runs == plan.runs_total
    assert 0 < report.run_cost_s < report.wall_s
