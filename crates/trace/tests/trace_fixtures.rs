//! Hand-written fixtures for every format, including the nasty cases: CRLF,
//! trailing blank lines, no final newline, headers, tar junk before the first FIU
//! record, blkparse footers, compression, and a corrupt timestamp in every format.

use std::io::{Cursor, Write};
use std::path::PathBuf;

use lamina_trace::{
    GenericMapping, IoOp, IoRequest, OnError, TraceError, TraceFormat, TraceOptions, TraceReader,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
}

fn read_all(name: &str, opts: &TraceOptions) -> (TraceFormat, Vec<IoRequest>, lamina_trace::TraceSummary) {
    let mut r = TraceReader::open(&fixture(name), opts, u64::MAX).unwrap_or_else(|e| panic!("{name}: {e}"));
    let v: Vec<IoRequest> = r.by_ref().map(|x| x.unwrap_or_else(|e| panic!("{name}: {e}"))).collect();
    (r.format(), v, r.summary())
}

fn ops(v: &[IoRequest]) -> String {
    v.iter()
        .map(|r| match r.op {
            IoOp::Read => 'R',
            IoOp::Write => 'W',
            IoOp::Trim => 'T',
        })
        .collect()
}

#[test]
fn ssdsim_crlf_tabs_and_trailing_blank_lines() {
    let (f, v, s) = read_all("ssdsim_crlf.ascii", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Ssdsim);
    assert_eq!(ops(&v), "WWWR");
    assert_eq!(
        v[2],
        IoRequest {
            arrival: lamina_trace::TraceTime(26_214_000),
            device: 0,
            offset_bytes: 303_574 * 512,
            size_bytes: 7 * 512,
            op: IoOp::Write
        }
    );
    assert_eq!((s.lines, s.ignored_lines), (6, 2));
}

#[test]
fn mqsim_without_final_newline_keeps_its_last_line() {
    let (f, v, s) = read_all("mqsim_no_final_newline.trace", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Ssdsim, "MQSim ASCII has the SSDsim layout");
    assert_eq!(v.len(), 3);
    assert_eq!((v[2].device, v[2].size_bytes, v[2].op), (13, 32 * 512, IoOp::Read));
    assert_eq!(v[2].arrival.as_ns(), 938_944_000 - 938_513_000);
    assert_eq!(s.lines, 3);
    let forced = TraceOptions { format: Some(TraceFormat::Mqsim), ..TraceOptions::default() };
    let (f, w, _) = read_all("mqsim_no_final_newline.trace", &forced);
    assert_eq!((f, w), (TraceFormat::Mqsim, v));
}

#[test]
fn msr_with_header_and_crlf() {
    let (f, v, s) = read_all("msr_header.csv", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Msr);
    assert_eq!(ops(&v), "WRR");
    assert_eq!(v[1].arrival.as_ns(), (128_166_385_295_514_878 - 128_166_385_295_514_663) * 100);
    assert_eq!((v[1].device, v[1].offset_bytes, v[1].size_bytes), (1, 11_855_351_808, 512));
    assert_eq!(s.ignored_lines, 1);
}

#[test]
fn spc_op_case_and_optional_fields() {
    let (f, v, _) = read_all("spc_mixed_case.csv", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Spc);
    assert_eq!(ops(&v), "WWRR");
    assert_eq!(v[3].arrival.as_ns(), 78_643_000);
    assert_eq!((v[3].device, v[3].offset_bytes, v[3].size_bytes), (1, 55_596 * 512, 3072));
}

#[test]
fn flashnet_replayer_and_profile() {
    let (f, v, _) = read_all("flashnet_replayer.trace", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Flashnet);
    assert_eq!(ops(&v), "WWR");
    assert_eq!(v[1].arrival.as_ns(), 223_412_000);
    assert_eq!(v[1].offset_bytes, 3_159_347_200);
    let (f, v, _) = read_all("flashnet.profile", &TraceOptions::default());
    assert_eq!(f, TraceFormat::FlashnetProfile);
    assert_eq!(ops(&v), "RWR");
    assert_eq!((v[2].arrival.as_ns(), v[2].size_bytes, v[2].offset_bytes), (1_000_000_000, 65536, 4_837_376));
}

