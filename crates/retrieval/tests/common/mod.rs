//! Helpers shared by the dense test binaries.

/// Decodes the standard base64 of little-endian f32 values (the fixtures' format).
pub fn b64(s: &str) -> Vec<f32> {
    // Minimal standard base64 decoder (the fixture is ours; no padding surprises).
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 byte {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| *c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for ch in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, c) in ch.iter().enumerate() {
            n |= val(*c) << (18 - 6 * i);
        }
        let take = ch.len() - 1;
        out.extend_from_slice(&n.to_be_bytes()[1..1 + take]);
    }
    out.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}
