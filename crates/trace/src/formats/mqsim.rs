//! MQSim ASCII: `time_ns device lba_sector size_sectors type` (1 = read, 0 = write) —
//! the SSDsim layout. Never detected (SSDsim is, and parses it identically); name it
//! to record it as MQSim, and to have errors name its fields as MQSim does
//! (`lba_sector`, `type`).

use std::io::Write;

use super::ssdsim::{Ascii5, write_ascii5};
use super::{FastLine, Format, LineParser, ParserSetup, Sample, WriteFail};
use crate::IoRequest;

/// The MQSim format.
pub(crate) struct Mqsim;

impl Format for Mqsim {
    fn name(&self) -> &'static str {
        "mqsim"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["mqsim-ascii"]
    }
    fn sniff(&self, _: &Sample<'_>) -> bool {
        false
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(Ascii5::MQSIM)
    }
    fn fast_line(&self) -> Option<FastLine> {
        Some(FastLine::Ascii5)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        write_ascii5(out, r)
    }
}
