"""The emulated hosts: one network namespace each, holding a TUN device the emulator
opened, its address and the testbed's kernel TCP settings. Every namespace is made
and removed here, on every exit path; its name carries this process's id, so one a
killed controller left behind is removed by the next run (``sweep_orphans``).

The namespaces have no link but their TUN device (and loopback): test traffic cannot
leave them, whatever address the testbed gives a host.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Callable, TypeVar

from cellbench.errors import UsageError
from cellbench.experiment.testbed.keys import KERNEL_SYSCTLS

#: Every namespace this engine makes is called PREFIX<pid>x<host index>.
PREFIX = "cbemu"
#: The TUN device's name inside every namespace.
TUN = "atm0"
#: The TUN device's transmit queue, packets: Linux's own ATM IP interface's (CLIP,
#: ``net/atm/clip.c`` ``clip_setup``: ``tx_queue_len = 100``), the queue a Linux host
#: holds packets in while its ATM adapter has no room (``clip_start_xmit`` stops the
#: device's queue then). The emulator reads a TUN device only while the modelled
#: adapter's interface queue has room (``emu/ifq.rs``), so this is the host's queue in
#: front of it, and the kernel drops beyond it (the device's ``tx_dropped``). TUN's
#: own default (500, ``TUN_READQ_SIZE`` in ``drivers/net/tun.c``) is a software
#: device's, no ATM host's.
TXQUEUELEN = 100
#: Where ``ip netns add`` puts a namespace's handle.
NETNS_DIR = Path("/run/netns")
#: CAP_NET_ADMIN's bit in /proc/self/status CapEff.
CAP_NET_ADMIN = 12

T = TypeVar("T")


def check_privileges() -> None:
    """Before anything is made: root or CAP_NET_ADMIN, /dev/net/tun and iproute2, each
    missing one named in a one-line error (exit 2)."""
    missing = []
    if not _has_net_admin():
        missing.append("root or CAP_NET_ADMIN (run as root)")
    if not os.path.exists("/dev/net/tun"):
        missing.append("/dev/net/tun (modprobe tun)")
    if shutil.which("ip") is None:
        missing.append("the ip command (Debian's iproute2)")
    if missing:
        raise UsageError(f"--engine emu needs {' and '.join(missing)}")


def _has_net_admin() -> bool:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def ip(*args: str) -> None:
    """Run ``ip ARGS``; its complaint, if any, as an error naming the command."""
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise OSError(f"ip {' '.join(args)}: {r.stderr.strip() or f'exit {r.returncode}'}")


def in_netns(path: str, work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own that has entered the namespace at ``path``
    (only that thread moves); its result or its exception."""
    from cellbench import _native

    out: dict = {}

    def body() -> None:
        try:
            _native.emu_setns(path)
            out["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller as is
            out["error"] = e

    t = threading.Thread(target=body, name="cellbench-emu-netns", daemon=True)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def cpu_layout() -> tuple[int | None, str | None]:
    """The CPU the emulator's loop keeps to and the mask (``rps_cpus``) of the CPUs the
    hosts' kernels take their input on: the last CPU this process may use, and all the
    others. A TUN write then only queues the datagram for another CPU (receive packet
    steering) rather than running the receiver's IP and TCP input, and the ACK it
    sends, on the loop's thread while the next cells fall due: at OC-12c that took the
    p99 lateness from about 19 µs to 1-3 µs on a loaded 2-core machine. With one CPU,
    neither: (None, None)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    mask = sum(1 << c for c in cpus[:-1])
    # sysfs writes a CPU mask as comma-separated 32-bit hex words.
    words = []
    while True:
        words.append(f"{mask & 0xFFFFFFFF:08x}")
        mask >>= 32
        if not mask:
            break
    return cpus[-1], ",".join(reversed(words))


def sweep_orphans() -> None:
    """Remove namespaces a killed cellbench left (its pid no longer runs)."""
    if not NETNS_DIR.is_dir():
        return
    for p in NETNS_DIR.iterdir():
        m = re.fullmatch(rf"{PREFIX}(\d+)x\d+", p.name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            subprocess.run(["ip", "netns", "del", p.name], capture_output=True)


class Namespaces:
    """The run's namespaces, made on entering and removed on leaving, whatever ended it."""

    def __init__(self, n: int):
        self.names = [f"{PREFIX}{os.getpid()}x{i}" for i in range(n)]
        self.made: list[str] = []

    def path(self, i: int) -> str:
        return str(NETNS_DIR / self.names[i])

    def __enter__(self) -> Namespaces:
        sweep_orphans()
        try:
            for name in self.names:
                ip("netns", "add", name)
                self.made.append(name)
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        # Deleting a namespace removes its devices; the TUN devices also go when the
        # emulator closes their descriptors.
        while self.made:
            subprocess.run(["ip", "netns", "del", self.made.pop()], capture_output=True)

    def configure(self, i: int, address: str, mtu: int, kernel: dict) -> None:
        """Host i's TUN up with its MTU and address, every other address through it;
        then its kernel settings."""
        name = self.names[i]
        # No IPv6: the kernel's own router solicitations would only be dropped.
        self.sysctls(
            i, {"net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1}
        )
        ip("-n", name, "link", "set", "lo", "up")
        ip("-n", name, "link", "set", TUN, "mtu", str(mtu), "txqueuelen", str(TXQUEUELEN), "up")
        ip("-n", name, "addr", "add", f"{address}/32", "dev", TUN)
        ip("-n", name, "route", "add", "default", "dev", TUN)
        self.sysctls(i, kernel_sysctls(kernel))

    def tx_dropped(self, i: int) -> int:
        """The packets host i's kernel dropped at its TUN device's transmit queue
        (``ip -s link``'s TX dropped, the device's ``tx_dropped``)."""
        r = subprocess.run(
            ["ip", "-n", self.names[i], "-s", "-j", "link", "show", TUN],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise OSError(f"ip -n {self.names[i]} -s link show {TUN}: {r.stderr.strip()}")
        (link,) = json.loads(r.stdout)
        return int(link["stats64"]["tx"]["dropped"])

    def tcp_timeouts(self, i: int) -> int | None:
        """The retransmission timeouts host i's kernel counted (TcpExt TCPTimeouts of
        /proc/net/netstat: its namespace's, every connection's, from 0 when the
        namespace was made), or None where the kernel gives none."""
        text = in_netns(self.path(i), lambda: Path("/proc/thread-self/net/netstat").read_text())
        return netstat_counter(text, "TcpExt", "TCPTimeouts")

    def steer_input(self, i: int, rps_cpus: str) -> None:
        """Host i's TUN input processed on the CPUs of mask ``rps_cpus`` (receive
        packet steering, see ``cpu_layout``). Only the timing depends on it, and the
        lateness measures that: a kernel without RPS is left as it is. The device's
        sysfs is its namespace's, which ``ip netns exec`` mounts."""
        path = f"/sys/class/net/{TUN}/queues/rx-0/rps_cpus"
        subprocess.run(
            ["ip", "netns", "exec", self.names[i], "tee", path],
            input=rps_cpus,
            capture_output=True,
            text=True,
        )

    def sysctls(self, i: int, values: dict[str, object]) -> None:
        """Write sysctls in namespace i (``/proc/sys/net`` is the opener's namespace's)."""

        def write() -> None:
            for key, v in values.items():
                path = Path("/proc/sys") / key.replace(".", "/")
                try:
                    path.write_text(f"{v}\n")
                except OSError as e:
                    raise UsageError(
                        f"cannot set {key} = {v} in the emulated host's kernel: {e.strerror}"
                    ) from None

        if values:
            in_netns(self.path(i), write)


def kernel_sysctls(kernel: dict) -> dict[str, object]:
    """A host's ``kernel_*`` settings as sysctls. A buffer limit is the third (largest)
    value of tcp_rmem/tcp_wmem; the default (second) is kept at or below it. Not
    ``kernel_cc``: a namespace's default may only be one of the machine's
    tcp_allowed_congestion_control, so the sender's socket takes it (TCP_CONGESTION)."""
    out: dict[str, object] = {}
    for key, v in kernel.items():
        if key == "kernel_cc":
            continue
        sysctl, kind = KERNEL_SYSCTLS[key]
        if kind == "bytes":
            assert isinstance(v, int)
            default = min(131072 if key == "kernel_rmem" else 16384, v)
            out[sysctl] = f"4096 {default} {v}"
        else:
            out[sysctl] = v
    return out


def netstat_counter(text: str, group: str, name: str) -> int | None:
    """One counter of /proc/net/netstat's text (each group a line of names and a line
    of values, both led by ``group:``), or None without it."""
    rows = [line.split() for line in text.splitlines() if line.startswith(f"{group}:")]
    for names, values in zip(rows[::2], rows[1::2]):
        if name in names and len(values) == len(names):
            try:
                return int(values[names.index(name)])
            except ValueError:
                return None
    return None


def tcp_counts(path: str, peer: str) -> tuple[int, int] | None:
    """The TCP socket towards ``peer`` (ADDRESS:PORT) in the namespace at ``path``: bytes
    the receiver acknowledged and segments retransmitted (``ss -ti``: TCP_INFO's
    tcpi_bytes_acked, tcpi_total_retrans), or None when there is none (yet)."""
    out = subprocess.run(
        ["ip", "netns", "exec", Path(path).name, "ss", "-tinH", "dst", peer],
        capture_output=True,
        text=True,
    ).stdout
    acked = re.search(r"bytes_acked:(\d+)", out)
    if acked is None:
        return None
    retrans = re.search(r"retrans:\d+/(\d+)", out)
    # tcpi_bytes_acked counts the SYN's sequence number too (ss shows 1 on a connection
    # that sent nothing): the data is one less.
    return max(0, int(acked.group(1)) - 1), int(retrans.group(1)) if retrans else 0
