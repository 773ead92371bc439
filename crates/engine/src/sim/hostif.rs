//! The host interface room (`[host.interface]`, model and timing in
//! [`crate::hostif`]): NVMe submission/completion queues or SATA NCQ, the fetch limit,
//! and the two directions of the PCIe link, each one message at a time in FIFO order.
//!
//! A request with the interface on: host arrival → (host wait for a queue entry) → SQ
//! doorbell → (wait for a fetch slot) → entry fetch → (write data fetch) → the device
//! admits it as a request arriving now ([`Simulation::arrive_device`]) → the device
//! completes it → (read data) → completion entry → the host records its response time,
//! from its host arrival. Nothing here runs with the interface off: the room is `None`.

use std::collections::VecDeque;

use lamina_nand_model::{Nanos, SimTime};

use super::{Event, RunError, Simulation};
use crate::hostif::{CQE_BYTES, DOORBELL_BYTES, Interface, Message, SQE_BYTES};
use crate::slab::Slab;
use crate::stats::Attribution;
use crate::trace::{IoOp, IoRequest, TraceTime};

/// A step of a request through the interface: the message (or HBA stage) that just
/// finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// SATA: the HBA finished processing the submission.
    HbaSubmitted,
    /// The submission queue tail doorbell reached the device.
    Doorbell,
    /// The device's read request for the queue entry reached the host.
    FetchRequest,
    /// The queue entry reached the device.
    Entry,
    /// The device's read request for a write's data reached the host.
    DataRequest,
    /// A write's data reached the device.
    Data,
    /// The completion queue entry reached the host.
    Completion,
    /// SATA: the HBA finished processing the completion.
    HbaConsumed,
}

/// One queue pair (or the NCQ).
#[derive(Default)]
struct Queue {
    /// Entries in the submission queue (submitted, not yet completed to the host).
    in_sq: u32,
    /// Requests the device fetched and has not completed.
    fetched: u32,
    /// Requests waiting in the host for a submission-queue entry.
    waiting: VecDeque<u32>,
    /// Entries whose doorbell arrived but that wait for a fetch slot.
    unfetched: VecDeque<u32>,
}

/// A request in the interface.
struct HifReq {
    /// The request as the host issued it (arrival = host arrival).
    req: IoRequest,
    /// Its index in submission order.
    id: u64,
    queue: u32,
    /// When it started waiting for a queue entry (valid while waiting).
    wait_since: SimTime,
    /// Time spent waiting in the host for a queue entry.
    host_wait: Nanos,
    /// When the device admitted it.
    admitted: SimTime,
    /// When the device completed it.
    device_done: SimTime,
    /// The device's attribution of its response time (from `admitted`).
    attr: Attribution,
    /// Its device-side wait (admission to the start of its last sub-request).
    device_wait: Nanos,
    /// Its first logical page (latency log).
    lpn: u64,
}

/// What the interface did (the report's `host_interface` section).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostIfCounters {
    /// Messages host → device and device → host.
    pub messages: [u64; 2],
    /// Bytes on the wire (framing included) each way.
    pub wire_bytes: [u64; 2],
    /// Link busy time each way.
    pub busy_ns: [u64; 2],
    /// Requests that waited in the host for a submission-queue entry.
    pub host_waits: u64,
    /// Requests whose entry waited for a fetch slot.
    pub fetch_waits: u64,
    /// Most entries in one submission queue at once.
    pub peak_queue: u32,
}

/// The interface's state.
pub(crate) struct HostIf {
    pub(crate) model: Interface,
    /// When each direction of the link (0 = to the device, 1 = to the host) finishes
    /// the messages already on it.
    link_free: [SimTime; 2],
    /// When the SATA HBA finishes the submissions / completions given to it.
    hba_submit_free: SimTime,
    hba_consume_free: SimTime,
    queues: Vec<Queue>,
    reqs: Slab<HifReq>,
    /// Device request id → interface slot, for requests in the device. Looked up only,
    /// never iterated.
    in_device: rustc_hash::FxHashMap<u64, u32>,
    pub(crate) counters: HostIfCounters,
}

const TO_DEVICE: usize = 0;
const TO_HOST: usize = 1;

impl HostIf {
    pub(crate) fn new(model: Interface) -> HostIf {
        HostIf {
            model,
            link_free: [SimTime::ZERO; 2],
            hba_submit_free: SimTime::ZERO,
            hba_consume_free: SimTime::ZERO,
            queues: (0..model.queues).map(|_| Queue::default()).collect(),
            reqs: Slab::default(),
            in_device: rustc_hash::FxHashMap::default(),
            counters: HostIfCounters::default(),
        }
    }

