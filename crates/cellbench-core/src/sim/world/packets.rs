//! Packets between the hosts and the network: what a PDU carries, the tokens
//! and host-buffer gather lists that go with it to the adapter, the CPU's
//! charge for each segment tcp_output produced, and arrivals handed to the
//! receiving host and taken in (TCP input, UDP reassembly). Apart: the one
//! seam between the hosts and `sim::net`.

use super::cpu::Job;
use super::{Event, TraceRecord, World};
use crate::host::socket::udp_fragment_gather;
use crate::sim::net::{Delivery, HostId};
use crate::tcp::Segment;
use crate::time::SimTime;

/// What a PDU carries: a TCP segment or one IP fragment of a UDP datagram.
#[derive(Copy, Clone, Debug)]
pub(super) enum Packet {
    Tcp(Segment),
    Udp {
        dgram: u64,
        ip_len: u32,
        data: u32,
        count: u16,
        /// Where the fragment's IP payload starts in the UDP datagram.
        offset: u32,
    },
}

impl Packet {
    fn ip_len(&self) -> u32 {
        match self {
            Packet::Tcp(seg) => seg.ip_len(),
            Packet::Udp { ip_len, .. } => *ip_len,
        }
    }
}

impl World {
    /// A PDU reached the far adapter: input work for the peer endpoint's host.
    pub(super) fn deliver(&mut self, d: Delivery) {
        let token = d.token as usize;
        let from = self.segs[token].0;
        let to = self.peer(from);
        let h = self.eps[to].host;
        self.enqueue(h, Job::Input { ep: to, token }, true);
    }

    /// Input work for a packet that arrived: its receive cost, then TCP
    /// input (the probe times the ACK first) or the UDP socket's reassembly.
    pub(super) fn input(
        &mut self,
        h: HostId,
        ep: usize,
        token: usize,
        t: &mut SimTime,
        out: &mut Vec<Segment>,
    ) {
        let (from, packet) = self.segs[token];
        self.free_tokens.push(token);
        let ip_len = packet.ip_len();
        let cells = self.net.cells_on(
            self.eps[from].circuit_out,
            ip_len + self.eps[ep].encap_header,
        );
        match packet {
            Packet::Tcp(seg) => {
                let cost = self.hosts[h].profile.receive_cost(seg.len, ip_len, cells);
                *t += self.scaled(cost);
                if self.eps[ep].is_sender && seg.flags.ack {
                    self.probe_ack(self.eps[ep].transfer, seg.ack);
                }
                let wake = self.eps[ep].tcb.input(&seg, out);
                let una = self.eps[ep].tcb.snd_una;
                self.eps[ep].mbufs.acknowledged(una);
                self.charge_and_send(ep, t, out);
                if wake.writable || wake.readable || wake.established {
                    self.wake_app(ep);
                }
            }
            Packet::Udp {
                dgram, data, count, ..
            } => {
                // ip_input reassembles; the UDP checksum covers the whole datagram.
                let data_here = ip_len.saturating_sub(crate::host::udp::IP_HEADER);
                let cost = self.hosts[h].profile.receive_cost(data_here, ip_len, cells);
                *t += self.scaled(cost);
                let sock = self.eps[ep]
                    .udp
                    .as_mut()
                    .expect("UDP packets go to UDP endpoints");
                if sock.input(dgram, count, data) {
                    self.wake_app(ep);
                }
            }
        }
    }

    /// A packet's CPU work is paid for: the adapter takes its PDU, or its
    /// full interface queue refuses it (the token is then free again).
    pub(super) fn transmit(&mut self, ep: usize, token: usize) {
        let (circuit, payload) = {
            let e = &self.eps[ep];
            (e.circuit_out, self.segs[token].1.ip_len() + e.encap_header)
        };
        let buffers = &self.gathers[token];
        if !self
            .net
            .send_gathered(self.now, circuit, payload, buffers, token as u64)
        {
            let end = if self.eps[ep].is_sender { 0 } else { 1 };
            self.adapter_drops[self.eps[ep].transfer][end] += 1;
            if let Some(u) = &mut self.eps[ep].udp {
                u.stats.dropped_interface_queue += 1;
            }
            self.free_tokens.push(token);
        }
    }

    /// Charge the CPU for each segment tcp_output produced and hand it to the
    /// adapter when paid for.
    pub(super) fn charge_and_send(&mut self, ep: usize, t: &mut SimTime, out: &mut Vec<Segment>) {
        let h = self.eps[ep].host;
        let encap = self.eps[ep].encap_header;
        let circuit = self.eps[ep].circuit_out;
        for seg in out.drain(..) {
            let ip_len = seg.ip_len();
            let cells = self.net.cells_on(circuit, ip_len + encap);
            let cost = self.hosts[h].profile.send_cost(seg.len, ip_len, cells);
            *t += self.scaled(cost);
            if self.eps[ep].is_sender && seg.len > 0 {
                self.probe_segment(ep, &seg, ip_len, *t);
            }
            if let Some(trace) = &mut self.trace {
                let e = &self.eps[ep];
                trace.push(TraceRecord {
                    at: *t,
                    transfer: e.transfer,
                    from_sender: e.is_sender,
                    seg,
                });
            }
            self.emit(ep, *t, Packet::Tcp(seg));
        }
    }

    /// Hand a packet to the endpoint's adapter at `at`, with the host buffers
    /// the adapter gathers it from.
    pub(super) fn emit(&mut self, ep: usize, at: SimTime, packet: Packet) {
        let token = match self.free_tokens.pop() {
            Some(tok) => {
                self.segs[tok] = (ep, packet);
                tok
            }
            None => {
                self.segs.push((ep, packet));
                self.gathers.push(Vec::new());
                self.segs.len() - 1
            }
        };
        let e = &self.eps[ep];
        let out = &mut self.gathers[token];
        match packet {
            Packet::Tcp(seg) => {
                let header = e.encap_header + seg.ip_len() - seg.len;
                e.mbufs.gather(seg.seq, seg.len, header, out);
            }
            Packet::Udp { ip_len, offset, .. } => {
                let ip = crate::host::udp::IP_HEADER;
                udp_fragment_gather(offset, ip_len - ip, e.encap_header + ip, out);
            }
        }
        self.events.schedule(at, Event::Transmit { ep, token });
    }
}
