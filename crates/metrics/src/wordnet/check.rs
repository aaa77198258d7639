//! The integrity checks [`WordNet::load`](super::WordNet::load) makes before it accepts a
//! folder, so that a cut or damaged file is an error rather than lower METEOR scores (a
//! `data.noun` cut to 1 MB silently turns 0.639 into 0.469). WordNet's own layout makes the
//! checks cheap and exact, whatever the distribution (Princeton, Debian, npm, NLTK):
//!
//! * every file ends with a newline (a cut file ends inside its last line);
//! * every synset line of a `data.*` file starts with its own byte offset and parses to its
//!   gloss (`offset lex_filenum ss_type w_cnt (word lex_id)… p_cnt (symbol offset pos
//!   source/target)… [frames…] | gloss`, `wndb(5WN)`);
//! * every lemma line of an `index.*` file parses to its last synset offset, with nothing
//!   after it, and each offset is the start of a synset line of the `data.*` file of the same
//!   part of speech (a file cut at a line end loses the synsets the index still points at);
//! * every line of a `*.exc` file has an inflected form and at least one base form.
//!
//! Lines starting with a space are the license header and are not parsed.
use std::path::Path;

use super::lines::{fields, newlines};
use crate::error::{Error, Result};

/// The lines of `bytes` with their 1-based numbers and byte offsets; an error naming the last
/// line when the file does not end with a newline.
fn lines<'a>(path: &Path, bytes: &'a [u8]) -> Result<Vec<(usize, usize, &'a [u8])>> {
    let mut out = Vec::with_capacity(bytes.len() / 64);
    let mut start = 0;
    for end in newlines(bytes) {
        out.push((out.len() + 1, start, &bytes[start..end]));
        start = end + 1;
    }
    if start < bytes.len() {
        return Err(Error::WordNetFormat {
            path: path.to_path_buf(),
            line: out.len() + 1,
            message: format!(
                "the file ends inside this line, without its newline (at byte {}): it was cut short",
                bytes.len()
            ),
        });
    }
    Ok(out)
}

/// The whitespace-separated fields of a line, each asked for by what it should be.
struct Fields<'a, I: Iterator<Item = &'a [u8]>> {
    it: std::iter::Peekable<I>,
    /// Fields taken so far.
    n: usize,
}

/// The fields of `line`.
fn fields_of(line: &[u8]) -> Fields<'_, impl Iterator<Item = &[u8]>> {
    Fields {
        it: fields(line).peekable(),
        n: 0,
    }
}

impl<'a, I: Iterator<Item = &'a [u8]>> Fields<'a, I> {
    /// The next field, or a message saying what was expected at its place.
    fn next(&mut self, what: &str) -> std::result::Result<&'a [u8], String> {
        self.n += 1;
        self.it
            .next()
            .ok_or_else(|| format!("field {} ({what}) is missing", self.n))
    }

    /// The next field as a number in `radix`.
    fn number(&mut self, what: &str, radix: u32) -> std::result::Result<u64, String> {
        let f = self.next(what)?;
        let digits = (!f.is_empty() && f.len() <= 12).then(|| {
            f.iter().try_fold(0u64, |n, &b| {
                Some(n * u64::from(radix) + u64::from(char::from(b).to_digit(radix)?))
            })
        });
        digits.flatten().ok_or_else(|| {
            format!(
                "field {} ({what}) is {:?}, not a number",
                self.n,
                String::from_utf8_lossy(f)
            )
        })
    }

    /// Whether any field is left.
    fn rest(&mut self) -> Option<String> {
        self.it
            .peek()
            .map(|f| String::from_utf8_lossy(f).into_owned())
    }
}

/// The synset types a `data.*` file of part of speech `pos` holds (`s`: adjective satellites).
fn synset_types(pos: char) -> &'static [u8] {
    match pos {
        'a' => b"as",
        'n' => b"n",
        'v' => b"v",
        _ => b"r",
    }
}

