//! The (mode, k) grid of PGraphRAG's `partial_generate` and the runner that fills it.
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use pgraphrag_core::progress::{NoProgress, Progress};
use pgraphrag_core::{GenParams, Generator, Prompt};
use pgraphrag_prompt::pgraphrag::{
    Language, Mode, PromptBuilder, RankedProfile, Task, gpt_chat, llama3_raw,
};
use serde::{Deserialize, Serialize};

use crate::{CachedError, CachedGenerator, Error, Result};

/// One cell of the grid: a retrieval mode, how many reviews of each list to show, and
/// whether the prompt carries the target item's summary (beyond the paper: the cold-start
/// item summaries of [`crate::cold_start`]).
///
/// Displays (and parses) as PGraphRAG's `mode_k` label, e.g. `both_k2`, with an `isum_`
/// prefix for the cells with the item summary.
///
/// ```
/// use pgraphrag_eval::RunConfig;
/// use pgraphrag_prompt::pgraphrag::Mode;
/// let c = RunConfig::new(Mode::Both, 2);
/// assert_eq!(c.to_string(), "both_k2");
/// assert_eq!("both_k2".parse::<RunConfig>().unwrap(), c);
/// let s = c.with_item_summary();
/// assert_eq!(s.to_string(), "isum_both_k2");
/// assert_eq!("isum_both_k2".parse::<RunConfig>().unwrap(), s);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunConfig {
    /// The retrieval mode.
    pub mode: Mode,
    /// Top-k of each ranked list.
    pub k: usize,
    /// The prompt carries the target item's summary ([`Bench::item_summaries`]).
    #[serde(default)]
    pub item_summary: bool,
}

impl RunConfig {
    /// The cell `mode_k`, without an item summary.
    pub const fn new(mode: Mode, k: usize) -> Self {
        RunConfig {
            mode,
            k,
            item_summary: false,
        }
    }

    /// This cell with the item summary in its prompts.
    pub const fn with_item_summary(mut self) -> Self {
        self.item_summary = true;
        self
    }
}

/// The label prefix of the cells with an item summary.
const ITEM_SUMMARY_PREFIX: &str = "isum_";

impl fmt::Display for RunConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.item_summary {
            f.write_str(ITEM_SUMMARY_PREFIX)?;
        }
        write!(f, "{}_k{}", self.mode, self.k)
    }
}

impl FromStr for RunConfig {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::InvalidInput(format!(
                "{s:?} is not a mode_k label like both_k2 (or isum_both_k2)"
            ))
        };
        let (item_summary, rest) = match s.strip_prefix(ITEM_SUMMARY_PREFIX) {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (m, k) = rest.rsplit_once("_k").ok_or_else(bad)?;
        Ok(RunConfig {
            mode: m.parse().map_err(|_| bad())?,
            k: k.parse().map_err(|_| bad())?,
            item_summary,
        })
    }
}

