//! Numbers: `float(str)`, `round(float, ndigits)`, `int(float)`.

use super::is_space;

/// `float(s)` rejected its input (Python raises `ValueError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not convert string to float: {input:?}")]
pub struct FloatError {
    /// The string that was not a float literal.
    pub input: String,
}

/// Python's `float(s)` for a `str`: surrounding whitespace, a sign,
/// digits with single `_` separators between digits, a decimal point, an exponent, and
/// `inf`/`infinity`/`nan` in any case. The value is correctly rounded, like CPython's.
///
/// The whitespace `float()` ignores is ASCII `" \t\n\x0b\x0c\r"` and non-ASCII
/// [`is_space`] characters; unlike `str.strip()` it keeps the information separators
/// U+001C..U+001F (so `float("\x1c1")` fails but `float(strip("\x1c1"))` is 1.0).
///
/// One divergence: Python also accepts non-ASCII decimal digits (`float("١") == 1.0`); they are
/// rejected here. The sign of a NaN (`float("-nan")`) is not kept.
///
/// ```
/// use pgraphrag_text::py::float;
/// assert_eq!(float(" 4.5\n"), Ok(4.5));
/// assert_eq!(float("1_000"), Ok(1000.0));
/// assert_eq!(float("-Infinity"), Ok(f64::NEG_INFINITY));
/// assert!(float("nan").unwrap().is_nan());
/// assert_eq!(float("four").unwrap_err().input, "four");
/// ```
pub fn float(s: &str) -> Result<f64, FloatError> {
    parse(s).ok_or_else(|| FloatError {
        input: s.to_string(),
    })
}

fn parse(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| {
        if c.is_ascii() {
            matches!(c, ' ' | '\t'..='\r')
        } else {
            is_space(c)
        }
    });
    let (sign, body) = match t.as_bytes().first() {
        Some(b'+') => (1.0, &t[1..]),
        Some(b'-') => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(sign * f64::INFINITY);
    }
    if body.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    // grammar check: digitpart? ('.' digitpart?)? (e [+-]? digitpart)?  with at least one digit
    let b = body.as_bytes();
    let mut i = 0;
    let digitpart = |i: &mut usize| -> Option<usize> {
        let start = *i;
        let mut n = 0;
        while *i < b.len() {
            if b[*i].is_ascii_digit() {
                n += 1;
                *i += 1;
            } else if b[*i] == b'_'
                && *i > start
                && b[*i - 1].is_ascii_digit()
                && b.get(*i + 1).is_some_and(u8::is_ascii_digit)
            {
                *i += 1;
            } else {
                break;
            }
        }
        if n == 0 { None } else { Some(n) }
    };
    let int_digits = digitpart(&mut i).unwrap_or(0);
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac_digits = digitpart(&mut i).unwrap_or(0);
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        digitpart(&mut i)?;
    }
    if i != b.len() {
        return None;
    }
    let v = if body.contains('_') {
        let clean: String = body.chars().filter(|&c| c != '_').collect();
        clean.parse::<f64>().ok()?
    } else {
        body.parse::<f64>().ok()?
    };
    Some(sign * v)
}

/// Python's `round(x, ndigits)` for a `float` and `ndigits >= 0`: the decimal value nearest to
/// `x` with `ndigits` digits after the point, ties to even **on the exact binary value of `x`**
/// (so `round(2.675, 2) == 2.67`: 2.675 is stored as 2.67499999…), read back as the nearest
/// float. Infinities, NaN and zeros come back unchanged; `round(x, 0)` is the float of Python's
/// `round(x)` (ties to even: `round(2.5) == 2`).
///
/// ```
/// use pgraphrag_text::py::round;
/// assert_eq!(round(0.125, 2), 0.12);
/// assert_eq!(round(0.375, 2), 0.38);
/// assert_eq!(round(2.5, 0), 2.0);
/// assert_eq!(round(0.12345, 3), 0.123);
/// ```
pub fn round(x: f64, ndigits: u32) -> f64 {
    // CPython's NDIGITS_MAX: beyond it every float is already exact.
    const NDIGITS_MAX: u32 = 323;
    if ndigits > NDIGITS_MAX || x == 0.0 || !x.is_finite() {
        return x;
    }
    // Rust's fixed-precision formatting is exact (correctly rounded from the binary value,
    // ties to even), which is what CPython's `_Py_dg_dtoa(x, 3, ndigits, ...)` computes.
    let s = format!("{x:.prec$}", prec = ndigits as usize);
    s.parse::<f64>().unwrap_or(x)
}

/// Python's `int(x)` of a `float` (truncation toward zero), or `None` where Python raises
/// (`x` is infinite or NaN) or where the integer does not fit an `i64`.
///
/// ```
/// use pgraphrag_text::py::int;
/// assert_eq!(int(3.9), Some(3));
/// assert_eq!(int(-3.9), Some(-3));
/// assert_eq!(int(f64::NAN), None);
/// assert_eq!(int(1e19), None);
/// ```
pub fn int(x: f64) -> Option<i64> {
    // -2^63 and 2^63 are exact floats: the i64 range is [-2^63, 2^63).
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let t = x.trunc();
    (t.is_finite() && (-LIMIT..LIMIT).contains(&t)).then_some(t as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_grammar() {
        for (s, v) in [
            ("1", 1.0),
            ("-2.5", -2.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("  +3 ", 3.0),
            ("1_0.0_1", 10.01),
        ] {
            assert_eq!(float(s), Ok(v), "{s}");
        }
        for s in [
            "", ".", "e3", "1e", "1__0", "_1", "1_", "0x10", "1.2.3", "4 stars", "١",
        ] {
            assert!(float(s).is_err(), "{s}");
        }
        assert!(float("NaN").unwrap().is_nan());
        assert_eq!(float("-Infinity"), Ok(f64::NEG_INFINITY));
        assert!(float("\x1c1").is_err());
        assert_eq!(float("\u{85}1\u{3000}"), Ok(1.0));
    }

    #[test]
    fn error_names_the_input() {
        let e = float("4 stars").unwrap_err();
        assert_eq!(
            e.to_string(),
            "could not convert string to float: \"4 stars\""
        );
    }
}
