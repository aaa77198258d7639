//! `pgraphrag_text::py` against real CPython 3.11 and numpy (fixture written by
//! `scripts/fixtures/py_golden.py`). Every case must match exactly.

mod common;

use pgraphrag_text::py::{self, DumpOptions, Random, RandomState};
use serde_json::Value;

fn golden() -> Value {
    common::fixture("py_golden.json")
}

fn f64_of_bits(v: &Value) -> f64 {
    f64::from_bits(u64::from_str_radix(v.as_str().expect("hex bits"), 16).expect("hex"))
}

fn u64_of(v: &Value) -> u64 {
    v.as_str().expect("decimal string").parse().expect("u64")
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("int") as usize)
        .collect()
}

#[test]
fn isspace_over_every_code_point() {
    let g = golden();
    let want: std::collections::BTreeSet<u32> = g["isspace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect();
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        assert_eq!(
            py::is_space(c),
            want.contains(&(c as u32)),
            "U+{:04X}",
            c as u32
        );
    }
    // The documented relation to Rust's `char::is_whitespace`.
    assert_eq!(
        g["isspace_not_rust_whitespace"],
        serde_json::json!([0x1c, 0x1d, 0x1e, 0x1f])
    );
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let rust = c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
        assert_eq!(py::is_space(c), rust, "U+{:04X}", c as u32);
    }
}

#[test]
fn split_strip_lower() {
    for case in golden()["strs"].as_array().unwrap() {
        let s = case["s"].as_str().unwrap();
        let split: Vec<&str> = py::split(s).collect();
        assert_eq!(split, common::strs(&case["split"]), "split {s:?}");
        assert_eq!(pgraphrag_text::whitespace_split(s), split, "{s:?}");
        assert_eq!(py::strip(s), case["strip"].as_str().unwrap(), "strip {s:?}");
        assert_eq!(
            py::lstrip(s),
            case["lstrip"].as_str().unwrap(),
            "lstrip {s:?}"
        );
        assert_eq!(
            py::rstrip(s),
            case["rstrip"].as_str().unwrap(),
            "rstrip {s:?}"
        );
        assert_eq!(py::lower(s), case["lower"].as_str().unwrap(), "lower {s:?}");
    }
}

#[test]
fn float_grammar() {
    for case in golden()["float"].as_array().unwrap() {
        let s = case["s"].as_str().unwrap();
        let got = py::float(s);
        // Documented divergence: non-ASCII decimal digits are rejected.
        if s.chars().any(|c| !c.is_ascii() && c.is_numeric()) {
            assert!(got.is_err(), "{s:?}");
            continue;
        }
        if !case["ok"].as_bool().unwrap() {
            assert_eq!(got.unwrap_err().input, s, "{s:?} must be rejected");
            continue;
        }
        let v = got.unwrap_or_else(|e| panic!("{s:?}: {e}"));
        if case["nan"].as_bool().unwrap() {
            assert!(v.is_nan(), "{s:?}");
        } else {
            assert_eq!(v.to_bits(), f64_of_bits(&case["bits"]).to_bits(), "{s:?}");
        }
    }
}

#[test]
fn round_half_even() {
    for case in golden()["round"].as_array().unwrap() {
        let x = f64_of_bits(&case["x"]);
        let n = case["n"].as_u64().unwrap() as u32;
        let got = py::round(x, n);
        if case["nan"].as_bool().unwrap() {
            assert!(got.is_nan(), "round({x:?}, {n})");
        } else {
            let want = f64_of_bits(&case["bits"]);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "round({x:?}, {n}) = {want:?}"
            );
        }
    }
}

#[test]
fn int_truncates() {
    for case in golden()["int"].as_array().unwrap() {
        let x = f64_of_bits(&case["x"]);
        let want = case["ok"]
            .as_bool()
            .unwrap()
            .then(|| case["v"].as_i64().unwrap());
        assert_eq!(py::int(x), want, "int({x:?})");
    }
}

#[test]
fn json_dumps_like_python() {
    for case in golden()["json"].as_array().unwrap() {
        let v = &case["v"];
        let dump = |indent, ensure_ascii| {
            py::json_dumps(
                v,
                &DumpOptions {
                    indent,
                    ensure_ascii,
                },
            )
            .unwrap()
        };
        assert_eq!(dump(None, true), case["compact"].as_str().unwrap(), "{v}");
        assert_eq!(
            dump(None, false),
            case["compact_utf8"].as_str().unwrap(),
            "{v}"
        );
        assert_eq!(
            dump(Some(4), true),
            case["indent4"].as_str().unwrap(),
            "{v}"
        );
        assert_eq!(
            dump(Some(2), false),
            case["indent2_utf8"].as_str().unwrap(),
            "{v}"
        );
    }
}

