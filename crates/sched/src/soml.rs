//! SOML read combining on an abstract queue (soml-read §5.2): Algorithm 1, the
//! first-read baseline, and an exact "optimal" combiner for the paper's Fig. 8d.
//!
//! A queued partial read is reduced to what the two hardware constraints and the
//! timing need ([`SomlPart`]): its bit-line slots, its block decoder and its latency
//! terms. The `soml` scheduler ([`crate::SchedulerKind::Soml`]) forms its commands with
//! the same rule ([`SomlGroup`]), so what is tested here is what the simulator does.
//!
//! - [`algorithm1`]: walk the queue in arrival order from its head and take every read
//!   that shares no bit-line slot and no block decoder with those taken, up to
//!   `max_parts` — the paper's Algorithm 1, line by line.
//! - [`plan_greedy`]: apply Algorithm 1 to what is left until the queue is empty (how
//!   a chip serving its queue back to back executes it).
//! - [`plan_baseline`]: one read per operation, in arrival order.
//! - [`plan_optimal`]: the partition into SOML reads *and* their order that minimise
//!   the mean latency of the queued reads, exactly, by dynamic programming over subsets
//!   of the queue (queues of at most [`OPTIMAL_MAX_QUEUE`] reads; the paper's own
//!   exhaustive search took over an hour for 14).

/// Longest queue [`plan_optimal`] accepts (its state space is `2^n` subsets).
pub const OPTIMAL_MAX_QUEUE: usize = 16;

/// One queued partial read, as SOML combining sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SomlPart {
    /// Bit-line slots it occupies (bit `i` = partial slot `i` of the page).
    pub slots: u64,
    /// Its block decoder (`block index % decoders`); the same block always shares it.
    pub decoder: u32,
    /// Array (sensing) time of its page, ns.
    pub array_ns: u64,
    /// Data-out time of its bytes, ns.
    pub out_ns: u64,
}

/// The parts of one SOML read being formed: the slots and decoders in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SomlGroup {
    slots: u64,
    /// Decoders in use below 64, as bits.
    decoders: u64,
    /// Decoders in use from 64 on (more than 64 decoders per plane), listed. Every part
    /// holds a slot of its own, so a group has at most 64 parts.
    far: [u32; 64],
    far_len: u8,
    len: u32,
}

impl Default for SomlGroup {
    fn default() -> Self {
        SomlGroup { slots: 0, decoders: 0, far: [0; 64], far_len: 0, len: 0 }
    }
}

impl SomlGroup {
    /// An empty group.
    pub fn new() -> SomlGroup {
        SomlGroup::default()
    }

    /// Parts in the group.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when no part was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a read with these `slots` and `decoder` may join (Algorithm 1, lines 3–4:
    /// no shared bit-lines, no shared block decoder) within `max_parts`.
    pub fn admits(&self, slots: u64, decoder: u32, max_parts: u32) -> bool {
        self.len < max_parts && self.slots & slots == 0 && !self.uses_decoder(decoder)
    }

    /// Add a read (lines 5–7). The caller checked [`SomlGroup::admits`] (so `slots` is
    /// non-empty and disjoint from the group's: at most 64 parts).
    pub fn add(&mut self, slots: u64, decoder: u32) {
        debug_assert!(slots != 0 && self.slots & slots == 0);
        self.slots |= slots;
        if decoder < 64 {
            self.decoders |= 1 << decoder;
        } else {
            self.far[self.far_len as usize] = decoder;
            self.far_len += 1;
        }
        self.len += 1;
    }

    fn uses_decoder(&self, d: u32) -> bool {
        if d < 64 { self.decoders & (1 << d) != 0 } else { self.far[..self.far_len as usize].contains(&d) }
    }
}

/// Algorithm 1 over `queue` in order, starting from its head: the indices of the reads
/// that form one SOML read (the head always, then every read that fits).
pub fn algorithm1(queue: &[SomlPart], max_parts: u32, out: &mut Vec<u32>) {
    out.clear();
    let mut g = SomlGroup::new();
    for (i, p) in queue.iter().enumerate() {
        if g.admits(p.slots, p.decoder, max_parts) {
            g.add(p.slots, p.decoder);
            out.push(i as u32);
        }
    }
}

/// An execution plan: the SOML reads (indices into the queue) in execution order.
pub type Plan = Vec<Vec<u32>>;