    /// Requests in the interface (host queues, link, device), not yet completed.
    pub(crate) fn outstanding(&self) -> usize {
        self.reqs.len()
    }

    /// Put `m` on direction `dir` of the link at `now`; returns when it arrives.
    fn send(&mut self, now: SimTime, dir: usize, m: Message) -> SimTime {
        let xfer = self.model.link.transfer_time(m);
        let start = now.max(self.link_free[dir]);
        let end = start + xfer;
        self.link_free[dir] = end;
        let c = &mut self.counters;
        c.messages[dir] += 1;
        c.wire_bytes[dir] += self.model.link.wire_bytes(match m {
            Message::Write(n) | Message::ReadCompletion(n) => n,
            Message::ReadRequest => crate::hostif::READ_REQUEST_BYTES,
        });
        c.busy_ns[dir] += xfer.0;
        end
    }
}

impl Simulation {
    fn hif(&mut self) -> &mut HostIf {
        self.hif.as_deref_mut().expect("host interface")
    }

    /// A request arrives at the host (interface on).
    pub(super) fn hif_arrive(&mut self, id: u64, r: IoRequest) -> Result<(), RunError> {
        let now = self.now;
        let lpn = r.offset_bytes / self.page_size as u64;
        let h = self.hif();
        let queue = (id % u64::from(h.model.queues)) as u32;
        let slot = h.reqs.insert(HifReq {
            req: r,
            id,
            queue,
            wait_since: now,
            host_wait: Nanos(0),
            admitted: now,
            device_done: now,
            attr: Attribution::default(),
            device_wait: Nanos(0),
            lpn,
        });
        if h.model.sata && h.model.hba_delay.0 > 0 {
            let t = now.max(h.hba_submit_free) + h.model.hba_delay;
            h.hba_submit_free = t;
            self.events.push(t, Event::HostIf { slot, step: Step::HbaSubmitted });
            return Ok(());
        }
        self.hif_submit(slot);
        Ok(())
    }

    /// The host puts `slot` in its submission queue, or makes it wait for an entry.
    fn hif_submit(&mut self, slot: u32) {
        let now = self.now;
        let h = self.hif();
        let r = h.reqs.get_mut(slot);
        r.wait_since = now;
        let q = &mut h.queues[r.queue as usize];
        if q.in_sq >= h.model.queue_depth {
            q.waiting.push_back(slot);
            h.counters.host_waits += 1;
            return;
        }
        self.hif_enter_queue(slot);
    }

    /// `slot` takes a submission-queue entry; the host rings the tail doorbell.
    fn hif_enter_queue(&mut self, slot: u32) {
        let now = self.now;
        let h = self.hif();
        let r = h.reqs.get_mut(slot);
        r.host_wait += now.since(r.wait_since);
        let q = &mut h.queues[r.queue as usize];
        q.in_sq += 1;
        h.counters.peak_queue = h.counters.peak_queue.max(q.in_sq);
        let t = h.send(now, TO_DEVICE, Message::Write(DOORBELL_BYTES));
        self.events.push(t, Event::HostIf { slot, step: Step::Doorbell });
    }

    /// The device asks the host for `slot`'s queue entry.
    fn hif_fetch(&mut self, slot: u32) {
        let now = self.now;
        let t = self.hif().send(now, TO_HOST, Message::ReadRequest);
        self.events.push(t, Event::HostIf { slot, step: Step::FetchRequest });
    }

