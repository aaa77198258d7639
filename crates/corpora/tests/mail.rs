//! The mail converter on hand-made mails: MIME structure, transfer encodings, charsets,
//! encoded words, quoted replies, signatures and footers, malformed headers, non-UTF-8 bytes.
use pgraphrag_corpora::{MailOptions, Skip, clean_body, parse_mail};
use proptest::prelude::*;

const HEAD: &str =
    "From: \"Kim Smith\" <Kim.Smith@Example.ORG>\nDate: Thu, 22 Aug 2002 18:26:25 +0700\n";

fn parse(raw: &[u8]) -> Result<pgraphrag_corpora::AuthoredDoc, Skip> {
    parse_mail(raw, "t/1", &MailOptions::default())
}

fn mail(rest: &str) -> Vec<u8> {
    format!("{HEAD}{rest}").into_bytes()
}

#[test]
fn multipart_alternative_takes_the_plain_part_quoted_printable_latin1() {
    let raw = mail(
        "Subject: Menu\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"BB\"\n\n\
         preamble\n--BB\nContent-Type: text/html; charset=us-ascii\n\n<p>HTML version</p>\n\
         --BB\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n\
         Caf=E9 au lait, a very long line that is wrapped by a soft=\n break.\n--BB--\n",
    );
    let d = parse(&raw).unwrap();
    assert_eq!(d.author, "kim.smith@example.org");
    assert_eq!(d.time, 1_030_015_585);
    assert_eq!(d.doc_id, "t/1");
    assert_eq!(d.title.as_deref(), Some("Menu"));
    assert_eq!(
        d.text,
        "Café au lait, a very long line that is wrapped by a soft break."
    );
}

#[test]
fn nested_multipart_with_base64_utf8_and_an_attachment() {
    let raw = mail(
        "Subject: Files\nContent-Type: multipart/mixed; boundary=\"OUT\"\n\n--OUT\n\
         Content-Type: text/plain; charset=utf-8\nContent-Disposition: attachment; filename=a.txt\n\nattached notes\n\
         --OUT\nContent-Type: multipart/alternative; boundary=\"IN\"\n\n--IN\n\
         Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n\
         R3LDvMOfZSBhdXMgS8O2bG4u\n--IN--\n--OUT--\n",
    );
    assert_eq!(parse(&raw).unwrap().text, "Grüße aus Köln.");
}

#[test]
fn encoded_word_subjects_and_reply_prefixes() {
    let raw =
        mail("Subject: RE: [SAtalk] =?utf-8?B?w5xiZXI=?= =?iso-8859-1?Q?r=E9sum=E9?=\n\nBody.\n");
    let d = parse(&raw).unwrap();
    assert_eq!(d.title.as_deref(), Some("Überrésumé"));
    let raw = mail("Subject: Re:   \n\nBody.\n");
    assert_eq!(
        parse(&raw).unwrap().title,
        None,
        "an empty subject is no title"
    );
}

#[test]
fn quoted_replies_and_attributions_are_removed() {
    let body = "On Thu, 22 Aug 2002, Robert Elz\n  wrote:\n> > deep quote\n>   quote\n\n\
                I see the point.\n\nKim <k@x.org> writes:\n  > indented quote\nAnd I disagree.\n\
                This line mentions that Bob wrote: nothing quoted follows it.\nEnd.\n";
    assert_eq!(
        clean_body(body),
        "I see the point.\n\nAnd I disagree.\nThis line mentions that Bob wrote: nothing quoted follows it.\nEnd."
    );
}

#[test]
fn signatures_and_list_footers_are_cut() {
    for (body, want) in [
        ("Text one.\n-- \nKim Smith\nPhone 123\n", "Text one."),
        ("Text two.\n--\nKim\n", "Text two."),
        (
            "Text three.\n\n_______________________________________________\nExmh-workers mailing list\n",
            "Text three.",
        ),
        (
            "Text four.\n-------------------------------------------------------\nThis sf.net email is sponsored by: ThinkGeek\n",
            "Text four.",
        ),
        (
            "Text five.\n------------------------ Yahoo! Groups Sponsor ---------------------~-->\nads\n",
            "Text five.",
        ),
        (
            "Text six.\n\n-----Original Message-----\nFrom: someone\nold text\n",
            "Text six.",
        ),
        (
            "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA1\n\nSigned text.\n-----BEGIN PGP SIGNATURE-----\nabc\n",
            "Signed text.",
        ),
        (
            "A - B - C are fine.\n---- not a rule\n",
            "A - B - C are fine.\n---- not a rule",
        ),
        (
            "Text seven.\n\nhttp://xent.com/mailman/listinfo/fork\n",
            "Text seven.",
        ),
        (
            "Text eight.\n\nTo unsubscribe from this group, send an email to:\nx-unsubscribe@egroups.com\n",
            "Text eight.",
        ),
        ("Text nine.\n--Hal\n", "Text nine."),
        (
            "--enable-foo is needed.\nThen more.\nAnd more.\nAnd more.\nThe end.\n",
            "--enable-foo is needed.\nThen more.\nAnd more.\nAnd more.\nThe end.",
        ),
        (
            "  Robert> supercite quote\n    U> another\nMy answer.\n",
            "My answer.",
        ),
    ] {
        assert_eq!(clean_body(body), want, "{body:?}");
    }
}