/// Algorithm 1 applied to the remaining queue until every read is served.
pub fn plan_greedy(queue: &[SomlPart], max_parts: u32) -> Plan {
    let mut left: Vec<u32> = (0..queue.len() as u32).collect();
    let mut rest: Vec<SomlPart> = queue.to_vec();
    let mut plan = Vec::new();
    let mut picked = Vec::new();
    while !rest.is_empty() {
        algorithm1(&rest, max_parts, &mut picked);
        plan.push(picked.iter().map(|&k| left[k as usize]).collect());
        let mut k = 0;
        let mut next = picked.iter().peekable();
        left.retain(|_| {
            let drop = next.peek().is_some_and(|&&p| p == k);
            if drop {
                next.next();
            }
            k += 1;
            !drop
        });
        rest = left.iter().map(|&i| queue[i as usize]).collect();
    }
    plan
}

/// The first-read baseline: one read per operation, in arrival order.
pub fn plan_baseline(queue: &[SomlPart]) -> Plan {
    (0..queue.len() as u32).map(|i| vec![i]).collect()
}

/// How long one (SOML) read of `parts` takes: a command per part, the slowest part's
/// array time, and the data-out of every part (the device's SOML timing,
/// docs/model.md).
pub fn op_ns(queue: &[SomlPart], parts: &[u32], t_cmd_ns: u64) -> u64 {
    let array = parts.iter().map(|&i| queue[i as usize].array_ns).max().unwrap_or(0);
    let out: u64 = parts.iter().map(|&i| queue[i as usize].out_ns).sum();
    parts.len() as u64 * t_cmd_ns + array + out
}

/// Sum of the reads' completion times when the chip executes `plan` back to back from
/// time 0 (the mean latency × queue length; every read waits for the operations
/// before its own and for its own).
pub fn total_latency_ns(queue: &[SomlPart], plan: &Plan, t_cmd_ns: u64) -> u64 {
    let mut now = 0;
    let mut total = 0;
    for op in plan {
        now += op_ns(queue, op, t_cmd_ns);
        total += now * op.len() as u64;
    }
    total
}

/// The queue is too long for the exact search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the optimal SOML combiner takes at most {OPTIMAL_MAX_QUEUE} queued reads, got {0}")]
pub struct QueueTooLong(pub usize);

/// What [`plan_optimal`] minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The mean latency of the queued reads ([`total_latency_ns`]), over every
    /// partition into SOML reads and every order of them.
    MeanLatency,
    /// The fewest SOML reads (the paper's sense of "optimal" in Fig. 8b/8c), then the
    /// mean latency among those plans.
    FewestReads,
}

