//! Packets, ports, virtual-channel queues, buffers and credits: the state the events touch.
//!
//! * **Packets.** A packet is a 32-byte record (two to a cache line) in one slab per part;
//!   queues link packets through their `next` field, so moving a packet between buffers moves
//!   no data. What routing needs of a packet (its intermediate router, hops, whether it has
//!   passed the intermediate) is packed into two words and read through
//!   [`RouteState`].
//! * **Input-output buffered routers with VCs.** Every port of a router has an input buffer
//!   and an output buffer of `buffer_bytes` each, split evenly over the routing's virtual
//!   channels (endpoint ports use one VC with the whole buffer). A port's input side and its
//!   VCs ([`InPort`]) are one 64-byte aligned block, and so are its output side and VCs
//!   ([`OutPort`]): what one event touches (a port of 2 VCs fits in two cache lines).
//! * **Credits.** Sending a packet takes a credit; the downstream input returns it when the
//!   packet's tail leaves that input buffer, and it arrives back one link latency later.
//!   The credits an upstream holds are counted in the downstream input's block, beside a ring
//!   of the returns on their way (in the block too when it has room for them), applied
//!   lazily: only when the upstream output (or endpoint) finds no credit, or the ring is
//!   full, does it look at what has arrived.

use super::part::Part;
use super::source::Source;
use crate::network::routing::{RouteState, NONE};

use crate::units::Time;

/// The low 24 bits of a packed word.
pub(super) const LOW24: u32 = (1 << 24) - 1;
/// No intermediate router.
pub(super) const INTER_NONE: u32 = LOW24;
/// Not routed at this router yet.
pub(super) const OUT_NONE: u32 = LOW24;

/// Packet flag: it has reached its intermediate router.
pub(super) const F_PASSED: u8 = 1;
/// Packet flag: it takes an indirect path.
pub(super) const F_INDIRECT: u8 = 2;

pub(super) use crate::hint::prefetch;

/// Prefetches the first three cache lines of a port block (its state, its first VCs and, in
/// an input block of 4 VCs, the credit ring).
#[inline(always)]
pub(super) fn prefetch_block<T>(r: &T) {
    prefetch(r);
    // The block is 64-byte aligned: its second and third lines.
    for off in [64, 128] {
        if std::mem::size_of::<T>() > off {
            let line = (r as *const T as *const u8).wrapping_add(off);
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `prefetch`; the address lies within `*r`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    line as *const i8,
                );
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = line;
        }
    }
}

/// A packet: 32 bytes, two to a cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(super) struct Packet {
    pub(super) gen: Time,
    /// In a queue, the time of the packet behind it (valid when `next` is not `NONE`): when
    /// that packet's head may cross the switch (at an input) or be sent (at an output).
    /// Keeping it here rather than in the packet itself lets a queue learn its new head's
    /// time from the packet it pops, without loading the next one. In a message to another
    /// part: the packet's own time.
    pub(super) t: Time,
    pub(super) dst: u32,
    /// Next packet in the same queue.
    pub(super) next: u32,
    /// Intermediate router (low 24 bits, `INTER_NONE` for none) and hops taken (high 8).
    pub(super) inter_hops: u32,
    /// Output port chosen at the current router (low 24 bits, `OUT_NONE` before routing),
    /// its VC (bits 24..29) and flags (bits 29..32).
    pub(super) out_vc: u32,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 32);

impl Packet {
    #[inline]
    pub(super) fn inter(&self) -> u32 {
        self.inter_hops & LOW24
    }
    #[inline]
    pub(super) fn hops(&self) -> u8 {
        (self.inter_hops >> 24) as u8
    }
    #[inline]
    pub(super) fn add_hop(&mut self) {
        if self.inter_hops >> 24 < 255 {
            self.inter_hops += 1 << 24;
        }
    }
    #[inline]
    pub(super) fn set_inter(&mut self, x: u32) {
        self.inter_hops = (self.inter_hops & !LOW24) | x;
    }
    #[inline]
    pub(super) fn out(&self) -> u32 {
        self.out_vc & LOW24
    }
    #[inline]
    pub(super) fn vc(&self) -> usize {
        ((self.out_vc >> 24) & 31) as usize
    }
    #[inline]
    pub(super) fn flags(&self) -> u8 {
        (self.out_vc >> 29) as u8
    }
    #[inline]
    pub(super) fn set_out(&mut self, out: u32, vc: u8) {
        self.out_vc = (self.out_vc & (7 << 29)) | out | ((vc as u32) << 24);
    }
    #[inline]
    pub(super) fn clear_out(&mut self) {
        self.out_vc = (self.out_vc & (7 << 29)) | OUT_NONE;
    }
    #[inline]
    pub(super) fn set_flag(&mut self, f: u8) {
        self.out_vc |= (f as u32) << 29;
    }
}

