//! The daemon's own limits, held by the agents themselves.
//!
//! `cellbench daemon` sets them once in its process, from its command line, before
//! it accepts any peer ([`set_process_limits`]); from then on every source and sink
//! in the process obeys them whatever its spec says, so no call path (a spec with
//! other fields, an agent called some other way) can go beyond them:
//!
//! - a source sends only to an address inside the allow list;
//! - no agent runs longer than `max_duration_s` (a sink waits at most that and
//!   [`SINK_GRACE`] more);
//! - all the process's sources together stay under `max_rate_bps`: every write
//!   first reserves its bytes from one [`RateCap`] shared by every sender.
//!
//! A process that never sets them (the emulator, a test) has none of these.

use serde::Deserialize;
use std::net::IpAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::AgentError;

/// How much longer than the longest transfer a sink waits for its source (the
/// controller gives a TCP sink 30 s of drain after a timed stream: this is twice that).
pub const SINK_GRACE: Duration = Duration::from_secs(60);

/// The longest `max_duration_s` a daemon takes: 30 days. An assumption (no paper runs
/// a transfer for more than minutes; 000 and 004 measure for seconds): far beyond any
/// measurement, and far below where `Instant + Duration` overflows (which panicked at
/// `--max-duration 1e300`).
pub const MAX_DURATION_LIMIT_S: f64 = 30.0 * 86_400.0;
/// The lowest `max_rate_bps` a daemon takes: 1 kb/s. An assumption: below any link of
/// the studies by six orders of magnitude, and it keeps one write's time at the cap
/// (`RateCap::time_of`, at most 2^32 bytes: some 400 days) a representable `Duration`.
pub const MIN_RATE_LIMIT_BPS: f64 = 1e3;

/// An address and its prefix length (`10.1.0.0/24`; a bare address is a /32 or /128).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    pub fn parse(text: &str) -> Result<Network, AgentError> {
        let bad = || AgentError(format!("{text:?}: expected an address or ADDRESS/PREFIX"));
        let (a, p) = text
            .split_once('/')
            .map_or((text, None), |(a, p)| (a, Some(p)));
        let addr: IpAddr = a.parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            None => max,
            Some(p) => p.parse::<u8>().ok().filter(|&p| p <= max).ok_or_else(bad)?,
        };
        Ok(Network { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = |a: IpAddr| match a {
            IpAddr::V4(v) => (u128::from(u32::from(v)) << 96, 32),
            IpAddr::V6(v) => (u128::from(v), 128),
        };
        let ((net, n_len), (ip, ip_len)) = (bits(self.addr), bits(ip));
        if n_len != ip_len {
            return false;
        }
        let mask = if self.prefix == 0 {
            0
        } else {
            u128::MAX << (128 - u32::from(self.prefix))
        };
        net & mask == ip & mask
    }
}

/// The limits as the daemon's command line gives them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Networks a source may send to (`10.1.0.0/24`, `::1/128`).
    pub allow: Vec<String>,
    pub max_duration_s: f64,
    pub max_rate_bps: f64,
    /// Whether a pacer may run at a real-time priority (pacer.rs).
    pub realtime: bool,
}

/// A process's limits, parsed, with the rate cap all its sources share.
pub struct Limits {
    pub allow: Vec<Network>,
    pub max_duration: Duration,
    pub realtime: bool,
    pub cap: RateCap,
}

impl Limits {
    pub fn new(spec: &LimitsSpec) -> Result<Limits, AgentError> {
        if !(spec.max_duration_s > 0.0 && spec.max_duration_s <= MAX_DURATION_LIMIT_S) {
            return Err(AgentError(format!(
                "max_duration_s {:?}: expected a number of seconds > 0 and at most \
                 {MAX_DURATION_LIMIT_S} (30 days)",
                spec.max_duration_s
            )));
        }
        if !(spec.max_rate_bps >= MIN_RATE_LIMIT_BPS && spec.max_rate_bps.is_finite()) {
            return Err(AgentError(format!(
                "max_rate_bps {:?}: expected a finite rate of at least {MIN_RATE_LIMIT_BPS} b/s",
                spec.max_rate_bps
            )));
        }
        Ok(Limits {
            allow: spec
                .allow
                .iter()
                .map(|n| Network::parse(n))
                .collect::<Result<_, _>>()?,
            max_duration: Duration::from_secs_f64(spec.max_duration_s),
            realtime: spec.realtime,
            cap: RateCap::new(spec.max_rate_bps),
        })
    }

