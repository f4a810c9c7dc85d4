//! The Nagle/delayed-ACK circular wait: when a transfer is in it (one end
//! waiting for an ACK the other, having read everything, delays to its timer),
//! and the time its sender holds data back and its window stays closed. Apart:
//! it is the lock-step's own measure, read after every piece of work.

use super::apps::App;
use super::World;
use crate::tcp::Tcb;

impl World {
    /// Account the time a transfer spends in the Nagle/delayed-ACK circular
    /// wait, and (for explanations) the time its sender holds back data.
    pub(super) fn track_circular_wait(&mut self, transfer: usize) {
        let (s, r) = (&self.eps[2 * transfer].tcb, &self.eps[2 * transfer + 1].tcb);
        let exchange = matches!(self.eps[2 * transfer].app, App::Exchange(_));
        // Data held back (Nagle, sender SWS avoidance): the sender's; in a
        // request/response test the server's responses too.
        let holding = (s.holding() && !self.eps[2 * transfer].app_done)
            || (exchange && r.holding() && !self.eps[2 * transfer + 1].app_done);
        let p = &mut self.probes[transfer];
        match (holding, p.hold_since) {
            (true, None) => p.hold_since = Some(self.now),
            (false, Some(since)) => {
                p.hold_total += self.now - since;
                p.hold_since = None;
            }
            _ => {}
        }
        // One end waits for an ACK the other, having read all that came, delays:
        // Nagle holds a short segment, the sender's write waits (Winsock AFD's
        // unbuffered send until acknowledged, a send buffer short of room), or
        // data it has not sent waits on a closed window. A stream's receiver
        // sends no data; in a request/response test the server holds responses
        // as the client requests.
        let src = &self.eps[2 * transfer];
        let write_waits = matches!(&src.app, App::Source(_)) && src.app_blocked && !src.app_done;
        let unsent = s.snd.cc > s.outstanding();
        let waits = |a: &Tcb, b: &Tcb, held: bool| {
            (a.holding() || held) && b.delack_pending() && b.rcv.cc == 0 && a.snd_max == b.rcv_nxt
        };
        let stream_wait = waits(s, r, write_waits || unsent);
        let waiting = stream_wait || (exchange && waits(r, s, false));
        match (waiting, self.wait_since[transfer]) {
            (true, None) => self.wait_since[transfer] = Some(self.now),
            (false, Some(since)) => {
                self.wait_total[transfer] += self.now - since;
                self.wait_since[transfer] = None;
            }
            _ => {}
        }
        // Of that, the time the window the sender knows is closed: only the
        // receiver's update (which its timer sends) lets anything more go.
        let window_wait = stream_wait && s.snd_wnd <= s.outstanding();
        let p = &mut self.probes[transfer];
        match (window_wait, p.window_wait_since) {
            (true, None) => p.window_wait_since = Some(self.now),
            (false, Some(since)) => {
                p.window_wait_total += self.now - since;
                p.window_wait_since = None;
            }
            _ => {}
        }
    }
}
