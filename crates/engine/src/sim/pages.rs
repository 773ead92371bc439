//! Byte offsets to logical pages without a division when the page size is a power of
//! two (every preset's is): a 64-bit `div` costs tens of cycles, and a request's split
//! took four of them, its warming one per page (docs/performance.md, "Round of
//! 2026-11-29 (third session)").

use crate::trace::IoRequest;

/// Page arithmetic for one page size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageMath {
    bytes: u64,
    /// log2 of `bytes` when it is a power of two.
    shift: Option<u32>,
}

impl PageMath {
    pub(crate) fn new(bytes: u64) -> Self {
        assert!(bytes > 0, "page size 0");
        PageMath { bytes, shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()) }
    }

    /// The page holding byte `b`.
    #[inline]
    pub(crate) fn page_of(&self, b: u64) -> u64 {
        match self.shift {
            Some(s) => b >> s,
            None => b / self.bytes,
        }
    }

    /// Byte `b`'s offset in its page.
    #[inline]
    pub(crate) fn offset_in_page(&self, b: u64) -> u64 {
        match self.shift {
            Some(s) => b & ((1 << s) - 1),
            None => b % self.bytes,
        }
    }

    /// The first and the last page `r` touches ([`IoRequest::pages`]).
    #[inline]
    pub(crate) fn pages(&self, r: &IoRequest) -> (u64, u64) {
        (self.page_of(r.offset_bytes), self.page_of(r.offset_bytes + r.size_bytes - 1))
    }
}

/// `lpn` wrapped into a logical space of `n` pages (a division only when it is beyond).
#[inline]
pub(crate) fn wrap(lpn: u64, n: u64) -> u64 {
    if lpn < n { lpn } else { lpn % n }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{IoOp, TraceTime};

    /// Shifts and masks agree with division for powers of two, and other sizes divide.
    #[test]
    fn agrees_with_division() {
        for bytes in [512u64, 2048, 4096, 8192, 12288, 16384, 3000] {
            let m = PageMath::new(bytes);
            assert_eq!(m.shift.is_some(), bytes.is_power_of_two());
            for b in [0u64, 1, 511, 512, 4095, 4096, 12287, 12288, 1 << 40, u64::MAX / 2] {
                assert_eq!(m.page_of(b), b / bytes, "{bytes} {b}");
                assert_eq!(m.offset_in_page(b), b % bytes, "{bytes} {b}");
            }
            let r = IoRequest {
                arrival: TraceTime(0),
                device: 0,
                offset_bytes: 5000,
                size_bytes: 20000,
                op: IoOp::Read,
            };
            assert_eq!(m.pages(&r), r.pages(bytes));
        }
        assert_eq!(wrap(5, 10), 5);
        assert_eq!(wrap(15, 10), 5);
        assert_eq!(wrap(25, 10), 5);
    }
}