impl RouteState for Packet {
    #[inline]
    fn dst(&self) -> u32 {
        self.dst
    }
    #[inline]
    fn intermediate(&self) -> Option<u32> {
        let x = self.inter();
        (x != INTER_NONE).then_some(x)
    }
    #[inline]
    fn set_intermediate(&mut self, x: u32) {
        self.set_inter(x);
    }
    #[inline]
    fn hops(&self) -> u8 {
        Packet::hops(self)
    }
    #[inline]
    fn passed(&self) -> bool {
        self.flags() & F_PASSED != 0
    }
    #[inline]
    fn set_passed(&mut self) {
        self.set_flag(F_PASSED);
    }
    #[inline]
    fn set_indirect(&mut self) {
        self.set_flag(F_INDIRECT);
    }
}

/// Packet `pid` of the slab `pk`, without a bounds check: for the ids the handlers take
/// from a queue (`pid < pk.len()`: every id in a queue or on its way between two came from
/// [`Part::alloc`], and the slab never shrinks).
#[inline(always)]
pub(super) fn slot(pk: &[Packet], pid: u32) -> &Packet {
    debug_assert!((pid as usize) < pk.len(), "packet {pid} outside the slab");
    // SAFETY: `pid < pk.len()` by the invariant above (checked in debug builds).
    unsafe { pk.get_unchecked(pid as usize) }
}

/// [`slot`], mutable.
#[inline(always)]
pub(super) fn slot_mut(pk: &mut [Packet], pid: u32) -> &mut Packet {
    debug_assert!((pid as usize) < pk.len(), "packet {pid} outside the slab");
    // SAFETY: `pid < pk.len()` by the invariant of `slot` (checked in debug builds).
    unsafe { pk.get_unchecked_mut(pid as usize) }
}

/// An input VC: a FIFO of packets linked through `Packet::next`, empty when `head` is
/// `NONE` (its length is never needed: the upstream's credits bound it). 16 bytes.
#[derive(Clone, Copy)]
pub(super) struct InQ {
    /// When the head packet may cross the switch.
    pub(super) head_t: Time,
    pub(super) head: u32,
    pub(super) tail: u32,
}

/// An output VC. 20 bytes (packed to 4-byte alignment), so that a port with 4 VCs and its
/// counter fit in two cache lines.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
pub(super) struct OutQ {
    /// When the head packet may be sent.
    pub(super) head_t: Time,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) len: u32,
}

/// The input side of a port and its VCs, together: what an input event touches.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct InPort<const V: usize> {
    pub(super) busy: Time,
    pub(super) sched: Time,
    /// Network port: the upstream port; endpoint port: the endpoint.
    pub(super) peer: u32,
    pub(super) router: u32,
    pub(super) ser: u32,
    pub(super) lat: u32,
    /// Credit returns pending from this input: ring in `ring` or in `cret[port * k ..]`.
    pub(super) cret_head: u16,
    pub(super) cret_len: u16,
    pub(super) rr: u8,
    pub(super) ep: bool,
    /// The upstream output is simulated by another part (credits go there as messages).
    pub(super) up_remote: bool,
    /// That part.
    pub(super) up_part: u8,
    /// Bit `vc`: the upstream output (or endpoint) waits for a credit of this VC.
    pub(super) up_wait: u32,
    /// Bit `vc`: the head of this VC waits for room in its output VC (registered as a
    /// waiter there).
    pub(super) blocked: u32,
    pub(super) q: [InQ; V],
    /// The credits the upstream output (or NIC) holds for each VC of this input: room it may
    /// send into. Kept here rather than upstream, so that a credit return touches only this
    /// block (the crossing that queues it, the refresh that applies it), and the upstream's
    /// send reads the block of the input it sends into, which it writes anyway.
    pub(super) credits: [u32; V],
    /// The credit ring itself, when the part keeps it in the block ([`Part::ring_inline`]):
    /// the crossing that queues a credit writes the block it has loaded already, instead of
    /// a line of a separate array (one cache miss fewer per hop).
    pub(super) ring: [u64; RING],
}

