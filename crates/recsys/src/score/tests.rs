//! The letter scorers' tests, with a scorer of known position bias.
use super::*;

#[test]
fn log_sum_exp_matches_the_direct_sum() {
    let xs = [0.5f32, -1.0, 2.0];
    let direct: f64 = xs.iter().map(|&x| f64::from(x).exp()).sum::<f64>().ln();
    assert!((log_sum_exp(&xs) - direct).abs() < 1e-12);
    // Large logits do not overflow.
    assert!((log_sum_exp(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-9);
}

#[test]
fn ranking_breaks_ties_by_letter() {
    assert_eq!(ranking(&[1.0, 1.0, 1.0]).unwrap(), [0, 1, 2]);
    assert_eq!(ranking(&[]).unwrap(), Vec::<usize>::new());
}

/// A test double whose prompt is the candidates' ids in letter order (`"7,3,9"`): each
/// letter's score is `bias[letter] + value(item)`.
struct Biased {
    bias: Vec<f64>,
    value: fn(u32) -> f64,
    prompts: std::cell::RefCell<Vec<String>>,
}

impl LetterScorer for Biased {
    fn id(&self) -> String {
        "biased".into()
    }
    fn score(&self, prompt: &str, letters: &[char]) -> Result<Vec<f64>> {
        self.prompts.borrow_mut().push(prompt.to_string());
        let items: Vec<u32> = prompt.split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(items.len(), letters.len());
        Ok(items
            .iter()
            .enumerate()
            .map(|(j, &i)| self.bias[j] + (self.value)(i))
            .collect())
    }
}

fn ids(c: &CandidateSet) -> Result<String> {
    Ok(c.items
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(","))
}

#[test]
fn cyclic_scoring_cancels_a_pure_position_bias() {
    // A strong preference for A, then B, ...: the plain scores rank by letter alone.
    let bias: Vec<f64> = (0..5).map(|j| -3.0 * j as f64).collect();
    let c = CandidateSet {
        items: vec![40, 10, 30, 20, 50],
        target_index: 3,
    };
    let pure = Biased {
        bias: bias.clone(),
        value: |_| 0.0,
        prompts: Default::default(),
    };
    assert_eq!(
        ranking(&pure.score(&ids(&c).unwrap(), &LETTERS[..5]).unwrap()).unwrap(),
        [0, 1, 2, 3, 4]
    );
    let s = cyclic_scores(&pure, &c, ids).unwrap();
    let mean_bias = bias.iter().sum::<f64>() / 5.0;
    assert!(s.iter().all(|x| (x - mean_bias).abs() < 1e-12), "{s:?}");
    // Every rotation was asked once (after the plain call), each candidate once at every
    // letter.
    let prompts = pure.prompts.borrow();
    assert_eq!(prompts.len(), 1 + 5);
    assert_eq!(prompts[1], "40,10,30,20,50");
    assert_eq!(prompts[2], "10,30,20,50,40");
    assert_eq!(prompts[5], "50,40,10,30,20");
    // A small preference for larger ids under the same bias: the plain scores still rank
    // by letter, the debiased ones by the preference.
    let slight = Biased {
        bias,
        value: |i| f64::from(i) / 100.0,
        prompts: Default::default(),
    };
    assert_eq!(
        ranking(&slight.score(&ids(&c).unwrap(), &LETTERS[..5]).unwrap()).unwrap(),
        [0, 1, 2, 3, 4]
    );
    let s = cyclic_scores(&slight, &c, ids).unwrap();
    assert_eq!(ranking(&s).unwrap(), [4, 0, 2, 3, 1]);
    for (x, &i) in s.iter().zip(&c.items) {
        assert!((x - (mean_bias + f64::from(i) / 100.0)).abs() < 1e-12);
    }
}

#[test]
fn cyclic_scoring_is_cached_per_rotation() {
    let cache = crate::ScoreCache::in_memory().unwrap();
    let c = CandidateSet {
        items: vec![1, 2, 3],
        target_index: 0,
    };
    let plain = Biased {
        bias: vec![1.0, 0.0, 0.0],
        value: |i| f64::from(i),
        prompts: Default::default(),
    };
    let cached = crate::CachedScorer::new(plain, &cache);
    // The plain prompt first: then the debiased scores are not the cached plain ones.
    let first = cached.score("1,2,3", &LETTERS[..3]).unwrap();
    assert_eq!(first, [2.0, 2.0, 3.0]);
    let s = cyclic_scores(&cached, &c, ids).unwrap();
    let third = 1.0 / 3.0;
    assert_eq!(s, [1.0 + third, 2.0 + third, 3.0 + third]);
    // Rotation 0 is the plain prompt (a cache hit); the other two were scored and stored.
    assert_eq!((cached.hits(), cache.len().unwrap()), (1, 3));
    assert_eq!(cyclic_scores(&cached, &c, ids).unwrap(), s);
    assert_eq!(cached.hits(), 4);
}

#[test]
fn ties_are_broken_by_the_random_ranking() {
    let p = [3.0, 1.0, 3.0, 2.0, 3.0];
    let s = break_ties(&p, 0, 7);
    let u = random_scores(0, 7, 5);
    // Distinct primaries keep their order, ties follow the random ranking.
    let r = ranking(&s).unwrap();
    assert_eq!(&r[3..], [3, 1]);
    let mut tied = vec![0, 2, 4];
    tied.sort_by(|&a, &b| u[b].total_cmp(&u[a]));
    assert_eq!(&r[..3], tied);
    for (x, y) in s.iter().zip(p) {
        assert!(*x >= y && *x < y + 0.5);
    }
    // All equal: jitter of up to a half.
    assert_eq!(
        ranking(&break_ties(&[0.0; 4], 0, 7)).unwrap(),
        ranking(&random_scores(0, 7, 4)).unwrap()
    );
}
