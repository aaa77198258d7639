//! Ratings, labels, rankings and the paired tests, against values worked out by hand (sklearn /
//! scipy semantics; the t-test p-value comes from mpmath).
use pgraphrag_metrics::classify::{F1Labels, accuracy, lamp_classification, macro_f1, recall_at_k};
use pgraphrag_metrics::rating::mae_rmse;
use pgraphrag_metrics::stats::{paired_bootstrap, paired_t_test};

#[test]
fn macro_f1_over_given_and_present_labels() {
    let p = [0, 1, -1, 1];
    let g = [0, 1, 1, 0];
    let given = macro_f1(&p, &g, F1Labels::Given(&[0, 1])).unwrap();
    assert!((given - (2.0 / 3.0 + 0.5) / 2.0).abs() < 1e-15);
    let present = macro_f1(&p, &g, F1Labels::Present).unwrap();
    assert!((present - (0.0 + 2.0 / 3.0 + 0.5) / 3.0).abs() < 1e-15);
    assert_eq!(accuracy(&p, &g).unwrap(), 0.5);
}

#[test]
fn lamp_labels_and_invalid_predictions() {
    let labels = ["[1]", "[2]", "[3]"];
    let r = lamp_classification(
        &["[1]", " [2] ", "junk", "[2]"],
        &["[1]", "[2]", "[3]", "[1]"],
        &labels,
    )
    .unwrap();
    assert_eq!(r.accuracy, 0.5);
    assert_eq!(r.invalid, 1);
    // label 0: tp1 fn1 -> 2/3; label 1: tp1 fp1 -> 2/3; label 2: fn1 -> 0
    assert!((r.macro_f1 - (2.0 / 3.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
}

#[test]
fn mae_rmse_with_lamp_fallback() {
    let r = mae_rmse(&["4", "x", " 2.5 "], &["5", "4", "1"]).unwrap();
    // errors: 1, |4 - 1| = 3 (1 is farther from 4), 1.5
    assert!((r.mae - 5.5 / 3.0).abs() < 1e-15);
    assert!((r.rmse - ((1.0 + 9.0 + 2.25) / 3.0f64).sqrt()).abs() < 1e-15);
    assert_eq!(r.unparsed, 1);
    assert!(mae_rmse(&["1"], &["one"]).is_err());
    assert!(mae_rmse(&["1"], &["1", "2"]).is_err());
}

#[test]
fn recall_at_k_counts_gold_in_top_k() {
    let rankings = vec![
        vec!["A", "B", "C"],
        vec!["C", "B", "A"],
        vec!["B", "A", "C"],
    ];
    let golds = ["A", "A", "A"];
    assert!((recall_at_k(&rankings, &golds, 1).unwrap() - 1.0 / 3.0).abs() < 1e-15);
    assert!((recall_at_k(&rankings, &golds, 2).unwrap() - 2.0 / 3.0).abs() < 1e-15);
    assert_eq!(recall_at_k(&rankings, &golds, 3).unwrap(), 1.0);
}

#[test]
fn paired_t_test_matches_scipy() {
    let t = paired_t_test(&[1.0, 2.0, 3.0, 4.0], &[0.0; 4]).unwrap();
    assert!((t.t - 3.872983346207417).abs() < 1e-12);
    assert_eq!(t.df, 3.0);
    assert!((t.p_value - 0.03046629166217099).abs() < 1e-12);
    assert!(
        paired_t_test(&[1.0, 1.0], &[1.0, 1.0])
            .unwrap()
            .p_value
            .is_nan()
    );
}

#[test]
fn paired_bootstrap_is_seeded_and_sane() {
    let a: Vec<f64> = (0..200).map(|i| 0.5 + (i % 7) as f64 * 0.01).collect();
    let b: Vec<f64> = (0..200).map(|i| 0.45 + (i % 5) as f64 * 0.01).collect();
    let x = paired_bootstrap(&a, &b, 1000, 0.95, 7).unwrap();
    let y = paired_bootstrap(&a, &b, 1000, 0.95, 7).unwrap();
    assert_eq!(x, y);
    assert!(x.delta > 0.0 && x.p_value < 0.01);
    assert!(x.interval.low <= x.delta && x.delta <= x.interval.high);
    let z = paired_bootstrap(&b, &a, 1000, 0.95, 7).unwrap();
    assert!(z.p_value > 0.99);
}
