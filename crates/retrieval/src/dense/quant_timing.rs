//! The int8 linear layer's timing probe:
//! `cargo test --release -p pgraphrag-retrieval --lib int8_gops -- --ignored --nocapture`
//! (quantisation included, against the f32 packed tiles, MiniLM's shapes, one thread).

use super::*;
use pgraphrag_core::simd::CpuFeatures;

#[test]
#[ignore = "a timing probe, not a test"]
fn int8_gops() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let cpu = CpuFeatures::detect();
    for (m, k, n) in [(2048, 384, 1152), (2048, 384, 1536), (2048, 1536, 384)] {
        let x: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let w: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.11).cos() * 0.1).collect();
        let b = vec![0.5f32; n];
        let mut y = vec![0f32; m * n];
        let reps = 5;
        let ops = 2.0 * (m * k * n * reps) as f64;
        for kf in [cpu, cpu.without_avx512()] {
            let kf = super::super::kernels::Kernels::for_cpu(kf);
            let Some(mm) = kf.matmul else { continue };
            let panels = super::super::matmul::pack_panels(&w, n, k);
            let t = std::time::Instant::now();
            pool.install(|| {
                for _ in 0..reps {
                    // SAFETY: kernels for this CPU; sizes as in the contract.
                    unsafe {
                        super::super::packed::par_matmul(
                            mm,
                            &x,
                            m,
                            k,
                            n,
                            &panels,
                            &b,
                            false,
                            y.as_mut_ptr(),
                            None,
                        )
                    };
                }
            });
            eprintln!(
                "f32 {} m={m} k={k} n={n}: {:.1} GFLOP/s",
                kf.name,
                ops / t.elapsed().as_secs_f64() / 1e9
            );
        }
        let lin = QuantLin::new(&w, b.clone(), n, k);
        for qk in QKernels::all_for(cpu) {
            let mut buf = QBuf::default();
            let t = std::time::Instant::now();
            pool.install(|| {
                for _ in 0..reps {
                    qlinear(&qk, &lin, &x, m, &mut buf, &mut y, None);
                }
            });
            let all = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            pool.install(|| {
                for _ in 0..reps {
                    quantize(&x, m, k, lin.kp, &qk, &mut buf);
                }
            });
            let q = t.elapsed().as_secs_f64();
            eprintln!(
                "int8 {} m={m} k={k} n={n}: {:.1} GOP/s ({:.0} % quantizing)",
                qk.name,
                ops / all / 1e9,
                100.0 * q / all
            );
        }
    }
}
