//! Format sniffing from the first lines of the decompressed text.
//!
//! Each of the first (up to 200) non-blank lines votes for the format its shape
//! matches; the format with most votes wins. Rules, in order:
//! 1. first field `maj,min` and ≥ 6 fields → blkparse;
//! 2. a header `Timestamp,Response,IOType,…` or 6 comma fields with `R`/`W` third → systor17;
//! 3. 7 comma fields with `Read`/`Write` fourth → msr; 7 numeric comma fields with 0/1 third → flashnet-profile;
//! 4. ≥ 5 comma fields with `r`/`w` fourth → spc; 5 numeric comma fields with 0/1 fourth → tencent;
//! 5. ≥ 9 whitespace fields with `R`/`W` sixth-from-right… (FIU: `R|W` then `major minor md5`) → fiu;
//! 6. 5 numeric whitespace fields with 0/1 last: a decimal point in the timestamp → flashnet;
//!    otherwise ssdsim (MQSim's identical layout parses the same), unless every sampled
//!    offset and size is a positive multiple of 512 — byte units — which means flashnet.

use super::TraceFormat;
use super::formats::{split_sep, split_ws, trim};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Vote {
    Blkparse,
    Systor17,
    Msr,
    FlashnetProfile,
    Spc,
    Tencent,
    Fiu,
    Flashnet,
    /// Five integers: SSDsim/MQSim, or FlashNet with integer timestamps.
    Ascii5 {
        bytes_like: bool,
    },
}

fn is_num(f: &[u8]) -> bool {
    !f.is_empty() && f.iter().all(|b| b.is_ascii_digit() || *b == b'.') && f.iter().any(u8::is_ascii_digit)
}

fn is_int(f: &[u8]) -> bool {
    !f.is_empty() && f.iter().all(u8::is_ascii_digit)
}

fn one_of(f: &[u8], words: &[&[u8]]) -> bool {
    words.iter().any(|w| f.eq_ignore_ascii_case(w))
}

fn classify(line: &[u8]) -> Option<Vote> {
    let line = match memchr::memrchr(0, line) {
        Some(i) => &line[i + 1..],
        None => line,
    };
    let mut w = [&line[..0]; 16];
    let nw = split_ws(line, &mut w);
    if nw >= 6 && super::formats::blk_device(w[0]).is_some() {
        return Some(Vote::Blkparse);
    }
    if memchr::memchr(b',', line).is_some() {
        let mut c = [&line[..0]; 8];
        let n = split_sep(line, b',', &mut c);
        if c[0].eq_ignore_ascii_case(b"Timestamp") && n >= 3 && c[2].eq_ignore_ascii_case(b"IOType") {
            return Some(Vote::Systor17);
        }
        if n == 6 && is_num(c[0]) && one_of(c[2], &[b"R", b"W"]) {
            return Some(Vote::Systor17);
        }
        if n == 7 && is_int(c[0]) && one_of(c[3], &[b"Read", b"Write"]) {
            return Some(Vote::Msr);
        }
        if n == 7 && c.iter().take(7).all(|f| is_num(f)) && one_of(c[2], &[b"0", b"1"]) {
            return Some(Vote::FlashnetProfile);
        }
        if n >= 5 && is_int(c[0]) && one_of(c[3], &[b"r", b"w"]) && is_num(c[4]) {
            return Some(Vote::Spc);
        }
        if n == 5 && c.iter().take(5).all(|f| is_num(f)) && one_of(c[3], &[b"0", b"1"]) {
            return Some(Vote::Tencent);
        }
        return None;
    }
    if (9..=16).contains(&nw) && is_int(w[0]) && one_of(w[nw - 4], &[b"R", b"W"]) && is_int(w[nw - 3]) {
        return Some(Vote::Fiu);
    }
    if nw == 5 && w.iter().take(5).all(|f| is_num(f)) && one_of(w[4], &[b"0", b"1"]) {
        if w[0].contains(&b'.') {
            return Some(Vote::Flashnet);
        }
        if w[1..4].iter().all(|f| is_int(f)) {
            let n = |f: &[u8]| super::num::parse_u64(f).unwrap_or(1);
            let bytes_like = n(w[2]) % 512 == 0 && n(w[3]) % 512 == 0 && n(w[3]) > 0;
            return Some(Vote::Ascii5 { bytes_like });
        }
    }
    None
}

