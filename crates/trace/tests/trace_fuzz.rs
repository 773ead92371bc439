//! Fuzzing without nightly: proptest feeds every parser (and the auto-detector, the
//! decompressors and the tar unwrapper) arbitrary bytes and line-shaped garbage under
//! random options. The property: no panic, only typed errors, and every request
//! returned obeys the documented invariants (non-zero size, non-decreasing arrival,
//! within capacity). Case counts are modest so CI stays fast.

use std::io::Cursor;

use lamina_trace::{
    CapacityPolicy, GenericMapping, OnError, OutlierPolicy, TraceError, TraceFormat, TraceOptions,
    TraceParser,
};
use proptest::prelude::*;

fn options() -> impl Strategy<Value = (TraceOptions, u64)> {
    (
        0u32..4,
        any::<bool>(),
        0u64..3,
        prop::option::of(1u64..20),
        prop_oneof![Just(u64::MAX), 1u64..1 << 20],
        any::<bool>(),
        prop_oneof![Just(0u32), Just(512), Just(4096)],
        1u64..4,
        any::<bool>(),
        prop_oneof![Just(OutlierPolicy::Warn), Just(OutlierPolicy::Cut), Just(OutlierPolicy::Clamp)],
    )
        .prop_map(|(window, skip_errors, skip, limit, cap, reject, align, scale, rebase, outliers)| {
            let opts = TraceOptions {
                reorder_window: window,
                on_error: if skip_errors { OnError::Skip } else { OnError::Fail },
                max_errors: 5,
                skip,
                limit,
                beyond_capacity: if reject { CapacityPolicy::Reject } else { CapacityPolicy::Wrap },
                align_bytes: align,
                time_scale: lamina_trace::TimeScale::new(scale, 2).unwrap(),
                rebase,
                outliers,
                ..TraceOptions::default()
            };
            (opts, cap)
        })
}

/// Line-shaped garbage from the characters trace formats are made of.
fn garbage_lines() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"0".to_vec()),
        Just(b"1".to_vec()),
        Just(b"512".to_vec()),
        Just(b"18446744073709551615".to_vec()),
        Just(b"99999999999999999999999".to_vec()),
        Just(b"-3".to_vec()),
        Just(b"1.5".to_vec()),
        Just(b".".to_vec()),
        Just(b"R".to_vec()),
        Just(b"W".to_vec()),
        Just(b"Read".to_vec()),
        Just(b"Q".to_vec()),
        Just(b"D".to_vec()),
        Just(b"8,16".to_vec()),
        Just(b"+".to_vec()),
        Just(b"CPU0".to_vec()),
        Just(b",".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"Timestamp".to_vec()),
        prop::collection::vec(any::<u8>(), 0..4),
    ];
    prop::collection::vec(token, 0..120).prop_map(|v| v.concat())
}

fn formats() -> impl Strategy<Value = Option<TraceFormat>> {
    prop_oneof![
        Just(None),
        Just(Some(TraceFormat::Ssdsim)),
        Just(Some(TraceFormat::Msr)),
        Just(Some(TraceFormat::Spc)),
        Just(Some(TraceFormat::Flashnet)),
        Just(Some(TraceFormat::FlashnetProfile)),
        Just(Some(TraceFormat::Systor17)),
        Just(Some(TraceFormat::Tencent)),
        Just(Some(TraceFormat::Fiu)),
        Just(Some(TraceFormat::Blkparse)),
        Just(Some(TraceFormat::Generic)),
    ]
}

