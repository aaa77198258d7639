//! An opt-in allocator setting for processes that train: keep freed memory for reuse.

/// Makes glibc's `malloc` keep the memory a training step frees for the next step, instead of
/// returning large blocks to the kernel and faulting freshly zeroed pages in again at the next
/// allocation: `mallopt` with `M_MMAP_THRESHOLD` at its maximum (2 GiB: blocks below it come
/// from the heap) and `M_TRIM_THRESHOLD` at −1 (never trim the heap; a step frees several GiB
/// at once, more than any positive threshold `mallopt` takes, so only −1 keeps them).
///
/// Every candle op allocates its output (megabytes per op for a batch of a few hundred
/// tokens); with glibc's defaults a quarter of a training step went to the kernel zeroing
/// pages (`perf`: `clear_page_erms`), and this setting made the step 1.5× faster
/// (`docs/train.md`, "Speed"). The price: the process keeps its peak heap until it exits.
///
/// A process setting, so the library never applies it itself: call it once, first thing in
/// `main` of a binary that trains (the `pgraphrag train` commands do). Returns whether the
/// setting took effect (`false` on other C libraries and systems, where it does nothing).
///
/// ```
/// let applied = pgraphrag_train::retain_freed_memory();
/// assert_eq!(applied, cfg!(all(target_os = "linux", target_env = "gnu")));
/// ```
pub fn retain_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes two thresholds of the allocator; it is thread-safe
        // (it takes the arena locks) and any value is accepted or refused with 0.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, i32::MAX) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, -1) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
