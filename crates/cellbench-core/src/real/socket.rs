//! Kernel sockets with their options set before `connect`/`listen`, where the
//! kernel reads them: TCP_MAXSEG is advertised in the SYN, SO_RCVBUF decides the
//! window scale, TCP_CONGESTION is taken at connect. `std::net` connects and
//! listens in one call, so the sockets are made here with `libc` and then
//! handed to `std::net` for reading and writing.

use std::io;
use std::mem;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::Protocol;

/// Options a connection's socket takes before it connects or listens.
#[derive(Debug, Clone, Default)]
pub struct SocketOptions {
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
    pub nodelay: bool,
    /// TCP_CONGESTION: a name from /proc/sys/net/ipv4/tcp_available_congestion_control.
    pub congestion: Option<String>,
    /// TCP_MAXSEG: the MSS this end advertises and sends with.
    pub mss: Option<u32>,
    /// TCP_WINDOW_CLAMP: the largest window this end advertises, whatever
    /// SO_RCVBUF's doubling and the kernel's autotuning would allow.
    pub window_clamp: Option<u32>,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn with_context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn setsockopt_bytes(fd: RawFd, level: i32, name: i32, value: &[u8]) -> io::Result<()> {
    // SAFETY: value points to value.len() readable bytes for the duration of the call.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    })
    .map(drop)
}

fn setsockopt_int(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    setsockopt_bytes(fd, level, name, &value.to_ne_bytes())
}

fn getsockopt_int(fd: RawFd, level: i32, name: i32) -> io::Result<i32> {
    let mut buf = [0u8; 4];
    getsockopt_bytes(fd, level, name, &mut buf)?;
    Ok(i32::from_ne_bytes(buf))
}

/// Fills `buf` with an option's value; returns how many bytes the kernel wrote
/// (older kernels write a shorter TCP_INFO).
pub fn getsockopt_bytes(fd: RawFd, level: i32, name: i32, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is writable for len bytes; the kernel writes at most len and updates it.
    check(unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr().cast(), &mut len) })?;
    Ok(len as usize)
}

/// A `SocketAddr` as the kernel's sockaddr.
fn raw_addr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is large and aligned enough for any sockaddr.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

fn new_socket(addr: &SocketAddr, protocol: Protocol) -> io::Result<OwnedFd> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    let ty = match protocol {
        Protocol::Tcp => libc::SOCK_STREAM,
        Protocol::Udp => libc::SOCK_DGRAM,
    };
    // SAFETY: plain system call; a non-negative result is a new descriptor we own.
    let fd = check(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd was just returned by socket() and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sets the options; a congestion control or MSS the kernel refuses is a note
/// (the connection runs with the kernel's default), not a failure.
fn apply(
    fd: RawFd,
    protocol: Protocol,
    o: &SocketOptions,
    notes: &mut Vec<String>,
) -> io::Result<()> {
    if let Some(n) = o.sndbuf {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, n as i32)
            .map_err(|e| with_context(e, &format!("SO_SNDBUF {n}")))?;
    }
    if let Some(n) = o.rcvbuf {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, n as i32)
            .map_err(|e| with_context(e, &format!("SO_RCVBUF {n}")))?;
    }
    if protocol == Protocol::Udp {
        return Ok(());
    }
    if o.nodelay {
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
            .map_err(|e| with_context(e, "TCP_NODELAY"))?;
    }
    if let Some(cc) = &o.congestion {
        if let Err(e) = setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_bytes())
        {
            notes.push(congestion_note(cc, &e, congestion(fd)));
        }
    }
    if let Some(mss) = o.mss {
        if let Err(e) = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss as i32) {
            // Linux takes 88 (TCP_MIN_MSS) up to 32767.
            notes.push(format!(
                "TCP_MAXSEG {mss} refused by the kernel ({e}); the MSS is the path's"
            ));
        }
    }
    if let Some(n) = o.window_clamp {
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, n as i32)
            .map_err(|e| with_context(e, &format!("TCP_WINDOW_CLAMP {n}")))?;
    }
    Ok(())
}

/// Why a congestion control was refused, in the kernel's terms, and what ran instead.
fn congestion_note(cc: &str, e: &io::Error, ran: Option<String>) -> String {
    let list = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let why = match e.raw_os_error() {
        // tcp_set_congestion_control: the module is not loaded and cannot be.
        Some(libc::ENOENT) => format!(
            "not available (module not loaded?); tcp_available_congestion_control: {}",
            list("tcp_available_congestion_control")
        ),
        // Loaded, but not allowed to unprivileged sockets.
        Some(libc::EPERM) => format!(
            "not permitted; tcp_allowed_congestion_control: {}",
            list("tcp_allowed_congestion_control")
        ),
        _ => e.to_string(),
    };
    let ran = ran.unwrap_or_else(|| "the default".into());
    format!("TCP_CONGESTION {cc} refused by the kernel ({why}); ran {ran}")
}