#[test]
fn systor_is_reordered_and_tolerates_an_empty_response() {
    let (f, v, _) = read_all("systor17_unsorted.csv", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Systor17);
    let t: Vec<u64> = v.iter().map(|r| r.arrival.as_ns()).collect();
    assert_eq!(t, vec![0, 1_113_000, 6_791_000, 9_669_000]);
    assert_eq!(ops(&v), "RWRR");
    assert_eq!(v[1].device, 1);
}

#[test]
fn tencent_volumes_and_op_encoding() {
    let (f, v, _) = read_all("tencent.csv", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Tencent);
    assert_eq!(ops(&v), "WRR");
    assert_eq!((v[0].device, v[0].offset_bytes, v[0].size_bytes), (1063, 1024 * 512, 4096));
    assert_eq!(v[2].arrival.as_ns(), 1_000_000_000);
    let only = TraceOptions { devices: vec![7], ..TraceOptions::default() };
    let (_, v, s) = read_all("tencent.csv", &only);
    assert_eq!((v.len(), s.filtered_device), (1, 2));
}

#[test]
fn fiu_inside_a_tar_and_after_tar_junk() {
    let (f, v, s) = read_all("fiu_in_tar.tar", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Fiu);
    assert!(s.tar);
    assert_eq!(ops(&v), "WRW");
    assert_eq!((v[0].offset_bytes, v[0].size_bytes, v[0].device), (46_677_704 * 512, 4096, 6 << 20));
    assert_eq!(v[2].size_bytes, 16 * 512, "process name with a space");
    let (f, w, s) = read_all("fiu_tar_junk.txt", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Fiu);
    assert!(!s.tar);
    assert_eq!(w, v);
}

#[test]
fn blkparse_q_events_skip_other_events_flushes_and_footer() {
    let (f, v, _) = read_all("blkparse_q.txt", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Blkparse);
    assert_eq!(ops(&v), "RWT");
    assert_eq!((v[0].offset_bytes, v[0].size_bytes), (1_444_645_666 * 512, 256 * 512));
    assert_eq!(v[1].arrival.as_ns(), 30_000 - 1_850);
    assert_eq!(v[2].device, 8 << 20);
}

#[test]
fn blkparse_without_q_uses_d_events() {
    let (f, v, _) = read_all("blkparse_d_only.txt", &TraceOptions::default());
    assert_eq!(f, TraceFormat::Blkparse);
    assert_eq!(ops(&v), "WR");
    assert_eq!(v[1].arrival.as_ns(), 200_000);
}

#[test]
fn generic_mapping_with_header_lines() {
    let mapping: GenericMapping =
        "delim=; skip=2 time=2:us op=1:rd/wr/trim offset=3:4k size=4:byte device=5".parse().unwrap();
    let opts = TraceOptions {
        format: Some(TraceFormat::Generic),
        generic: Some(mapping),
        ..TraceOptions::default()
    };
    let (f, v, _) = read_all("generic_semicolon.csv", &opts);
    assert_eq!(f, TraceFormat::Generic);
    assert_eq!(ops(&v), "RWT");
    assert_eq!(
        v[1],
        IoRequest {
            arrival: lamina_trace::TraceTime(9_500),
            device: 2,
            offset_bytes: 4 * 4096,
            size_bytes: 8192,
            op: IoOp::Write
        }
    );
}

fn compress(kind: &str, data: &[u8]) -> Vec<u8> {
    match kind {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "bzip2" => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zstd" => zstd::stream::encode_all(data, 3).unwrap(),
        _ => unreachable!(),
    }
}

#[test]
fn gzip_bzip2_zstd_by_magic_bytes() {
    let plain = std::fs::read(fixture("ssdsim_crlf.ascii")).unwrap();
    let (_, expected, base) = read_all("ssdsim_crlf.ascii", &TraceOptions::default());
    for kind in ["gzip", "bzip2", "zstd"] {
        let data = compress(kind, &plain);
        let mut r =
            TraceReader::from_reader(kind, Cursor::new(data), None, &TraceOptions::default(), u64::MAX)
                .unwrap();
        let v: Vec<IoRequest> = r.by_ref().map(Result::unwrap).collect();
        assert_eq!(v, expected, "{kind}");
        let s = r.summary();
        assert_eq!(s.compression.to_string(), kind);
        assert_eq!(s.digest, base.digest, "the digest is over decompressed bytes");
    }
    // A corrupt compressed stream is an I/O error, not a panic.
    let mut bad = compress("gzip", &plain);
    let n = bad.len();
    bad[n / 2] ^= 0xff;
    bad.truncate(n - 4);
    let r = TraceReader::from_reader(
        "bad.gz",
        Cursor::new(bad),
        Some(TraceFormat::Ssdsim),
        &TraceOptions::default(),
        u64::MAX,
    );
    if let Ok(r) = r {
        let err = r.into_iter().find_map(Result::err).expect("corruption detected");
        assert_eq!(err.kind(), "io");
    }
}

