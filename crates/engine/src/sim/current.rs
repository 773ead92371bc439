//! The queued reads of each logical page, for pending sums kept under
//! `sched.lacr.read_page = "current"`.
//!
//! Under that reading a queued read's array time in the OCR/LaCR estimate is that of the
//! page its logical page maps to at the decision. Looking every queued read up again at
//! every decision is quadratic in the queue length (minutes per run on a saturated
//! trace). Instead the FTL logs the logical pages whose mapping changes
//! ([`lamina_ftl::Ftl::log_moves`]), and before each decision the engine refreshes the
//! kept entries of just the queued reads of those pages, found here
//! ([`super::Simulation::pend_sync`]). Debug builds compare the refreshed sums with a
//! full scan after every refresh.
//!
//! A map from logical page to the newest queued read of it, and per transaction a
//! doubly linked list through the older ones, so that adding, removing and visiting are
//! O(1) per read and nothing is allocated per read once the tables have grown.

use rustc_hash::FxHashMap;

use super::NIL;

/// One transaction's place in its logical page's list.
#[derive(Clone, Copy)]
struct Link {
    /// The logical page it is listed under; `u64::MAX` when not listed.
    lpn: u64,
    prev: u32,
    next: u32,
}

const UNLISTED: Link = Link { lpn: u64::MAX, prev: NIL, next: NIL };

/// The queued reads of each logical page (see the module docs).
#[derive(Default)]
pub(crate) struct ReadsByLpn {
    /// Newest listed transaction of each logical page that has one.
    heads: FxHashMap<u64, u32>,
    /// Per transaction id.
    links: Vec<Link>,
    /// Transactions listed.
    len: usize,
}

impl ReadsByLpn {
    /// List transaction `id`, a queued read of logical page `lpn`.
    pub(crate) fn insert(&mut self, id: u32, lpn: u64) {
        let i = id as usize;
        if self.links.len() <= i {
            self.links.resize(i + 1, UNLISTED);
        }
        debug_assert_eq!(self.links[i].lpn, u64::MAX, "transaction {id} listed twice");
        let next = self.heads.insert(lpn, id).unwrap_or(NIL);
        if next != NIL {
            self.links[next as usize].prev = id;
        }
        self.links[i] = Link { lpn, prev: NIL, next };
        self.len += 1;
    }

    /// Unlist transaction `id` if it is listed.
    pub(crate) fn remove(&mut self, id: u32) {
        let Some(&l) = self.links.get(id as usize) else { return };
        if l.lpn == u64::MAX {
            return;
        }
        if l.next != NIL {
            self.links[l.next as usize].prev = l.prev;
        }
        if l.prev != NIL {
            self.links[l.prev as usize].next = l.next;
        } else if l.next != NIL {
            self.heads.insert(l.lpn, l.next);
        } else {
            self.heads.remove(&l.lpn);
        }
        self.links[id as usize] = UNLISTED;
        self.len -= 1;
    }

    /// Append the transactions listed under `lpn` to `out`, newest first.
    pub(crate) fn of(&self, lpn: u64, out: &mut Vec<u32>) {
        let mut t = self.heads.get(&lpn).copied().unwrap_or(NIL);
        while t != NIL {
            out.push(t);
            t = self.links[t as usize].next;
        }
    }

    /// Append every listed transaction to `out`, by id.
    pub(crate) fn all(&self, out: &mut Vec<u32>) {
        out.extend((0..self.links.len() as u32).filter(|&t| self.links[t as usize].lpn != u64::MAX));
    }

    /// Transactions listed.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(r: &ReadsByLpn, lpn: u64) -> Vec<u32> {
        let mut v = Vec::new();
        r.of(lpn, &mut v);
        v
    }

    #[test]
    fn lists_follow_inserts_and_removals_in_any_order() {
        let mut r = ReadsByLpn::default();
        for (id, lpn) in [(0, 5), (1, 5), (2, 9), (3, 5)] {
            r.insert(id, lpn);
        }
        assert_eq!(of(&r, 5), [3, 1, 0]);
        assert_eq!(of(&r, 9), [2]);
        r.remove(1); // middle
        assert_eq!(of(&r, 5), [3, 0]);
        r.remove(3); // head
        assert_eq!(of(&r, 5), [0]);
        r.remove(7); // never listed
        r.remove(3); // twice
        assert_eq!(r.len(), 2);
        r.remove(0); // last of its page
        assert!(of(&r, 5).is_empty());
        r.insert(3, 9); // an id reused under another page
        assert_eq!(of(&r, 9), [3, 2]);
        let mut all = Vec::new();
        r.all(&mut all);
        assert_eq!(all, [2, 3]);
        r.remove(2); // tail
        assert_eq!(of(&r, 9), [3]);
        assert_eq!(r.len(), 1);
    }
}
