//! One RFC-822 mail to an [`AuthoredDoc`]: the sender from `From:`, the time from `Date:`, the
//! title from `Subject:` and the body from the first `text/plain` part, decoded by
//! [`mailparse`] (MIME, quoted-printable, base64, charsets, encoded words), then cleaned of
//! what the sender did not write in this mail ([`clean_body`]).
use mailparse::{DispositionType, MailHeaderMap, ParsedMail};

use crate::{AuthoredDoc, Skip};

/// The earliest `Date:` accepted: 1980-01-01T00:00:00Z in unix seconds.
pub const MIN_MAIL_TIME: i64 = 315_532_800;
/// The end of the accepted `Date:` range: 2100-01-01T00:00:00Z in unix seconds.
pub const MAX_MAIL_TIME: i64 = 4_102_444_800;

/// Options of the mail converter.
///
/// ```
/// let o = pgraphrag_corpora::MailOptions::default();
/// assert!(o.keep_replies && o.drop_automated);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MailOptions {
    /// Keep replies (default `true`). A reply's subject was set by the thread's first mail;
    /// `false` skips mails with `In-Reply-To:` or a `Re:` subject ([`Skip::Reply`]).
    pub keep_replies: bool,
    /// Skip automated senders (default `true`; see [`is_automated`]).
    pub drop_automated: bool,
}

impl Default for MailOptions {
    fn default() -> Self {
        MailOptions {
            keep_replies: true,
            drop_automated: true,
        }
    }
}

/// Tokens of a sender's local part (split at `-`, `_`, `.`, `+`, `#`) that mark an automated
/// sender: feeds, bug trackers, mailer daemons, list software, newsletters, cron.
pub const AUTOMATED_LOCAL_TOKENS: &[&str] = &[
    "rssfeeds",
    "bugzilla",
    "daemon",
    "noreply",
    "reply",
    "newsletter",
    "newsletters",
    "news",
    "listmaster",
    "listmanager",
    "mailman",
    "majordomo",
    "admin",
    "owner",
    "request",
    "root",
    "cron",
    "subscriptions",
    "subscriber",
    "alerts",
    "announce",
    "mailer",
    "update",
    "info",
    "mailinglist",
    "robot",
    "digest",
    "bounce",
];

/// Labels of a sender's domain (split at `.`) that mark bulk or list mail.
pub const AUTOMATED_DOMAIN_LABELS: &[&str] = &[
    "newsletter",
    "lists",
    "list",
    "bounce",
    "alerts",
    "mailshell",
    "reply",
    "euromailer",
];

/// Whether a mail comes from an automated sender, the documented rule: the normalised
/// address's local part has a token of [`AUTOMATED_LOCAL_TOKENS`], or its domain a label of
/// [`AUTOMATED_DOMAIN_LABELS`], or the subject (after list tags) starts with one of
/// [`AUTOMATED_SUBJECT_PREFIXES`] (CVS commit notices, digests).
///
/// ```
/// use pgraphrag_corpora::is_automated;
/// assert!(is_automated("rssfeeds@spamassassin.taint.org", "Teach a man to fish"));
/// assert!(is_automated("bugzilla-daemon@hughes-family.org", "[SAdev] [Bug 777] tests"));
/// assert!(is_automated("update@list.theregister.co.uk", "Reg Headlines"));
/// assert!(is_automated("jm@example.net", "[SACVS] CVS: spamassassin MANIFEST,1.100"));
/// assert!(!is_automated("kre@munnari.oz.au", "Re: New Sequences Window"));
/// ```
pub fn is_automated(address: &str, subject: &str) -> bool {
    let (local, domain) = address.rsplit_once('@').unwrap_or((address, ""));
    let local_hit = local
        .split(['-', '_', '.', '+', '#'])
        .any(|t| AUTOMATED_LOCAL_TOKENS.contains(&t));
    let domain_hit = domain
        .split('.')
        .any(|l| AUTOMATED_DOMAIN_LABELS.contains(&l));
    let subject = strip_list_tags(subject);
    local_hit
        || domain_hit
        || AUTOMATED_SUBJECT_PREFIXES
            .iter()
            .any(|p| subject.starts_with(p))
}

