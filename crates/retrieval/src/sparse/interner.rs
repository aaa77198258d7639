//! A string interner for the BM25 vocabulary: one arena for all term bytes and an
//! open-addressing table of term ids, hashed with the rustc Fx recipe. Fitting a BM25 index
//! on a short candidate list is dominated by per-term allocations and hashing with a
//! `HashMap<String, _>`; this does one allocation per growth step instead.

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
const EMPTY: u32 = u32::MAX;

/// Fx hash of a byte string (8 bytes per step, plus the length).
#[inline]
pub(crate) fn fxhash(bytes: &[u8]) -> u64 {
    #[inline]
    fn add(h: u64, w: u64) -> u64 {
        (h.rotate_left(5) ^ w).wrapping_mul(SEED)
    }
    let mut h = 0u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = add(h, u64::from_le_bytes(w));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = add(h, u64::from_le_bytes(w));
    }
    // Final avalanche so that the low bits used for the slot depend on every input bit.
    let h = add(h, bytes.len() as u64);
    h ^ (h >> 29)
}

/// Distinct strings with dense ids `0..len()` in insertion order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interner {
    arena: String,
    /// (start, end) of each id's bytes in `arena`.
    spans: Vec<(usize, usize)>,
    /// Hash of each id (for growth).
    hashes: Vec<u64>,
    /// Open addressing, linear probing; `EMPTY` or an id. Length is a power of two (or 0).
    table: Vec<u32>,
}

impl Interner {
    /// Number of distinct strings.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The string of `id`.
    #[inline]
    pub(crate) fn get_str(&self, id: u32) -> &str {
        let (s, e) = self.spans[id as usize];
        &self.arena[s..e]
    }

    /// The id of `s`, if interned.
    #[inline]
    pub(crate) fn get(&self, s: &str) -> Option<u32> {
        if self.table.is_empty() {
            return None;
        }
        let h = fxhash(s.as_bytes());
        let mask = self.table.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let id = self.table[i];
            if id == EMPTY {
                return None;
            }
            if self.hashes[id as usize] == h && self.get_str(id) == s {
                return Some(id);
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `s`, interning it (with the next id) if new; `None` past `u32::MAX - 1` ids.
    #[inline]
    pub(crate) fn intern(&mut self, s: &str) -> Option<(u32, bool)> {
        if 2 * (self.spans.len() + 1) > self.table.len() {
            self.grow();
        }
        let h = fxhash(s.as_bytes());
        let mask = self.table.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let id = self.table[i];
            if id == EMPTY {
                break;
            }
            if self.hashes[id as usize] == h && self.get_str(id) == s {
                return Some((id, false));
            }
            i = (i + 1) & mask;
        }
        let id = u32::try_from(self.spans.len())
            .ok()
            .filter(|&x| x != EMPTY)?;
        let start = self.arena.len();
        self.arena.push_str(s);
        self.spans.push((start, self.arena.len()));
        self.hashes.push(h);
        self.table[i] = id;
        Some((id, true))
    }

    fn grow(&mut self) {
        let cap = (self.table.len() * 2).max(64);
        let mask = cap - 1;
        let mut table = vec![EMPTY; cap];
        for (id, &h) in self.hashes.iter().enumerate() {
            let mut i = (h as usize) & mask;
            while table[i] != EMPTY {
                i = (i + 1) & mask;
            }
            table[i] = id as u32;
        }
        self.table = table;
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn interns_in_insertion_order_and_finds_again() {
        let mut t = Interner::default();
        let words: Vec<String> = (0..1000).map(|i| format!("w{}", i % 300)).collect();
        for w in &words {
            t.intern(w).unwrap();
        }
        assert_eq!(t.len(), 300);
        for i in 0..300 {
            let w = format!("w{i}");
            assert_eq!(t.get(&w), Some(i as u32));
            assert_eq!(t.get_str(i as u32), w);
        }
        assert_eq!(t.get("nope"), None);
        assert_eq!(t.intern("w5"), Some((5, false)));
        assert_eq!(t.intern(""), Some((300, true)));
        assert_eq!(t.get(""), Some(300));
    }
}
