//! Flag parsers and flag values shared by the subcommands, for library types that cannot derive
//! clap's `ValueEnum` (the library crates do not depend on clap): each lists its values, so
//! `--help` shows them.
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use pgraphrag_core::Task;

/// `--task`: `text`, `title` or `rating` (the notebook's `reviewText`, `reviewTitle` and
/// `reviewRating` also accepted), parsed into [`Task`].
pub fn task() -> impl TypedValueParser<Value = Task> {
    PossibleValuesParser::new([
        PossibleValue::new("text")
            .alias("reviewText")
            .help("Review text generation: the query is the target's title"),
        PossibleValue::new("title")
            .alias("reviewTitle")
            .help("Review title generation: the query is the target's text"),
        PossibleValue::new("rating")
            .alias("reviewRating")
            .help("Rating prediction: the query is \"{title} {text}\""),
    ])
    .try_map(|s| s.parse::<Task>())
}

/// A count that must be at least 1 (token budgets, batch sizes, k): clap refuses `0` at parse
/// time, naming the flag (exit code 2), before anything is read or loaded.
pub fn at_least_one(s: &str) -> Result<usize, String> {
    count_in(s, 1, usize::MAX)
}

/// [`at_least_one`] for a `u64` (`--epochs`, steps).
pub fn at_least_one_u64(s: &str) -> Result<u64, String> {
    at_least_one(s).map(|n| n as u64)
}

/// `--batch-size` of a training run: 1 to [`MAX_TRAIN_BATCH`] examples per micro-batch.
pub fn train_batch(s: &str) -> Result<usize, String> {
    count_in(s, 1, MAX_TRAIN_BATCH)
}

/// Most examples per training micro-batch: every example's activations are kept for the
/// backward pass, so a larger batch is killed for memory rather than trained (reach a larger
/// effective batch with `--grad-accum`, which costs no memory).
pub const MAX_TRAIN_BATCH: usize = 1024;

/// A whole number from `lo` to `hi`, with a message saying which.
fn count_in(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    let range = if hi == usize::MAX {
        format!("at least {lo}")
    } else {
        format!("from {lo} to {hi}")
    };
    match s.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        Ok(n) => Err(format!("must be {range} (got {n})")),
        Err(_) => Err(format!("must be a whole number {range}")),
    }
}

/// A finite number: NaN and infinities are refused at parse time (a NaN temperature would be
/// stored as JSON `null` and fail far from the command line).
fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(x) => Err(format!("must be a finite number (got {x})")),
        Err(_) => Err("not a number".into()),
    }
}

/// A finite number of at least 0 (`--temperature`, `--weight-decay`).
pub fn non_negative(s: &str) -> Result<f64, String> {
    match finite(s)? {
        x if x >= 0.0 => Ok(x),
        x => Err(format!("must be 0 or more (got {x})")),
    }
}

/// A finite number above 0 (`--lr`, seconds).
pub fn positive(s: &str) -> Result<f64, String> {
    match finite(s)? {
        x if x > 0.0 => Ok(x),
        x => Err(format!("must be above 0 (got {x})")),
    }
}

/// A probability mass above 0 and at most 1 (`--top-p`).
pub fn mass(s: &str) -> Result<f64, String> {
    match finite(s)? {
        x if x > 0.0 && x <= 1.0 => Ok(x),
        x => Err(format!("must be above 0 and at most 1 (got {x})")),
    }
}

/// A finite `f32` (`--alpha`).
pub fn finite_f32(s: &str) -> Result<f32, String> {
    let x = finite(s)? as f32;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!(
            "must be a finite number within f32's range (got {s})"
        ))
    }
}

/// A probability of at least 0 and below 1 (`--dropout`).
pub fn dropout(s: &str) -> Result<f32, String> {
    match finite(s)? {
        x if (0.0..1.0).contains(&x) => Ok(x as f32),
        x => Err(format!("must be at least 0 and below 1 (got {x})")),
    }
}

/// `--summary-scope`: `user` or `question`.
pub fn summary_scope(s: &str) -> Result<pgraphrag_core::SummaryScope, String> {
    s.parse()
        .map_err(|e: pgraphrag_core::UnknownName| e.to_string())
}

/// A LaMP task (`--task` of the LaMP and summary commands): LaMP-1 … LaMP-7 or LaMP-2-old.
pub fn lamp_task(s: &str) -> Result<pgraphrag_core::LampTask, String> {
    s.parse::<pgraphrag_core::LampTask>()
        .map_err(|e| e.to_string())
}

/// The dense encoder's forward pass (`rank --backend`, `embed --backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// The padding-free native CPU pass.
    Native,
    /// candle's BERT.
    Candle,
}

impl From<BackendArg> for pgraphrag_retrieval::dense::EncoderBackend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Native => Self::Native,
            BackendArg::Candle => Self::Candle,
        }
    }
}

/// How token vectors become one text vector (`embed --pooling`, `queue submit embed --pooling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PoolingArg {
    /// Masked mean pooling.
    Mean,
    /// BERT's pooler_output (needs a checkpoint with pooler weights).
    Pooler,
    /// The CLS token's vector.
    Cls,
}

impl From<PoolingArg> for pgraphrag_retrieval::dense::Pooling {
    fn from(p: PoolingArg) -> Self {
        match p {
            PoolingArg::Mean => Self::Mean,
            PoolingArg::Pooler => Self::Pooler,
            PoolingArg::Cls => Self::Cls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_out_of_their_domain_are_refused() {
        assert_eq!(at_least_one("3"), Ok(3));
        for bad in ["0", "-1", "x", "1.5"] {
            assert!(at_least_one(bad).is_err(), "{bad}");
        }
        assert_eq!(train_batch("1024"), Ok(1024));
        let e = train_batch("1000000000").unwrap_err();
        assert!(e.contains("from 1 to 1024"), "{e}");
        assert_eq!(non_negative("0"), Ok(0.0));
        for bad in ["NaN", "nan", "inf", "-inf", "-0.1", "hot"] {
            assert!(non_negative(bad).is_err(), "{bad}");
        }
        assert!(positive("0").is_err() && positive("1e-4").is_ok());
        assert!(mass("0").is_err() && mass("1").is_ok() && mass("1.01").is_err());
        assert!(finite_f32("1e39").is_err() && finite_f32("16").is_ok());
        assert!(dropout("1").is_err() && dropout("0").is_ok() && dropout("NaN").is_err());
    }

    #[test]
    fn every_listed_task_parses() {
        for (name, want) in [
            ("text", Task::Text),
            ("reviewTitle", Task::Title),
            ("rating", Task::Rating),
        ] {
            let cmd = clap::Command::new("t")
                .arg(clap::Arg::new("task").long("task").value_parser(task()));
            let m = cmd.try_get_matches_from(["t", "--task", name]).unwrap();
            assert_eq!(*m.get_one::<Task>("task").unwrap(), want);
        }
        let cmd =
            clap::Command::new("t").arg(clap::Arg::new("task").long("task").value_parser(task()));
        assert!(
            cmd.try_get_matches_from(["t", "--task", "summary"])
                .is_err()
        );
    }
}
