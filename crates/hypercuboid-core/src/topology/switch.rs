//! Switch models: how the routers of a topology forward packets, carried by the topology and
//! read by the packet engine ([`crate::network::packet`]).
//!
//! * [`SwitchModel::Vct`] (the default): virtual cut-through routers with packets of the
//!   engine's size, credit flow control and the engine's buffers (the diameter-two seed's
//!   section 4.1); what every family builds unless told otherwise.
//! * [`SwitchModel::Ethernet`] (`switch=ethernet`): the 100 Mb/s switched Ethernet of the
//!   alltoall seed (section 6: Dell PowerConnect 2224/2324 switches, Broadcom BCM5705 NICs,
//!   LAM/MPI over TCP). A packet is a full-size frame; switches store and forward it; each
//!   port has a small buffer; a full buffer stops its upstream with IEEE 802.3x PAUSE. See
//!   [`Ethernet`] for the parameters and their sources, and for what is not modelled.

use crate::spec::{Choice, Choices};
use crate::units::{self, Time};

/// The behaviour of a topology's routers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum SwitchModel {
    /// Virtual cut-through, credits, the packet engine's own parameters (`--packet-size`,
    /// `--buffer`, `--switch-latency`).
    #[default]
    Vct,
    /// Store-and-forward Ethernet switches with PAUSE back-pressure.
    Ethernet(Ethernet),
}

/// The switch models, as the `switch` key of a topology spec accepts them (the value: whether
/// it is Ethernet), the default first.
pub const SWITCHES: Choices<bool> = Choices::new(
    "switch",
    &[
        Choice::new(
            "vct",
            false,
            "virtual cut-through with credits (the default)",
        ),
        Choice::new(
            "ethernet",
            true,
            "store-and-forward Ethernet with PAUSE back-pressure (keys buffer, mtu, delay)",
        ),
    ],
);

/// The topology spec keys of a switch model: its name and the Ethernet parameters.
pub const SWITCH_KEYS: [&str; 4] = ["switch", "buffer", "mtu", "delay"];

impl SwitchModel {
    /// Its name (`vct`, `ethernet`).
    pub fn name(&self) -> &'static str {
        SWITCHES.name(matches!(self, SwitchModel::Ethernet(_)))
    }
}

/// An Ethernet switch as the packet engine models it.
///
/// # What is modelled
/// * **Frames.** A packet is one Ethernet frame of an MTU of [`Ethernet::mtu`] (1500 B, IEEE
///   802.3 clause 3) carrying [`Ethernet::payload`] = MTU − 40 bytes of the message (the IPv4
///   and TCP headers of LAM's TCP transport, RFC 791 and RFC 793, 20 B each). On the wire a
///   frame also takes its 8-byte preamble and start delimiter, 14-byte header, 4-byte FCS and
///   the 12-byte interframe gap (clause 4): [`Ethernet::wire_bytes`] = MTU + 38 = 1538 B,
///   123.04 µs at 100 Mb/s. A message of n bytes is ⌈n / 1460⌉ frames, the last one (and
///   an empty message's, a control message's) as short as its bytes: `max(b + 78, 84)` wire
///   bytes for `b` bytes of payload (a frame is 64 bytes at least), 6.72 µs for an empty
///   one.
/// * **Store and forward.** A switch forwards a frame only once all of it has arrived and its
///   forwarding decision ([`Ethernet::latency`]) is made: every switch on a path adds a full
///   frame's serialisation, so an idle path of h switch-to-switch links delivers a frame
///   `(h + 2)·L + (h + 1)·(S + σ) + σ` after its injection (L link latency, S switch latency,
///   σ frame serialisation), and a message of n frames `(n − 1)·σ` later.
/// * **Output-queued ports with small buffers.** Each port buffers [`Ethernet::buffer_frames`]
///   frames on its output (the frames waiting for the link) and as many on its input (the
///   ingress's share of the switch memory, whose fill the PAUSE thresholds watch). A frame at
///   the head of an input whose output is full waits there, and so does every frame behind it:
///   head-of-line blocking, which bounds an input-queued FIFO switch under uniform traffic to
///   58.6 % of its capacity (Karol, Hluchyj and Morgan, IEEE Trans. Commun. 35(12), 1987).
/// * **802.3x PAUSE back-pressure, lossless.** When an input's buffer is full the switch
///   pauses the upstream port (a NIC or another switch) for every frame, whatever its
///   destination; it resumes when a frame's room frees (XOFF at a full buffer, XON one frame
///   below). Either news takes a PAUSE frame's 84 bytes on the wire (64-byte MAC Control
///   frame, preamble, gap) plus the receiver's reaction of at most 512 bit times (IEEE 802.3
///   Annex 31B.3.7) to act: [`Ethernet::pause_bytes`] = 148 byte times after the buffer
///   changes, plus the link latency. No frame is ever dropped.
///
/// # What is not modelled
/// TCP: no slow start, congestion window, delayed acknowledgements, acknowledgement traffic
/// (about 2.7 % of the reverse link), retransmission timeouts or socket buffer limits; frames
/// are never lost (drop-tail switches without PAUSE would lose them and TCP would time out,
/// the behaviour behind the largest of the seed's LAM times). A NIC sends a rank's messages
/// back to back in the order they were started, where TCP interleaves the connections a rank
/// writes to. Half-duplex back-pressure, VLANs, priorities and MAC learning are not modelled.
///
/// # Parameters that are assumptions
/// The seed does not give the 2224's buffer memory nor its forwarding latency, and we had no
/// data sheet at hand: [`Ethernet::buffer_frames`] (8 frames, about 12 KB per port and
/// direction, the order of the shared memories of 24-port 10/100 switches of the time) and
/// [`Ethernet::latency`] (4 µs) are ours, settable with the topology keys `buffer` (frames) and
/// `delay`. At the message sizes of the seed (8 KB and more) the latency matters
/// below 1 %.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ethernet {
    /// Maximum transmission unit: the frame's payload in bytes (1500).
    pub mtu: u32,
    /// Frames each port buffers per direction (8).
    pub buffer_frames: u32,
    /// Forwarding decision after a frame has fully arrived (4 µs).
    pub latency: Time,
}