/// Subject beginnings (after list tags) of generated mail: CVS commit notices and the
/// use.perl.org digests.
pub const AUTOMATED_SUBJECT_PREFIXES: &[&str] = &["CVS:", "Headlines for ", "Stories for "];

/// Removes leading list tags (`[SAtalk] `, `[ILUG] `) from a subject.
fn strip_list_tags(s: &str) -> &str {
    let mut s = s.trim_start();
    while let Some(rest) = s.strip_prefix('[') {
        match rest.find(']') {
            Some(end) => s = rest[end + 1..].trim_start(),
            None => break,
        }
    }
    s
}

/// Strips a reply or forward prefix (`Re:`, `RE[2]:`, `Fwd:`, `Fw:`, `AW:`, `SV:`, any case).
fn strip_reply_prefix(s: &str) -> Option<&str> {
    let (head, rest) = s.split_once(':')?;
    let word = head.trim_end_matches(|c: char| c.is_ascii_digit() || c == '[' || c == ']');
    let is_prefix = ["re", "fwd", "fw", "aw", "sv"]
        .iter()
        .any(|p| word.trim().eq_ignore_ascii_case(p));
    is_prefix.then(|| rest.trim_start())
}

/// A subject as the sender would type it for a new thread: list tags (added by the list
/// software) and reply or forward prefixes (added by the mail client) removed, repeatedly,
/// inner whitespace collapsed. Also tells whether a reply prefix was seen.
///
/// ```
/// use pgraphrag_corpora::clean_subject;
/// assert_eq!(clean_subject("Re: [ILUG] RE: Fwd:  New   Sequences"), ("New Sequences".to_string(), true));
/// assert_eq!(clean_subject("[SAtalk] Test spam"), ("Test spam".to_string(), false));
/// assert_eq!(clean_subject("Rebooting: why"), ("Rebooting: why".to_string(), false));
/// ```
pub fn clean_subject(subject: &str) -> (String, bool) {
    let mut s = subject.trim();
    let mut reply = false;
    loop {
        let t = strip_list_tags(s);
        if let Some(rest) = strip_reply_prefix(t) {
            reply = true;
            s = rest;
        } else {
            s = t;
            break;
        }
    }
    (s.split_whitespace().collect::<Vec<_>>().join(" "), reply)
}

/// Whether a line ends the author's own text: a signature delimiter (`-- `), a mailing-list
/// footer rule (ten or more `_`), a rule of twenty or more `-`, a dashed banner
/// (`-----Original Message-----`, `---------- Forwarded message ----------`, the Yahoo!
/// Groups sponsor line), a PGP signature, `Begin forwarded message:`, or a list footer's
/// first line (a `…/mailman/listinfo/…` or `…/lists/listinfo/…` link, Yahoo! Groups'
/// "To unsubscribe from this group", use.perl.org's "You have received this message").
fn ends_own_text(t: &str) -> bool {
    let t = t.trim();
    if t == "--" {
        return true;
    }
    if t.len() >= 10 && t.chars().all(|c| c == '_') {
        return true;
    }
    let dashes = t.chars().take_while(|&c| c == '-').count();
    if dashes >= 20 {
        return true;
    }
    if dashes >= 5
        && t[dashes..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_alphabetic())
    {
        return true;
    }
    t.starts_with("Begin forwarded message")
        || t.starts_with("To unsubscribe from this group")
        || t.starts_with("Your use of Yahoo! Groups")
        || t.starts_with("You have received this message because you subscribed")
        || t.contains("/mailman/listinfo/")
        || t.contains("/lists/listinfo/")
}