/// Credit returns an input port's block holds (5: the block of a port with 2 VCs stays two
/// cache lines with its credits).
pub(super) const RING: usize = 5;

const _: () = assert!(std::mem::size_of::<InPort<2>>() == 128);
const _: () = assert!(std::mem::size_of::<InPort<1>>() == 128);
const _: () = assert!(std::mem::size_of::<InPort<4>>() == 192);
const _: () = assert!(std::mem::size_of::<OutPort<4>>() == 128);
const _: () = assert!(std::mem::size_of::<OutPort<2>>() == 128);
const _: () = assert!(std::mem::size_of::<OutPort<1>>() == 64);

/// The output side of a port and its VCs, together: what an output event touches.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct OutPort<const V: usize> {
    pub(super) busy: Time,
    pub(super) sched: Time,
    /// Network port: the downstream port; endpoint port: the endpoint.
    pub(super) peer: u32,
    pub(super) ser: u32,
    pub(super) lat: u32,
    pub(super) rr: u8,
    pub(super) ep: bool,
    /// The downstream input is simulated by another part (packets go there as messages).
    pub(super) remote: bool,
    /// That part.
    pub(super) peer_part: u8,
    pub(super) q: [OutQ; V],
    /// Packets sent in the measurement window (the report's `port_packets`): counted in the
    /// block the send writes anyway, not in a column of its own.
    pub(super) sent: u64,
}

/// An empty input VC.
pub(super) const EMPTY_IN: InQ = InQ {
    head_t: 0,
    head: NONE,
    tail: NONE,
};

/// An endpoint's network interface: its injection link, and what its traffic source keeps
/// per endpoint (`ep`). Its credits are those of its port's input (`InPort::credits`, VC 0).
#[derive(Clone)]
pub(super) struct Nic<E> {
    pub(super) busy: Time,
    pub(super) sched: Time,
    /// When the next packet may be injected (`NEVER`: none for now), kept by the source.
    pub(super) next: Time,
    pub(super) ep: E,
}

impl<'n, const V: usize, S: Source> Part<'n, V, S> {
    // -- packet slots (the queues are linked through `Packet::next`: see `Part::in_try`) -