impl Default for Ethernet {
    fn default() -> Self {
        Ethernet {
            mtu: ETHERNET_MTU,
            buffer_frames: 8,
            latency: units::us(4),
        }
    }
}

/// The Ethernet MTU (IEEE 802.3 clause 3): 1500 bytes.
pub const ETHERNET_MTU: u32 = 1500;
/// IPv4 and TCP headers without options (RFC 791, RFC 793): 40 bytes of every frame.
pub const TCP_IP_HEADERS: u32 = 40;
/// Preamble and SFD (8), header (14), FCS (4) and interframe gap (12): 38 bytes of every
/// frame on the wire besides its payload (IEEE 802.3 clauses 3 and 4).
pub const FRAME_OVERHEAD: u32 = 38;
/// The shortest frame on the wire: 64 bytes (IEEE 802.3 clause 3: 14-byte header, 46
/// bytes of payload at least, FCS) with the 8-byte preamble and the 12-byte gap.
pub const MIN_FRAME_WIRE: u32 = 84;
/// What a PAUSE takes to act, in byte times of its link: the 84 bytes of a PAUSE frame on the
/// wire (64-byte MAC Control frame, preamble and SFD, interframe gap) and 512 bit times
/// (64 byte times) of reaction (IEEE 802.3 Annex 31B).
pub const PAUSE_BYTES: u32 = 84 + 64;

impl Ethernet {
    /// Message bytes per frame: MTU − 40 (1460).
    pub fn payload(&self) -> u32 {
        self.mtu - TCP_IP_HEADERS
    }

    /// Bytes of a frame on the wire: MTU + 38 (1538).
    pub fn wire_bytes(&self) -> u32 {
        self.mtu + FRAME_OVERHEAD
    }

    /// Bytes a frame takes on the wire besides its payload: the headers and framing (78).
    pub fn overhead(&self) -> u32 {
        self.wire_bytes() - self.payload()
    }

    /// Bytes on the wire of the shortest frame: 64 (header, 46 bytes of payload at least,
    /// FCS) with preamble and gap, 84.
    pub fn min_wire_bytes(&self) -> u32 {
        MIN_FRAME_WIRE
    }

    /// Byte times a PAUSE (XOFF or XON) takes to act besides the link latency (148).
    pub fn pause_bytes(&self) -> u32 {
        PAUSE_BYTES
    }

    /// Checks the parameters: an MTU of 576 to 9000 bytes (IPv4's minimum datagram to jumbo
    /// frames) and one frame of buffer at least. The error says what is accepted.
    pub fn check(&self) -> Result<(), (&'static str, String, String)> {
        if !(576..=9000).contains(&self.mtu) {
            return Err((
                "mtu",
                self.mtu.to_string(),
                "accepted: 576 to 9000 bytes".into(),
            ));
        }
        if self.buffer_frames == 0 {
            return Err(("buffer", "0".into(), "accepted: one frame at least".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes_are_the_standards() {
        let e = Ethernet::default();
        assert_eq!(e.payload(), 1460);
        assert_eq!(e.wire_bytes(), 1538);
        assert_eq!(e.overhead(), 78);
        assert_eq!(e.pause_bytes(), 148);
        assert_eq!(e.min_wire_bytes(), 84);
        assert_eq!(SwitchModel::default(), SwitchModel::Vct);
        assert_eq!(SwitchModel::Ethernet(e).name(), "ethernet");
        assert_eq!(SwitchModel::Vct.name(), "vct");
        assert_eq!(
            Ethernet { mtu: 100, ..e }.check().unwrap_err(),
            ("mtu", "100".into(), "accepted: 576 to 9000 bytes".into())
        );
    }
}
