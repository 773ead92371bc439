//! `generic`: any CSV/whitespace layout described by a [`GenericMapping`] column
//! mapping. Not writable, never detected; no header or comment rules (the mapping's
//! `skip_lines` skips headers).

use super::{
    Address, FILETIME_OVERFLOW, FieldErr, Format, LineParser, NS_PER_MS, NS_PER_S, Parsed, ParserSetup, R,
    RawRequest, Sample, UNIT_OVERFLOW, Written, dec, dev, mul, nonzero, num, split_sep, split_ws,
};
use crate::IoOp;
use crate::error::Problem;
use crate::options::{Delimiter, GenericMapping, TimeUnit};

/// The generic format.
pub(crate) struct Generic;

impl Format for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }
    fn sniff(&self, _: &Sample<'_>) -> bool {
        false
    }
    fn parser(&self, setup: &ParserSetup<'_>) -> Box<dyn LineParser> {
        let g = setup.generic.expect("validated: generic format has a mapping");
        Box::new(GenericParser::new(g))
    }
    fn allows_header(&self) -> bool {
        false
    }
    fn comments(&self) -> bool {
        false
    }
    fn writable(&self) -> bool {
        false
    }
}

pub(crate) struct GenericParser {
    sep: Delimiter,
    time_col: usize,
    time_unit: TimeUnit,
    op_col: usize,
    read: Vec<Vec<u8>>,
    write: Vec<Vec<u8>>,
    trim: Vec<Vec<u8>>,
    off_col: usize,
    off_unit: u64,
    size_col: usize,
    size_unit: u64,
    dev_col: Option<usize>,
    need: usize,
}

impl GenericParser {
    fn new(g: &GenericMapping) -> GenericParser {
        let lower = |v: &Vec<String>| v.iter().map(|s| s.to_ascii_lowercase().into_bytes()).collect();
        let need = [g.time.column, g.op.column, g.offset.column, g.size.column, g.device.unwrap_or(0)]
            .into_iter()
            .max()
            .unwrap_or(0) as usize;
        GenericParser {
            sep: g.delimiter,
            time_col: g.time.column as usize - 1,
            time_unit: g.time.unit,
            op_col: g.op.column as usize - 1,
            read: lower(&g.op.read),
            write: lower(&g.op.write),
            trim: lower(&g.op.trim),
            off_col: g.offset.column as usize - 1,
            off_unit: g.offset.unit.0 as u64,
            size_col: g.size.column as usize - 1,
            size_unit: g.size.unit.0 as u64,
            dev_col: g.device.map(|c| c as usize - 1),
            need,
        }
    }

    /// Split a line into `f` by the mapping's delimiter; the number of fields.
    fn split<'a>(&self, line: &'a [u8], f: &mut [&'a [u8]; 64]) -> usize {
        match self.sep {
            Delimiter::Whitespace => split_ws(line, f),
            Delimiter::Char(c) => split_sep(line, c, f),
        }
    }

    fn missing<'a>(&self, line: &'a [u8], n: usize) -> FieldErr<'a> {
        const NAMES: [&str; 5] = ["time", "op", "offset", "size", "device"];
        let mut cols =
            [(self.time_col, 0), (self.op_col, 1), (self.off_col, 2), (self.size_col, 3), (usize::MAX, 4)];
        if let Some(d) = self.dev_col {
            cols[4].0 = d;
        }
        let first_missing = cols.iter().filter(|(c, _)| *c != usize::MAX && *c >= n).min().map_or(0, |x| x.1);
        FieldErr {
            field: NAMES[first_missing],
            text: line,
            problem: Problem::Missing,
            detail: "too few fields",
        }
    }
}

impl LineParser for GenericParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        let mut f = [&line[..0]; 64];
        let n = self.split(line, &mut f);
        if n < self.need {
            return Err(self.missing(line, n));
        }
        let t = f[self.time_col];
        let time_ns = match self.time_unit {
            TimeUnit::Ns => dec("time", t, 0)?,
            TimeUnit::Us => dec("time", t, 3)?,
            TimeUnit::Ms => dec("time", t, 6)?,
            TimeUnit::S => dec("time", t, 9)?,
            TimeUnit::Filetime => mul("time", t, num("time", t)?, 100, FILETIME_OVERFLOW)?,
        };
        let o = f[self.op_col];
        let has = |list: &Vec<Vec<u8>>| list.iter().any(|c| c.eq_ignore_ascii_case(o));
        let op = if has(&self.read) {
            IoOp::Read
        } else if has(&self.write) {
            IoOp::Write
        } else if has(&self.trim) {
            IoOp::Trim
        } else {
            return Err(FieldErr {
                field: "op",
                text: o,
                problem: Problem::UnknownOp,
                detail: "see the op mapping",
            });
        };
        let of = f[self.off_col];
        let offset = mul("offset", of, num("offset", of)?, self.off_unit, UNIT_OVERFLOW)?;
        let sf = f[self.size_col];
        let size = mul("size", sf, nonzero("size", sf, num("size", sf)?)?, self.size_unit, UNIT_OVERFLOW)?;
        let device = match self.dev_col {
            Some(c) => dev("device", f[c])?,
            None => 0,
        };
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        let mut f = [&line[..0]; 64];
        let n = self.split(line, &mut f);
        Address::of(&f, n, ("offset", self.off_col, self.off_unit), ("size", self.size_col, self.size_unit))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        let mut f = [&line[..0]; 64];
        let n = self.split(line, &mut f);
        let unit = match self.time_unit {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => NS_PER_MS,
            TimeUnit::S => NS_PER_S,
            TimeUnit::Filetime => 100,
        };
        Some(Written { field: "time", text: f[..n.min(f.len())].get(self.time_col)?, unit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping() {
        let m: GenericMapping =
            "delim=; time=2:us op=1:rd/wr/tr offset=3:4k size=4:sector device=5".parse().unwrap();
        let mut g = GenericParser::new(&m);
        let Ok(Parsed::Request(r)) = g.parse(b"TR; 1.5; 2; 8; 3") else { panic!() };
        assert_eq!(r, RawRequest { time_ns: 1500, device: 3, offset: 8192, size: 4096, op: IoOp::Trim });
        assert!(matches!(
            g.parse(b"xx;1;2;8;3"),
            Err(FieldErr { field: "op", problem: Problem::UnknownOp, .. })
        ));
        assert!(matches!(g.parse(b"rd;1;2"), Err(FieldErr { field: "size", problem: Problem::Missing, .. })));
    }
}
