use super::*;
use candle_core::Var;

#[test]
fn frozen_linear_matches_matmul_and_its_input_gradient() {
    let dev = Device::Cpu;
    // (3, 4): candle's product re-attached; (64, 32): the packed tiles where the CPU has them.
    for (out, inp) in [(3, 4), (64, 32)] {
        let w = Tensor::from_vec(
            (0..out * inp).map(|i| (i as f32 * 0.37).sin()).collect(),
            (out, inp),
            &dev,
        )
        .unwrap();
        let frozen = Frozen::new(w.clone()).unwrap();
        let x = Var::from_tensor(
            &Tensor::from_vec(
                (0..5 * inp).map(|i| (i as f32).cos()).collect(),
                (5, 1, inp),
                &dev,
            )
            .unwrap(),
        )
        .unwrap();
        let y = frozen_linear(x.as_tensor(), &frozen).unwrap();
        let plain = x.as_tensor().broadcast_matmul(&w.t().unwrap()).unwrap();
        assert_eq!(y.dims(), &[5, 1, out]);
        let diff = (&y - &plain).unwrap().abs().unwrap().max_all().unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-4, "{out}x{inp}");
        let g1 = y.sqr().unwrap().sum_all().unwrap().backward().unwrap();
        let g2 = plain.sqr().unwrap().sum_all().unwrap().backward().unwrap();
        let (a, b) = (
            g1.get(x.as_tensor()).unwrap(),
            g2.get(x.as_tensor()).unwrap(),
        );
        let diff = (a - b).unwrap().abs().unwrap().max_all().unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-3, "{out}x{inp}");
        // No gradient reaches the frozen weight.
        assert!(g1.get(&w).is_none());
    }
}

#[test]
fn the_parallel_mask_is_the_streams_values_in_order() {
    let n = (1 << 16) * 3 + 17;
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let one_pass: Vec<f32> = (0..n)
        .map(|_| {
            if rng.random::<f32>() >= 0.3 {
                1.0 / 0.7
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(dropout_mask(n, 0.3, 41), one_pass);
}

#[test]
fn dropout_is_seeded_and_scaled() {
    let dev = Device::Cpu;
    let x = Tensor::ones((1000,), candle_core::DType::F32, &dev).unwrap();
    let a = dropout(&x, 0.25, 7).unwrap().to_vec1::<f32>().unwrap();
    let b = dropout(&x, 0.25, 7).unwrap().to_vec1::<f32>().unwrap();
    let c = dropout(&x, 0.25, 8).unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let kept = a.iter().filter(|&&v| v > 0.0).count();
    assert!((700..800).contains(&kept), "{kept} kept");
    assert!(a.iter().all(|&v| v == 0.0 || (v - 4.0 / 3.0).abs() < 1e-6));
}

#[test]
fn softmax_with_grad_equals_candles_softmax_and_its_gradient() {
    let dev = Device::Cpu;
    let mask = causal_mask(4, 2, &dev).unwrap();
    let z = Var::from_tensor(
        &Tensor::from_vec(
            (0..64).map(|i| (i as f32 * 0.9).sin() * 2.0).collect(),
            (2, 8, 4),
            &dev,
        )
        .unwrap()
        .broadcast_add(&mask)
        .unwrap(),
    )
    .unwrap();
    let r = Tensor::from_vec(
        (0..64).map(|i| (i as f32 * 0.3).cos()).collect(),
        (2, 8, 4),
        &dev,
    )
    .unwrap();
    let a = softmax_with_grad(z.as_tensor()).unwrap();
    let b = candle_nn::ops::softmax(z.as_tensor(), D::Minus1).unwrap();
    let max = |t: Tensor| {
        t.abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    };
    assert!(max((&a - &b).unwrap()) < 1e-6);
    let ga = (&a * &r).unwrap().sum_all().unwrap().backward().unwrap();
    let gb = (&b * &r).unwrap().sum_all().unwrap().backward().unwrap();
    let (ga, gb) = (
        ga.get(z.as_tensor()).unwrap(),
        gb.get(z.as_tensor()).unwrap(),
    );
    assert!(max(gb.clone()) > 1e-2, "the gradient is not trivially zero");
    assert!(max((ga - gb).unwrap()) < 1e-6);
}

#[test]
fn causal_mask_hides_the_future() {
    let m = causal_mask(3, 2, &Device::Cpu)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap();
    assert_eq!(m.len(), 6);
    assert_eq!(m[4][0..2], [0.0, 0.0]);
    assert!(m[4][2].is_infinite());
    assert_eq!(m[5], vec![0.0; 3]);
}