/// Whether a line is quoted: `>` first, or a Supercite name prefix (`  Robert> text`).
fn is_quoted(l: &str) -> bool {
    let t = l.trim_start();
    if t.starts_with('>') {
        return true;
    }
    let name = t
        .find('>')
        .map(|i| &t[..i])
        .filter(|n| (1..=12).contains(&n.len()));
    name.is_some_and(|n| {
        n.starts_with(|c: char| c.is_ascii_alphabetic())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
    })
}

/// Whether a line is a sign-off signature: `--Name` (two dashes glued to a name).
fn is_sign_off(l: &str) -> bool {
    let t = l.trim();
    t.len() <= 80
        && t.strip_prefix("--")
            .is_some_and(|r| r.starts_with(|c: char| c.is_alphabetic()))
}

/// Whether a line is an attribution ("On Tue, Kim wrote:", "Kim <k@x> writes:").
fn is_attribution(t: &str) -> bool {
    let t = t.trim_end();
    ["wrote:", "writes:", "wrote :", "said:"]
        .iter()
        .any(|e| t.ends_with(e))
}

/// The author's own text of a mail body: lines quoted with `>` (or a Supercite prefix such
/// as `  Robert> `) removed, a `--Name` sign-off among the last four lines cut, attribution lines
/// ("On ... wrote:", "... writes:") before a quote removed, everything from the first
/// signature delimiter or list footer on removed (see the rules in `docs/corpora.md`), a
/// PGP-signed wrapper removed, trailing spaces trimmed, runs of blank lines collapsed to one.
///
/// ```
/// let body = "On Tue, Kim wrote:\n> old text\n> more\n\nI agree.\n\n\n\nReally.\n-- \nKim\n";
/// assert_eq!(pgraphrag_corpora::clean_body(body), "I agree.\n\nReally.");
/// ```
pub fn clean_body(body: &str) -> String {
    let mut lines: Vec<&str> = body.lines().map(str::trim_end).collect();
    // A PGP-signed wrapper: the armour line, its Hash: lines, the blank line after them.
    if let Some(start) = lines.iter().position(|l| !l.trim().is_empty())
        && lines[start].starts_with("-----BEGIN PGP SIGNED MESSAGE")
    {
        let mut end = start + 1;
        while end < lines.len() && lines[end].starts_with("Hash:") {
            end += 1;
        }
        lines.drain(..end);
    }
    let own_end = lines
        .iter()
        .position(|l| ends_own_text(l))
        .unwrap_or(lines.len());
    lines.truncate(own_end);
    // A `--Name` sign-off among the last four non-blank lines starts the signature.
    let tail: Vec<usize> = (0..lines.len())
        .rev()
        .filter(|&i| !lines[i].trim().is_empty())
        .take(4)
        .collect();
    if let Some(&i) = tail.iter().rev().find(|&&i| is_sign_off(lines[i])) {
        lines.truncate(i);
    }
    let quoted = is_quoted;
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if quoted(l) {
            continue;
        }
        if is_attribution(l) {
            let next = lines[i + 1..].iter().find(|n| !n.trim().is_empty());
            if next.is_none_or(|n| quoted(n)) {
                // A two-line attribution: "On Tue, 1 Jan 2002, Kim Smith\n  wrote:".
                if l.trim_start().starts_with(|c: char| c.is_lowercase())
                    && kept.last().is_some_and(|p| p.starts_with("On "))
                {
                    kept.pop();
                }
                continue;
            }
        }
        kept.push(l);
    }
    let mut out = String::new();
    let mut blank_run = false;
    for l in kept {
        if l.trim().is_empty() {
            blank_run = !out.is_empty();
            continue;
        }
        if blank_run {
            out.push_str("\n\n");
        } else if !out.is_empty() {
            out.push('\n');
        }
        blank_run = false;
        out.push_str(l);
    }
    out
}