/// Sniff the format from a prefix of the text. `complete` says whether the prefix is
/// the whole trace (otherwise its last, possibly cut, line is not used).
pub(crate) fn detect(prefix: &[u8], complete: bool) -> Result<TraceFormat, String> {
    let mut lines: Vec<&[u8]> = prefix.split(|&b| b == b'\n').collect();
    if !complete && lines.len() > 1 {
        lines.pop();
    }
    let mut votes: Vec<(Vote, u32)> = Vec::new();
    let mut ascii5 = 0u32;
    let mut ascii5_bytes_like = true;
    let mut seen = 0;
    let mut first_line: Option<&[u8]> = None;
    for l in lines {
        let l = trim(l.strip_suffix(b"\r").unwrap_or(l));
        if l.is_empty() || l.iter().all(|&b| b == 0) {
            continue;
        }
        first_line.get_or_insert(l);
        seen += 1;
        if seen > 200 {
            break;
        }
        match classify(l) {
            Some(Vote::Ascii5 { bytes_like }) => {
                ascii5 += 1;
                // One sector-unit line rules out byte units for the whole sample.
                ascii5_bytes_like &= bytes_like;
            }
            Some(v) => match votes.iter_mut().find(|(k, _)| *k == v) {
                Some((_, c)) => *c += 1,
                None => votes.push((v, 1)),
            },
            None => {}
        }
    }
    if ascii5 > 0 {
        votes.push((Vote::Ascii5 { bytes_like: ascii5_bytes_like }, ascii5));
    }
    let mut best: Option<(Vote, u32)> = None;
    for (v, c) in votes {
        if best.is_none_or(|(bv, bc)| c > bc || (c == bc && v < bv)) {
            best = Some((v, c));
        }
    }
    let Some((v, _)) = best else {
        return Err(match first_line {
            None => "the trace is empty".into(),
            Some(l) => {
                format!("no known layout matches its first lines (first: {:?})", super::error::excerpt(l))
            }
        });
    };
    Ok(match v {
        Vote::Blkparse => TraceFormat::Blkparse,
        Vote::Systor17 => TraceFormat::Systor17,
        Vote::Msr => TraceFormat::Msr,
        Vote::FlashnetProfile => TraceFormat::FlashnetProfile,
        Vote::Spc => TraceFormat::Spc,
        Vote::Tencent => TraceFormat::Tencent,
        Vote::Fiu => TraceFormat::Fiu,
        Vote::Flashnet => TraceFormat::Flashnet,
        Vote::Ascii5 { bytes_like: true } => TraceFormat::Flashnet,
        Vote::Ascii5 { bytes_like: false } => TraceFormat::Ssdsim,
    })
}

/// blkparse `auto`: does the prefix contain a `Q` event?
pub(crate) fn blkparse_has_q(prefix: &[u8]) -> bool {
    prefix.split(|&b| b == b'\n').any(|l| {
        let mut w = [&l[..0]; 6];
        split_ws(l, &mut w) >= 6 && w[5] == b"Q"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> TraceFormat {
        detect(s.as_bytes(), true).unwrap()
    }

    #[test]
    fn detects_each_layout() {
        assert_eq!(d("0 0 303567 7 0\n0 1 55590 6 0\n"), TraceFormat::Ssdsim);
        assert_eq!(d("0.000 0 11562803200 4096 1\n"), TraceFormat::Flashnet);
        assert_eq!(d("0 0 11562803200 4096 1\n5 0 8192 512 0\n"), TraceFormat::Flashnet);
        assert_eq!(d("0 0 1024 512 1\n5 0 8192 7 0\n"), TraceFormat::Ssdsim);
        assert_eq!(d("128166385295514663,hm,0,Write,9056014336,2048,2833\n"), TraceFormat::Msr);
        assert_eq!(d("0,303567,3584,w,0.000000\n"), TraceFormat::Spc);
        assert_eq!(d("0.000,134,1,4096,42242048,0.100,4096\n"), TraceFormat::FlashnetProfile);
        assert_eq!(
            d("Timestamp,Response,IOType,LUN,Offset,Size\n1.5,0.1,R,0,0,512\n"),
            TraceFormat::Systor17
        );
        assert_eq!(d("1538323200,1024,8,1,1063\n"), TraceFormat::Tencent);
        assert_eq!(d("89966527608809 4269 nfsd 46677704 8 W 6 0 2a4d\n"), TraceFormat::Fiu);
        assert_eq!(
            d("  8,16   5        1     0.000000000 18615  A   R 1 + 256 <- (8,17) 1\n"),
            TraceFormat::Blkparse
        );
        assert!(detect(b"hello world\n", true).is_err());
        assert!(detect(b"\n\n", true).is_err());
    }

    #[test]
    fn a_corrupt_line_does_not_change_the_vote() {
        assert_eq!(d("0 0 1 8 1\n0 0 x 8 1\n5 0 9 8 0\n"), TraceFormat::Ssdsim);
    }
}
