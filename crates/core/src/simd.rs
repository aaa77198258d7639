//! Shared helpers for the hand-written SIMD kernels of the workspace: run-time CPU feature
//! detection ([`CpuFeatures`], x86 and ARM) and a raw pointer that parallel tasks may share when each
//! writes its own disjoint part of one buffer ([`SendPtr`]).
//!
//! ```
//! use pgraphrag_core::simd::CpuFeatures;
//! let cpu = CpuFeatures::detect();
//! // A kernel set compiled for AVX-512 needs everything `avx512()` checks.
//! if cpu.avx512() {
//!     assert!(cpu.avx2_fma());
//! }
//! // The portable set: nothing detected, so every dispatcher picks its plain kernels.
//! assert!(!CpuFeatures::portable().avx2_fma());
//! ```

/// The SIMD features the workspace's kernels are compiled for (x86 and AArch64), as detected
/// at run time.
///
/// Every kernel dispatcher asks this one type; [`CpuFeatures::portable`] (nothing detected)
/// makes them all pick their portable kernels, which is how tests and users force the plain
/// code paths. On x86 the ARM features are `false` and on AArch64 the x86 ones; on other
/// targets everything is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuFeatures {
    avx512f: bool,
    avx512bw: bool,
    avx512vl: bool,
    avx512vnni: bool,
    avx2: bool,
    fma: bool,
    f16c: bool,
    neon: bool,
    dotprod: bool,
}

impl CpuFeatures {
    /// The features of the CPU this runs on (`is_x86_feature_detected!`, which caches).
    pub fn detect() -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            use std::arch::is_x86_feature_detected as has;
            CpuFeatures {
                avx512f: has!("avx512f"),
                avx512bw: has!("avx512bw"),
                avx512vl: has!("avx512vl"),
                avx512vnni: has!("avx512vnni"),
                avx2: has!("avx2"),
                fma: has!("fma"),
                f16c: has!("f16c"),
                ..CpuFeatures::portable()
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            use std::arch::is_aarch64_feature_detected as has;
            CpuFeatures {
                neon: has!("neon"),
                dotprod: has!("dotprod"),
                ..CpuFeatures::portable()
            }
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
        {
            CpuFeatures::portable()
        }
    }

    /// No SIMD feature at all: dispatchers pick their portable kernels.
    pub const fn portable() -> Self {
        CpuFeatures {
            avx512f: false,
            avx512bw: false,
            avx512vl: false,
            avx512vnni: false,
            avx2: false,
            fma: false,
            f16c: false,
            neon: false,
            dotprod: false,
        }
    }

    /// These features with every AVX-512 one cleared: what an AVX2-only CPU (AMD Zen 2/3,
    /// most Intel client CPUs) would report, for running and measuring the AVX2 kernels on a
    /// CPU that has AVX-512 too.
    ///
    /// ```
    /// use pgraphrag_core::simd::CpuFeatures;
    /// let cpu = CpuFeatures::detect().without_avx512();
    /// assert!(!cpu.avx512f() && !cpu.avx512());
    /// assert_eq!(cpu.avx2_fma(), CpuFeatures::detect().avx2_fma());
    /// ```
    pub fn without_avx512(self) -> Self {
        CpuFeatures {
            avx512f: false,
            avx512bw: false,
            avx512vl: false,
            avx512vnni: false,
            ..self
        }
    }

    /// `avx512f` alone.
    pub fn avx512f(&self) -> bool {
        self.avx512f
    }

    /// AVX-512 F, BW and VL together with AVX2 and FMA: what a kernel compiled with
    /// `avx512f,avx512bw,avx512vl,avx2,fma` needs.
    pub fn avx512(&self) -> bool {
        self.avx512f && self.avx512bw && self.avx512vl && self.avx2_fma()
    }

    /// [`Self::avx512`] plus AVX-512 VNNI (8-bit integer dot products).
    pub fn avx512_vnni(&self) -> bool {
        self.avx512() && self.avx512vnni
    }

    /// AVX2 alone.
    pub fn avx2(&self) -> bool {
        self.avx2
    }

    /// AVX2 and FMA together.
    pub fn avx2_fma(&self) -> bool {
        self.avx2 && self.fma
    }

    /// F16C (half-precision conversions).
    pub fn f16c(&self) -> bool {
        self.f16c
    }

    /// AArch64 Advanced SIMD (NEON): every AArch64 CPU has it, [`Self::portable`] does not.
    pub fn neon(&self) -> bool {
        self.neon
    }

    /// NEON plus the dot-product extension (`sdot`/`udot`: Armv8.2 and later, Apple M1,
    /// AWS Graviton 2 and later).
    pub fn neon_dotprod(&self) -> bool {
        self.neon && self.dotprod
    }

    /// These features with the dot-product extension cleared: what an Armv8.0 CPU (Cortex-A53/
    /// A72, Raspberry Pi 4, AWS Graviton 1) reports, for running the plain NEON kernels on a CPU
    /// that has it.
    ///
    /// ```
    /// use pgraphrag_core::simd::CpuFeatures;
    /// let cpu = CpuFeatures::detect().without_dotprod();
    /// assert!(!cpu.neon_dotprod());
    /// assert_eq!(cpu.neon(), CpuFeatures::detect().neon());
    /// ```
    pub fn without_dotprod(self) -> Self {
        CpuFeatures {
            dotprod: false,
            ..self
        }
    }
}

/// A raw pointer that parallel tasks may share (it is `Send` and `Sync`), for kernels in
/// which every task writes its own disjoint elements of one output buffer.
///
/// Creating and copying one is safe; using it is not. Whoever dereferences [`SendPtr::get`]
/// (in `unsafe` code) must guarantee that
///
/// * the buffer outlives every task that uses the pointer (e.g. all tasks run inside one
///   rayon scope or parallel iterator that the buffer's owner waits for),
/// * no two tasks access the same element while one of them writes it, and no one else
///   reads or writes the buffer meanwhile,
/// * every access stays inside the buffer.
///
/// ```
/// use pgraphrag_core::simd::SendPtr;
/// let mut out = vec![0f32; 4];
/// let p = SendPtr::new(out.as_mut_ptr());
/// std::thread::scope(|s| {
///     for i in 0..4 {
///         // SAFETY: each thread writes its own element; `out` outlives the scope.
///         s.spawn(move || unsafe { *p.get().add(i) = i as f32 });
///     }
/// });
/// assert_eq!(out, [0.0, 1.0, 2.0, 3.0]);
/// ```
#[derive(Debug)]
pub struct SendPtr<T>(*mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}

// SAFETY: the pointer itself is plain data; dereferencing it is `unsafe` and bound by the
// contract above (disjoint accesses, buffer outlives the tasks). `T: Send` because the tasks
// write values of `T` from other threads.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// Wraps `ptr`.
    pub fn new(ptr: *mut T) -> Self {
        SendPtr(ptr)
    }

    /// The pointer (a method taking `self`, so that closures capture the whole `Send`
    /// wrapper rather than its non-`Send` field).
    pub fn get(self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_has_nothing() {
        let p = CpuFeatures::portable();
        assert!(!p.avx512() && !p.avx512_vnni() && !p.avx2_fma() && !p.f16c() && !p.avx512f());
        assert!(!p.avx2());
        assert_eq!(p, CpuFeatures::default());
    }

    #[test]
    fn composites_imply_their_parts() {
        let c = CpuFeatures::detect();
        if c.avx512_vnni() {
            assert!(c.avx512());
        }
        if c.avx512() {
            assert!(c.avx512f() && c.avx2_fma());
        }
    }
}