/// Replace the timestamp field of 1-based `line` with `12x45` and expect the error.
#[test]
fn a_corrupt_timestamp_names_file_line_field_and_text_in_every_format() {
    let cases: [(&str, usize, &str); 11] = [
        ("ssdsim_crlf.ascii", 2, "time"),
        ("mqsim_no_final_newline.trace", 3, "time"),
        ("msr_header.csv", 3, "Timestamp"),
        ("spc_mixed_case.csv", 2, "Timestamp"),
        ("flashnet_replayer.trace", 2, "ts_ms"),
        ("flashnet.profile", 3, "ts_ms"),
        ("systor17_unsorted.csv", 4, "Timestamp"),
        ("tencent.csv", 2, "timestamp"),
        ("fiu_tar_junk.txt", 2, "ts"),
        ("blkparse_q.txt", 7, "time"),
        ("blkparse_d_only.txt", 3, "time"),
    ];
    for (name, line, field) in cases {
        let text = std::fs::read(fixture(name)).unwrap();
        let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let l = &mut lines[line - 1];
        let s = String::from_utf8_lossy(l).into_owned();
        let tf = match name {
            n if n.starts_with("spc") => 4,
            n if n.starts_with("blkparse") => 3,
            _ => 0,
        };
        let sep = if s.contains(',') && !name.starts_with("blkparse") { ',' } else { ' ' };
        let fields: Vec<&str> =
            if sep == ',' { s.split(',').collect() } else { s.split_whitespace().collect() };
        let mut fields: Vec<String> = fields.into_iter().map(str::to_owned).collect();
        fields[tf] = "12x45".into();
        *l = fields.join(&sep.to_string()).into_bytes();
        let data = lines.join(&b'\n');
        let path = format!("corrupt-{name}");
        let r = TraceReader::from_reader(
            &path,
            Cursor::new(data.clone()),
            None,
            &TraceOptions::default(),
            u64::MAX,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let err =
            r.into_iter().find_map(Result::err).unwrap_or_else(|| panic!("{name}: corruption accepted"));
        assert_eq!(
            err.to_string(),
            format!("{path}:{line}: field `{field}`: \"12x45\" is not a number"),
            "{name}"
        );
        // The same file with on_error = skip: one line skipped, the rest read.
        let skip = TraceOptions { on_error: OnError::Skip, ..TraceOptions::default() };
        let mut r = TraceReader::from_reader(&path, Cursor::new(data), None, &skip, u64::MAX).unwrap();
        assert!(r.by_ref().all(|x| x.is_ok()), "{name}");
        let s = r.summary();
        assert_eq!(s.errors_skipped, 1, "{name}");
        assert_eq!(s.skipped_reasons.get("not-a-number"), Some(&1), "{name}");
    }
}

#[test]
fn zero_length_and_negative_fields_are_errors() {
    for (text, want) in [
        ("0 0 1 0 1\n", "z:1: field `size`: \"0\" is zero (a zero-length request)"),
        ("0 0 -1 8 1\n", "z:1: field `lsn`: \"-1\" is negative"),
        ("0,hm,0,Write,-5,512,1\n", "z:1: field `Offset`: \"-5\" is negative"),
        (
            "0,hm,0,Erase,5,512,1\n",
            "z:1: field `Type`: \"Erase\" is not an operation this format defines (Read or Write)",
        ),
    ] {
        let fmt = if text.contains(',') { TraceFormat::Msr } else { TraceFormat::Ssdsim };
        let r =
            TraceReader::from_reader("z", Cursor::new(text), Some(fmt), &TraceOptions::default(), u64::MAX)
                .unwrap();
        let e: TraceError = r.into_iter().find_map(Result::err).unwrap();
        assert_eq!(e.to_string(), want);
    }
}

#[test]
fn detection_failure_and_empty_input_are_typed_errors() {
    let e =
        TraceReader::from_reader("x", Cursor::new("hello world\n"), None, &TraceOptions::default(), u64::MAX)
            .err()
            .unwrap();
    assert_eq!(e.kind(), "detect");
    let e = TraceReader::from_reader("x", Cursor::new(""), None, &TraceOptions::default(), u64::MAX)
        .err()
        .unwrap();
    assert!(e.to_string().contains("empty"), "{e}");
    // Empty with a forced format: zero requests is an error (issue #8 item 3) …
    let mut r = TraceReader::from_reader(
        "x",
        Cursor::new(""),
        Some(TraceFormat::Ssdsim),
        &TraceOptions::default(),
        u64::MAX,
    )
    .unwrap();
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        "x: the file is empty; a trace must yield at least one request (set `trace.allow_empty = true` to accept it)"
    );
    // … unless asked for.
    let opts = TraceOptions { allow_empty: true, ..TraceOptions::default() };
    let r =
        TraceReader::from_reader("x", Cursor::new(""), Some(TraceFormat::Ssdsim), &opts, u64::MAX).unwrap();
    assert_eq!(r.count(), 0);
    let r = TraceReader::from_reader("x", Cursor::new("\n \n"), None, &opts, u64::MAX).unwrap();
    assert_eq!(r.count(), 0);
}

