//! Property: generate requests → write them in each writable format → parse back →
//! identical requests. Requests are drawn within what each format can represent
//! (sector units, 100 ns MSR ticks, whole-second Tencent stamps, device 0 for the
//! FlashNet profile, trim only in blkparse).

use std::io::Cursor;

use lamina_trace::TraceTime;
use lamina_trace::{IoOp, IoRequest, TraceFormat, TraceOptions, TraceParser, write::TraceWriter};
use proptest::prelude::*;

/// Every format with a writer (all but `generic`, which has no fixed layout).
fn writable() -> impl Iterator<Item = TraceFormat> {
    TraceFormat::ALL.into_iter().filter(|&f| f != TraceFormat::Generic)
}

/// Make a raw request representable in `f`.
fn quantise(f: TraceFormat, mut r: IoRequest) -> IoRequest {
    let sectors = !matches!(
        f,
        TraceFormat::Msr | TraceFormat::Flashnet | TraceFormat::FlashnetProfile | TraceFormat::Systor17
    );
    if sectors || f == TraceFormat::Spc {
        r.offset_bytes = r.offset_bytes / 512 * 512;
    }
    if sectors && f != TraceFormat::Spc {
        r.size_bytes = r.size_bytes.div_ceil(512) * 512;
    }
    if f != TraceFormat::Blkparse && r.op == IoOp::Trim {
        r.op = IoOp::Write;
    }
    match f {
        TraceFormat::Msr => r.arrival = TraceTime(r.arrival.as_ns() / 100 * 100),
        TraceFormat::Tencent => r.arrival = TraceTime(r.arrival.as_ns() / 1_000_000_000 * 1_000_000_000),
        TraceFormat::FlashnetProfile => r.device = 0,
        _ => {}
    }
    r
}

fn request() -> impl Strategy<Value = IoRequest> {
    (0u64..1 << 50, 0u32..8, prop_oneof![Just(u32::MAX), 0u32..1 << 20], 0u64..1 << 48, 1u64..1 << 24, 0u8..3)
        .prop_map(|(t, d, big, off, size, op)| IoRequest {
            arrival: TraceTime(t),
            device: if d == 7 { big } else { d },
            offset_bytes: off,
            size_bytes: size,
            op: [IoOp::Read, IoOp::Write, IoOp::Trim][op as usize],
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn write_then_parse_is_identity(raw in proptest::collection::vec(request(), 1..200)) {
        for f in writable() {
            let mut reqs: Vec<IoRequest> = raw.iter().map(|r| quantise(f, *r)).collect();
            reqs.sort_by_key(|r| r.arrival);
            let mut w = TraceWriter::new(Vec::new(), f).unwrap();
            for r in &reqs {
                w.write(r).unwrap();
            }
            let text = w.finish().unwrap();
            let opts = TraceOptions { rebase: false, ..TraceOptions::default() };
            let parser = TraceParser::new("rt", Box::new(Cursor::new(text.clone())), Some(f), &opts, u64::MAX).unwrap();
            let back: Result<Vec<IoRequest>, _> = parser.collect();
            let back = back.map_err(|e| TestCaseError::fail(format!("{f}: {e}\n{}", String::from_utf8_lossy(&text))))?;
            prop_assert_eq!(&back, &reqs, "format {}", f);
        }
    }
}
