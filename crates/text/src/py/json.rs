//! `json.dumps`: Python's layout, string escaping and float `repr`, on top of `serde_json`.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// Options of [`json_dumps`], named as Python's keyword arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DumpOptions {
    /// `indent=`: `None` writes one line with `", "` and `": "` separators; `Some(n)` puts every
    /// element on its own line, indented by `n` spaces per level (separators `","` and `": "`).
    pub indent: Option<usize>,
    /// `ensure_ascii=` (Python's default `true`): write every non-ASCII character and DEL as
    /// `\uXXXX` escapes (UTF-16 surrogate pairs above U+FFFF).
    pub ensure_ascii: bool,
}

impl Default for DumpOptions {
    /// `json.dumps(value)`: no indent, `ensure_ascii=True`.
    fn default() -> Self {
        DumpOptions {
            indent: None,
            ensure_ascii: true,
        }
    }
}

impl DumpOptions {
    /// `json.dumps(value, indent=n)` (with `ensure_ascii=True`).
    ///
    /// ```
    /// use pgraphrag_text::py::{DumpOptions, json_dumps};
    /// assert_eq!(json_dumps(&[1], &DumpOptions::indent(2)).unwrap(), "[\n  1\n]");
    /// ```
    pub fn indent(n: usize) -> Self {
        DumpOptions {
            indent: Some(n),
            ensure_ascii: true,
        }
    }
}

/// Python's `json.dumps(value, indent=..., ensure_ascii=...)` of a `serde` value: the same
/// bytes for strings, integers, booleans, `null`, lists and maps (in the map's own order) and
/// floats (Python's `repr`: `0.1`, `100.0`, `1e+16`, `1e-05`, `-0.0`).
///
/// One divergence: a NaN or infinite float is written as `null` (serde_json's rule; Python
/// writes the non-JSON `NaN` / `Infinity`).
///
/// ```
/// use pgraphrag_text::py::{DumpOptions, json_dumps};
/// let v = serde_json::json!({"a": [1, 1e16, "é"]});
/// assert_eq!(json_dumps(&v, &DumpOptions::default()).unwrap(), r#"{"a": [1, 1e+16, "\u00e9"]}"#);
/// let utf8 = DumpOptions { ensure_ascii: false, ..DumpOptions::default() };
/// assert_eq!(json_dumps(&v, &utf8).unwrap(), r#"{"a": [1, 1e+16, "é"]}"#);
/// ```
pub fn json_dumps<T: Serialize + ?Sized>(
    value: &T,
    opts: &DumpOptions,
) -> serde_json::Result<String> {
    let mut buf = Vec::new();
    json_dump_to(&mut buf, value, opts)?;
    // The formatter writes only valid UTF-8 (serde_json's fragments, ASCII escapes).
    String::from_utf8(buf).map_err(|e| serde_json::Error::io(io::Error::other(e)))
}

/// [`json_dumps`] into a writer (Python's `json.dump(value, fp, ...)`).
///
/// ```
/// use pgraphrag_text::py::{DumpOptions, json_dump_to};
/// let mut out = Vec::new();
/// json_dump_to(&mut out, &vec!["a", "b"], &DumpOptions::default()).unwrap();
/// assert_eq!(out, br#"["a", "b"]"#);
/// ```
pub fn json_dump_to<W: Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
    opts: &DumpOptions,
) -> serde_json::Result<()> {
    let fmt = PyFormatter {
        indent: opts.indent,
        ensure_ascii: opts.ensure_ascii,
        level: 0,
        has_value: false,
    };
    let mut ser = serde_json::Serializer::with_formatter(writer, fmt);
    value.serialize(&mut ser)
}

/// Python's `repr(x)` of a finite float (shortest round-trip digits; scientific notation when
/// the decimal exponent is below -4 or at least 16), the text `json.dumps` writes for it.
/// Non-finite values give Python's `inf`, `-inf`, `nan`.
///
/// ```
/// use pgraphrag_text::py::python_float_repr;
/// assert_eq!(python_float_repr(100.0), "100.0");
/// assert_eq!(python_float_repr(1e16), "1e+16");
/// assert_eq!(python_float_repr(1e-5), "1e-05");
/// assert_eq!(python_float_repr(0.0001), "0.0001");
/// assert_eq!(python_float_repr(-0.0), "-0.0");
/// ```
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` is the shortest round-trip digits, as `d.ddde<exp>`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    // Python's decpt: the value is 0.<digits> * 10^decpt.
    let decpt = exp + 1;
    if !(-4 < decpt && decpt <= 16) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.unsigned_abs());
    }
    let n = digits.len() as i32;
    if decpt <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{sign}{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// serde_json formatter with Python's separators, indentation, float repr and `ensure_ascii`.
struct PyFormatter {
    indent: Option<usize>,
    ensure_ascii: bool,
    level: usize,
    has_value: bool,
}

impl PyFormatter {
    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        if let Some(n) = self.indent {
            w.write_all(b"\n")?;
            for _ in 0..self.level * n {
                w.write_all(b" ")?;
            }
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(close)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(if self.indent.is_some() { b"," } else { b", " })?;
        }
        self.newline(w)
    }
}

impl Formatter for PyFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(python_float_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if !self.ensure_ascii || fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut units = [0u16; 2];
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if (c as u32) < 0x7f {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{u:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_are_null() {
        let v = [f64::NAN, f64::INFINITY];
        assert_eq!(
            json_dumps(&v[..], &DumpOptions::default()).unwrap(),
            "[null, null]"
        );
    }

    #[test]
    fn nested_empty_containers() {
        let v = serde_json::json!([[], {}, [[]]]);
        assert_eq!(
            json_dumps(&v, &DumpOptions::indent(4)).unwrap(),
            "[\n    [],\n    {},\n    [\n        []\n    ]\n]"
        );
    }
}