/// Issue #8 item 3: a header-only or all-skipped trace names why it yields nothing.
#[test]
fn header_only_and_all_skipped_traces_say_why() {
    let why = |text: &str, opts: TraceOptions| {
        let r = TraceReader::from_reader("t", Cursor::new(text.to_owned()), None, &opts, u64::MAX).unwrap();
        r.into_iter().find_map(Result::err).unwrap().to_string()
    };
    let e = why("Timestamp,Response,IOType,LUN,Offset,Size\n", TraceOptions::default());
    assert!(e.starts_with("t: no request to replay: it holds only a header line;"), "{e}");
    let opts = TraceOptions {
        on_error: OnError::Skip,
        format: Some(TraceFormat::Ssdsim),
        ..TraceOptions::default()
    };
    let e = why("0 0 x 8 1\n# note\n0 0 1 0 1\n", opts);
    assert!(e.contains("of its 3 lines: 1 ignored (blank, header, comment or not a request); 2 malformed and skipped (not-a-number 1, zero-size 1)"), "{e}");
    let opts = TraceOptions { devices: vec![7], ..TraceOptions::default() };
    let e = why("0 0 1 8 1\n1 1 1 8 1\n", opts);
    assert!(e.contains("2 requests on devices not selected by `devices`"), "{e}");
}