/// The plan minimising `objective` over every partition of the queue into valid SOML
/// reads and every order of them, with its [`total_latency_ns`].
///
/// Dynamic programming over the set `S` of reads not yet served: serving a valid group
/// `G ⊆ S` first costs its duration once for each of the `|S|` reads still waiting,
/// so `f(S) = min_G (|S| · op_ns(G) + f(S ∖ G))`, `f(∅) = 0` (with
/// [`Objective::FewestReads`] the cost is the pair (reads, that sum), compared in that
/// order). Valid groups are enumerated by extending groups in index order and pruning
/// at the first conflict. Ties keep the first group found (lowest indices first), so
/// the plan is deterministic.
pub fn plan_optimal(
    queue: &[SomlPart],
    max_parts: u32,
    t_cmd_ns: u64,
    objective: Objective,
) -> Result<(Plan, u64), QueueTooLong> {
    let n = queue.len();
    if n > OPTIMAL_MAX_QUEUE {
        return Err(QueueTooLong(n));
    }
    // Every valid group as a bit set, with its duration.
    let mut groups: Vec<(u32, u64)> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    fn extend(
        queue: &[SomlPart],
        max_parts: u32,
        t_cmd_ns: u64,
        from: usize,
        g: SomlGroup,
        stack: &mut Vec<u32>,
        groups: &mut Vec<(u32, u64)>,
    ) {
        for i in from..queue.len() {
            let p = queue[i];
            if !g.admits(p.slots, p.decoder, max_parts) {
                continue;
            }
            let mut g2 = g;
            g2.add(p.slots, p.decoder);
            stack.push(i as u32);
            let mask = stack.iter().fold(0u32, |m, &k| m | 1 << k);
            groups.push((mask, op_ns(queue, stack, t_cmd_ns)));
            extend(queue, max_parts, t_cmd_ns, i + 1, g2, stack, groups);
            stack.pop();
        }
    }
    extend(queue, max_parts, t_cmd_ns, 0, SomlGroup::new(), &mut stack, &mut groups);
    // Groups whose lowest read is `i`, so a state enumerates only groups inside it.
    let full = if n == 0 { 0 } else { u32::MAX >> (32 - n) };
    // The cost as one integer: (reads << 64 | latency sum) or the latency sum alone.
    let per_read: u128 = match objective {
        Objective::MeanLatency => 0,
        Objective::FewestReads => 1 << 64,
    };
    let mut best = vec![u128::MAX; 1 << n];
    let mut choice = vec![0u32; 1 << n];
    best[0] = 0;
    for s in 1..=full {
        let waiting = u128::from(s.count_ones());
        for &(g, d) in &groups {
            if g & s != g {
                continue;
            }
            let c = best[(s & !g) as usize] + per_read + waiting * u128::from(d);
            if c < best[s as usize] {
                best[s as usize] = c;
                choice[s as usize] = g;
            }
        }
    }
    let mut plan = Vec::new();
    let mut s = full;
    while s != 0 {
        let g = choice[s as usize];
        plan.push((0..n as u32).filter(|&i| g & 1 << i != 0).collect());
        s &= !g;
    }
    Ok((plan, (best[full as usize] % (1 << 64)) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 16 KiB page in four 4 KiB slots; reads of `slots` (first, count) and `block`.
    fn part(first: u32, count: u32, block: u32) -> SomlPart {
        SomlPart {
            slots: ((1u64 << count) - 1) << first,
            decoder: block % 4,
            array_ns: 100,
            out_ns: 10 * count as u64,
        }
    }

    /// Fig. 8b: five reads of 4 or 8 KiB (24 KiB in all); read 3 shares bit-lines with
    /// read 2 and read 5 with read 1. Algorithm 1 forms {1, 2, 4} and then {3, 5}: two
    /// reads, the fewest 24 KiB allows, so also optimal.
    fn fig8b() -> Vec<SomlPart> {
        vec![part(0, 2, 0), part(2, 1, 1), part(2, 1, 2), part(3, 1, 3), part(1, 1, 5)]
    }

    /// Fig. 8c: as 8b, but reads 3 and 5 are in the same block (one decoder), and read
    /// 2's decoder differs from theirs. Algorithm 1 still forms {1, 2, 4} first; 3 and 5
    /// then cannot go together: three reads. {1, 3, 4} and {2, 5} is the optimum.
    fn fig8c() -> Vec<SomlPart> {
        vec![part(0, 2, 0), part(2, 1, 3), part(2, 1, 9), part(3, 1, 2), part(1, 1, 9)]
    }

    #[test]
    fn algorithm1_reproduces_fig8b() {
        let q = fig8b();
        let mut first = Vec::new();
        algorithm1(&q, 4, &mut first);
        assert_eq!(first, [0, 1, 3]);
        let greedy = plan_greedy(&q, 4);
        assert_eq!(greedy, vec![vec![0, 1, 3], vec![2, 4]]);
        // Optimal in the paper's sense (the fewest reads); by mean latency the exact
        // search does no worse, with as few reads.
        let (opt, cost) = plan_optimal(&q, 4, 5, Objective::MeanLatency).unwrap();
        assert_eq!(opt.len(), 2);
        assert!(cost <= total_latency_ns(&q, &greedy, 5));
    }

    #[test]
    fn algorithm1_is_suboptimal_on_fig8c_and_the_optimum_is_found() {
        let q = fig8c();
        let greedy = plan_greedy(&q, 4);
        assert_eq!(greedy, vec![vec![0, 1, 3], vec![2], vec![4]]);
        // The paper's better plan, {1, 3, 4} then {2, 5}, is valid: two reads.
        let paper = vec![vec![0, 2, 3], vec![1, 4]];
        for op in &paper {
            let mut g = SomlGroup::new();
            for &i in op {
                let p = q[i as usize];
                assert!(g.admits(p.slots, p.decoder, 4), "{op:?}");
                g.add(p.slots, p.decoder);
            }
        }
        // The exact search also needs two reads, and by mean latency it is at least as
        // good as the paper's plan (here strictly: it serves three reads first).
        let (opt, cost) = plan_optimal(&q, 4, 5, Objective::MeanLatency).unwrap();
        assert_eq!(opt.len(), 2);
        assert_eq!(cost, total_latency_ns(&q, &opt, 5));
        assert!(cost <= total_latency_ns(&q, &paper, 5));
        assert!(total_latency_ns(&q, &paper, 5) < total_latency_ns(&q, &greedy, 5));
        let (few, few_cost) = plan_optimal(&q, 4, 5, Objective::FewestReads).unwrap();
        assert_eq!((few.len(), few_cost), (2, cost), "here the fastest plan is also a fewest-reads one");
        assert!(total_latency_ns(&q, &greedy, 5) < total_latency_ns(&q, &plan_baseline(&q), 5));
    }

    #[test]
    fn the_group_rule_is_the_papers_two_constraints() {
        let mut g = SomlGroup::new();
        assert!(g.admits(0b0011, 0, 4));
        g.add(0b0011, 0);
        assert!(!g.admits(0b0010, 1, 4), "shared bit-lines");
        assert!(!g.admits(0b0100, 0, 4), "shared block decoder");
        assert!(g.admits(0b0100, 1, 4));
        assert!(!g.admits(0b0100, 1, 1), "max_parts");
        g.add(0b0100, 70);
        assert!(!g.admits(0b1000, 70, 4), "decoders above 63 are tracked too");
        assert!(g.admits(0b1000, 71, 4));
    }

    /// The DP against brute force over every ordered partition, on small random queues.
    #[test]
    fn the_optimum_matches_brute_force() {
        fn brute(q: &[SomlPart], left: u32, waiting: u64, t_cmd: u64) -> u64 {
            if left == 0 {
                return 0;
            }
            let mut best = u64::MAX;
            // Every non-empty subset of `left` that is a valid group.
            let mut g = left;
            while g != 0 {
                let idx: Vec<u32> = (0..q.len() as u32).filter(|&i| g & 1 << i != 0).collect();
                let mut grp = SomlGroup::new();
                let ok = idx.iter().all(|&i| {
                    let p = q[i as usize];
                    let ok = grp.admits(p.slots, p.decoder, 3);
                    if ok {
                        grp.add(p.slots, p.decoder);
                    }
                    ok
                });
                if ok {
                    let c = waiting * op_ns(q, &idx, t_cmd)
                        + brute(q, left & !g, waiting - idx.len() as u64, t_cmd);
                    best = best.min(c);
                }
                g = (g - 1) & left;
            }
            best
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for n in 1..=6 {
            for _ in 0..30 {
                let q: Vec<SomlPart> = (0..n)
                    .map(|_| {
                        let count = 1 + next(2) as u32;
                        let first = next(u64::from(5 - count)) as u32;
                        SomlPart { array_ns: 50 + 50 * next(3), ..part(first, count, next(6) as u32) }
                    })
                    .collect();
                let (plan, cost) = plan_optimal(&q, 3, 7, Objective::MeanLatency).unwrap();
                assert_eq!(cost, total_latency_ns(&q, &plan, 7));
                assert_eq!(cost, brute(&q, (1 << n) - 1, n as u64, 7), "{q:?}");
                assert!(cost <= total_latency_ns(&q, &plan_greedy(&q, 3), 7));
                let (few, few_cost) = plan_optimal(&q, 3, 7, Objective::FewestReads).unwrap();
                assert!(few.len() <= plan_greedy(&q, 3).len() && few.len() <= plan.len());
                assert!(few_cost >= cost);
                assert_eq!(few_cost, total_latency_ns(&q, &few, 7));
            }
        }
    }

    #[test]
    fn long_queues_are_refused() {
        let q = vec![part(0, 1, 0); OPTIMAL_MAX_QUEUE + 1];
        assert_eq!(
            plan_optimal(&q, 4, 0, Objective::MeanLatency).unwrap_err(),
            QueueTooLong(OPTIMAL_MAX_QUEUE + 1)
        );
        assert!(plan_optimal(&q[..OPTIMAL_MAX_QUEUE], 4, 0, Objective::FewestReads).is_ok());
    }
}