/// A note when the MSS in use is well below the one asked (the path's MTU is smaller);
/// the kernel's snd_mss leaves out TCP options (12 bytes of timestamps), hence the slack.
pub fn mss_note(asked: u32, snd_mss: u32) -> Option<String> {
    (snd_mss > 0 && snd_mss + 40 < asked).then(|| {
        format!("TCP_MAXSEG {asked}: the kernel sends {snd_mss}-byte segments (the path allows no more)")
    })
}

/// Put TCP_WINDOW_CLAMP back to `window`: Linux 6.x resets a connection's clamp
/// from its receive buffer whenever it re-measures the bytes-to-truesize ratio
/// of arriving segments (tcp_measure_rcv_mss), so a sink that must hold its
/// window sets it again after each read (a no-op while it still holds).
pub fn reclamp_window(fd: RawFd, window: u32) {
    let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, window as i32);
}

fn bind(fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
    let (sa, len) = raw_addr(addr);
    // SAFETY: sa holds a valid sockaddr of length len.
    check(unsafe { libc::bind(fd, (&sa as *const libc::sockaddr_storage).cast(), len) })
        .map(drop)
        .map_err(|e| with_context(e, &format!("bind {addr}")))
}

fn connect_fd(fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
    let (sa, len) = raw_addr(addr);
    // SAFETY: as in bind.
    check(unsafe { libc::connect(fd, (&sa as *const libc::sockaddr_storage).cast(), len) })
        .map(drop)
}

/// A TCP listener with the receive options set before `listen`, so accepted
/// connections inherit them (and the SYN-ACK's window scale follows SO_RCVBUF).
pub fn tcp_listen(addr: SocketAddr, o: &SocketOptions) -> io::Result<TcpListener> {
    let fd = new_socket(&addr, Protocol::Tcp)?;
    setsockopt_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    apply(fd.as_raw_fd(), Protocol::Tcp, o, &mut Vec::new())?;
    bind(fd.as_raw_fd(), &addr)?;
    // SAFETY: plain system call on our descriptor.
    check(unsafe { libc::listen(fd.as_raw_fd(), 16) })?;
    Ok(TcpListener::from(fd))
}

/// Connect with every option set first; a refused connection (the sink not yet
/// listening) is retried every 5 ms until `timeout`.
pub fn tcp_connect(
    local: Option<SocketAddr>,
    peer: SocketAddr,
    o: &SocketOptions,
    timeout: Duration,
    stopped: &dyn Fn() -> bool,
    notes: &mut Vec<String>,
) -> io::Result<TcpStream> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let fd = new_socket(&peer, Protocol::Tcp)?;
        // The notes of the socket that connects, not of every retry.
        notes.clear();
        apply(fd.as_raw_fd(), Protocol::Tcp, o, notes)?;
        if let Some(l) = local {
            bind(fd.as_raw_fd(), &l)?;
        }
        match connect_fd(fd.as_raw_fd(), &peer) {
            Ok(()) => return Ok(TcpStream::from(fd)),
            Err(e)
                if e.kind() == io::ErrorKind::ConnectionRefused
                    && std::time::Instant::now() < deadline
                    && !stopped() =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(with_context(e, &format!("connect {peer}"))),
        }
    }
}

/// A UDP socket bound to `local` (or any address), connected to `peer` when given.
pub fn udp_socket(
    local: Option<SocketAddr>,
    peer: Option<SocketAddr>,
    o: &SocketOptions,
) -> io::Result<UdpSocket> {
    let family = peer.or(local).expect("a UDP socket needs an address");
    let fd = new_socket(&family, Protocol::Udp)?;
    apply(fd.as_raw_fd(), Protocol::Udp, o, &mut Vec::new())?;
    if let Some(l) = local {
        bind(fd.as_raw_fd(), &l)?;
    }
    if let Some(p) = peer {
        connect_fd(fd.as_raw_fd(), &p).map_err(|e| with_context(e, &format!("connect {p}")))?;
    }
    Ok(UdpSocket::from(fd))
}

/// The buffer sizes the kernel granted (Linux doubles the asked value for its bookkeeping).
pub fn buffer_sizes(fd: RawFd) -> (Option<u32>, Option<u32>) {
    let get = |name| {
        getsockopt_int(fd, libc::SOL_SOCKET, name)
            .ok()
            .map(|v| v as u32)
    };
    (get(libc::SO_SNDBUF), get(libc::SO_RCVBUF))
}

/// The congestion control a TCP socket runs.
pub fn congestion(fd: RawFd) -> Option<String> {
    let mut buf = [0u8; 16];
    let n = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut buf).ok()?;
    let name = &buf[..n];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Wait until `fd` is readable or `timeout` passes; false on timeout.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    loop {
        // SAFETY: one valid pollfd.
        match check(unsafe { libc::poll(&mut pfd, 1, ms) }) {
            Ok(n) => return Ok(n > 0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A blocking read or write ran out its timeout (SO_RCVTIMEO/SO_SNDTIMEO) with nothing done.
pub(super) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