    /// Why a source may not send to `ip`, or None.
    pub fn refuse_destination(&self, ip: IpAddr) -> Option<String> {
        (!self.allow.iter().any(|n| n.contains(ip))).then(|| {
            format!("refused: destination {ip} is not in the daemon's allow list (--allow)")
        })
    }
}

static PROCESS: OnceLock<Limits> = OnceLock::new();

/// Set this process's limits, once: a second call is an error (they cannot be
/// loosened, or changed at all, once set).
pub fn set_process_limits(spec: &LimitsSpec) -> Result<(), AgentError> {
    let limits = Limits::new(spec)?;
    PROCESS
        .set(limits)
        .map_err(|_| AgentError("this process's limits are set already (once only)".into()))
}

/// This process's limits, if it set any.
pub fn process_limits() -> Option<&'static Limits> {
    PROCESS.get()
}

/// A rate cap shared by any number of senders: a GCRA (ITU-T I.371's virtual
/// scheduling algorithm) used as a shaper rather than a policer. Each write reserves
/// its bytes, advancing the cap's theoretical arrival time (TAT) by their time at the
/// cap, T = len x 8 / rate, and may start once TAT - `tolerance` has come:
///
///   TAT <- max(now - credit, TAT) + T,   start at max(now, TAT - tolerance)
///
/// The credit is one block's time (T), or none for a sender's first write (`fresh`).
/// With no tolerance every write starts at least T after the previous write of any
/// sender started, and a sender's first write T after it asked: so the bytes of a
/// transfer (or of all at once), counted from its first reservation to the start of
/// its last write, never exceed the rate, however short. A sender slower than the cap
/// (its write took longer than T) finds TAT behind `now - T` and waits for nothing.
pub struct RateCap {
    rate_bps: f64,
    tat: Mutex<Option<Instant>>,
}