/// One synset line of a `data.*` file starting at byte `start`, parsed up to its gloss.
fn synset_line(line: &[u8], start: usize, pos: char) -> std::result::Result<(), String> {
    let mut f = fields_of(line);
    let offset = f.number("the synset offset", 10)?;
    if offset != start as u64 {
        return Err(format!(
            "the line starts at byte {start} but says it is synset {offset:08}: the file was edited or shifted"
        ));
    }
    f.number("lex_filenum", 10)?;
    let ty = f.next("ss_type")?;
    if ty.len() != 1 || !synset_types(pos).contains(&ty[0]) {
        return Err(format!(
            "ss_type {:?} does not belong in this file",
            String::from_utf8_lossy(ty)
        ));
    }
    let words = f.number("w_cnt", 16)?;
    if words == 0 {
        return Err("the synset has no words (w_cnt 0)".into());
    }
    for _ in 0..words {
        f.next("a word")?;
        f.number("lex_id", 16)?;
    }
    for _ in 0..f.number("p_cnt", 10)? {
        f.next("a pointer symbol")?;
        f.number("a pointer's synset offset", 10)?;
        let p = f.next("a pointer's part of speech")?;
        if p.len() != 1 || !b"nvasr".contains(&p[0]) {
            return Err(format!(
                "field {} (a pointer's part of speech) is {:?}",
                f.n,
                String::from_utf8_lossy(p)
            ));
        }
        f.number("a pointer's source/target", 16)?;
    }
    if pos == 'v' {
        for _ in 0..f.number("f_cnt", 10)? {
            if f.next("a frame's +")? != b"+" {
                return Err(format!("field {} should be a frame's +", f.n));
            }
            f.number("f_num", 10)?;
            f.number("w_num", 16)?;
        }
    }
    match f.next("| before the gloss")? {
        b"|" => Ok(()),
        other => Err(format!(
            "field {} is {:?} where the gloss's | should be",
            f.n,
            String::from_utf8_lossy(other)
        )),
    }
}

/// Checks a `data.*` file of part of speech `pos` (`n`, `v`, `a`, `r`).
pub(super) fn data(path: &Path, bytes: &[u8], pos: char) -> Result<()> {
    let mut synsets = 0usize;
    for (no, start, line) in lines(path, bytes)? {
        if line.first() == Some(&b' ') {
            continue;
        }
        synset_line(line, start, pos).map_err(|message| Error::WordNetFormat {
            path: path.to_path_buf(),
            line: no,
            message: format!("not a synset line: {message}"),
        })?;
        synsets += 1;
    }
    if synsets == 0 {
        return Err(Error::WordNetFormat {
            path: path.to_path_buf(),
            line: 1,
            message: "no synset lines".into(),
        });
    }
    Ok(())
}

/// Whether byte `offset` of a checked `data.*` file starts a synset line.
fn starts_synset(data: &[u8], offset: usize) -> bool {
    data.get(offset).is_some_and(u8::is_ascii_digit) && (offset == 0 || data[offset - 1] == b'\n')
}

/// Checks an `index.*` file of part of speech `pos` against its checked `data.*` file.
pub(super) fn index(
    path: &Path,
    bytes: &[u8],
    pos: char,
    data_path: &Path,
    data: &[u8],
) -> Result<()> {
    for (no, _, line) in lines(path, bytes)? {
        if line.first() == Some(&b' ') || line.is_empty() {
            continue;
        }
        lemma_line(line, pos, data).map_err(|problem| match problem {
            Problem::Line(m) => Error::WordNetFormat {
                path: path.to_path_buf(),
                line: no,
                message: format!("not a lemma line: {m}"),
            },
            Problem::PastTheEnd { lemma, offset } => Error::WordNetFormat {
                path: data_path.to_path_buf(),
                line: data.iter().filter(|&&b| b == b'\n').count(),
                message: format!(
                    "the file ends at byte {} (this line), but {} line {no} points lemma {lemma:?} \
                     at synset offset {offset:08} beyond it: the file was cut short",
                    data.len(),
                    path.display()
                ),
            },
            Problem::NotASynset { lemma, offset } => Error::WordNetFormat {
                path: path.to_path_buf(),
                line: no,
                message: format!(
                    "lemma {lemma:?} points at synset offset {offset:08}, which is not the start of \
                     a synset line of {}",
                    data_path.display()
                ),
            },
        })?;
    }
    Ok(())
}

/// What is wrong with a lemma line.
enum Problem {
    /// It does not parse.
    Line(String),
    /// A synset offset lies beyond the end of the data file.
    PastTheEnd { lemma: String, offset: u64 },
    /// A synset offset is not the start of a synset line.
    NotASynset { lemma: String, offset: u64 },
}

/// One lemma line of an `index.*` file, parsed and its synset offsets checked against `data`.
fn lemma_line(line: &[u8], pos: char, data: &[u8]) -> std::result::Result<(), Problem> {
    let mut f = fields_of(line);
    let lemma = f.next("the lemma").map_err(Problem::Line)?;
    let name = || String::from_utf8_lossy(lemma).into_owned();
    let parse = |m: String| Problem::Line(format!("lemma {:?}: {m}", name()));
    if f.next("the part of speech").map_err(parse)? != [pos as u8] {
        return Err(parse(format!("the part of speech is not {pos}")));
    }
    let n = f.number("synset_cnt", 10).map_err(parse)?;
    for _ in 0..f.number("p_cnt", 10).map_err(parse)? {
        f.next("a pointer symbol").map_err(parse)?;
    }
    f.number("sense_cnt", 10).map_err(parse)?;
    f.number("tagsense_cnt", 10).map_err(parse)?;
    for _ in 0..n {
        let offset = f.number("a synset offset", 10).map_err(parse)?;
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        if at >= data.len() {
            let lemma = name();
            return Err(Problem::PastTheEnd { lemma, offset });
        }
        if !starts_synset(data, at) {
            let lemma = name();
            return Err(Problem::NotASynset { lemma, offset });
        }
    }
    match f.rest() {
        Some(extra) => Err(parse(format!("{extra:?} after its {n} synset offsets"))),
        None => Ok(()),
    }
}

