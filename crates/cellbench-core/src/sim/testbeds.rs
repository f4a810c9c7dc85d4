//! The classic testbeds as ready scenarios (docs/design.md §10, each
//! with its page in docs/).

use super::net::{AdapterSpec, CircuitSpec, Fidelity, Topology, TxSpacing};
use super::spec::{ConnSpec, HostSpec, Param, RunSpec, SwitchSpec, Traffic};
use super::world::{run, Protocol, Scenario, ScenarioError, TransferSpec};
use crate::host::profile::HostProfile;
use crate::host::ttcp::{Limit, Pace};
use crate::tcp::Flavour;
use crate::time::{BitRate, SimTime};

// The era's constants live in `era.rs` (the spec's defaults use them too); kept
// reachable here under their old paths.
pub use super::era::{DEFAULT_PORT_BUFFER_CELLS, IFQ_MAXLEN, MACHINE_ROOM_DELAY};

/// The lan-buffers study (docs/lan-buffers.md) as a preset: the parameters of one
/// transfer, turned into a [`RunSpec`] by [`LanBuffers::spec`]; the spec builds
/// the testbed, as it does every other run.
#[derive(Clone, Debug, PartialEq)]
pub struct LanBuffers {
    pub sndbuf: u32,
    pub rcvbuf: u32,
    /// ttcp -l (default 8192).
    pub buflen: u32,
    /// Bytes per transfer (default 32 MB).
    pub nbytes: u64,
    pub mtu: u32,
    pub profile: String,
    pub flavour: Flavour,
    pub nodelay: bool,
    pub port_buffer_cells: u32,
}

impl Default for LanBuffers {
    fn default() -> Self {
        LanBuffers {
            sndbuf: 52_428,
            rcvbuf: 52_428,
            buflen: 8192,
            nbytes: 32 * 1024 * 1024,
            // VC-mux ("Fore IP") encapsulation.
            mtu: 9188,
            profile: "sparc-ipc".to_string(),
            flavour: Flavour::Sunos411,
            nodelay: false,
            port_buffer_cells: DEFAULT_PORT_BUFFER_CELLS,
        }
    }
}

impl LanBuffers {
    /// The study as a run spec: two hosts, A (ttcp -t) and B (ttcp -r), each on
    /// a 100 Mb/s TAXI link a machine room from one output-buffered switch (the
    /// spec's defaults), and one transfer from A to B. `spec.scenario()` checks it.
    pub fn spec(&self, seed: u64, replication: u32, trace: bool) -> RunSpec {
        let host = |name: &str| HostSpec {
            profile: self.profile.clone(),
            flavour: self.flavour.name().to_string(),
            ..HostSpec::named(name)
        };
        let traffic = Traffic::Full {
            blocksize: Param::Value(self.buflen as f64),
            nbytes: Some(self.nbytes),
            duration_s: None,
        };
        // ttcp -r -l buflen: the sink reads in the transmitter's buffer length.
        let transfer = ConnSpec {
            mtu: Some(self.mtu),
            receiver_blocksize: self.buflen,
            sndbuf: self.sndbuf,
            rcvbuf: self.rcvbuf,
            nodelay: self.nodelay,
            ..ConnSpec::new("A", "B", traffic)
        };
        RunSpec {
            seed,
            replication,
            trace,
            switch: SwitchSpec {
                buffer_cells: self.port_buffer_cells,
                ..SwitchSpec::default()
            },
            ..RunSpec::new(vec![host("A"), host("B")], vec![transfer])
        }
    }

    /// The pair Moldeklev, Klovning and Kure (1994) measured, as 002 §2.2 quotes them:
    /// SPARCstation 10s under SunOS 4.1.3 over OC-3c (Fore IP, the study's 52428-byte
    /// buffers), ttcp writing `buflen` bytes at a time, `nbytes` in all; the hosts run
    /// `sender`'s and `receiver`'s profiles (a calibration's candidates, which the
    /// profile table does not hold).
    pub fn sunos413_oc3c(
        buflen: u32,
        nbytes: u64,
        sender: &HostProfile,
        receiver: &HostProfile,
    ) -> Result<Scenario, ScenarioError> {
        let study = LanBuffers {
            buflen,
            nbytes,
            profile: "sparc-10".into(),
            flavour: Flavour::Sunos413,
            ..LanBuffers::default()
        };
        let mut spec = study.spec(1, 0, false);
        for h in spec.hosts.iter_mut() {
            h.phy = "oc3c".into();
        }
        let mut sc = spec.scenario()?;
        sc.hosts[0] = sender.clone();
        sc.hosts[1] = receiver.clone();
        Ok(sc)
    }