impl RateCap {
    pub fn new(rate_bps: f64) -> RateCap {
        RateCap {
            rate_bps,
            tat: Mutex::new(None),
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The time `len` bytes take at the cap.
    pub fn time_of(&self, len: usize) -> Duration {
        Duration::from_secs_f64(len as f64 * 8.0 / self.rate_bps)
    }

    /// Reserve `len` bytes; the instant the write may start (now or later).
    pub fn reserve(&self, len: usize, tolerance: Duration, fresh: bool) -> Instant {
        let now = Instant::now();
        let t = self.time_of(len);
        let credit = if fresh { Duration::ZERO } else { t };
        let floor = now.checked_sub(credit).unwrap_or(now);
        let mut tat = self.tat.lock().unwrap_or_else(|e| e.into_inner());
        let next = tat.map_or(floor, |old| old.max(floor)) + t;
        *tat = Some(next);
        next.checked_sub(tolerance).unwrap_or(now).max(now)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_networks() {
        let n = Network::parse("10.1.0.0/24").unwrap();
        assert!(n.contains("10.1.0.200".parse().unwrap()));
        assert!(!n.contains("10.1.1.1".parse().unwrap()));
        assert!(!n.contains("::1".parse().unwrap()));
        let one = Network::parse("192.0.2.7").unwrap();
        assert!(one.contains("192.0.2.7".parse().unwrap()));
        assert!(!one.contains("192.0.2.8".parse().unwrap()));
        let v6 = Network::parse("2001:db8::/32").unwrap();
        assert!(v6.contains("2001:db8:1::5".parse().unwrap()));
        assert!(Network::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8".parse().unwrap()));
        for bad in ["10.1.0.0/33", "10.1.0/24", "x", "::1/129", "10.0.0.1/"] {
            assert!(Network::parse(bad).is_err(), "{bad}");
        }
    }

    fn spec(max_duration_s: f64, max_rate_bps: f64) -> LimitsSpec {
        LimitsSpec {
            allow: vec!["127.0.0.0/8".into()],
            max_duration_s,
            max_rate_bps,
            realtime: false,
        }
    }

    #[test]
    fn test_limits_out_of_range_are_errors_not_panics() {
        // Duration::from_secs_f64(1e300) panicked (`daemon --max-duration 1e300`).
        for d in [
            1e300,
            f64::INFINITY,
            f64::NAN,
            0.0,
            -1.0,
            MAX_DURATION_LIMIT_S * 1.01,
        ] {
            let e = Limits::new(&spec(d, 1e9)).err().expect("refused");
            assert!(e.0.starts_with("max_duration_s "), "{}", e.0);
        }
        for r in [1e-300, 0.0, 999.0, f64::INFINITY, f64::NAN] {
            let e = Limits::new(&spec(300.0, r)).err().expect("refused");
            assert!(e.0.starts_with("max_rate_bps "), "{}", e.0);
        }
        // At the bounds: an agent's deadline and the slowest write's slot still add.
        let l = Limits::new(&spec(MAX_DURATION_LIMIT_S, MIN_RATE_LIMIT_BPS)).unwrap();
        let _ = Instant::now() + l.max_duration + SINK_GRACE;
        let _ = l.cap.reserve(u32::MAX as usize, Duration::ZERO, false);
    }

    #[test]
    fn test_rate_cap_is_shared() {
        // 8 Mb/s: 1000 bytes take 1 ms. Writes reserved back to back (two senders
        // alternately, or one) get successive slots of the one schedule: write k
        // starts k + 1 blocks' time after the first reservation (its own included).
        let cap = RateCap::new(8e6);
        let t0 = Instant::now();
        let slots: Vec<Instant> = (0..10)
            .map(|k| cap.reserve(1000, Duration::ZERO, k < 2))
            .collect();
        for (k, s) in slots.iter().enumerate() {
            let at = (*s - t0).as_secs_f64();
            assert!(at >= (k + 1) as f64 * 1e-3 - 1e-9, "{k}: {at}");
            assert!(at < (k + 1) as f64 * 1e-3 + 5e-3, "{k}: {at}");
        }
        // A tolerance of one block's time starts that block at the previous TAT.
        let tol = cap.time_of(1000);
        let s = cap.reserve(1000, tol, false);
        assert!((s - *slots.last().unwrap()).as_secs_f64().abs() < 1e-6);
    }

    #[test]
    fn test_rate_cap_holds_no_slower_sender() {
        // A sender whose writes take longer than their time at the cap never waits
        // after its first write; its first waits its own time.
        let cap = RateCap::new(8e6);
        let first = cap.reserve(1000, Duration::ZERO, true);
        assert!(first > Instant::now());
        std::thread::sleep(first.saturating_duration_since(Instant::now()));
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(3)); // a 3 ms write of a 1 ms block
            let at = cap.reserve(1000, Duration::ZERO, false);
            assert!(at <= Instant::now(), "waited {:?}", at - Instant::now());
        }
    }

    #[test]
    fn test_limits_checked() {
        let spec = |d: f64, r: f64| LimitsSpec {
            allow: vec!["127.0.0.0/8".into()],
            max_duration_s: d,
            max_rate_bps: r,
            realtime: false,
        };
        assert!(Limits::new(&spec(0.0, 1e6)).is_err());
        assert!(Limits::new(&spec(1.0, f64::INFINITY)).is_err());
        let l = Limits::new(&spec(1.0, 1e6)).unwrap();
        assert!(l.refuse_destination("127.0.0.1".parse().unwrap()).is_none());
        let why = l.refuse_destination("192.0.2.1".parse().unwrap()).unwrap();
        assert!(
            why.contains("192.0.2.1") && why.contains("--allow"),
            "{why}"
        );
    }
}
