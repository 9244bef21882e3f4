//! The deadlock watchdog.
//!
//! If no packet is delivered for `watchdog` of simulated time while packets are in flight, or
//! the event queue runs dry with packets in flight, the engine looks for a cycle of input VCs
//! each of which is blocked on a full output VC that holds no credit for the next input VC of
//! the cycle, itself full. Such a cycle is a deadlock: the run stops with
//! [`NetworkError::Deadlock`] naming its channels. A run of one thread looks after every
//! event, a parallel run at the start of a segment (so the time a deadlock is reported at may
//! depend on the number of threads; whether there is one does not).

use super::part::Part;
use super::source::Source;
use crate::network::routing::{Channel, NONE};
use crate::network::NetworkError;
use crate::units::Time;

/// Every how often (simulated time) the watchdog looks, after its first look at `watchdog`.
pub(super) fn period(watchdog: Time) -> Time {
    watchdog / 4
}

/// True when nothing was delivered for a watchdog period at `t` with packets in flight.
pub(super) fn stalled(watchdog: Time, t: Time, in_flight: i64, last_delivery: Time) -> bool {
    in_flight > 0 && t - last_delivery >= watchdog
}

/// The error for `in_flight` packets stuck at `time` in a cycle of waiting channels (empty
/// when none was found).
pub(super) fn deadlock(time: Time, in_flight: i64, cycle: Vec<Channel>) -> NetworkError {
    NetworkError::Deadlock {
        time,
        in_flight: in_flight as u64,
        cycle,
    }
}

/// A cycle of input VCs, each full and blocked on a full output VC without credit toward
/// the next: a deadlock. `parts` are the parts of one run, between events.
pub(super) fn wait_cycle<const V: usize, S: Source>(
    parts: &mut [Part<'_, V, S>],
) -> Option<Vec<Channel>> {
    for s in parts.iter_mut() {
        for i in 0..s.inp.len() {
            s.cret_refresh(i);
        }
    }
    let s0 = &parts[0];
    let np = s0.inp.len();
    let n = np * V;
    // The part that simulates input port `i`, its router's outputs, and the credit returns
    // toward those outputs.
    let part =
        |i: usize| -> &Part<'_, V, S> { &parts[s0.owner[s0.inp[i].router as usize] as usize] };
    // Nodes are input VCs `port · V + vc`.
    let succ = |q: usize| -> Option<usize> {
        let (i, vc) = (q / V, q % V);
        let s = part(i);
        let ip = &s.inp[i];
        if vc >= s.v || ip.ep || ip.blocked & (1 << vc) == 0 || in_len(s, i, vc) < s.cap_vc {
            return None;
        }
        let p = s.pk[ip.q[vc].head as usize];
        let (o, ovc) = (p.out() as usize, p.vc());
        let op = &s.outp[o];
        let d = op.peer as usize;
        // Full, no credit, none on its way back.
        if op.ep || op.q[ovc].len < s.cap_vc || s.inp[d].credits[ovc] != 0 || s.inp[d].cret_len != 0
        {
            return None;
        }
        Some(d * V + ovc)
    };
    let mut state = vec![0u8; n];
    let mut path = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        path.clear();
        let mut q = start;
        loop {
            if state[q] == 1 {
                let at = path.iter().position(|&x| x == q).unwrap();
                return Some(
                    path[at..]
                        .iter()
                        .map(|&x: &usize| {
                            let i = x / V;
                            Channel {
                                from: s0.inp[s0.inp[i].peer as usize].router,
                                to: s0.inp[i].router,
                                vc: (x % V) as u8,
                            }
                        })
                        .collect(),
                );
            }
            if state[q] == 2 {
                break;
            }
            state[q] = 1;
            path.push(q);
            match succ(q) {
                Some(nq) => q = nq,
                None => break,
            }
        }
        for &x in &path {
            state[x] = 2;
        }
    }
    None
}

/// Packets in VC `vc` of input port `i` of part `s` (its queue's length, counted along the
/// links: an input keeps no count, and the watchdog looks rarely).
fn in_len<const V: usize, S: Source>(s: &Part<'_, V, S>, i: usize, vc: usize) -> u32 {
    let mut n = 0;
    let mut at = s.inp[i].q[vc].head;
    while at != NONE {
        n += 1;
        at = s.pk[at as usize].next;
    }
    n
}