/// The grid `partial_generate` runs: for each `k` (outer) and each mode (inner), skipping
/// `none` and `random` for every `k` other than 1 (the released code skips them for
/// k ∈ {2, 4}; here for any k ≠ 1). Duplicates are dropped.
///
/// ```
/// use pgraphrag_eval::pgraphrag_grid;
/// use pgraphrag_prompt::pgraphrag::Mode;
/// let g = pgraphrag_grid(&Mode::ALL, &[1, 2, 4]);
/// let labels: Vec<String> = g.iter().map(|c| c.to_string()).collect();
/// assert_eq!(labels.len(), 11);
/// assert_eq!(&labels[..5], ["none_k1", "user_k1", "neighbor_k1", "both_k1", "random_k1"]);
/// assert!(!labels.contains(&"none_k2".to_string()));
/// ```
pub fn pgraphrag_grid(modes: &[Mode], ks: &[usize]) -> Vec<RunConfig> {
    let mut out = Vec::new();
    for &k in ks {
        for &mode in modes {
            if mode.k1_only() && k != 1 {
                continue;
            }
            let c = RunConfig::new(mode, k);
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// How a PGraphRAG prompt is handed to the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wrapper {
    /// `gpt_call`'s chat: the GPT system message, then the prompt as the user message;
    /// the model formats it with its own chat template. The default.
    #[default]
    GptChat,
    /// The prompt alone as one user message.
    UserOnly,
    /// `generate_llama`'s hand-written Llama-3.1 string, sent raw.
    Llama3Raw,
}

impl Wrapper {
    /// Wraps a prompt text.
    pub fn wrap(self, text: String) -> Prompt {
        match self {
            Wrapper::GptChat => gpt_chat(text),
            Wrapper::UserOnly => Prompt::user(text),
            Wrapper::Llama3Raw => llama3_raw(&text),
        }
    }
}

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunStats {
    /// (user, config) pairs.
    pub jobs: usize,
    /// Distinct prompts among them (each is generated or fetched once).
    pub unique_prompts: usize,
    /// Distinct prompts answered from the cache.
    pub cache_hits: usize,
    /// Distinct prompts the model generated in this run.
    pub generated: usize,
    /// Wall time of the generation phase, in seconds.
    pub seconds: f64,
}

/// One user's raw generation, as PGraphRAG's OUTPUT files store it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserOutput {
    /// The user id.
    pub user_id: String,
    /// The raw generation.
    pub output: String,
}

/// All outputs of one grid cell, in user order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigOutputs {
    /// The grid cell.
    pub config: RunConfig,
    /// One output per user.
    pub outputs: Vec<UserOutput>,
}

/// A PGraphRAG grid on one task: builds every (user, config) prompt, generates each
/// distinct prompt once (through a [`CachedGenerator`], so reruns reuse finished work), and
/// returns the outputs per config.
///
/// ```
/// use pgraphrag_core::{Entry, GenParams, Generator, Prompt, Result};
/// use pgraphrag_eval::{Bench, CachedGenerator, GenerationCache, pgraphrag_grid};
/// use pgraphrag_prompt::pgraphrag::{Mode, RankedProfile, Task};
///
/// struct Fixed;
/// impl Generator for Fixed {
///     fn generate(&self, _: &Prompt, _: &GenParams) -> Result<String> { Ok("Rating: 4".into()) }
/// }
/// let profiles = vec![RankedProfile { user_id: "u".into(), ..Default::default() }];
/// let bench = Bench::new(Task::Rating, pgraphrag_grid(&Mode::ALL, &[1, 2, 4]));
/// let g = CachedGenerator::new(Fixed, "fixed", GenerationCache::in_memory().unwrap());
/// let (outs, stats) = bench.run(&profiles, &g).unwrap();
/// assert_eq!(outs.len(), 11);
/// assert_eq!(stats.jobs, 11);
/// assert!(stats.unique_prompts < 11); // empty lists make k = 1, 2, 4 identical
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bench {
    /// The task.
    pub task: Task,
    /// The direction's language.
    pub language: Language,
    /// The grid cells, in output order.
    pub configs: Vec<RunConfig>,
    /// Generation parameters (part of the cache key).
    pub params: GenParams,
    /// How prompts are wrapped for the model.
    pub wrapper: Wrapper,
    /// Prompts handed to the generator at once ([`Generator::generate_batch`]); each batch's
    /// answers are in the cache before the next batch starts. Batching never changes an
    /// answer, only speed (the native GGUF engine decodes a batch together).
    pub batch: usize,
    /// Item summaries by [`crate::cold_start::item_summary_key`], read by the cells with
    /// [`RunConfig::item_summary`]; a profile without one gets the cell's prompt without a
    /// summary. Empty by default.
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    pub item_summaries: HashMap<String, String>,
}

