//! The byte-level line and field splitting of WordNet's files (ASCII, one record per line).

/// Positions of the `\n` bytes of `b`, ascending (eight bytes at a time).
pub(super) fn newlines(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let words = b.len() / 8;
    let whole = (0..words).flat_map(move |w| {
        let x = u64::from_le_bytes(b[w * 8..w * 8 + 8].try_into().unwrap_or_default()) ^ NL;
        // Exact zero-byte test (no false positives): high bit of each byte that was 0.
        let mut z = !(((x & !HI) + !HI) | x | !HI);
        std::iter::from_fn(move || {
            (z != 0).then(|| {
                let i = z.trailing_zeros() as usize / 8;
                z &= z - 1;
                w * 8 + i
            })
        })
    });
    let tail = (words * 8..b.len()).filter(move |&i| b[i] == b'\n');
    whole.chain(tail)
}

/// The whitespace-separated fields of a line (WordNet files are ASCII; runs of spaces count once).
pub(super) fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
}
