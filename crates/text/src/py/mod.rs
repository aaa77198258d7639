//! Python-compatible helpers: the one implementation of each piece of CPython (3.11) and numpy
//! behaviour the workspace reproduces bit for bit.
//!
//! | item | Python reference |
//! |---|---|
//! | [`is_space`] | `str.isspace()` of one character |
//! | [`split`] | `str.split()` (no argument) |
//! | [`strip`], [`lstrip`], [`rstrip`] | `str.strip()`, `str.lstrip()`, `str.rstrip()` (no argument) |
//! | [`lower`] | `str.lower()` (Unicode 14, final sigma) |
//! | [`float`] | `float(s)` of a `str` |
//! | [`round`] | `round(x, ndigits)` of a `float` |
//! | [`int`] | `int(x)` of a `float` |
//! | [`json_dumps`] | `json.dumps(value, indent=..., ensure_ascii=...)` |
//! | [`Mt19937`] | the Mersenne Twister both libraries share |
//! | [`Random`] | `random.Random(seed)` |
//! | [`RandomState`] | `numpy.random.RandomState(seed)` (legacy) |
//!
//! Every item is checked against real CPython and numpy output by `tests/py_golden.rs` (fixture
//! written by `scripts/fixtures/py_golden.py`).
//!
//! ```
//! use pgraphrag_text::py;
//! assert_eq!(py::split(" a\u{1c}b  c\n").collect::<Vec<_>>(), ["a", "b", "c"]);
//! assert_eq!(py::float(" 1_0.5\n"), Ok(10.5));
//! assert_eq!(py::round(2.675, 2), 2.67);
//! assert_eq!(py::Random::new(42).getrandbits(32), 2746317213);
//! ```

mod json;
mod mt;
mod num;
mod numpy;
mod random;
mod strs;

pub use json::{DumpOptions, json_dump_to, json_dumps, python_float_repr};
pub use mt::Mt19937;
pub use num::{FloatError, float, int, round};
pub use numpy::RandomState;
pub use random::Random;
pub use strs::{is_space, lower, lstrip, rstrip, split, strip};
