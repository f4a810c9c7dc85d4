//! The socket layer's requests (4.4BSD netinet/tcp_usrreq.c): open, send,
//! receive and close, each running tcp_output as PRU_* does.

use super::{State, Tcb};
use crate::tcp::segment::{Segment, SendReason};

impl Tcb {
    /// Active open: send SYN.
    pub fn connect(&mut self, out: &mut Vec<Segment>) {
        self.state = State::SynSent;
        self.output(SendReason::Control, out);
    }

    /// Passive open.
    pub fn listen(&mut self) {
        self.state = State::Listen;
    }

    /// PRU_SEND: the socket layer appended `n` bytes; run tcp_output.
    pub fn append(&mut self, n: u32, out: &mut Vec<Segment>) {
        debug_assert!(n <= self.snd.space());
        self.snd.cc += n;
        self.output(SendReason::Idle, out);
    }

    /// soreceive took `n` bytes; PRU_RCVD runs tcp_output (window update test).
    pub fn read(&mut self, n: u32, out: &mut Vec<Segment>) {
        debug_assert!(n <= self.rcv.cc);
        self.rcv.cc -= n;
        self.output(SendReason::WindowUpdate, out);
    }

    /// PRU_SHUTDOWN / close: tcp_usrclosed, then output (FIN when the data is out).
    pub fn close(&mut self, out: &mut Vec<Segment>) {
        self.user_closed = true;
        self.state = match self.state {
            State::Closed | State::Listen | State::SynSent => State::Closed,
            State::SynReceived | State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        };
        if self.state != State::Closed {
            self.output(SendReason::Control, out);
        }
    }
}