impl Bench {
    /// A bench for `task` over `configs`, English, [`Bench::default_params`] for the task,
    /// the GPT chat wrapper, batches of 8.
    pub fn new(task: Task, configs: Vec<RunConfig>) -> Self {
        Bench {
            task,
            language: Language::English,
            configs,
            params: Self::default_params(task),
            wrapper: Wrapper::GptChat,
            batch: 8,
            item_summaries: HashMap::new(),
        }
    }

    /// Default generation parameters per task: temperature 0.4 (the released GPT runs),
    /// seed 42, and `max_tokens` 256 for text (the released Llama `max_new_tokens`), 32 for
    /// titles (asked for in ten words or less) and 8 for ratings (`Rating: 4`).
    pub fn default_params(task: Task) -> GenParams {
        GenParams {
            max_tokens: Self::default_max_tokens(task),
            temperature: pgraphrag_prompt::pgraphrag::GPT_TEMPERATURE,
            top_p: None,
            seed: 42,
            stop: Vec::new(),
        }
    }

    /// 256 (text), 32 (title), 8 (rating).
    pub fn default_max_tokens(task: Task) -> usize {
        match task {
            Task::Text => 256,
            Task::Title => 32,
            Task::Rating => 8,
        }
    }

    /// The prompt of one user in one config.
    pub fn prompt(&self, profile: &RankedProfile, config: RunConfig) -> Prompt {
        let summary = if config.item_summary {
            self.item_summaries
                .get(&item_summary_key(profile))
                .map(String::as_str)
        } else {
            None
        };
        let text = PromptBuilder::new(self.task)
            .language(self.language)
            .build_with_summary(profile, config.mode, config.k, summary);
        self.wrapper.wrap(text)
    }

    /// The distinct prompts of a run, in generation order (user by user, config by config),
    /// and for each (config, user) the index of its prompt.
    pub fn plan(&self, profiles: &[RankedProfile]) -> (Vec<Prompt>, Vec<Vec<usize>>) {
        let mut unique: Vec<Prompt> = Vec::new();
        let mut index: HashMap<Prompt, usize> = HashMap::new();
        let mut map = vec![Vec::with_capacity(profiles.len()); self.configs.len()];
        for p in profiles {
            for (ci, &c) in self.configs.iter().enumerate() {
                let prompt = self.prompt(p, c);
                let i = *index.entry(prompt.clone()).or_insert_with(|| {
                    unique.push(prompt);
                    unique.len() - 1
                });
                map[ci].push(i);
            }
        }
        (unique, map)
    }

    /// Runs the grid. Each distinct prompt is generated once; every finished generation is
    /// in the cache before the next starts, so an interrupted run loses nothing.
    ///
    /// `G` is any [`Generator`] (a concrete model, `Box<dyn Generator>`, `&dyn Generator`).
    pub fn run<G: Generator>(
        &self,
        profiles: &[RankedProfile],
        generator: &CachedGenerator<G>,
    ) -> Result<(Vec<ConfigOutputs>, RunStats)> {
        self.run_with_progress(profiles, generator, &NoProgress)
    }

    /// [`Bench::run`], reporting the distinct prompts answered to `progress` (with a
    /// "cached / generated" message after each).
    pub fn run_with_progress<G: Generator>(
        &self,
        profiles: &[RankedProfile],
        generator: &CachedGenerator<G>,
        progress: &dyn Progress,
    ) -> Result<(Vec<ConfigOutputs>, RunStats)> {
        self.run_batches(profiles, progress, |chunk| {
            generator.generate_cached_batch(chunk, &self.params)
        })
    }