    /// A packet slot.
    #[inline]
    pub(super) fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(p) => p,
            None => {
                self.pk.push(Packet::default());
                if std::mem::size_of::<S::Tag>() != 0 {
                    self.tags.push(S::Tag::default());
                }
                (self.pk.len() - 1) as u32
            }
        }
    }

    /// The tag of packet `pid` (sources whose tag holds nothing keep no tags).
    #[inline(always)]
    pub(super) fn tag(&self, pid: u32) -> S::Tag {
        if std::mem::size_of::<S::Tag>() == 0 {
            S::Tag::default()
        } else {
            self.tags[pid as usize]
        }
    }

    /// Sets the tag of packet `pid`.
    #[inline(always)]
    pub(super) fn set_tag(&mut self, pid: u32, tag: S::Tag) {
        if std::mem::size_of::<S::Tag>() != 0 {
            self.tags[pid as usize] = tag;
        }
    }

    // -- credits ---------------------------------------------------------------------------

    /// Applies the credit returns of input port `i` that have arrived by now: to its credits,
    /// which its upstream (NIC or peer output port) holds.
    #[inline]
    pub(super) fn cret_refresh(&mut self, i: usize) {
        let now = self.now;
        let k = self.k;
        let inline = self.ring_inline;
        let Part { inp, cret, .. } = self;
        let ip = &mut inp[i];
        while ip.cret_len > 0 {
            let h = ip.cret_head as usize;
            let w = if inline { ip.ring[h] } else { cret[i * k + h] };
            if (w >> 5) > now {
                return;
            }
            ip.cret_head = if ip.cret_head as usize + 1 == k {
                0
            } else {
                ip.cret_head + 1
            };
            ip.cret_len -= 1;
            // `% V`: the VC is below V (a mask, as V is a power of two: no bounds check).
            ip.credits[(w & 31) as usize % V] += 1;
        }
    }

    /// Time of the next pending credit return of input port `i`.
    #[inline]
    pub(super) fn cret_front(&self, i: usize) -> Option<Time> {
        let ip = &self.inp[i];
        (ip.cret_len > 0).then(|| {
            let h = ip.cret_head as usize;
            let w = if self.ring_inline {
                ip.ring[h]
            } else {
                self.cret[i * self.k + h]
            };
            w >> 5
        })
    }

    /// Packet `pid`, from another part and not routed yet, enters input `i`, VC `vc`; its
    /// head may cross the switch at `t`. Routed here if its decision is fixed
    /// ([`Part::route_ahead`]), as a packet from this part is when it is sent.
    #[inline]
    pub(super) fn arrive(&mut self, i: usize, vc: usize, pid: u32, t: Time) {
        let mut p = *slot(&self.pk, pid);
        p.next = NONE;
        self.route_ahead(&mut p, self.inp[i].router as usize, false);
        *slot_mut(&mut self.pk, pid) = p;
        self.arrive_linked(i, vc, pid, t);
    }

    /// [`Part::arrive`] of a packet whose `next` is `NONE` already.
    #[inline]
    pub(super) fn arrive_linked(&mut self, i: usize, vc: usize, pid: u32, t: Time) {
        debug_assert_eq!(self.pk[pid as usize].next, NONE);
        let iq = &mut self.inp[i].q[vc];
        let was_empty = iq.head == NONE;
        if was_empty {
            iq.head = pid;
            iq.head_t = t;
        } else {
            let p = slot_mut(&mut self.pk, iq.tail);
            p.next = pid;
            p.t = t;
        }
        iq.tail = pid;
        if was_empty {
            self.sched_in(i, t);
        }
    }

    /// A credit of input `i`, VC `vc`, is on its way back to the upstream output (or
    /// endpoint) and arrives at `tc`: queued on the input's ring, and the upstream woken at
    /// `tc` if it waits for this VC.
    ///
    /// Inlined into the crossing: the usual case (room on the ring, nobody waiting) is a
    /// store and two counters; a full ring or a waiting upstream takes
    /// [`Part::credit_returns_slow`].
    #[inline(always)]
    pub(super) fn credit_returns(&mut self, i: usize, vc: usize, tc: Time) {
        let ip = &self.inp[i];
        if ip.cret_len as usize == self.k || ip.up_wait & (1 << vc) != 0 {
            return self.credit_returns_slow(i, vc, tc);
        }
        self.cret_push(i, vc, tc);
    }

    /// Queues the credit of input `i`, VC `vc`, arriving at `tc` at the back of the input's
    /// ring, which has room.
    #[inline(always)]
    fn cret_push(&mut self, i: usize, vc: usize, tc: Time) {
        let k = self.k;
        let ip = &mut self.inp[i];
        debug_assert!((ip.cret_len as usize) < k, "credit ring overflow");
        let mut slot = ip.cret_head as usize + ip.cret_len as usize;
        if slot >= k {
            slot -= k;
        }
        ip.cret_len += 1;
        let w = (tc << 5) | vc as u64;
        if self.ring_inline {
            ip.ring[slot] = w;
        } else {
            self.cret[i * k + slot] = w;
        }
    }

    /// [`Part::credit_returns`] with a full ring (applied first) or an upstream that waits.
    #[cold]
    #[inline(never)]
    fn credit_returns_slow(&mut self, i: usize, vc: usize, tc: Time) {
        if self.inp[i].cret_len as usize == self.k {
            self.cret_refresh(i);
        }
        self.cret_push(i, vc, tc);
        let ip = &mut self.inp[i];
        let bit = 1 << vc;
        let wait = ip.up_wait & bit != 0;
        ip.up_wait &= !bit;
        let (up, ep) = (ip.peer as usize, ip.ep);
        if wait {
            if ep {
                self.sched_nic(up, tc);
            } else {
                self.sched_out(up, tc);
            }
        }
    }
}