/// Checks a `*.exc` file: every line an inflected form and at least one base form.
pub(super) fn exceptions(path: &Path, bytes: &[u8]) -> Result<()> {
    for (no, _, line) in lines(path, bytes)? {
        if fields(line).take(2).count() == 1 {
            return Err(Error::WordNetFormat {
                path: path.to_path_buf(),
                line: no,
                message: format!(
                    "{:?} has no base form (an exception line is `form base…`)",
                    String::from_utf8_lossy(line).trim()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: &str = "  1 license line\n\
        00000017 03 n 01 entity 0 001 ~ 00000081 n 0000 | that which is\n\
        00000081 03 n 02 thing 0 object 1 000 | a thing\n";

    fn p(s: &str) -> &Path {
        Path::new(s)
    }

    #[test]
    fn an_intact_pair_passes() {
        data(p("data.noun"), DATA.as_bytes(), 'n').unwrap();
        let idx = "  1 license\nentity n 1 1 ~ 1 0 00000017  \nthing n 1 0 1 0 00000081  \n";
        index(
            p("index.noun"),
            idx.as_bytes(),
            'n',
            p("data.noun"),
            DATA.as_bytes(),
        )
        .unwrap();
        let verb = "00000000 29 v 01 breathe 0 001 * 00000000 v 0000 01 + 02 00 | draw air\n";
        data(p("data.verb"), verb.as_bytes(), 'v').unwrap();
        exceptions(p("noun.exc"), b"aardwolves aardwolf\nmice mouse\n").unwrap();
    }

    #[test]
    fn a_cut_data_file_is_refused() {
        let cut = &DATA.as_bytes()[..DATA.len() - 10];
        let e = data(p("data.noun"), cut, 'n').unwrap_err();
        assert!(matches!(&e, Error::WordNetFormat { line: 3, .. }), "{e:?}");
        assert!(e.to_string().contains("cut short"), "{e}");
        // Cut at a line end: the data parse, the index points past the end.
        let cut = &DATA.as_bytes()[..DATA.rfind("00000081").unwrap()];
        data(p("data.noun"), cut, 'n').unwrap();
        let idx = b"thing n 1 0 1 0 00000081  \n";
        let e = index(p("index.noun"), idx, 'n', p("data.noun"), cut).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("data.noun") && m.contains("\"thing\"") && m.contains("cut short"),
            "{m}"
        );
    }

    #[test]
    fn damaged_lines_are_refused_naming_the_line() {
        for (bytes, line, want) in [
            (
                DATA.replace("00000081 03", "00000082 03"),
                3,
                "synset 00000082",
            ),
            (
                DATA.replace("02 thing 0 object 1", "02 thing 0"),
                3,
                "lex_id",
            ),
            (DATA.replace(" | a thing", " a thing"), 3, "gloss"),
            (DATA.replace("03 n 01", "03 v 01"), 2, "ss_type"),
        ] {
            let e = data(p("data.noun"), bytes.as_bytes(), 'n').unwrap_err();
            assert!(
                matches!(&e, Error::WordNetFormat { line: l, .. } if *l == line),
                "{e:?}"
            );
            assert!(e.to_string().contains(want), "{e}");
        }
        let idx = b"thing n 1 0 1 0 00000090  \n";
        let e = index(p("index.noun"), idx, 'n', p("data.noun"), DATA.as_bytes()).unwrap_err();
        assert!(
            e.to_string().contains("not the start of a synset line"),
            "{e}"
        );
        let idx = b"thing n 2 0 1 0 00000081  \n";
        assert!(index(p("index.noun"), idx, 'n', p("data.noun"), DATA.as_bytes()).is_err());
        let idx = b"thing n 1 0 1 0 00000081 7 \n";
        assert!(index(p("index.noun"), idx, 'n', p("data.noun"), DATA.as_bytes()).is_err());
        assert!(exceptions(p("verb.exc"), b"went go\nlone\n").is_err());
        assert!(exceptions(p("verb.exc"), b"went go").is_err());
        assert!(data(p("data.adv"), b"  1 license only\n", 'r').is_err());
    }
}
