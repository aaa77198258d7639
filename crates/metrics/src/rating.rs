//! MAE and RMSE for rating prediction (LaMP-3), with LaMP's rule for unreadable predictions.
//!
//! LaMP (`eval/evaluation.py`) strips both sides and reads them with Python's `float()`. A
//! prediction that `float()` rejects is replaced by whichever of 1.0 and 5.0 is **farther** from
//! the gold (5.0 on a tie), the worst possible rating. MAE is `evaluate.load("mae")`, RMSE is
//! `evaluate.load("mse")` with `squared=False`.
//!
//! ```
//! use pgraphrag_metrics::rating::{mae_rmse, parse_python_float};
//! assert_eq!(parse_python_float(" 4.5\n"), Some(4.5));
//! assert_eq!(parse_python_float("1_000"), Some(1000.0));
//! assert_eq!(parse_python_float("four"), None);
//! let r = mae_rmse(&["4", "great!"], &["5", "2"]).unwrap();
//! assert_eq!(r.mae, (1.0 + 3.0) / 2.0); // "great!" -> 5.0, farther from 2 than 1.0 is
//! ```
use crate::error::{Error, Result};
use pgraphrag_core::RATING_SCALE;
use pgraphrag_text::py;

/// LaMP's reading of a rating, Python's `float(s.strip())` ([`py::float`] of [`py::strip`]):
/// surrounding whitespace, sign, digits with single `_` separators, a decimal point, an
/// exponent, `inf`/`infinity`/`nan` in any case; `None` where Python raises `ValueError`.
/// Non-ASCII decimal digits (which Python also accepts) are not supported.
pub fn parse_python_float(s: &str) -> Option<f64> {
    py::float(py::strip(s)).ok()
}

/// LaMP's mapping of one prediction given its (numeric) gold.
pub fn lamp_rating(prediction: &str, gold: f64) -> f64 {
    match parse_python_float(prediction) {
        Some(v) => v,
        None => {
            let (lo, hi) = (*RATING_SCALE.start(), *RATING_SCALE.end());
            if (lo - gold).abs() > (hi - gold).abs() {
                lo
            } else {
                hi
            }
        }
    }
}

/// MAE and RMSE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaeRmse {
    /// Mean absolute error.
    pub mae: f64,
    /// Root mean squared error.
    pub rmse: f64,
    /// How many predictions were unreadable and replaced by 1 or 5.
    pub unparsed: usize,
}

/// LaMP-3's MAE and RMSE of prediction strings against gold strings. A gold that is not a number is
/// an error naming its position; an empty input is an error.
pub fn mae_rmse<S: AsRef<str>, G: AsRef<str>>(predictions: &[S], golds: &[G]) -> Result<MaeRmse> {
    if predictions.len() != golds.len() {
        return Err(Error::LengthMismatch {
            what: "mae_rmse predictions and golds",
            left: predictions.len(),
            right: golds.len(),
        });
    }
    if predictions.is_empty() {
        return Err(Error::InvalidArgument("mae_rmse of no examples".into()));
    }
    let (mut abs, mut sq, mut unparsed) = (0.0, 0.0, 0);
    for (i, (p, g)) in predictions.iter().zip(golds).enumerate() {
        let g = g.as_ref();
        let gv = parse_python_float(g).ok_or_else(|| Error::BadGold {
            index: i,
            value: g.to_string(),
        })?;
        if parse_python_float(p.as_ref()).is_none() {
            unparsed += 1;
        }
        let pv = lamp_rating(p.as_ref(), gv);
        abs += (gv - pv).abs();
        sq += (gv - pv) * (gv - pv);
    }
    let n = predictions.len() as f64;
    Ok(MaeRmse {
        mae: abs / n,
        rmse: (sq / n).sqrt(),
        unparsed,
    })
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
            assert_eq!(parse_python_float(s), Some(v), "{s}");
        }
        for s in [
            "", ".", "e3", "1e", "1__0", "_1", "1_", "0x10", "1.2.3", "4 stars", "١",
        ] {
            assert_eq!(parse_python_float(s), None, "{s}");
        }
        assert!(parse_python_float("NaN").unwrap().is_nan());
        assert_eq!(parse_python_float("-Infinity"), Some(f64::NEG_INFINITY));
    }

    #[test]
    fn farther_of_one_and_five() {
        assert_eq!(lamp_rating("?", 4.0), 1.0);
        assert_eq!(lamp_rating("?", 2.0), 5.0);
        assert_eq!(lamp_rating("?", 3.0), 5.0);
    }
}
