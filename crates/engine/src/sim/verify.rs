//! The verifier room: in verify mode (`host.verify`), the latest programmed version of
//! every logical page, and the check that each host read returns it.

use lamina_nand_model::{Device, Ppa, SimTime};

use crate::table::LpnTable;

/// A host read returned data that is not the latest write: the run aborts.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "verify: read of LPN {lpn} at {at} returned tag {got:#x} but the latest write of that page has tag {expected:#x} (request arrived at {arrival})"
)]
pub struct VerifyError {
    /// The logical page.
    pub lpn: u64,
    /// When the read was issued.
    pub at: SimTime,
    /// When the request arrived.
    pub arrival: SimTime,
    /// Tag found on flash (`u64::MAX` if none).
    pub got: u64,
    /// Tag of the latest write.
    pub expected: u64,
}

/// Tag written with a page in verify mode: LPN in the high 32 bits, version in the low.
#[inline]
pub(crate) fn tag_of(lpn: u64, version: u32) -> u64 {
    (lpn << 32) | version as u64
}

/// Count a program of `lpn` and return its tag. Kept out of line: inlined, the lazy
/// chunk allocation of [`LpnTable::get_mut`] puts a 16 KiB array in the caller's stack
/// frame, and `program_group` (on every host program) paid for it even when not
/// verifying.
#[inline(never)]
pub(crate) fn bump_version(v: &mut LpnTable<u32>, lpn: u64) -> u64 {
    let e = v.get_mut(lpn);
    *e = e.wrapping_add(1);
    tag_of(lpn, *e)
}

/// Latest write version per LPN (verify mode only; otherwise empty and free).
pub(crate) struct Verifier {
    versions: Option<LpnTable<u32>>,
}

impl Verifier {
    pub(crate) fn new(enabled: bool, logical_pages: u64) -> Verifier {
        Verifier { versions: enabled.then(|| LpnTable::new(logical_pages, 0u32)) }
    }

    /// True in verify mode.
    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        self.versions.is_some()
    }

    /// A flash program of host data for `lpn` is issued: returns the tag it carries (0
    /// when not verifying). Versions count flash programs of host data (direct writes
    /// and buffer flushes): a flash read must return the latest programmed version;
    /// newer data still in the DRAM buffer is served from there.
    #[inline]
    pub(crate) fn program(&mut self, lpn: u64) -> u64 {
        match self.versions.as_mut() {
            Some(v) => bump_version(v, lpn),
            None => 0,
        }
    }

    /// The latest programmed version of `lpn` (verify mode only).
    #[inline]
    pub(crate) fn version(&self, lpn: u64) -> Option<u32> {
        self.versions.as_ref().map(|v| v.get(lpn))
    }

    /// Check that reading `ppa` for `lpn` returns its latest programmed version.
    pub(crate) fn check(
        &self,
        device: &Device,
        lpn: u64,
        ppa: Ppa,
        at: SimTime,
        arrival: SimTime,
    ) -> Result<(), VerifyError> {
        if let Some(v) = &self.versions {
            let expected = tag_of(lpn, v.get(lpn));
            let got = device.tag(ppa).unwrap_or(u64::MAX);
            if got != expected {
                return Err(VerifyError { lpn, at, arrival, got, expected });
            }
        }
        Ok(())
    }

    /// Lend the table to the untimed phases (prefill, preconditioning).
    pub(crate) fn take(&mut self) -> Option<LpnTable<u32>> {
        self.versions.take()
    }

    /// Take the table back.
    pub(crate) fn put(&mut self, v: Option<LpnTable<u32>>) {
        self.versions = v;
    }
}
