//! Mapping the host's wall clock onto simulated time (the only place `lamina serve`
//! reads wall time into the simulation; the engine itself never does).
//!
//! The clock is a line `v(w) = anchor_sim + (w − anchor_wall)`: simulated time runs at
//! wall-clock speed from an anchor. The first request arrives at simulated 0 (the anchor
//! is set then), so a recorded trace starts at 0 and `lamina run`'s rebase is a no-op.
//!
//! - **Virtual** mode: when the engine simulates ahead of `v(now)` (to reach a completion
//!   it can reply with at once), the anchor jumps to `(reached, now)`: the device's
//!   service time replaces the engine's computing time, and the client's own gaps (think
//!   time, network turnaround, time between connections) are kept as they were. A request
//!   received while the engine was ahead arrives at the simulated present.
//! - **Paced** mode: the anchor never moves; the engine simulates only up to `v(now)`,
//!   so a reply leaves when the wall clock reaches its simulated completion.
//!
//! Every arrival is also at least the simulated present and strictly after the previous
//! arrival (1 ns later when the wall clock gives no gap): each request is then its own
//! arrival instant, which makes the stepping API's interleaving of arrivals and events
//! exactly [`lamina_engine::Simulation::run`]'s — the property the recorded trace's
//! exact replay rests on.

use std::time::Instant;

use lamina_nand_model::SimTime;

/// The wall clock. The workspace bans `Instant::now` (clippy.toml) so that no
/// simulation crate reads it; the server's clock is the one place that must, and every
/// wall-clock read of this crate goes through here.
#[allow(clippy::disallowed_methods)]
pub fn wall_now() -> Instant {
    Instant::now()
}

/// How simulated time follows the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Reply as soon as the completion is simulated; simulated time jumps ahead.
    Virtual,
    /// Reply when the wall clock reaches the simulated completion.
    Paced,
}

/// The wall-to-simulated clock.
#[derive(Debug)]
pub struct Clock {
    pacing: Pacing,
    anchor: Option<(SimTime, Instant)>,
    last_arrival: Option<SimTime>,
}

impl Clock {
    /// A clock that starts at the first arrival.
    pub fn new(pacing: Pacing) -> Clock {
        Clock { pacing, anchor: None, last_arrival: None }
    }

    /// The pacing mode.
    pub fn pacing(&self) -> Pacing {
        self.pacing
    }

    /// `v(wall)`; `None` before the first arrival.
    pub fn sim_at(&self, wall: Instant) -> Option<SimTime> {
        let (s, w) = self.anchor?;
        Some(SimTime(s.as_ns() + wall.saturating_duration_since(w).as_nanos() as u64))
    }

    /// The wall instant at which simulated time `t` is reached (paced mode's deadline);
    /// `None` before the first arrival.
    pub fn wall_at(&self, t: SimTime) -> Option<Instant> {
        let (s, w) = self.anchor?;
        Some(w + std::time::Duration::from_nanos(t.as_ns().saturating_sub(s.as_ns())))
    }

    /// The simulated arrival of a request received at `wall`, with the simulation at
    /// `present`: `max(v(wall), present, previous arrival + 1 ns)`.
    pub fn arrival(&mut self, wall: Instant, present: SimTime) -> SimTime {
        if self.anchor.is_none() {
            self.anchor = Some((present, wall));
        }
        let v = self.sim_at(wall).expect("anchored");
        let after_last = self.last_arrival.map_or(SimTime::ZERO, |l| SimTime(l.as_ns() + 1));
        let a = v.max(present).max(after_last);
        self.last_arrival = Some(a);
        a
    }

    /// The engine has simulated up to `reached` at wall instant `now`: in virtual mode
    /// the clock jumps forward if the simulation is ahead of it.
    pub fn reached(&mut self, reached: SimTime, now: Instant) {
        if self.pacing == Pacing::Virtual
            && let Some(v) = self.sim_at(now)
            && reached > v
        {
            self.anchor = Some((reached, now));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn virtual_clock_keeps_gaps_and_jumps_with_the_simulation() {
        let w0 = wall_now();
        let us = |n: u64| Duration::from_micros(n);
        let mut c = Clock::new(Pacing::Virtual);
        assert_eq!(c.arrival(w0, SimTime::ZERO), SimTime(0));
        // Same wall instant: 1 ns after the previous arrival.
        assert_eq!(c.arrival(w0, SimTime::ZERO), SimTime(1));
        // The engine simulated to 500 µs at wall +10 µs; a request 30 µs of wall later
        // arrives 30 µs after the jump.
        c.reached(SimTime(500_000), w0 + us(10));
        assert_eq!(c.arrival(w0 + us(40), SimTime(500_000)), SimTime(530_000));
        // Received before the jump's wall instant: at the simulated present.
        assert_eq!(c.arrival(w0 + us(5), SimTime(530_000)), SimTime(530_001));
        // Reaching a time the clock has passed does not move it back.
        c.reached(SimTime(1), w0 + us(50));
        assert_eq!(c.sim_at(w0 + us(50)), Some(SimTime(540_000)));
    }

    #[test]
    fn paced_clock_never_jumps() {
        let w0 = wall_now();
        let mut c = Clock::new(Pacing::Paced);
        assert_eq!(c.arrival(w0, SimTime::ZERO), SimTime(0));
        c.reached(SimTime(1_000_000), w0);
        assert_eq!(c.sim_at(w0 + Duration::from_micros(3)), Some(SimTime(3_000)));
        assert_eq!(c.wall_at(SimTime(7_000)), Some(w0 + Duration::from_micros(7)));
    }
}
