//! Format sniffing from the first lines of the decompressed text.
//!
//! Each of the first (up to 200) non-blank, non-comment lines is offered to every
//! format's [`Format::sniff`](crate::formats::Format::sniff); each format counts the
//! lines it accepts. The most votes win; a tie goes to the higher detection rank (only
//! FlashNet has one: an all-integer five-column sample whose offsets and sizes are all
//! multiples of 512 is FlashNet's byte units rather than SSDsim's sectors), then to the
//! earlier row of the format table. `mqsim` and `generic` never vote.
//!
//! A tie is a guess: the lines fit another format (with other units) just as well.
//! [`Detection::runner_up`] names it, and the reader warns (see
//! [`ambiguity_warning`]), so a SSDsim trace whose numbers all happen to be multiples
//! of 512 is not silently read as FlashNet's bytes.

use crate::TraceFormat;
use crate::error::excerpt;
use crate::formats::{Sample, trim};

/// Lines sampled.
const SAMPLE_LINES: u32 = 200;

/// What sniffing found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Detection {
    /// The format chosen.
    pub format: TraceFormat,
    /// Another format that accepted as many sampled lines as the chosen one (the
    /// choice was a tie-break), if any.
    pub runner_up: Option<TraceFormat>,
    /// Sampled lines.
    pub lines: u32,
}

/// The warning for a detection that was a tie-break: the file, the chosen format, the
/// alternative and how to force either.
pub(crate) fn ambiguity_warning(file: &str, d: &Detection) -> Option<String> {
    let other = d.runner_up?;
    let (chosen, other) = (d.format.name(), other.name());
    let lines = if d.lines == 1 {
        "its one sampled line fits".to_owned()
    } else {
        format!("all {} sampled lines fit", d.lines)
    };
    Some(format!(
        "{file}: format detected as {chosen}, but {lines} {other} just as well (whose offset and size units \
         differ); if it is {other}, read it with --format {other} (`trace.format = \"{other}\"`); --format \
         {chosen} keeps this reading and silences this warning"
    ))
}

/// Sniff the format from a prefix of the text. `complete` says whether the prefix is
/// the whole trace (otherwise its last, possibly cut, line is not used).
pub(crate) fn detect(prefix: &[u8], complete: bool) -> Result<Detection, String> {
    let mut lines: Vec<&[u8]> = prefix.split(|&b| b == b'\n').collect();
    if !complete && lines.len() > 1 {
        lines.pop();
    }
    let mut votes = [0u32; TraceFormat::ALL.len()];
    let mut first_line: Option<&[u8]> = None;
    let mut seen: u32 = 0;
    for l in lines {
        let l = trim(l.strip_suffix(b"\r").unwrap_or(l));
        if l.is_empty() || l.iter().all(|&b| b == 0) || l[0] == b'#' {
            continue;
        }
        first_line.get_or_insert(l);
        if seen == SAMPLE_LINES {
            break;
        }
        seen += 1;
        let sample = Sample::new(l);
        for (i, f) in TraceFormat::ALL.iter().enumerate() {
            if f.imp().sniff(&sample) {
                votes[i] += 1;
            }
        }
    }
    let best = (0..votes.len())
        .filter(|&i| votes[i] > 0)
        .max_by_key(|&i| (votes[i], TraceFormat::ALL[i].imp().detect_rank(), std::cmp::Reverse(i)));
    match best {
        Some(i) => {
            let runner_up =
                (0..votes.len()).find(|&j| j != i && votes[j] == votes[i]).map(|j| TraceFormat::ALL[j]);
            Ok(Detection { format: TraceFormat::ALL[i], runner_up, lines: seen })
        }
        None => Err(match first_line {
            None => "the trace is empty".into(),
            Some(l) => format!("no known layout matches its first lines (first: {:?})", excerpt(l)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> TraceFormat {
        detect(s.as_bytes(), true).unwrap().format
    }

    fn runner_up(s: &str) -> Option<TraceFormat> {
        detect(s.as_bytes(), true).unwrap().runner_up
    }

    /// Regression (new-user trial finding 1): an SSDsim trace whose offsets and sizes
    /// are all multiples of 512 reads as FlashNet (bytes, not sectors), which used to
    /// be silent; the tie now names SSDsim as the alternative, and the warning says how
    /// to force either.
    #[test]
    fn a_tie_names_the_alternative() {
        let text = "0 0 1024 512 1\n100 0 2048 1024 0\n";
        let got = detect(text.as_bytes(), true).unwrap();
        assert_eq!(
            (got.format, got.runner_up, got.lines),
            (TraceFormat::Flashnet, Some(TraceFormat::Ssdsim), 2)
        );
        let w = ambiguity_warning("t.trace", &got).unwrap();
        assert!(w.starts_with("t.trace: format detected as flashnet"), "{w}");
        assert!(w.contains("--format ssdsim") && w.contains("--format flashnet"), "{w}");
        // Clear cases have no alternative.
        assert_eq!(runner_up("0 0 303567 7 0\n0 1 55590 6 0\n"), None);
        assert_eq!(runner_up("0.000 0 11562803200 4096 1\n"), None);
        assert_eq!(runner_up("0 0 1024 512 1\n5 0 8192 7 0\n"), None);
        assert_eq!(runner_up("0,303567,3584,w,0.000000\n"), None);
        assert!(ambiguity_warning("t", &detect(b"0 0 1 8 1\n", true).unwrap()).is_none());
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

    #[test]
    fn comment_lines_do_not_vote() {
        assert_eq!(d("# lamina-trace-gen: host.mode=closed\n0 0 1 8 1\n"), TraceFormat::Ssdsim);
    }
}