/// The first inline `text/plain` part, depth first.
fn text_part<'a>(m: &'a ParsedMail<'a>) -> Option<&'a ParsedMail<'a>> {
    m.parts().find(|p| {
        p.subparts.is_empty()
            && p.ctype.mimetype.eq_ignore_ascii_case("text/plain")
            && p.get_content_disposition().disposition != DispositionType::Attachment
    })
}

/// Parses one raw mail into an [`AuthoredDoc`] with the given `doc_id`, or says why it is
/// skipped. A leading mbox `From ` line is ignored. The author is the `From:` address, trimmed
/// and lower-cased; the time is `Date:` in unix seconds (from 1980 to 2100, else
/// [`Skip::BadDate`]); the title is [`clean_subject`] of
/// `Subject:` (`None` when empty); the text is [`clean_body`] of the first `text/plain` part.
///
/// ```
/// use pgraphrag_corpora::{parse_mail, MailOptions, Skip};
/// let raw = b"From: Kim <Kim@Example.org>\nDate: Thu, 22 Aug 2002 18:26:25 +0700\n\
/// Subject: =?iso-8859-1?q?Caf=E9?= plans\n\nSee you there.\n";
/// let d = parse_mail(raw, "m1", &MailOptions::default()).unwrap();
/// assert_eq!((d.author.as_str(), d.time), ("kim@example.org", 1_030_015_585));
/// assert_eq!((d.title.as_deref(), d.text.as_str()), (Some("Café plans"), "See you there."));
/// assert_eq!(parse_mail(b"From: k@x.org\n\nhi", "m2", &MailOptions::default()), Err(Skip::NoDate));
/// ```
pub fn parse_mail(raw: &[u8], doc_id: &str, opts: &MailOptions) -> Result<AuthoredDoc, Skip> {
    let raw = match raw.strip_prefix(b"From ") {
        Some(rest) => rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&[][..], |i| &rest[i + 1..]),
        None => raw,
    };
    let mail = mailparse::parse_mail(raw).map_err(|_| Skip::MalformedMail)?;
    let headers = &mail.headers;
    let from = headers.get_first_header("From").ok_or(Skip::NoSender)?;
    let addrs = mailparse::addrparse_header(from).map_err(|_| Skip::NoSender)?;
    let author = addrs
        .extract_single_info()
        .map(|s| s.addr.trim().trim_matches(['<', '>']).to_lowercase())
        .filter(|a| a.contains('@') && !a.starts_with('@') && !a.ends_with('@'))
        .ok_or(Skip::NoSender)?;
    let date = headers.get_first_value("Date").ok_or(Skip::NoDate)?;
    let time = mailparse::dateparse(&date).map_err(|_| Skip::BadDate)?;
    // mailparse reads what it cannot parse leniently (often as 0): only 1980..2100 is a date.
    if !(MIN_MAIL_TIME..MAX_MAIL_TIME).contains(&time) {
        return Err(Skip::BadDate);
    }
    let subject = headers.get_first_value("Subject").unwrap_or_default();
    if subject.contains('\u{FFFD}') {
        return Err(Skip::Undecodable);
    }
    if opts.drop_automated && is_automated(&author, &subject) {
        return Err(Skip::AutomatedSender);
    }
    let (title, reply_prefix) = clean_subject(&subject);
    if !opts.keep_replies && (reply_prefix || headers.get_first_value("In-Reply-To").is_some()) {
        return Err(Skip::Reply);
    }
    let part = text_part(&mail).ok_or(Skip::NoTextPart)?;
    let body = part.get_body().map_err(|_| Skip::Undecodable)?;
    if body.contains('\u{FFFD}') {
        return Err(Skip::Undecodable);
    }
    let text = clean_body(&body);
    if text.is_empty() {
        return Err(Skip::EmptyBody);
    }
    Ok(AuthoredDoc {
        author,
        doc_id: doc_id.to_string(),
        time,
        title: (!title.is_empty()).then_some(title),
        text,
    })
}
