//! The host interface (`[host.interface]`, issue #16): NVMe multi-queue or SATA/NCQ over
//! a PCIe link, as MQSim models it (`src/host/PCIe_Link.cpp`, `IO_Flow_Base.cpp`,
//! `SATA_HBA.cpp`, `src/ssd/Host_Interface_NVMe.cpp`).
//!
//! Off by default (`kind = "none"`): a request's response time then starts and ends at
//! the controller, as in every Lamina result before issue #16. With `kind = "nvme"` a
//! request goes through these steps, each message taking its link transfer time
//! ([`PcieLink::transfer_time`]) on its direction of the link, one message at a time in
//! FIFO order per direction:
//!
//! 1. the host puts it in its queue's submission queue (if that holds `queue_depth`
//!    requests it waits in the host until one completes; that wait is part of its
//!    response time) and writes the SQ tail doorbell (host → device, 2-byte payload);
//! 2. the device fetches the entry if fewer than `fetch_size` requests of that queue are
//!    in the device (else when one completes): a read request (device → host), then the
//!    72-byte submission queue entry (host → device);
//! 3. a write's data is fetched the same way (a read request, then the data);
//! 4. the device serves the request (the controller, flash, buffer as before);
//! 5. a read's data (device → host), then the 16-byte completion queue entry (device →
//!    host): the response time ends when the host has it; the host then writes the CQ
//!    head doorbell (host → device).
//!
//! `kind = "sata"` is the same exchange through one NCQ of `queue_depth` (32) entries,
//! every command fetched at once, plus the host bus adapter's processing delay (one
//! command at a time) on submission and on completion, as MQSim's `SATA_HBA`.
//!
//! This module holds the configuration and the pure timing arithmetic; the engine's
//! host front end (`sim/hostif.rs`) keeps the queues and the link's state.

use serde::{Deserialize, Serialize};

use lamina_nand_model::Nanos;

/// Which host interface, if any, sits between the host and the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InterfaceKind {
    /// No host interface: response time starts and ends at the controller (default).
    #[default]
    None,
    /// NVMe over PCIe: submission/completion queue pairs with a fetch limit.
    Nvme,
    /// SATA with native command queueing (one queue of at most 32 commands).
    Sata,
}

/// The host interface (`[host.interface]`). Absent keys take the defaults of the chosen
/// `kind`: for `nvme` MQSim's default ssdconfig.xml (4 lanes at 1 GB/s each, I/O queue
/// depth 65535, queue fetch size 512), for `sata` NCQ depth 32 on one 600 MB/s lane
/// (SATA 3.0: 6 Gb/s with 8b/10b coding).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// `none` (default), `nvme` or `sata`.
    pub kind: InterfaceKind,
    /// NVMe I/O queue pairs; request *i* (in submission order) goes to queue *i* mod
    /// `queues` (a host whose threads each own a queue and take requests in turn).
    /// Default 1; SATA has exactly one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queues: Option<u32>,
    /// Entries of each submission queue (NVMe, MQSim `IO_Queue_Depth`, default 65535)
    /// or of the NCQ (SATA, default and at most 32): requests beyond it wait in the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// Requests of one queue the device fetches and holds at once (NVMe, MQSim
    /// `Queue_Fetch_Size`, default 512); entries beyond it stay in the submission queue
    /// until one completes. SATA fetches every command (its NCQ depth bounds them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_size: Option<u32>,
    /// Link lanes (MQSim `PCIe_Lane_Count`; default 4 for NVMe, 1 for SATA).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<u32>,
    /// Bytes per second of one lane (MQSim `PCIe_Lane_Bandwidth` × 10⁹; default
    /// 1000000000 for NVMe, 600000000 for SATA).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane_bandwidth_bytes_per_s: Option<u64>,
    /// Largest payload of one transaction-layer packet (MQSim 128 bytes); larger
    /// messages are split into packets, each carrying the framing overhead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlp_max_payload_bytes: Option<u32>,
    /// Framing bytes per packet: TLP header + data-link overhead + physical overhead
    /// (MQSim 20 + 6 + 2 = 28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_overhead_bytes: Option<u32>,
    /// SATA only: the host bus adapter's processing time per command, on submission and
    /// on completion, one command at a time (MQSim `SATA_Processing_Delay`). Default 0;
    /// MQSim's sample ssdconfig.xml sets 400 µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sata_processing_delay: Option<Nanos>,
}