/// A format, a line, its offset and size fields (name, text) and whether they count units
/// other than bytes.
type AddressLine =
    (TraceFormat, &'static str, (&'static str, &'static str), (&'static str, &'static str), bool);

/// A request with `offset` 1000 sectors (512000 bytes) and `size` 8 sectors (4096
/// bytes) in every format: the line, the format's offset and size fields as the line
/// writes them, and whether they are in 512-byte sectors (the generic mapping's
/// offset is in 4 KiB units, so 125 of them).
const ADDRESS_LINES: [AddressLine; 11] = [
    (TraceFormat::Ssdsim, "0 0 1000 8 1", ("lsn", "1000"), ("size", "8"), true),
    (TraceFormat::Mqsim, "0 0 +01000 8 1", ("lba_sector", "+01000"), ("size", "8"), true),
    (TraceFormat::Msr, "1,hm,0,Write,512000,4096,2833", ("Offset", "512000"), ("Size", "4096"), false),
    (TraceFormat::Spc, "0,1000,4096,w,0.5", ("LBA", "1000"), ("Size", "4096"), true),
    (TraceFormat::Flashnet, "1.5 0 512000 4096 0", ("offset", "512000"), ("size", "4096"), false),
    (
        TraceFormat::FlashnetProfile,
        "1.0,134,1,4096,512000,0.1,4096",
        ("offset", "512000"),
        ("size", "4096"),
        false,
    ),
    (TraceFormat::Systor17, "1.5,0.1,R,0,512000,4096", ("Offset", "512000"), ("Size", "4096"), false),
    (TraceFormat::Tencent, "1538323200,1000,8,1,1063", ("offset", "1000"), ("size", "8"), true),
    (TraceFormat::Fiu, "89966527608809 4269 my proc 1000 8 W 6 0 ab", ("lba", "1000"), ("size", "8"), true),
    (
        TraceFormat::Blkparse,
        "8,16 5 2 0.000001850 18615 Q R 1000 + 8 [java]",
        ("sector", "1000"),
        ("nsectors", "8"),
        true,
    ),
    (TraceFormat::Generic, "rd;1.5;125;8", ("offset", "125"), ("size", "8"), true),
];

/// The first error reading `text` as `format` with `opts` and a logical capacity.
fn first_error(format: TraceFormat, text: &str, opts: &TraceOptions, capacity: u64) -> String {
    let mut opts = opts.clone();
    if format == TraceFormat::Generic {
        opts.format = Some(format);
        opts.generic = Some("delim=; time=2:us op=1:rd/wr offset=3:4k size=4:sector".parse().unwrap());
    }
    let r = TraceReader::from_reader("t", Cursor::new(text.to_owned()), Some(format), &opts, capacity)
        .unwrap_or_else(|e| panic!("{format}: {e}"));
    r.into_iter().find_map(Result::err).unwrap_or_else(|| panic!("{format}: accepted {text:?}")).to_string()
}

/// Regression (new-user trial): an out-of-order request's error printed both times in
/// ns (`request at 1000 ns comes after one at 6000000 ns`), which is not how a trace in
/// seconds or filetime ticks writes them, and did not say which request was already
/// released. Now, in every format: the late request's field as written, the released
/// request's line and its time in the same unit and fraction digits. Each trace has
/// three requests, the third earlier than the second (window 0); `{T}` is the time.
#[test]
fn an_out_of_order_request_quotes_both_timestamps_as_written_in_every_format() {
    let w0 = TraceOptions { reorder_window: 0, ..TraceOptions::default() };
    let cases: [(TraceFormat, &str, [&str; 3], &str); 11] = [
        (TraceFormat::Ssdsim, "{T} 0 8 8 1", ["1000", "6000000", "5000"], "time"),
        (TraceFormat::Mqsim, "{T} 0 8 8 1", ["1000", "6000000", "5000"], "time"),
        (
            TraceFormat::Msr,
            "{T},hm,0,Write,512,512,1",
            ["128166372000000000", "128166372000000100", "128166372000000050"],
            "Timestamp",
        ),
        (TraceFormat::Spc, "0,8,512,w,{T}", ["0.026214", "1.500000", "0.500000"], "Timestamp"),
        (TraceFormat::Flashnet, "{T} 0 4096 4096 0", ["223.412", "224.500", "223.900"], "ts_ms"),
        (TraceFormat::FlashnetProfile, "{T},134,1,4096,4096,0.1,4096", ["0.000", "2.250", "1.000"], "ts_ms"),
        (
            TraceFormat::Systor17,
            "{T},0.1,R,0,4096,4096",
            ["1456095145.133076000", "1456095146.000000000", "1456095145.500000000"],
            "Timestamp",
        ),
        (TraceFormat::Tencent, "{T},8,8,1,1063", ["1538323200", "1538323260", "1538323230"], "timestamp"),
        (
            TraceFormat::Fiu,
            "{T} 4269 nfsd 8 8 W 6 0 ab",
            ["89966527608809", "89966527609809", "89966527609000"],
            "ts",
        ),
        (
            TraceFormat::Blkparse,
            "8,16 5 2 {T} 18615 Q R 8 + 8 [java]",
            ["0.000001850", "1.500000000", "0.000002850"],
            "time",
        ),
        (TraceFormat::Generic, "rd;{T};1;8", ["1.5", "20.25", "3.0"], "time"),
    ];
    for (format, shape, times, field) in cases {
        let text: String = times.iter().map(|t| shape.replace("{T}", t) + "\n").collect();
        let e = first_error(format, &text, &w0, u64::MAX);
        let want = format!(
            "t:3: field `{field}`: {:?} is earlier than {:?} on line 2, a request already released: the trace \
             is out of order by more than the reorder window of 0 requests (raise it: --reorder-window N, \
             or `trace.reorder_window`; at most 1048576)",
            times[2], times[1]
        );
        assert_eq!(e, want, "{format}");
    }
    // With a window, the request already released is the latest released: 30 (line 4,
    // after a comment), released when 50 came; the common lines take the fast path.
    let text = "10 0 0 8 1\n40 0 0 8 1\n# c\n30 0 0 8 1\n20 0 0 8 1\n50 0 0 8 1\n1 0 0 8 1\n";
    let w2 = TraceOptions { reorder_window: 2, ..TraceOptions::default() };
    let e = first_error(TraceFormat::Ssdsim, text, &w2, u64::MAX);
    assert!(
        e.starts_with(
            "t:7: field `time`: \"1\" is earlier than \"30\" on line 4, a request already released"
        ),
        "{e}"
    );
}

/// Regression (new-user trial, MQSim field names): MQSim shares SSDsim's parser, and
/// its errors named SSDsim's fields (`lsn`, `op`), which docs/traces.md's MQSim layout
/// (`time_ns device lba_sector size_sectors type`) does not have. Read as MQSim, the
/// address is `lba_sector` and the op `type`; read as SSDsim, still `lsn` and `op` —
/// in the general way (first line) and after the fast path (a second line).
#[test]
fn mqsim_errors_name_mqsim_fields() {
    let o = TraceOptions::default();
    for (format, addr, op) in [(TraceFormat::Mqsim, "lba_sector", "type"), (TraceFormat::Ssdsim, "lsn", "op")]
    {
        for first in ["", "0 0 8 8 1\n"] {
            let n = if first.is_empty() { 1 } else { 2 };
            let e = first_error(format, &format!("{first}5 0 x 8 1\n"), &o, u64::MAX);
            assert_eq!(e, format!("t:{n}: field `{addr}`: \"x\" is not a number"), "{format}");
            let e = first_error(format, &format!("{first}5 0 8 8 7\n"), &o, u64::MAX);
            assert_eq!(
                e,
                format!(
                    "t:{n}: field `{op}`: \"7\" is not an operation this format defines (1 = read, 0 = write)"
                ),
                "{format}"
            );
            let e = first_error(format, &format!("{first}5 0 -8 8 1\n"), &o, u64::MAX);
            assert_eq!(e, format!("t:{n}: field `{addr}`: \"-8\" is negative"), "{format}");
        }
    }
}

/// Regression (new-user trial finding 1): errors found after parsing — a request
/// beyond the capacity (`reject`), larger than the capacity, or overflowing once
/// folded or aligned — quoted the *computed* byte value under a generic name
/// (`field `offset`: "512000"` for an SSDsim `lsn` of 1000), which the file does not
/// hold. They name the format's field and quote its text as written; a sector count
/// adds its bytes as context (`= 512000 bytes`).
#[test]
fn address_errors_quote_the_field_as_written_in_every_format() {
    let reject =
        TraceOptions { beyond_capacity: lamina_trace::CapacityPolicy::Reject, ..TraceOptions::default() };
    for (format, line, (offset, offset_text), (size, size_text), sectors) in ADDRESS_LINES {
        let text = format!("{line}\n");
        let bytes = |b: u64| if sectors { format!("= {b} bytes; ") } else { String::new() };
        let e = first_error(format, &text, &reject, 100 << 10);
        let want = format!(
            "t:1: field `{offset}`: \"{offset_text}\" lies beyond the simulated logical capacity ({}+ the \
             request's 4096 bytes ends beyond the capacity of 102400 bytes; beyond_capacity = \"reject\" \
             (--beyond-capacity wrap wraps it modulo the capacity))",
            bytes(512_000)
        );
        assert_eq!(e, want, "{format}");
        let e = first_error(format, &text, &TraceOptions::default(), 2048);
        let size_sectors = sectors && format != TraceFormat::Spc;
        let want = format!(
            "t:1: field `{size}`: \"{size_text}\" lies beyond the simulated logical capacity ({}larger than \
             the whole capacity of 2048 bytes; simulate a larger device, or drop such lines with --on-error skip)",
            if size_sectors { "= 4096 bytes; " } else { "" }
        );
        assert_eq!(e, want, "{format}");
    }
}

/// Finding 1, the transforms: what folding or alignment made of the field is context
/// after its text, and an overflow names the field as written too — in the common
/// line's fast path (a second data line) as in the general way (the first).
#[test]
fn address_errors_after_folding_and_alignment_quote_the_field_as_written() {
    let fold = TraceOptions {
        fold_devices: true,
        fold_stride_bytes: 1 << 10,
        beyond_capacity: lamina_trace::CapacityPolicy::Reject,
        ..TraceOptions::default()
    };
    let e = first_error(TraceFormat::Ssdsim, "0 1 1 8 1\n0 1 1000 8 1\n", &fold, 100 << 10);
    assert!(
        e.starts_with("t:2: field `lsn`: \"1000\" lies beyond the simulated logical capacity (= 512000 bytes; 513024 bytes after folding devices; + the request's 4096 bytes ends beyond"),
        "{e}"
    );
    let align = TraceOptions { align_bytes: 4096, ..TraceOptions::default() };
    for (format, text, field) in [
        (TraceFormat::Ssdsim, "0 0 1 8 1\n0 0 36028797018963967 1 1\n", "lsn"),
        (TraceFormat::Tencent, "0,1,8,1,0\n0,36028797018963967,1,1,0\n", "offset"),
        (
            TraceFormat::Blkparse,
            "8,0 0 1 0.1 1 Q R 1 + 8 [a]\n8,0 0 2 0.2 1 Q R 36028797018963967 + 1 [a]\n",
            "sector",
        ),
    ] {
        let e = first_error(format, text, &align, u64::MAX);
        assert_eq!(
            e,
            format!(
                "t:2: field `{field}`: \"36028797018963967\" is too large (= 18446744073709551104 bytes; + the \
                 request's 512 bytes ends beyond 2^64 bytes)"
            ),
            "{format}"
        );
    }
    let stride = TraceOptions { fold_devices: true, fold_stride_bytes: 1 << 62, ..TraceOptions::default() };
    let e = first_error(TraceFormat::Spc, "4,1,512,w,0.0\n", &stride, u64::MAX);
    assert_eq!(
        e,
        "t:1: field `LBA`: \"1\" is too large (= 512 bytes; + device 4 × fold stride 4611686018427387904 bytes \
         exceeds 2^64 bytes; use a smaller --fold-stride (`trace.fold_stride_bytes`))"
    );
    // A sector count whose bytes do not fit is refused as parsed, with its unit said.
    let e = first_error(
        TraceFormat::Fiu,
        "1 2 p 36028797018963968 8 W 8 0 x\n",
        &TraceOptions::default(),
        u64::MAX,
    );
    assert_eq!(
        e,
        "t:1: field `lba`: \"36028797018963968\" is too large (512-byte sectors: × 512 it exceeds 2^64 bytes)"
    );
}

/// Finding 1's class: a FIU minor device number too large was blamed on the `major`
/// field, quoting the major's text.
#[test]
fn a_device_number_too_large_names_its_own_field() {
    let e = first_error(TraceFormat::Fiu, "1 2 p 8 8 W 8 1048576 x\n", &TraceOptions::default(), u64::MAX);
    assert_eq!(
        e,
        "t:1: field `minor`: \"1048576\" is too large (a minor device number must be below 1048576 (2^20))"
    );
    let e = first_error(TraceFormat::Fiu, "1 2 p 8 8 W 4096 0 x\n", &TraceOptions::default(), u64::MAX);
    assert_eq!(e, "t:1: field `major`: \"4096\" is too large (a major device number must be below 4096)");
}

/// Finding 1's class: an arrival that overflows once scaled was reported as field
/// `time` quoting the rebased nanoseconds ("18446744068709551615", not in the file).
/// It is its own error, naming the line and what the number is.
#[test]
fn a_scaled_arrival_that_overflows_says_what_it_is() {
    let text = "5000000000 0 1 1 1\n18446744073709551615 0 1 1 1\n";
    let scale = TraceOptions { time_scale: "2".parse().unwrap(), ..TraceOptions::default() };
    let e = first_error(TraceFormat::Ssdsim, text, &scale, u64::MAX);
    assert_eq!(
        e,
        "t:2: the request's arrival, 18446744068709551615 ns after the first replayed request, × time_scale 2 \
         exceeds the 64-bit nanosecond clock (about 584 years); use a smaller --time-scale (`trace.time_scale`)"
    );
    let skip = TraceOptions { on_error: OnError::Skip, ..scale };
    let mut r =
        TraceReader::from_reader("t", Cursor::new(text), Some(TraceFormat::Ssdsim), &skip, u64::MAX).unwrap();
    assert_eq!(r.by_ref().filter(Result::is_ok).count(), 1);
    assert_eq!(r.summary().skipped_reasons.get("overflow"), Some(&1));
}