#[test]
fn float_repr_of_every_json_float() {
    for case in golden()["json"].as_array().unwrap() {
        if let Some(x) = case["v"].as_f64().filter(|_| case["v"].is_f64()) {
            assert_eq!(py::python_float_repr(x), case["compact"].as_str().unwrap());
        }
    }
}

#[test]
fn cpython_random() {
    for case in golden()["random"].as_array().unwrap() {
        let seed = u64_of(&case["seed"]);
        let mut r = Random::new(seed);
        for kv in case["getrandbits"].as_array().unwrap() {
            let k = kv[0].as_u64().unwrap() as u32;
            assert_eq!(
                r.getrandbits(k),
                u64_of(&kv[1]),
                "seed {seed} getrandbits({k})"
            );
        }
        let mut r = Random::new(seed);
        for nv in case["randrange"].as_array().unwrap() {
            let n = nv[0].as_u64().unwrap();
            assert_eq!(r.randbelow(n), u64_of(&nv[1]), "seed {seed} randrange({n})");
        }
        let mut r = Random::new(seed);
        for abv in case["randrange2"].as_array().unwrap() {
            let (a, b) = (abv[0].as_i64().unwrap(), abv[1].as_i64().unwrap());
            let want = u64_of(&abv[2]) as i64;
            assert_eq!(
                r.randrange(a, b),
                Some(want),
                "seed {seed} randrange({a}, {b})"
            );
        }
        let mut r = Random::new(seed);
        for nv in case["choice"].as_array().unwrap() {
            let n = nv[0].as_u64().unwrap() as usize;
            let want = nv[1].as_u64().unwrap() as usize;
            assert_eq!(r.choice(n), Some(want), "seed {seed} choice(range({n}))");
        }
        let mut r = Random::new(seed);
        for want in case["shuffle"].as_array().unwrap() {
            let want = usizes(want);
            let mut x: Vec<usize> = (0..want.len()).collect();
            r.shuffle(&mut x);
            assert_eq!(x, want, "seed {seed} shuffle");
        }
        let mut r = Random::new(seed);
        for want in case["random"].as_array().unwrap() {
            assert_eq!(r.random(), want.as_f64().unwrap(), "seed {seed} random()");
        }
        let mut r = Random::new(seed);
        for nkv in case["sample"].as_array().unwrap() {
            let (n, k) = (nkv[0].as_u64().unwrap(), nkv[1].as_u64().unwrap());
            let got = r.sample(n as usize, k as usize);
            assert_eq!(got, Some(usizes(&nkv[2])), "seed {seed} sample({n}, {k})");
        }
    }
}

#[test]
fn numpy_random_state() {
    for case in golden()["random_state"].as_array().unwrap() {
        let seed = case["seed"].as_u64().unwrap() as u32;
        let mut rs = RandomState::new(seed);
        for nv in case["randint"].as_array().unwrap() {
            let n = nv[0].as_u64().unwrap();
            let want = usizes(&nv[1]);
            // Alternate the one-at-a-time and the block paths: they must draw the same words.
            let got: Vec<usize> = if n % 2 == 0 {
                want.iter().map(|_| rs.randint(n) as usize).collect()
            } else {
                let mut out = vec![0; want.len()];
                rs.fill_randint(n, &mut out);
                out
            };
            assert_eq!(got, want, "seed {seed} randint(0, {n})");
        }
        let mut rs = RandomState::new(seed);
        for nv in case["choice"].as_array().unwrap() {
            let n = nv[0].as_u64().unwrap() as usize;
            assert_eq!(rs.choice(n), usizes(&nv[1]), "seed {seed} choice({n})");
        }
        let mut rs = RandomState::new(seed);
        let raw: Vec<u64> = (0..700).map(|_| u64::from(rs.next_u32())).collect();
        assert_eq!(
            raw.iter().sum::<u64>(),
            case["raw_u32_sum"].as_u64().unwrap()
        );
        assert_eq!(
            &raw[..5],
            &usizes(&case["raw_u32_head"])
                .iter()
                .map(|&x| x as u64)
                .collect::<Vec<_>>()[..]
        );
        assert_eq!(
            &raw[695..],
            &usizes(&case["raw_u32_tail"])
                .iter()
                .map(|&x| x as u64)
                .collect::<Vec<_>>()[..]
        );
    }
}