    /// The best of that pair, Mb/s, over the writes a calibration tries: 8 KB and
    /// 1, 2, 3 and 5 MSS (9148 bytes, Fore IP), 32 MB each, `p` at both ends.
    pub fn sunos413_oc3c_best(p: &HostProfile) -> Result<f64, ScenarioError> {
        let mut best: f64 = 0.0;
        for buflen in [8192, 9148, 2 * 9148, 3 * 9148, 5 * 9148] {
            let sc = LanBuffers::sunos413_oc3c(buflen, 32 << 20, p, p)?;
            best = best.max(run(&sc)?.transfers[0].throughput_bps() / 1e6);
        }
        Ok(best)
    }
}

/// The speed factor, in `lo..hi` and found by `steps` geometric bisections, at
/// which `mbps` (a loopback transfer's Mb/s at that factor, which rises with it)
/// first reaches `target`: how a profile is scaled to its published loopback
/// figure (001 Table 2; `examples/calibrate_loopback.rs`).
pub fn speed_for(
    target: f64,
    (mut lo, mut hi): (f64, f64),
    steps: u32,
    mbps: impl Fn(f64) -> f64,
) -> f64 {
    for _ in 0..steps {
        let mid = (lo * hi).sqrt();
        if mbps(mid) < target {
            lo = mid
        } else {
            hi = mid
        }
    }
    hi
}

/// The study's grid: 16K, 20K, … 48K, and 51K (= 52428, SunOS 4.1.1's largest).
pub fn lan_buffer_sizes() -> Vec<u32> {
    let mut v: Vec<u32> = (16..=48).step_by(4).map(|k| k * 1024).collect();
    v.push(52_428);
    v
}

/// What a profile gives for its published loopback figure (001 Table 2), Mb/s: a ttcp of
/// 16 MB over its OS's loopback interface ([`loopback`]), seed 1, as its speed was
/// calibrated (`examples/calibrate_loopback.rs`) and `cellbench fidelity` scores it.
pub fn loopback_mbps(profile: &HostProfile) -> Result<f64, ScenarioError> {
    Ok(run(&loopback(profile, 16 << 20, 1))?.transfers[0].throughput_bps() / 1e6)
}

