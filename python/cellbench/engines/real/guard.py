"""What a daemon lets through: its traffic agents with plain parameters, asked by
the parties allowed to ask, and nothing else.

The control channel is Dask's, which is built to run any Python a client sends on
every worker (``Client.run``, ``submit``, plugins, ``upload_file``) and to unpickle
whatever arrives. A daemon narrows it in four layers, each a check of its own (the
attempts they refuse are in tests/test_real_guard.py):

1. Who: every TLS peer's certificate names its role (``credentials``). The
   scheduler accepts the controller and the daemons; a daemon's worker accepts
   only the scheduler. A connection that has not finished both handshakes (TLS,
   then Dask's) in ``HANDSHAKE_TIMEOUT_S`` is closed, authenticated or not.
   Outgoing, a daemon talks only to the scheduler (and the scheduler to daemons).
2. What: each role may send only the operations the honest controller and
   daemons use (``SCHEDULER_OPS``, ``WORKER_OPS``: allow lists, where Dask's own
   ``blocked-handlers`` is a deny list); anything else closes the connection. A
   daemon speaks to the scheduler only as the worker of its own host name.
3. Decoding: the daemon's process unpickles only the classes and functions named
   in ``PICKLE_GLOBALS`` (pickle's documented way to restrict globals,
   ``Unpickler.find_class``): the task graph's containers and the agents' entry
   points. A pickle naming anything else (``os.system``, a cloudpickled lambda) is
   refused before any of it runs.
4. Execution: a task runs only if its function is an agent entry point
   (``agents.TASKS``) and its arguments are data, which the entry point then
   checks field by field (``agents.spec_refusal``).

The limits themselves (``--allow``, ``--max-rate``, ``--max-duration``) are the
agents' own, set once in the process (``agents.set_limits``).

The other way holds too: the controller's process unpickles nothing but
``CONTROLLER_PICKLE_GLOBALS`` (``restrict_unpickling``), so a daemon or scheduler
holding a stolen certificate cannot run code on the controller with a crafted
result, error or message; the agents' entry points answer in JSON bytes
(``agents.TASKS``), which the controller checks as data (``controller.decode``).
"""

from __future__ import annotations

import asyncio
import io
import logging
import pickle

from cellbench.engines.real import agents, credentials

logger = logging.getLogger("cellbench.daemon")

#: How long a connection may take over its TLS and Dask handshakes. Dask's own
#: connect timeout is 30 s (distributed.comm.timeouts.connect); a handshake on a LAN
#: takes milliseconds, so 10 s leaves a loaded host room and an idle peer little.
HANDSHAKE_TIMEOUT_S = 10.0

#: Operations the controller sends the scheduler: its client's, as
#: ``Client.submit``/``gather``/``scheduler.identity``/``close`` send them
#: (distributed.client), and ``broadcast`` for the stop (``cellbench-stop``).
SCHEDULER_OPS_CONTROLLER = frozenset(
    {
        "register-client",
        "update-graph",
        "client-desires-keys",
        "client-releases-keys",
        "heartbeat-client",
        "cancel-keys",
        "subscribe-topic",
        "unsubscribe-topic",
        "log-event",
        "close-client",
        "close-stream",
        "identity",
        "gather",
        "broadcast",
        "close",
    }
)
#: Operations a daemon's worker sends the scheduler (distributed.worker: its
#: registration, heartbeats, and its batched stream's task reports).
SCHEDULER_OPS_DAEMON = frozenset(
    {
        "register-worker",
        "heartbeat_worker",
        "unregister",
        "task-finished",
        "task-erred",
        "release-worker-data",
        "worker-status-change",
        "add-keys",
        "long-running",
        "reschedule",
        "missing-data",
        "request-refresh-who-has",
        "keep-alive",
        "log-event",
        "close-stream",
        "close",
    }
)
#: Operations the scheduler sends a daemon's worker: the results' fetch and the stop.
WORKER_OPS_SCHEDULER = frozenset({"get_data", "cellbench-stop", "close"})

