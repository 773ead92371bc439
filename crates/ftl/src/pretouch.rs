//! A helper thread that prepares items ahead of need and hands them over one at a time:
//! the forward map's pre-touched leaf chunks (`lpn_map::pool`) and the page FTL's
//! reverse maps (`page::RevSupply`).
//!
//! Why: the first write to fresh anonymous memory makes the kernel zero it
//! (`clear_page_erms`), and on this project's VMs that first touch is slow and erratic —
//! 0.1 to 5 ms per 2 MiB, worst when the host has not backed the guest's memory yet. The
//! forward map's leaves are handed out in order, so the memory they will need next is
//! known: a thread on the (otherwise mostly idle) second core allocates and touches it
//! before the simulation's thread gets there. The same holds for the reverse maps of the
//! blocks the page FTL opens (one per block, never freed, only recycled at erase).
//!
//! Nothing observable depends on the thread: an item is a fresh zeroed table whether the
//! helper made it or the caller did, [`Pretoucher::take`] never waits (the caller makes
//! its own item when none is ready), and the items are only memory. The number of live
//! helpers in the process is bounded by the machine's parallelism (sweeps run many
//! simulations at once); a pretoucher that finds the bound reached is simply not made.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

/// Helper threads alive in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The most helper threads alive at once: the machine's parallelism.
fn live_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A helper thread making up to a given number of items, one ahead of the consumer.
pub(crate) struct Pretoucher<T> {
    /// `None` only while dropping (the receiver goes first, so a blocked send returns).
    rx: Option<Receiver<T>>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Pretoucher<T> {
    /// A thread that makes `count` items with `make`, each as soon as the previous one
    /// was taken (one item waits ready, at most); `None` when the process already runs
    /// as many helpers as it has cores, or the system refuses a thread.
    pub(crate) fn spawn(count: usize, make: impl Fn() -> T + Send + 'static) -> Option<Pretoucher<T>> {
        if count == 0 || LIVE.fetch_add(1, Ordering::Relaxed) >= live_limit() {
            if count != 0 {
                LIVE.fetch_sub(1, Ordering::Relaxed);
            }
            return None;
        }
        // Zero capacity: the item ready is the one the thread holds while blocked in
        // `send`, so at most one item is made and not (yet) used.
        let (tx, rx) = sync_channel(0);
        let spawned = std::thread::Builder::new().name("lamina-pretouch".into()).spawn(move || {
            for _ in 0..count {
                if tx.send(make()).is_err() {
                    break;
                }
            }
        });
        match spawned {
            Ok(thread) => Some(Pretoucher { rx: Some(rx), thread: Some(thread) }),
            Err(_) => {
                LIVE.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// The next item if one is ready; never waits.
    pub(crate) fn take(&self) -> Option<T> {
        // Empty (not ready) or disconnected (all made): the caller makes its own.
        self.rx.as_ref()?.try_recv().ok()
    }
}

impl<T> Drop for Pretoucher<T> {
    /// Stops the thread (it finishes the item in hand, at most) and waits for it.
    fn drop(&mut self) {
        drop(self.rx.take());
        if let Some(thread) = self.thread.take() {
            // A panic on the helper (it only allocates and writes) cannot have touched
            // the caller's state; there is nothing to report.
            let _ = thread.join();
        }
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Spawns, retrying (up to 30 s) while other tests' helpers hold the process's limit.
    fn spawn_waiting<T: Send + 'static>(
        count: usize,
        make: impl Fn() -> T + Send + Clone + 'static,
    ) -> Pretoucher<T> {
        for _ in 0..30_000 {
            if let Some(p) = Pretoucher::spawn(count, make.clone()) {
                return p;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("no helper thread within 30 s");
    }

    /// Waits (in the test only, up to 10 s) until an item is ready.
    fn take_waiting<T: Send + 'static>(p: &Pretoucher<T>) -> Option<T> {
        (0..10_000).find_map(|_| {
            let item = p.take();
            if item.is_none() {
                std::thread::sleep(Duration::from_millis(1));
            }
            item
        })
    }

    #[test]
    fn hands_over_exactly_count_items_in_order_then_nothing() {
        let n = std::sync::Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let p = spawn_waiting(3, move || m.fetch_add(1, Ordering::Relaxed));
        for want in 0..3 {
            assert_eq!(take_waiting(&p), Some(want));
        }
        // The thread has ended: nothing more, and `take` does not block.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(p.take(), None);
        assert_eq!(n.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn dropping_stops_a_thread_blocked_with_an_item_ready() {
        let made = std::sync::Arc::new(AtomicUsize::new(0));
        let m = made.clone();
        let p = spawn_waiting(1000, move || m.fetch_add(1, Ordering::Relaxed));
        assert_eq!(take_waiting(&p), Some(0));
        drop(p);
        // Joined: the count is final, and at most one item beyond the one taken was made.
        let after = made.load(Ordering::Relaxed);
        assert!((1..=2).contains(&after), "{after} items made");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(made.load(Ordering::Relaxed), after);
    }

    #[test]
    fn zero_items_spawn_nothing() {
        assert!(Pretoucher::spawn(0, || 1u8).is_none());
    }
}
