//! TUN devices and network namespaces, by the kernel's own interface: an
//! `ioctl(TUNSETIFF)` on `/dev/net/tun` and `setns(CLONE_NEWNET)`. Both are a
//! few lines over `libc` (already a dependency for the real engine's sockets),
//! so no TUN crate is taken on for them.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `_IOW('T', 202, int)` in `<linux/if_tun.h>`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
/// No 4-byte packet-information header: each read is one bare IP datagram.
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (the rest
/// of the union unused).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _union_rest: [u8; 22],
}

/// Why an emulator cannot start: what is missing, in one line.
#[derive(Debug)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

fn os_error(what: &str, e: io::Error) -> SetupError {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => ": needs root (or CAP_NET_ADMIN)",
        Some(libc::ENOENT) | Some(libc::ENODEV) => ": not on this machine",
        _ => "",
    };
    SetupError(format!("{what}: {e}{hint}"))
}

/// Move the calling thread into the network namespace at `path`
/// (`/run/netns/NAME`, as `ip netns add` makes it). Only this thread moves:
/// sockets it opens afterwards belong to that namespace.
pub fn enter_netns(path: &str) -> Result<(), SetupError> {
    let ns = File::open(path).map_err(|e| os_error(&format!("network namespace {path}"), e))?;
    // SAFETY: a valid open descriptor; setns only reads it.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(os_error(
            &format!("setns({path})"),
            io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// A TUN device: reads and writes whole IP datagrams, non-blocking. The device
/// lives as long as this descriptor (it is not made persistent), so closing
/// it, or the process dying, removes it.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

impl Tun {
    /// Create TUN device `name` inside the network namespace at `netns` (on a
    /// thread of its own that enters it, so the caller's namespace is untouched).
    pub fn open_in(netns: &str, name: &str) -> Result<Tun, SetupError> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(SetupError(format!(
                "TUN name {name:?}: 1 to {} characters",
                libc::IFNAMSIZ - 1
            )));
        }
        let (ns, nm) = (netns.to_string(), name.to_string());
        std::thread::spawn(move || {
            enter_netns(&ns)?;
            Tun::open(&nm)
        })
        .join()
        .map_err(|_| SetupError("the TUN-opening thread panicked".into()))?
    }

    fn open(name: &str) -> Result<Tun, SetupError> {
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: a NUL-terminated path; the result is checked.
        let raw = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(os_error("/dev/net/tun", io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _union_rest: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which IfReq lays out.
        if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req as *mut IfReq) } != 0 {
            return Err(os_error(
                &format!("TUN device {name}"),
                io::Error::last_os_error(),
            ));
        }
        Ok(Tun {
            fd,
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// One datagram into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(self.raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Hand one datagram to the kernel as if it arrived on this interface.
    pub fn send(&self, datagram: &[u8]) -> io::Result<()> {
        // SAFETY: `datagram` is valid for its length.
        let n = unsafe { libc::write(self.raw_fd(), datagram.as_ptr().cast(), datagram.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