#: The globals a daemon unpickles: what the controller's ``submit`` of an agent
#: pickles (a low-level graph expression of ``Task``s; dask._expr, dask._task_spec),
#: the shuffle extension's worker plugin the scheduler hands every worker, plain
#: containers, and the agents' entry points. Nothing here runs anything on its own.
PICKLE_GLOBALS = frozenset(
    {
        ("builtins", "list"),
        ("builtins", "dict"),
        ("builtins", "tuple"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("dask._expr", "Expr._reconstruct"),
        ("dask._expr", "LLGExpr"),
        ("dask._task_spec", "Task"),
        ("dask._task_spec", "DataNode"),
        ("dask._task_spec", "List"),
        ("dask._task_spec", "Dict"),
        ("dask._task_spec", "Tuple"),
        ("distributed.shuffle._worker_plugin", "ShuffleWorkerPlugin"),
    }
    | {("cellbench.engines.real.agents", f.__name__) for f in agents.TASKS}
)


#: The globals the controller unpickles: the type of a result (bytes of JSON, which
#: Dask's key-in-memory report and its "dask" serializer name by pickled type).
#: Everything else a daemon sends back is data (msgpack frames, JSON bytes).
CONTROLLER_PICKLE_GLOBALS = frozenset({("builtins", "bytes")})


class RefusedPickle(pickle.UnpicklingError):
    def __init__(self, module: str, name: str, who: str):
        super().__init__(f"refused: {module}.{name} is not something {who}")
        self.name = f"{module}.{name}"


class _Unpickler(pickle.Unpickler):
    allowed: frozenset = PICKLE_GLOBALS
    who = "a cellbench daemon runs"

    def find_class(self, module: str, name: str):
        if (module, name) in self.allowed:
            return super().find_class(module, name)
        raise RefusedPickle(module, name, self.who)


class _ControllerUnpickler(_Unpickler):
    allowed = CONTROLLER_PICKLE_GLOBALS
    who = "a cellbench controller loads (results cross as JSON data)"


def _loads(unpickler, data, fix_imports, encoding, errors, buffers):
    f = io.BytesIO(data)
    return unpickler(
        f, fix_imports=fix_imports, encoding=encoding, errors=errors, buffers=buffers
    ).load()


def restricted_loads(data, /, *, fix_imports=True, encoding="ASCII", errors="strict", buffers=()):
    """``pickle.loads`` that resolves only ``PICKLE_GLOBALS``."""
    return _loads(_Unpickler, data, fix_imports, encoding, errors, buffers)


def controller_loads(data, /, *, fix_imports=True, encoding="ASCII", errors="strict", buffers=()):
    """``pickle.loads`` that resolves only ``CONTROLLER_PICKLE_GLOBALS``."""
    return _loads(_ControllerUnpickler, data, fix_imports, encoding, errors, buffers)


def install_unpickler(loads=restricted_loads):
    """Every unpickling in this process through ``loads`` (a daemon's by default);
    returns the one it replaced. Dask's (distributed.protocol.pickle for messages,
    results and errors, the client's key-in-memory types and forwarded warnings, the
    scheduler's plugin and ``feed`` handlers) all call the ``pickle`` module's
    ``loads`` by that name."""
    import distributed.protocol.pickle as dpickle

    before = pickle.loads
    pickle.loads = loads
    assert dpickle.pickle is pickle
    return before


class Policy:
    """Which peers a server accepts and what each may ask."""

    def __init__(self, server, ops: dict[str, frozenset[str]]):
        self.server = server
        self.ops = ops

    def admit(self, who: tuple[str, str] | None) -> str | None:
        """Why a peer with this identity may not connect at all, or None."""
        if who is None:
            return "its certificate names no cellbench role"
        if who[0] not in self.ops:
            return f"a {who[0]} may not connect to a {type(self.server).__name__.lower()}"
        return None

    def refusal(self, who: tuple[str, str], msg) -> str | None:
        if msg == "OK":
            return None  # the acknowledgement get_data waits for after sending the data
        if not isinstance(msg, dict) or not isinstance(msg.get("op"), str):
            return "a message without an operation"
        op = msg["op"]
        if op not in self.ops[who[0]]:
            return f"operation {op!r} is not for a {who[0]}"
        if who[0] == "daemon":
            return self.daemon_refusal(who[1], op, msg)
        return None

    def daemon_refusal(self, name: str, op: str, msg: dict) -> str | None:
        """A daemon acts only as its own host's worker."""
        if op == "register-worker" and msg.get("name") != name:
            return f"the daemon of host {name} may not register as {msg.get('name')!r}"
        workers = getattr(self.server, "workers", {})
        ws = workers.get(msg.get("address")) if "address" in msg else None
        if ws is not None and ws.name != name:
            return f"the daemon of host {name} may not speak for host {ws.name}"
        return None

    def watch(self, comm, who: tuple[str, str]) -> None:
        """Check every message ``comm`` reads (requests, and a batched stream's lists)."""
        read = comm.read

        async def checked_read(*args, **kwargs):
            from distributed.comm import CommClosedError

            msg = await read(*args, **kwargs)
            for m in msg if isinstance(msg, list | tuple) else [msg]:
                why = self.refusal(who, m)
                if why:
                    logger.warning(
                        "cellbench daemon: refused %s %s at %s: %s; connection closed",
                        who[0],
                        who[1],
                        comm.peer_address,
                        why,
                    )
                    comm.abort()
                    raise CommClosedError(why)
            return msg

        comm.read = checked_read


def _identity(stream_or_comm) -> tuple[str, str] | None:
    sock = getattr(stream_or_comm, "socket", None)
    return credentials.peer_identity(sock.getpeercert() if sock is not None else None)


def install_listener(outgoing_roles: set[str]) -> None:
    """Dask's ``tls://`` transport in this process replaced by one that holds every
    connection to the handshake timeout and to its server's ``Policy``, and talks
    out only to peers of ``outgoing_roles`` (a comm backend, distributed.comm.registry)."""
    from distributed.comm import CommClosedError, registry
    from distributed.comm.tcp import TLSBackend, TLSConnector, TLSListener

    class GuardedListener(TLSListener):
        def _policy(self) -> Policy | None:
            return getattr(getattr(self.comm_handler, "__self__", None), "peer_policy", None)

        async def _prepare_stream(self, stream, address):
            try:
                await asyncio.wait_for(stream.wait_for_handshake(), HANDSHAKE_TIMEOUT_S)
            except (TimeoutError, OSError) as e:
                why = "no TLS handshake in time" if isinstance(e, TimeoutError) else str(e)
                logger.info("cellbench daemon: closed %s: %s", address, why)
                stream.close()
                return None
            policy = self._policy()
            why = policy.admit(_identity(stream)) if policy else None
            if why:
                logger.warning("cellbench daemon: refused %s: %s", address, why)
                stream.close()
                return None
            return stream

        async def on_connection(self, comm, handshake_overrides=None):
            try:
                await asyncio.wait_for(
                    super().on_connection(comm, handshake_overrides), HANDSHAKE_TIMEOUT_S
                )
            except TimeoutError:
                comm.abort()
                raise CommClosedError("no Dask handshake in time") from None
            policy = self._policy()
            if policy is not None:
                policy.watch(comm, _identity(comm.stream))

    class GuardedConnector(TLSConnector):
        async def connect(self, address, deserialize=True, **connection_args):
            comm = await super().connect(address, deserialize, **connection_args)
            who = _identity(comm.stream)
            if who is None or who[0] not in outgoing_roles:
                comm.abort()
                raise CommClosedError(
                    f"{address} is not a cellbench {' or '.join(sorted(outgoing_roles))} "
                    f"(its certificate: {who})"
                )
            return comm

    class GuardedBackend(TLSBackend):
        _listener_class = GuardedListener
        _connector_class = GuardedConnector

    registry.backends["tls"] = GuardedBackend()


def scheduler_class():
    """Dask's scheduler, accepting the controller and the daemons, each for its own part."""
    from distributed import Scheduler

    class DaemonScheduler(Scheduler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.peer_policy = Policy(
                self, {"controller": SCHEDULER_OPS_CONTROLLER, "daemon": SCHEDULER_OPS_DAEMON}
            )

    return DaemonScheduler


def worker_class():
    """Dask's worker, taking orders only from the scheduler and running only agents."""
    from dask._task_spec import Task
    from distributed import Worker

    class DaemonWorker(Worker):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.peer_policy = Policy(self, {"scheduler": WORKER_OPS_SCHEDULER})
            # The stop of a controller's run (Ctrl-C), in place of Client.run.
            self.handlers["cellbench-stop"] = self.stop_group

        def stop_group(self, group: str) -> None:
            if isinstance(group, str):
                agents.stop(group)

        async def execute(self, key, *, stimulus_id):
            ts = self.state.tasks.get(key)
            if ts is not None and ts.run_spec is not None:
                why = agents.task_refusal(ts.run_spec)
                if why:
                    logger.warning("cellbench daemon: refused task %r: %s", key, why)
                    ts.run_spec = Task(key, agents.refuse, why)
            return await super().execute(key, stimulus_id=stimulus_id)

    return DaemonWorker