    /// Runs the grid on any generator without a cache: each distinct prompt is generated
    /// once in this run (nothing is stored; [`RunStats::cache_hits`] is 0).
    ///
    /// ```
    /// use pgraphrag_core::{GenParams, Generator, NoProgress, Prompt, Result};
    /// use pgraphrag_eval::{Bench, pgraphrag_grid};
    /// use pgraphrag_prompt::pgraphrag::{Mode, RankedProfile, Task};
    /// struct Fixed;
    /// impl Generator for Fixed {
    ///     fn generate(&self, _: &Prompt, _: &GenParams) -> Result<String> { Ok("Rating: 4".into()) }
    /// }
    /// let g: Box<dyn Generator> = Box::new(Fixed);
    /// let profiles = vec![RankedProfile { user_id: "u".into(), ..Default::default() }];
    /// let bench = Bench::new(Task::Rating, pgraphrag_grid(&[Mode::None], &[1]));
    /// let (outs, stats) = bench.run_uncached(&profiles, g.as_ref(), &NoProgress).unwrap();
    /// assert_eq!(outs[0].outputs[0].output, "Rating: 4");
    /// assert_eq!((stats.generated, stats.cache_hits), (1, 0));
    /// ```
    pub fn run_uncached<G: Generator + ?Sized>(
        &self,
        profiles: &[RankedProfile],
        generator: &G,
        progress: &dyn Progress,
    ) -> Result<(Vec<ConfigOutputs>, RunStats)> {
        self.run_batches(profiles, progress, |chunk| {
            generator
                .generate_batch(chunk, &self.params)
                .into_iter()
                .map(|r| r.map(|s| (s, false)).map_err(CachedError::Generator))
                .collect()
        })
    }

    /// The grid loop: `answer` turns one batch of distinct prompts into (output, from cache)
    /// per prompt, in order.
    fn run_batches(
        &self,
        profiles: &[RankedProfile],
        progress: &dyn Progress,
        mut answer: impl FnMut(&[Prompt]) -> Vec<Result<(String, bool), CachedError>>,
    ) -> Result<(Vec<ConfigOutputs>, RunStats)> {
        let start = Instant::now();
        let (unique, map) = self.plan(profiles);
        progress.start(unique.len() as u64, "prompts");
        // Who first needs each prompt, for error messages.
        let mut owner = vec![(0usize, 0usize); unique.len()];
        for (ci, users) in map.iter().enumerate().rev() {
            for (ui, &pi) in users.iter().enumerate().rev() {
                owner[pi] = (ui, ci);
            }
        }
        let mut answers = Vec::with_capacity(unique.len());
        let (mut hits, mut generated) = (0, 0);
        let mut pi = 0;
        for chunk in unique.chunks(self.batch.max(1)) {
            let results = answer(chunk);
            if results.len() != chunk.len() {
                progress.finish();
                let (ui, ci) = owner[pi];
                return Err(Error::Generation {
                    user_id: profiles[ui].user_id.clone(),
                    config: self.configs[ci].to_string(),
                    source: pgraphrag_core::Error::InvalidInput(format!(
                        "the generator returned {} results for {} prompts",
                        results.len(),
                        chunk.len()
                    )),
                });
            }
            for r in results {
                let (out, hit) = match r {
                    Ok(x) => x,
                    Err(e) => {
                        progress.finish();
                        let (ui, ci) = owner[pi];
                        return Err(Error::cached(
                            e,
                            || profiles[ui].user_id.clone(),
                            || self.configs[ci].to_string(),
                        ));
                    }
                };
                if hit {
                    hits += 1;
                } else {
                    generated += 1;
                }
                answers.push(out);
                pi += 1;
                progress.message(&format!("{hits} cached, {generated} generated"));
                progress.advance(1);
            }
        }
        progress.finish();
        let outs = self
            .configs
            .iter()
            .zip(&map)
            .map(|(&config, idx)| ConfigOutputs {
                config,
                outputs: idx
                    .iter()
                    .zip(profiles)
                    .map(|(&i, p)| UserOutput {
                        user_id: p.user_id.clone(),
                        output: answers[i].clone(),
                    })
                    .collect(),
            })
            .collect();
        let stats = RunStats {
            jobs: profiles.len() * self.configs.len(),
            unique_prompts: unique.len(),
            cache_hits: hits,
            generated,
            seconds: start.elapsed().as_secs_f64(),
        };
        Ok((outs, stats))
    }
}