/// Size of an NVMe submission queue entry as MQSim transfers it
/// (`sizeof(Submission_Queue_Entry)` = 72 bytes on a 64-bit machine).
pub const SQE_BYTES: u64 = 72;
/// Size of a completion queue entry (`sizeof(Completion_Queue_Entry)`).
pub const CQE_BYTES: u64 = 16;
/// Payload of a doorbell register write (a 16-bit queue pointer).
pub const DOORBELL_BYTES: u64 = 2;
/// Payload of a memory read request (its length field).
pub const READ_REQUEST_BYTES: u64 = 4;

/// NVMe's largest queue (the spec's 64 Ki entries; MQSim stores it in 16 bits).
const MAX_NVME_QUEUE_DEPTH: u32 = 65_535;
/// SATA NCQ's 32 tags.
const MAX_NCQ_DEPTH: u32 = 32;

impl InterfaceConfig {
    /// Whether an interface is modelled.
    pub fn is_on(&self) -> bool {
        self.kind != InterfaceKind::None
    }

    /// Whether every key is at its default (the interface is then left out of a
    /// serialized config, so the run keys of existing sweeps stay the same).
    pub fn is_default(&self) -> bool {
        *self == InterfaceConfig::default()
    }

    /// Check the keys and fill in the kind's defaults. `Err((key, reason))` names the
    /// offending key under `host.interface` and a remedy.
    pub fn resolve(&self) -> Result<Option<Interface>, (String, String)> {
        let bad = |key: &str, reason: String| Err((format!("host.interface.{key}"), reason));
        let sata = match self.kind {
            InterfaceKind::None => {
                if !self.is_default() {
                    return bad(
                        "kind",
                        "host.interface keys are set but kind = \"none\": set kind = \"nvme\" or \"sata\", or remove the keys"
                            .into(),
                    );
                }
                return Ok(None);
            }
            InterfaceKind::Nvme => false,
            InterfaceKind::Sata => true,
        };
        let queues = self.queues.unwrap_or(1);
        if queues == 0 || queues > MAX_NVME_QUEUE_DEPTH {
            return bad("queues", format!("{queues} queues: must be 1 ..= {MAX_NVME_QUEUE_DEPTH}"));
        }
        if sata && queues != 1 {
            return bad("queues", "SATA has one command queue: remove the key or set kind = \"nvme\"".into());
        }
        let max_depth = if sata { MAX_NCQ_DEPTH } else { MAX_NVME_QUEUE_DEPTH };
        let depth = self.queue_depth.unwrap_or(max_depth);
        if depth == 0 || depth > max_depth {
            return bad(
                "queue_depth",
                format!(
                    "{depth} entries: must be 1 ..= {max_depth} for {}",
                    if sata { "SATA NCQ" } else { "an NVMe queue" }
                ),
            );
        }
        let fetch = match (sata, self.fetch_size) {
            (true, Some(_)) => {
                return bad("fetch_size", "SATA fetches every queued command: remove the key".into());
            }
            (true, None) => depth,
            (false, f) => f.unwrap_or(512),
        };
        if fetch == 0 {
            return bad("fetch_size", "must be at least 1 (MQSim's default is 512)".into());
        }
        let lanes = self.lanes.unwrap_or(if sata { 1 } else { 4 });
        if lanes == 0 || lanes > 32 {
            return bad("lanes", format!("{lanes} lanes: must be 1 ..= 32"));
        }
        let bw = self.lane_bandwidth_bytes_per_s.unwrap_or(if sata { 600_000_000 } else { 1_000_000_000 });
        if bw == 0 {
            return bad(
                "lane_bandwidth_bytes_per_s",
                "must be positive (e.g. 1000000000 for MQSim's 1 GB/s per lane)".into(),
            );
        }
        let max_payload = self.tlp_max_payload_bytes.unwrap_or(128);
        if max_payload == 0 {
            return bad("tlp_max_payload_bytes", "must be at least 1 (PCIe's default is 128)".into());
        }
        let overhead = self.packet_overhead_bytes.unwrap_or(28);
        if !sata && self.sata_processing_delay.is_some() {
            return bad("sata_processing_delay", "applies to kind = \"sata\" only: remove the key".into());
        }
        Ok(Some(Interface {
            sata,
            queues,
            queue_depth: depth,
            fetch_size: fetch,
            link: PcieLink {
                lanes: u64::from(lanes),
                lane_bytes_per_s: bw,
                max_payload: u64::from(max_payload),
                overhead: u64::from(overhead),
            },
            hba_delay: self.sata_processing_delay.unwrap_or(Nanos(0)),
        }))
    }
}