fn check(
    data: Vec<u8>,
    format: Option<TraceFormat>,
    mut opts: TraceOptions,
    cap: u64,
) -> Result<(), TestCaseError> {
    if format == Some(TraceFormat::Generic) {
        opts.format = Some(TraceFormat::Generic);
        opts.generic = Some(
            "delim=comma time=1:s op=2:r/w/d offset=3:sector size=4 device=5"
                .parse::<GenericMapping>()
                .unwrap(),
        );
    }
    let parser = match TraceParser::new("fuzz", Box::new(Cursor::new(data)), format, &opts, cap) {
        Ok(p) => p,
        Err(e) => {
            prop_assert!(
                matches!(
                    e,
                    TraceError::Detect { .. }
                        | TraceError::Io { .. }
                        | TraceError::NotText { .. }
                        | TraceError::Empty { .. }
                ),
                "{e}"
            );
            return Ok(());
        }
    };
    let mut last = 0u64;
    let mut n = 0u64;
    for item in parser {
        match item {
            Ok(r) => {
                prop_assert!(r.size_bytes > 0);
                prop_assert!(r.arrival.as_ns() >= last, "arrivals must not go backwards");
                last = r.arrival.as_ns();
                if cap != u64::MAX {
                    prop_assert!(r.offset_bytes + r.size_bytes <= cap);
                }
                n += 1;
            }
            Err(e) => {
                // Display must work and name the file.
                prop_assert!(e.to_string().starts_with("fuzz"), "{e}");
            }
        }
    }
    if let Some(l) = opts.limit {
        prop_assert!(n <= l);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..600), format in formats(), (opts, cap) in options()) {
        check(data, format, opts, cap)?;
    }

    #[test]
    fn line_shaped_garbage_never_panics(data in garbage_lines(), format in formats(), (opts, cap) in options()) {
        check(data, format, opts, cap)?;
    }

    #[test]
    fn mutated_valid_traces_never_panic(
        pick in 0usize..4,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        (opts, cap) in options(),
    ) {
        let samples: [&[u8]; 4] = [
            b"0 0 303567 7 0\n26214000 1 240840 6 0\n78643005 1 55596 6 1\n",
            b"Timestamp,Response,IOType,LUN,Offset,Size\n1.5,0.1,R,0,4096,512\n1.4,0.1,W,1,0,4096\n",
            b"  8,16 5 2 0.000001850 18615 Q R 1444645666 + 256 [java]\n  8,16 5 3 0.1 18615 Q W 8 + 8 [java]\n",
            b"89966527608809 4269 nfsd 46677704 8 W 6 0 2a4d\n89966527619457 4269 nfsd 46677712 8 R 6 0 4b2f\n",
        ];
        let mut data = samples[pick].to_vec();
        for (i, b) in flips {
            let i = i.index(data.len());
            data[i] = b;
        }
        check(data, None, opts, cap)?;
    }

    /// Timestamps with absurd jumps among ordinary gaps (bogus groups early, late and
    /// between long runs), every outlier policy: arrivals stay sorted, `cut` and the
    /// others deliver what the summary says, and the outliers counted are named.
    #[test]
    fn jumpy_timestamps_keep_arrivals_sorted(
        gaps in prop::collection::vec(
            prop_oneof![8 => 0u64..2_000_000, 1 => 1u64 << 42..1u64 << 59],
            1..2600,
        ),
        (opts, cap) in options(),
    ) {
        let mut t = 0u64;
        let mut text = String::new();
        for (i, g) in gaps.iter().enumerate() {
            t = t.saturating_add(*g);
            text += &format!("{t} 0 {i} 8 1\n");
        }
        check(text.clone().into_bytes(), Some(TraceFormat::Ssdsim), opts.clone(), cap)?;
        let opts = TraceOptions { skip: 0, limit: None, ..opts };
        let mut p = TraceParser::new("jumpy", Box::new(Cursor::new(text)), None, &opts, u64::MAX).unwrap();
        let delivered = p.by_ref().filter(|r| r.is_ok()).count() as u64;
        let s = p.summary();
        prop_assert_eq!(s.requests, delivered);
        prop_assert!(s.outlier_lines.len() as u64 == s.changes.outliers.min(10));
        if opts.outliers != OutlierPolicy::Cut {
            prop_assert!(delivered == gaps.len() as u64 || s.errors_skipped > 0 || !s.complete);
        }
    }

    #[test]
    fn compressed_garbage_never_panics(body in prop::collection::vec(any::<u8>(), 0..200), magic in 0usize..4) {
        let prefixes: [&[u8]; 4] = [b"\x1f\x8b", b"BZh", b"\x28\xb5\x2f\xfd", b""];
        let mut data = prefixes[magic].to_vec();
        data.extend(body);
        check(data, None, TraceOptions::default(), u64::MAX)?;
    }
}

#[test]
fn a_fake_tar_header_with_a_huge_size_is_an_error_not_an_allocation() {
    let mut h = [0u8; 512];
    h[..4].copy_from_slice(b"a.tr");
    h[124] = 0x80; // GNU base-256 size
    h[125..136].copy_from_slice(&[0xff; 11]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let mut data = h.to_vec();
    data.extend_from_slice(b"0 0 1 1 1\n");
    let r = TraceParser::new(
        "fuzz",
        Box::new(Cursor::new(data)),
        Some(TraceFormat::Ssdsim),
        &TraceOptions::default(),
        u64::MAX,
    );
    match r {
        Ok(p) => {
            for item in p {
                if let Err(e) = item {
                    assert_eq!(e.kind(), "io");
                }
            }
        }
        Err(e) => assert_eq!(e.kind(), "io"),
    }
}
