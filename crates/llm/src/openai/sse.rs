//! Streamed answers (`"stream": true`): the event-stream decoder, the text of each event, and
//! stop strings applied as the text arrives. Used by the async client; kept apart from
//! [`super::wire`] so that the blocking build carries none of it.

use serde_json::Value;

use super::wire::{BODY_LIMIT, cut_at_stop, invalid};
use crate::error::Result;

/// The text delta of one streamed event's `data`, `None` for the closing `[DONE]`. An event
/// without text (the first chunk's role, a usage-only chunk with empty `choices`) gives `""`.
pub(crate) fn parse_stream_event(url: &str, data: &str, chat: bool) -> Result<Option<String>> {
    if data.trim() == "[DONE]" {
        return Ok(None);
    }
    let bad = |reason: &str| invalid(url, reason, data);
    let v: Value =
        serde_json::from_str(data).map_err(|e| bad(&format!("stream event not JSON: {e}")))?;
    if let Some(err) = v.get("error") {
        return Err(bad(&format!("the server reported an error: {err}")));
    }
    let choices = v
        .get("choices")
        .and_then(|c| c.as_array())
        .ok_or_else(|| bad("stream event without a `choices` array"))?;
    let Some(choice) = choices.first() else {
        return Ok(Some(String::new()));
    };
    let content = if chat {
        choice.get("delta").and_then(|d| d.get("content"))
    } else {
        choice.get("text")
    };
    match content {
        None | Some(Value::Null) => Ok(Some(String::new())),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(if chat {
            "`choices[0].delta.content` is not a string"
        } else {
            "`choices[0].text` is not a string"
        })),
    }
}