/// A ttcp transfer over the loopback interface of one host, at its OS's loopback MTU
/// (`HostProfile::loopback_mtu`): sender and receiver share its CPU, and no adapter is
/// involved (the driver moves no bytes).
pub fn loopback(profile: &HostProfile, nbytes: u64, seed: u64) -> Scenario {
    let mut host = profile.clone();
    host.driver_tx_ps_per_byte = 0;
    host.driver_rx_ps_per_byte = 0;
    host.sar_per_cell = SimTime::ZERO;
    // A software queue, not a wire: fast enough never to matter.
    let lo = AdapterSpec {
        rate: BitRate(10_000_000_000),
        delay: SimTime::ZERO,
        tx: TxSpacing::None,
        pdu_gap: SimTime::ZERO,
        tx_queue_pdus: IFQ_MAXLEN,
    };
    let circuit = |vci| CircuitSpec {
        src: 0,
        dst: 0,
        vpi: 0,
        vci,
        hops: vec![],
    };
    Scenario {
        topology: Topology {
            adapters: vec![lo],
            ports: vec![],
            circuits: vec![circuit(1), circuit(2)],
            ..Default::default()
        },
        hosts: vec![host],
        transfers: vec![TransferSpec {
            protocol: Protocol::Tcp,
            sender: 0,
            receiver: 0,
            circuit: 0,
            return_circuit: 1,
            flavour: Flavour::Sunos411,
            receiver_flavour: Flavour::Sunos411,
            mtu: profile.loopback_mtu,
            encap_header: 0,
            sndbuf: 52_428,
            rcvbuf: 52_428,
            nodelay: false,
            buflen: 8192,
            read_size: 8192,
            limit: Limit::Bytes(nbytes),
            pace: Pace::Full,
            block_size: None,
            transaction: None,
            start: SimTime::ZERO,
            after: Vec::new(),
        }],
        seed,
        replication: 0,
        fidelity: Fidelity::Train,
        trace: false,
        series: false,
        time_limit: SimTime::from_secs(3600),
        event_budget: super::guard::DEFAULT_EVENT_BUDGET,
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::host::profile::RECEIVE_OVER_SEND_PERMILLE;

    #[test]
    fn profiles_reproduce_their_published_loopback_throughput() {
        // docs/design.md §6.3's table: each profile's speed is bisected to its loopback
        // figure over its OS's loopback MTU (`examples/calibrate_loopback.rs`, the factor
        // kept to 4 decimals), so the loopback it gives is that figure to 0.1%, what
        // `cellbench fidelity` holds 001 Table 2's lines to.
        for name in HostProfile::names() {
            let p = HostProfile::by_name(name).unwrap();
            let Some(published) = p.loopback_mbps else {
                continue;
            };
            let mbps = loopback_mbps(&p).unwrap();
            let err = (mbps - published) / published;
            assert!(
                err.abs() < 0.001,
                "{name}: simulated {mbps:.2} Mb/s vs published {published}"
            );
        }
    }

    /// The SPARC-10 with receiving's per-byte work weighted by `split` (‰), its speed
    /// found again from its loopback figure (as `examples/calibrate_loopback.rs` does).
    fn sparc10_split(split: u32) -> HostProfile {
        let at = |f: f64| HostProfile {
            receive_bytes_permille: split,
            ..HostProfile::era_host("sparc-10", f).unwrap()
        };
        let mbps = |f: f64| loopback_mbps(&at(f)).unwrap();
        at(speed_for(43.55, (2.0, 16.0), 16, mbps))
    }

    /// A SunOS 4.1.3 stream over OC-3c (Fore IP, 52428-byte buffers, 3-MSS writes).
    fn oc3c_stream(sender: &HostProfile, receiver: &HostProfile) -> f64 {
        let sc = LanBuffers::sunos413_oc3c(3 * 9148, 8 << 20, sender, receiver).unwrap();
        run(&sc).unwrap().transfers[0].throughput_bps()
    }

    #[test]
    fn receiving_dearer_lowers_receiver_bound_pairs_and_raises_sender_bound_ones() {
        // 001 §5.2 (Moldeklev et al.): the loopback figure fixes send + receive; a
        // split that makes receiving dearer leaves a host receiving slower and sending
        // faster than the even split, 001 §4.2's doubling, has it.
        let (even, split) = (
            sparc10_split(1000),
            sparc10_split(RECEIVE_OVER_SEND_PERMILLE),
        );
        let fast = HostProfile::by_name("ultra-1").unwrap();
        // Into a SPARC-10 (its CPU the bound): slower.
        assert!(oc3c_stream(&fast, &split) < 0.97 * oc3c_stream(&fast, &even));
        // From a SPARC-10 into a fast receiver: faster.
        assert!(oc3c_stream(&split, &fast) > 1.03 * oc3c_stream(&even, &fast));
    }

    #[test]
    fn each_host_loops_back_at_its_os_mtu() {
        // host/profile.rs: SunOS 4.1.3 keeps 4.3BSD's 1536-byte loopback (net/if_loop.c,
        // LOMTU), Solaris 2 has 8232 (ip_if.c). The same SPARC-10 carries far less over
        // SunOS's loopback than over Solaris's (six times the segments per byte), which is
        // why its calibration at its own MTU asks for a faster CPU
        // (`examples/loopback_mtu.rs`).
        use crate::host::profile::{SOLARIS2_LOOPBACK_MTU, SUNOS4_LOOPBACK_MTU};
        let p = HostProfile::by_name("sparc-10").unwrap();
        assert_eq!(p.loopback_mtu, SUNOS4_LOOPBACK_MTU);
        assert_eq!(
            loopback(&p, 1 << 20, 1).transfers[0].mtu,
            SUNOS4_LOOPBACK_MTU
        );
        for name in ["sparc-20", "ultra-1"] {
            let p = HostProfile::by_name(name).unwrap();
            assert_eq!(p.loopback_mtu, SOLARIS2_LOOPBACK_MTU, "{name}");
        }
        let at = |mtu: u32| {
            let mut sc = loopback(&p, 4 << 20, 1);
            sc.transfers[0].mtu = mtu;
            run(&sc).unwrap().transfers[0].throughput_bps() / 1e6
        };
        let (solaris, sunos) = (at(SOLARIS2_LOOPBACK_MTU), at(SUNOS4_LOOPBACK_MTU));
        assert!(sunos < 0.8 * solaris, "{sunos:.2} vs {solaris:.2} Mb/s");
    }
}