#[test]
fn malformed_headers_are_counted_skips() {
    let ok_rest = "Subject: s\n\nbody\n";
    assert_eq!(
        parse(format!("Date: Thu, 22 Aug 2002 18:26:25 +0700\n{ok_rest}").as_bytes()),
        Err(Skip::NoSender)
    );
    assert_eq!(
        parse(format!("From: nobody\nDate: Thu, 22 Aug 2002 18:26:25 +0700\n{ok_rest}").as_bytes()),
        Err(Skip::NoSender)
    );
    assert_eq!(
        parse(format!("From: a@b.org\n{ok_rest}").as_bytes()),
        Err(Skip::NoDate)
    );
    assert_eq!(
        parse(format!("From: a@b.org\nDate: someday soon\n{ok_rest}").as_bytes()),
        Err(Skip::BadDate)
    );
    assert_eq!(
        parse(&mail("Subject: s\n\n> only a quote\n-- \nsig\n")),
        Err(Skip::EmptyBody)
    );
    assert_eq!(
        parse(&mail("Subject: s\nContent-Type: text/html\n\n<p>hi</p>\n")),
        Err(Skip::NoTextPart)
    );
    assert_eq!(
        parse(&mail(
            "Subject: s\nContent-Type: text/plain\nContent-Disposition: attachment\n\nfile\n"
        )),
        Err(Skip::NoTextPart)
    );
}

#[test]
fn non_utf8_bytes() {
    let mut raw = mail("Subject: Bytes\nContent-Type: text/plain; charset=utf-8\n\nbad ");
    raw.extend_from_slice(&[0xff, 0xfe]);
    raw.extend_from_slice(b" here\n");
    assert_eq!(parse(&raw), Err(Skip::Undecodable));
    let mut raw = mail("Subject: Bytes\nContent-Type: text/plain; charset=iso-8859-1\n\nna");
    raw.push(0xef);
    raw.extend_from_slice(b"ve\n");
    assert_eq!(parse(&raw).unwrap().text, "naïve");
}

#[test]
fn mbox_separator_automated_senders_and_replies() {
    let raw = format!(
        "From kim@example.org  Thu Aug 22 12:36:23 2002\n{HEAD}Subject: Re: Hi\nIn-Reply-To: <1@x>\n\nYes.\n"
    );
    let d = parse(raw.as_bytes()).unwrap();
    assert_eq!(
        (d.author.as_str(), d.text.as_str()),
        ("kim.smith@example.org", "Yes.")
    );
    let no_replies = MailOptions {
        keep_replies: false,
        ..MailOptions::default()
    };
    assert_eq!(
        parse_mail(raw.as_bytes(), "x", &no_replies),
        Err(Skip::Reply)
    );
    let bot = "From: bugzilla-daemon@hughes-family.org\nDate: Thu, 22 Aug 2002 18:26:25 +0700\nSubject: [Bug 1]\n\nx\n";
    assert_eq!(parse(bot.as_bytes()), Err(Skip::AutomatedSender));
    let keep_bots = MailOptions {
        drop_automated: false,
        ..MailOptions::default()
    };
    assert!(parse_mail(bot.as_bytes(), "x", &keep_bots).is_ok());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn arbitrary_bodies_never_panic_and_lose_quotes(
        lines in proptest::collection::vec("[ >a-z:_-]{0,30}", 0..20)
    ) {
        let body = lines.join("\n");
        let text = clean_body(&body);
        prop_assert!(text.lines().all(|l| !l.trim_start().starts_with('>')));
        prop_assert!(!text.starts_with('\n') && !text.ends_with('\n'));
        let mut raw = mail("Subject: p\n\n");
        raw.extend_from_slice(body.as_bytes());
        let _ = parse(&raw);
    }
}