/// Splits a `text/event-stream` body, fed in arbitrary pieces, into the `data` of its events
/// (lines end in `\n` or `\r\n`; several `data:` lines of one event are joined by `\n`;
/// comments and other fields are skipped).
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    pending: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// Feeds `bytes`, appending the data of each event they complete to `out`. Fails (with
    /// what was wrong) on a line that is not UTF-8 or longer than [`BODY_LIMIT`].
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<String>,
    ) -> std::result::Result<(), String> {
        self.pending.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(n) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let end = start + n;
            let line = self.pending[start..end]
                .strip_suffix(b"\r")
                .unwrap_or(&self.pending[start..end]);
            let line = std::str::from_utf8(line)
                .map_err(|e| format!("event-stream line not UTF-8: {e}"))?
                .to_string();
            self.line(&line, out);
            start = end + 1;
        }
        self.pending.drain(..start);
        if self.pending.len() > BODY_LIMIT {
            return Err(format!("event-stream line over {BODY_LIMIT} bytes"));
        }
        Ok(())
    }

    /// The end of the body: a last event without its closing blank line still counts.
    pub(crate) fn finish(&mut self, out: &mut Vec<String>) -> std::result::Result<(), String> {
        if !self.pending.is_empty() {
            self.push(b"\n", out)?;
        }
        self.line("", out);
        Ok(())
    }

    fn line(&mut self, line: &str, out: &mut Vec<String>) {
        if line.is_empty() {
            if self.has_data {
                out.push(std::mem::take(&mut self.data));
                self.has_data = false;
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
    }
}

/// Applies stop strings to streamed text: hands out only text that is certainly before the
/// earliest stop string of the whole answer, so the pieces add up to what
/// [`cut_at_stop`] leaves of the whole text.
#[derive(Debug)]
pub(crate) struct StopFilter {
    stops: Vec<String>,
    text: String,
    emitted: usize,
    done: bool,
}

impl StopFilter {
    /// A filter for the non-empty strings of `stop`.
    pub(crate) fn new(stop: &[String]) -> Self {
        StopFilter {
            stops: stop.iter().filter(|s| !s.is_empty()).cloned().collect(),
            text: String::new(),
            emitted: 0,
            done: false,
        }
    }

    /// Whether a stop string has been seen (nothing more will be handed out).
    pub(crate) fn done(&self) -> bool {
        self.done
    }

    /// Adds `delta`; returns the text that may be handed out now (possibly empty).
    pub(crate) fn push(&mut self, delta: &str) -> String {
        if self.done {
            return String::new();
        }
        if self.stops.is_empty() {
            return delta.to_string();
        }
        self.text.push_str(delta);
        // Every stop string of the text starts at or after `emitted` (what was handed out was
        // before any complete or partial match), so only the tail is searched.
        let tail = &self.text[self.emitted..];
        let complete = self
            .stops
            .iter()
            .filter_map(|s| tail.find(s.as_str()))
            .min()
            .map(|i| self.emitted + i);
        // The earliest start of a proper prefix of a stop string that ends the text.
        let partial = self
            .stops
            .iter()
            .filter_map(|s| {
                (1..s.len())
                    .rev()
                    .filter(|&k| s.is_char_boundary(k))
                    .find(|&k| self.text.ends_with(&s[..k]))
                    .map(|k| self.text.len() - k)
            })
            .min();
        let end = match (complete, partial) {
            (Some(p), j) if j.is_none_or(|j| p <= j) => {
                self.done = true;
                p
            }
            (c, j) => c
                .unwrap_or(self.text.len())
                .min(j.unwrap_or(self.text.len())),
        }
        .max(self.emitted);
        let out = self.text[self.emitted..end].to_string();
        self.emitted = end;
        out
    }

    /// The end of the answer: what is left to hand out.
    pub(crate) fn finish(&mut self) -> String {
        if self.done || self.stops.is_empty() {
            self.done = true;
            return String::new();
        }
        self.done = true;
        let mut rest = self.text[self.emitted..].to_string();
        cut_at_stop(&mut rest, &self.stops);
        self.emitted = self.text.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::LlmError;

    #[test]
    fn sse_events_split_anywhere_decode_the_same() {
        let body =
            "data: {\"a\":1}\r\n\r\n: comment\nevent: x\ndata: l1\ndata: l2\n\ndata:[DONE]\n\n";
        let mut whole = Vec::new();
        SseDecoder::default()
            .push(body.as_bytes(), &mut whole)
            .unwrap();
        assert_eq!(whole, ["{\"a\":1}", "l1\nl2", "[DONE]"]);
        for cut in 0..body.len() {
            let (mut d, mut out) = (SseDecoder::default(), Vec::new());
            d.push(&body.as_bytes()[..cut], &mut out).unwrap();
            d.push(&body.as_bytes()[cut..], &mut out).unwrap();
            d.finish(&mut out).unwrap();
            assert_eq!(out, whole, "cut at {cut}");
        }
        // A last event without its blank line, and a bad line.
        let (mut d, mut out) = (SseDecoder::default(), Vec::new());
        d.push(b"data: tail", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        assert_eq!(out, ["tail"]);
        assert!(
            SseDecoder::default()
                .push(b"data: \xff\n", &mut out)
                .is_err()
        );
    }

    #[test]
    fn stream_events_give_deltas() {
        let chat = |d| parse_stream_event("u", d, true);
        assert_eq!(chat("[DONE]").unwrap(), None);
        assert_eq!(
            chat(r#"{"choices":[{"delta":{"role":"assistant"}}]}"#).unwrap(),
            Some(String::new())
        );
        assert_eq!(
            chat(r#"{"choices":[{"delta":{"content":"Hé"}}]}"#).unwrap(),
            Some("Hé".into())
        );
        assert_eq!(
            chat(r#"{"choices":[],"usage":{}}"#).unwrap(),
            Some(String::new())
        );
        assert_eq!(
            parse_stream_event("u", r#"{"choices":[{"text":"t"}]}"#, false).unwrap(),
            Some("t".into())
        );
        for bad in [
            "{",
            r#"{"error":{"message":"boom"}}"#,
            r#"{"x":1}"#,
            r#"{"choices":[{"delta":{"content":3}}]}"#,
        ] {
            assert!(
                matches!(chat(bad), Err(LlmError::InvalidResponse { .. })),
                "{bad}"
            );
        }
    }

    /// The streamed pieces through a StopFilter, joined.
    fn filtered(pieces: &[&str], stop: &[&str]) -> (String, bool) {
        let stop: Vec<String> = stop.iter().map(|s| s.to_string()).collect();
        let mut f = StopFilter::new(&stop);
        let mut out = String::new();
        for p in pieces {
            out += &f.push(p);
            if f.done() {
                return (out, true);
            }
        }
        out += &f.finish();
        (out, false)
    }

    #[test]
    fn stop_filter_matches_cutting_the_whole_text() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["Hello ", "wor", "ld"], &[]),
            (&["Hello ST", "OP tail"], &["STOP"]),
            (&["ab", "c", "d"], &["abcd", "c"]),
            (&["xx ab", "c", "-"], &["abcd", "c"]),
            (&["é", "é", "ü"], &["éü"]),
            (&["no stop ", "here S", "T"], &["STOP", ""]),
        ];
        for (pieces, stop) in cases {
            let mut whole = pieces.concat();
            let stops: Vec<String> = stop.iter().map(|s| s.to_string()).collect();
            cut_at_stop(&mut whole, &stops);
            assert_eq!(filtered(pieces, stop).0, whole, "{pieces:?} / {stop:?}");
        }
        // The stream ends as soon as a stop string is certain.
        assert_eq!(
            filtered(&["a STOP", "b", "c"], &["STOP"]),
            ("a ".into(), true)
        );
    }
}