    /// A message (or HBA stage) of `slot` finished.
    pub(super) fn hif_step(&mut self, slot: u32, step: Step) -> Result<(), RunError> {
        let now = self.now;
        match step {
            Step::HbaSubmitted => self.hif_submit(slot),
            Step::Doorbell => {
                let h = self.hif();
                let fetch_size = h.model.fetch_size;
                let q = &mut h.queues[h.reqs.get(slot).queue as usize];
                if q.fetched < fetch_size {
                    q.fetched += 1;
                    self.hif_fetch(slot);
                } else {
                    q.unfetched.push_back(slot);
                    h.counters.fetch_waits += 1;
                }
            }
            Step::FetchRequest => {
                let t = self.hif().send(now, TO_DEVICE, Message::ReadCompletion(SQE_BYTES));
                self.events.push(t, Event::HostIf { slot, step: Step::Entry });
            }
            Step::Entry => {
                let h = self.hif();
                let r = &h.reqs.get(slot).req;
                if r.op == IoOp::Write {
                    let t = h.send(now, TO_HOST, Message::ReadRequest);
                    self.events.push(t, Event::HostIf { slot, step: Step::DataRequest });
                } else {
                    return self.hif_admit(slot);
                }
            }
            Step::DataRequest => {
                let h = self.hif();
                let bytes = h.reqs.get(slot).req.size_bytes;
                let t = h.send(now, TO_DEVICE, Message::ReadCompletion(bytes));
                self.events.push(t, Event::HostIf { slot, step: Step::Data });
            }
            Step::Data => return self.hif_admit(slot),
            Step::Completion => {
                let h = self.hif();
                if h.model.sata && h.model.hba_delay.0 > 0 {
                    let t = now.max(h.hba_consume_free) + h.model.hba_delay;
                    h.hba_consume_free = t;
                    self.events.push(t, Event::HostIf { slot, step: Step::HbaConsumed });
                } else {
                    self.hif_complete(slot);
                }
            }
            Step::HbaConsumed => self.hif_complete(slot),
        }
        Ok(())
    }

    /// The device has `slot`'s command (and a write's data): it arrives at the
    /// controller now.
    fn hif_admit(&mut self, slot: u32) -> Result<(), RunError> {
        let now = self.now;
        let h = self.hif();
        let r = h.reqs.get_mut(slot);
        r.admitted = now;
        let (id, mut req) = (r.id, r.req);
        h.in_device.insert(id, slot);
        req.arrival = TraceTime(now.as_ns());
        self.arrive_device(id, req)
    }

    /// The device completed request `id` (admitted at `admitted`, its last part
    /// started at `last_start`, attributed `attr`): send a read's data and the
    /// completion entry to the host, and fetch the queue's next entry.
    pub(super) fn hif_device_done(&mut self, id: u64, last_start: SimTime, attr: &Attribution) {
        let now = self.now;
        let h = self.hif();
        let slot = h.in_device.remove(&id).expect("a request in the device came through the interface");
        let r = h.reqs.get_mut(slot);
        r.device_done = now;
        r.attr = *attr;
        r.device_wait = last_start.saturating_since(r.admitted);
        let (op, bytes, queue) = (r.req.op, r.req.size_bytes, r.queue as usize);
        // MQSim's order on the device → host direction: the read data, the next entry's
        // fetch request, then the completion entry.
        if op == IoOp::Read {
            h.send(now, TO_HOST, Message::Write(bytes));
        }
        let q = &mut h.queues[queue];
        q.fetched -= 1;
        if let Some(next) = q.unfetched.pop_front() {
            q.fetched += 1;
            self.hif_fetch(next);
        }
        let t = self.hif().send(now, TO_HOST, Message::Write(CQE_BYTES));
        self.events.push(t, Event::HostIf { slot, step: Step::Completion });
    }

    /// The host has `slot`'s completion: record its response time and free its entry.
    fn hif_complete(&mut self, slot: u32) {
        let now = self.now;
        let h = self.hif();
        let r = h.reqs.remove(slot);
        // Interface time: host arrival to device admission (less the wait for a queue
        // entry, which is queueing) and device completion to now.
        let front = r.admitted.since(r.req.arrival.into_sim()).0 - r.host_wait.0;
        let hif_time = Nanos(front + now.since(r.device_done).0);
        let mut attr = r.attr;
        attr.queue_wait += r.host_wait;
        let arrival = r.req.arrival.into_sim();
        let wait = Nanos(r.admitted.since(arrival).0 + r.device_wait.0);
        let q = &mut h.queues[r.queue as usize];
        q.in_sq -= 1;
        let next = q.waiting.pop_front();
        let sata = h.model.sata;
        if sata {
            // The HBA updates the NCQ completion pointer before submitting waiters.
            h.send(now, TO_DEVICE, Message::Write(DOORBELL_BYTES));
        }
        if let Some(next) = next {
            self.hif_enter_queue(next);
        }
        if !sata {
            // The host writes the CQ head doorbell after submitting waiting requests.
            let now = self.now;
            self.hif().send(now, TO_DEVICE, Message::Write(DOORBELL_BYTES));
        }
        self.record_completion(r.id, r.req.op, r.req.size_bytes, arrival, r.lpn, wait, &attr, Some(hif_time));
    }
}

/// Trace time as simulated time.
trait IntoSim {
    fn into_sim(self) -> SimTime;
}

impl IntoSim for TraceTime {
    #[inline]
    fn into_sim(self) -> SimTime {
        SimTime(self.as_ns())
    }
}