/// The store key of the summary for `profile`'s target item without `profile`'s user:
/// `{item as JSON}|{user}` (the JSON keeps `123` and `"123"` apart as the released code's
/// graph does).
///
/// ```
/// use pgraphrag_core::{ItemId, RankedProfile};
/// let p = RankedProfile { user_id: "u1".into(), target_item: ItemId::Int(7), ..Default::default() };
/// assert_eq!(pgraphrag_eval::cold_start::item_summary_key(&p), "7|u1");
/// let q = RankedProfile { user_id: "u1".into(), target_item: "7".into(), ..Default::default() };
/// assert_eq!(pgraphrag_eval::cold_start::item_summary_key(&q), "\"7\"|u1");
/// ```
pub fn item_summary_key(profile: &RankedProfile) -> String {
    let item = serde_json::to_string(&profile.target_item)
        .unwrap_or_else(|_| profile.target_item.to_string());
    format!("{item}|{}", profile.user_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::GenerationCache;
    use pgraphrag_core::Entry;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Count(AtomicUsize);
    impl Generator for Count {
        fn generate(&self, p: &Prompt, _: &GenParams) -> pgraphrag_core::Result<String> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(format!(
                "{}",
                p.messages().last().map_or(0, |m| m.content.len())
            ))
        }
    }

    fn entry(t: &str) -> Entry {
        Entry {
            title: Some(t.into()),
            text: Some(t.into()),
            rating: Some(3.0),
            ..Default::default()
        }
    }

    fn ranked(t: &str) -> pgraphrag_core::RankedEntry {
        entry(t).into()
    }

    #[test]
    fn rerun_generates_nothing_and_outputs_are_equal() {
        let profiles: Vec<RankedProfile> = (0..3)
            .map(|i| RankedProfile {
                user_id: format!("u{i}"),
                target: entry(&format!("t{i}")),
                user: vec![ranked("a"), ranked("b"), ranked("c")],
                neighbors: vec![ranked("n")],
                random: Some(ranked("r")),
                ..Default::default()
            })
            .collect();
        let bench = Bench::new(Task::Title, pgraphrag_grid(&Mode::ALL, &[1, 2, 4]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let g = CachedGenerator::new(
            Count(AtomicUsize::new(0)),
            "count",
            GenerationCache::open(&path).unwrap(),
        );
        let (o1, s1) = bench.run(&profiles, &g).unwrap();
        // neighbor k1/k2/k4 are identical (one neighbour); user k4 = k2 + c, distinct.
        assert_eq!(s1.jobs, 33);
        assert_eq!(s1.unique_prompts, 3 * 9);
        assert_eq!(s1.generated, 27);
        assert_eq!(g.inner().0.load(Ordering::SeqCst), 27);
        let g2 = CachedGenerator::new(
            Count(AtomicUsize::new(0)),
            "count",
            GenerationCache::open(&path).unwrap(),
        );
        let (o2, s2) = bench.run(&profiles, &g2).unwrap();
        assert_eq!((s2.cache_hits, s2.generated), (27, 0));
        assert_eq!(g2.inner().0.load(Ordering::SeqCst), 0);
        assert_eq!(o1, o2);
    }

    #[test]
    fn generator_errors_name_user_and_config() {
        struct Fail;
        impl Generator for Fail {
            fn generate(&self, _: &Prompt, _: &GenParams) -> pgraphrag_core::Result<String> {
                Err(pgraphrag_core::Error::InvalidInput("boom".into()))
            }
        }
        let bench = Bench::new(Task::Text, vec![RunConfig::new(Mode::None, 1)]);
        let profiles = vec![RankedProfile {
            user_id: "alice".into(),
            ..Default::default()
        }];
        let g = CachedGenerator::new(Fail, "f", GenerationCache::in_memory().unwrap());
        let e = pgraphrag_core::error_chain(&bench.run(&profiles, &g).unwrap_err());
        assert_eq!(e.matches("boom").count(), 1, "each fact once: {e}");
        assert!(
            e.contains("alice") && e.contains("none_k1") && e.contains("boom"),
            "{e}"
        );
    }

    /// Batches of any size give the same outputs; every batch goes to `generate_batch` whole;
    /// a failing prompt inside a batch still leaves the batch's other answers in the cache,
    /// and the error names the failing prompt's user and config.
    #[test]
    fn batches_change_nothing_but_calls_and_lose_nothing_on_error() {
        struct Batched {
            calls: std::sync::Mutex<Vec<usize>>,
            fail_on: Option<String>,
        }
        impl Generator for Batched {
            fn generate(&self, p: &Prompt, g: &GenParams) -> pgraphrag_core::Result<String> {
                self.generate_batch(std::slice::from_ref(p), g).remove(0)
            }
            fn generate_batch(
                &self,
                ps: &[Prompt],
                _: &GenParams,
            ) -> Vec<pgraphrag_core::Result<String>> {
                self.calls.lock().unwrap().push(ps.len());
                ps.iter()
                    .map(|p| {
                        let c = &p.messages().last().unwrap().content;
                        match &self.fail_on {
                            Some(f) if c.contains(f.as_str()) => {
                                Err(pgraphrag_core::Error::InvalidInput("boom".into()))
                            }
                            _ => Ok(format!("{}", c.len())),
                        }
                    })
                    .collect()
            }
        }
        let profiles: Vec<RankedProfile> = (0..5)
            .map(|i| RankedProfile {
                user_id: format!("u{i}"),
                target: entry(&format!("target{i}")),
                user: vec![ranked("a"), ranked("b"), ranked("c")],
                neighbors: vec![ranked("n"), ranked(&format!("m{i}"))],
                random: Some(ranked("r")),
                ..Default::default()
            })
            .collect();
        let mut outs = Vec::new();
        for batch in [1, 3, 8, 100] {
            let bench = Bench {
                batch,
                ..Bench::new(Task::Title, pgraphrag_grid(&Mode::ALL, &[1, 2, 4]))
            };
            let g = CachedGenerator::new(
                Batched {
                    calls: Default::default(),
                    fail_on: None,
                },
                "b",
                GenerationCache::in_memory().unwrap(),
            );
            let (o, s) = bench.run(&profiles, &g).unwrap();
            let calls = g.inner().calls.lock().unwrap().clone();
            assert_eq!(calls.iter().sum::<usize>(), s.unique_prompts);
            assert!(calls.iter().all(|&c| c <= batch), "{calls:?}");
            assert_eq!(calls.len(), s.unique_prompts.div_ceil(batch));
            outs.push(o);
        }
        assert!(outs.windows(2).all(|w| w[0] == w[1]));

        let bench = Bench {
            batch: 100,
            ..Bench::new(Task::Title, pgraphrag_grid(&Mode::ALL, &[1, 2, 4]))
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let g = CachedGenerator::new(
            Batched {
                calls: Default::default(),
                fail_on: Some("target3".into()),
            },
            "b",
            GenerationCache::open(&path).unwrap(),
        );
        let e = pgraphrag_core::error_chain(&bench.run(&profiles, &g).unwrap_err());
        assert!(e.contains("u3") && e.contains("boom"), "{e}");
        let stored = g.stats().generated;
        assert!(
            stored > 0,
            "answers of the failing batch's other prompts are kept"
        );
        // A rerun with a healthy generator reuses them all.
        let g2 = CachedGenerator::new(
            Batched {
                calls: Default::default(),
                fail_on: None,
            },
            "b",
            GenerationCache::open(&path).unwrap(),
        );
        let (_, s) = bench.run(&profiles, &g2).unwrap();
        assert_eq!(s.cache_hits, stored);
    }
}