/// A validated host interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interface {
    /// SATA (one NCQ, HBA delay) rather than NVMe.
    pub sata: bool,
    /// Queue pairs.
    pub queues: u32,
    /// Entries per submission queue (NCQ depth for SATA).
    pub queue_depth: u32,
    /// Requests per queue the device holds at once.
    pub fetch_size: u32,
    /// The link.
    pub link: PcieLink,
    /// SATA HBA processing time per command, each way.
    pub hba_delay: Nanos,
}

/// The kind of a link message, which decides its size on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// A posted write carrying `n` bytes (doorbell, read data to the host, completion
    /// entry).
    Write(u64),
    /// A memory read request (4-byte payload: its length).
    ReadRequest,
    /// A read completion carrying `n` bytes (submission entry, write data).
    ReadCompletion(u64),
}

/// A PCIe link: `lanes` lanes of `lane_bytes_per_s`, messages split into packets of at
/// most `max_payload` bytes, each with `overhead` framing bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieLink {
    /// Lanes (bytes are striped over them).
    pub lanes: u64,
    /// Bytes per second of one lane.
    pub lane_bytes_per_s: u64,
    /// Largest packet payload.
    pub max_payload: u64,
    /// Framing bytes per packet.
    pub overhead: u64,
}

impl PcieLink {
    /// Bytes of `payload` on the wire: full packets plus a last partial one, each with
    /// its framing (MQSim's `estimate_transfer_time`).
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        let p = payload;
        let (full, rest) = (p / self.max_payload, p % self.max_payload);
        full * (self.max_payload + self.overhead) + if rest > 0 { rest + self.overhead } else { 0 }
    }

    /// Time the link needs for `m`: its wire bytes striped over the lanes (rounded up
    /// to whole bytes per lane), at the lane rate, rounded up to whole nanoseconds.
    /// MQSim truncates instead; at its 1 GB/s per lane (one byte per ns) both agree.
    pub fn transfer_time(&self, m: Message) -> Nanos {
        let bytes = match m {
            Message::Write(n) | Message::ReadCompletion(n) => self.wire_bytes(n),
            Message::ReadRequest => self.wire_bytes(READ_REQUEST_BYTES),
        };
        let per_lane = bytes.div_ceil(self.lanes);
        Nanos((u128::from(per_lane) * 1_000_000_000).div_ceil(u128::from(self.lane_bytes_per_s)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvme() -> Interface {
        InterfaceConfig { kind: InterfaceKind::Nvme, ..InterfaceConfig::default() }
            .resolve()
            .unwrap()
            .unwrap()
    }

    /// MQSim's default link: 28 framing bytes per ≤128-byte packet, 4 lanes at one byte
    /// per ns each.
    #[test]
    fn message_times_on_mqsims_default_link() {
        let l = nvme().link;
        // Doorbell: 2 + 28 = 30 bytes, 8 per lane (rounded up) → 8 ns.
        assert_eq!(l.transfer_time(Message::Write(DOORBELL_BYTES)), Nanos(8));
        // Read request: 4 + 28 = 32 bytes → 8 ns.
        assert_eq!(l.transfer_time(Message::ReadRequest), Nanos(8));
        // Submission entry: 72 + 28 = 100 bytes → 25 ns.
        assert_eq!(l.transfer_time(Message::ReadCompletion(SQE_BYTES)), Nanos(25));
        // Completion entry: 16 + 28 = 44 bytes → 11 ns.
        assert_eq!(l.transfer_time(Message::Write(CQE_BYTES)), Nanos(11));
        // 4 KiB: 32 packets of 156 bytes = 4992 bytes → 1248 ns.
        assert_eq!(l.transfer_time(Message::Write(4096)), Nanos(1248));
        // 8 KiB: 64 packets = 9984 bytes → 2496 ns.
        assert_eq!(l.transfer_time(Message::ReadCompletion(8192)), Nanos(2496));
        // A partial last packet carries its own framing: 200 = 128 + 72 → 156 + 100.
        assert_eq!(l.wire_bytes(200), 256);
    }

    /// The figures: MQSim adds 1.3 µs to a 4 KiB read and 2.6 µs to an 8 KiB
    /// write on its default device, on an idle link.
    #[test]
    fn unloaded_overheads_match_mqsim() {
        let l = nvme().link;
        let t = |m| l.transfer_time(m).0;
        let front = t(Message::Write(DOORBELL_BYTES))
            + t(Message::ReadRequest)
            + t(Message::ReadCompletion(SQE_BYTES));
        assert_eq!(front, 41);
        let read = front + t(Message::Write(4096)) + t(Message::Write(CQE_BYTES));
        assert_eq!(read, 1300);
        let write =
            front + t(Message::ReadRequest) + t(Message::ReadCompletion(8192)) + t(Message::Write(CQE_BYTES));
        assert_eq!(write, 2556);
    }

    #[test]
    fn slower_lanes_round_up() {
        let mut l = nvme().link;
        l.lanes = 1;
        l.lane_bytes_per_s = 600_000_000;
        // 44 bytes at 0.6 B/ns = 73.3 ns → 74 ns.
        assert_eq!(l.transfer_time(Message::Write(CQE_BYTES)), Nanos(74));
    }

    #[test]
    fn defaults_per_kind() {
        let n = nvme();
        assert_eq!((n.queues, n.queue_depth, n.fetch_size, n.link.lanes), (1, 65_535, 512, 4));
        let s = InterfaceConfig { kind: InterfaceKind::Sata, ..InterfaceConfig::default() }
            .resolve()
            .unwrap()
            .unwrap();
        assert!(s.sata);
        assert_eq!(
            (s.queue_depth, s.fetch_size, s.link.lanes, s.link.lane_bytes_per_s),
            (32, 32, 1, 600_000_000)
        );
        assert_eq!(InterfaceConfig::default().resolve().unwrap(), None);
    }

    #[test]
    fn bad_keys_are_named() {
        let err = |c: InterfaceConfig| c.resolve().unwrap_err();
        let nvme = InterfaceConfig { kind: InterfaceKind::Nvme, ..InterfaceConfig::default() };
        let sata = InterfaceConfig { kind: InterfaceKind::Sata, ..InterfaceConfig::default() };
        assert_eq!(
            err(InterfaceConfig { lanes: Some(4), ..InterfaceConfig::default() }).0,
            "host.interface.kind"
        );
        assert_eq!(
            err(InterfaceConfig { queue_depth: Some(0), ..nvme.clone() }).0,
            "host.interface.queue_depth"
        );
        assert_eq!(
            err(InterfaceConfig { queue_depth: Some(33), ..sata.clone() }).0,
            "host.interface.queue_depth"
        );
        assert_eq!(err(InterfaceConfig { queues: Some(2), ..sata.clone() }).0, "host.interface.queues");
        assert_eq!(err(InterfaceConfig { fetch_size: Some(4), ..sata }).0, "host.interface.fetch_size");
        assert_eq!(
            err(InterfaceConfig { fetch_size: Some(0), ..nvme.clone() }).0,
            "host.interface.fetch_size"
        );
        assert_eq!(err(InterfaceConfig { lanes: Some(0), ..nvme.clone() }).0, "host.interface.lanes");
        assert_eq!(
            err(InterfaceConfig { lane_bandwidth_bytes_per_s: Some(0), ..nvme.clone() }).0,
            "host.interface.lane_bandwidth_bytes_per_s"
        );
        assert_eq!(
            err(InterfaceConfig { sata_processing_delay: Some(Nanos(5)), ..nvme }).0,
            "host.interface.sata_processing_delay"
        );
    }
}
