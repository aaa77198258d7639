//! The grid itself: its cells, the prompts of each, and the answers through the cache.
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use pgraphrag_core::{
    GenParams, Generator, LampGold, LampQuestion, LampTask, Progress, Prompt, SummaryScope,
};
use pgraphrag_prompt::lamp::{LampTokenizer, SummaryPlacement};
use serde::{Deserialize, Serialize};

use crate::lamp::{LampPromptRecord, LampRecipe, LampRunSummary, lamp_prompts};
use crate::{CachedGenerator, Error, Result, Wrapper};

/// One cell of the grid: `k` retrieved profile items, with or without the user summary.
/// Named `base_k{k}` and `sum_k{k}` (the `mode_k` shape the results tables and plots use).
///
/// ```
/// use pgraphrag_eval::lamp_grid::LampConfig;
/// let c: LampConfig = "sum_k1".parse().unwrap();
/// assert_eq!(c, LampConfig { k: 1, summary: true });
/// assert_eq!(LampConfig { k: 4, summary: false }.to_string(), "base_k4");
/// assert!("k4".parse::<LampConfig>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LampConfig {
    /// Retrieved profile items.
    pub k: usize,
    /// Whether the user summary is in the prompt.
    pub summary: bool,
}

impl fmt::Display for LampConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = if self.summary { "sum" } else { "base" };
        write!(f, "{mode}_k{}", self.k)
    }
}

impl FromStr for LampConfig {
    type Err = Error;
    /// `base_k{k}` or `sum_k{k}`.
    fn from_str(s: &str) -> Result<Self> {
        let bad =
            || Error::InvalidInput(format!("LaMP config {s:?}: expected base_k<k> or sum_k<k>"));
        let (mode, k) = s.trim().rsplit_once("_k").ok_or_else(bad)?;
        let summary = match mode {
            "base" => false,
            "sum" => true,
            _ => return Err(bad()),
        };
        Ok(LampConfig {
            k: k.parse().map_err(|_| bad())?,
            summary,
        })
    }
}

/// The paper's Table 3 cells: `base_k0`, `base_k1`, `base_k4`, `sum_k0`, `sum_k1`.
///
/// ```
/// let names: Vec<String> = pgraphrag_eval::lamp_grid::table3_configs().iter().map(|c| c.to_string()).collect();
/// assert_eq!(names, ["base_k0", "base_k1", "base_k4", "sum_k0", "sum_k1"]);
/// ```
pub fn table3_configs() -> Vec<LampConfig> {
    let c = |k, summary| LampConfig { k, summary };
    vec![
        c(0, false),
        c(1, false),
        c(4, false),
        c(0, true),
        c(1, true),
    ]
}

/// How a generated answer is read before scoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnswerReading {
    /// As `evaluation.py` reads it: the stripped output (LaMP-3: `float()` of it, else the
    /// worst of 1 and 5; LaMP-1/2: the output must be a label).
    #[default]
    Strict,
    /// The first label (LaMP-1/2) or the first digit 1–5 (LaMP-3) anywhere in the output,
    /// for chatty zero-shot models; generation tasks are read as in `Strict`.
    FirstLabel,
}

impl AnswerReading {
    /// The command-line name: `strict` or `first-label`.
    ///
    /// ```
    /// use pgraphrag_eval::lamp_grid::AnswerReading;
    /// assert_eq!(AnswerReading::FirstLabel.name(), "first-label");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            AnswerReading::Strict => "strict",
            AnswerReading::FirstLabel => "first-label",
        }
    }
}

/// The grid: a task, its cells, the prompt settings and the generation parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct LampGrid {
    /// The task.
    pub task: LampTask,
    /// The cells, in table order.
    pub configs: Vec<LampConfig>,
    /// The downstream model's input length in tokens (the paper's FlanT5: 512).
    pub max_length: i64,
    /// Where the summary goes in the prompt.
    pub placement: SummaryPlacement,
    /// Which key summaries are looked up by.
    pub scope: SummaryScope,
    /// Generation parameters (the seed is set per run).
    pub params: GenParams,
    /// How the prompt is handed to the model (default: the prompt as one user message).
    pub wrapper: Wrapper,
    /// Distinct prompts per generation batch.
    pub batch: usize,
    /// How answers are read.
    pub reading: AnswerReading,
}

/// The prompts of every cell, built once ([`LampGrid::plan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LampPlan {
    /// Per cell: the config, one prompt record per question, and the prompt run's counts.
    pub cells: Vec<(LampConfig, Vec<LampPromptRecord>, LampRunSummary)>,
    /// Question ids, in order.
    pub ids: Vec<String>,
}

/// The answers of one cell under one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LampCellRun {
    /// The cell.
    pub config: LampConfig,
    /// The sampler seed.
    pub seed: u64,
    /// One answer per question, in order.
    pub outputs: Vec<String>,
}

impl LampGrid {
    /// A grid over `configs` with the defaults: `max_length` 512, the default summary
    /// placement, [`LampGrid::default_params`], one user message, batches of 8, strict reading.
    pub fn new(task: LampTask, configs: Vec<LampConfig>) -> Self {
        LampGrid {
            task,
            configs,
            max_length: 512,
            placement: SummaryPlacement::default(),
            scope: SummaryScope::User,
            params: Self::default_params(task),
            wrapper: Wrapper::UserOnly,
            batch: 8,
            reading: AnswerReading::Strict,
        }
    }

    /// Greedy decoding with room for the task's answer: 8 new tokens for the label tasks, 32
    /// for headlines, subjects and titles, 96 for tweets.
    ///
    /// ```
    /// use pgraphrag_core::LampTask;
    /// assert_eq!(pgraphrag_eval::lamp_grid::LampGrid::default_params(LampTask::Lamp3).max_tokens, 8);
    /// ```
    pub fn default_params(task: LampTask) -> GenParams {
        let max_tokens = match task {
            t if t.is_classification() => 8,
            LampTask::Lamp7 => 96,
            _ => 32,
        };
        GenParams {
            max_tokens,
            temperature: 0.0,
            ..Default::default()
        }
    }

    /// The supervised examples of `plan` for fine-tuning (`pgraphrag train lora`): one
    /// [`pgraphrag_data::PromptRecord`] per cell and question, the prompt as this grid hands it to
    /// the model ([`LampGrid::wrapper`]) and the question's gold output as the target. A
    /// question without a gold in `golds` is an [`Error::InvalidInput`] naming it.
    ///
    /// ```
    /// use pgraphrag_core::{LampGold, LampTask};
    /// use pgraphrag_eval::lamp::LampPromptRecord;
    /// use pgraphrag_eval::lamp_grid::{LampGrid, LampPlan, table3_configs};
    /// let grid = LampGrid::new(LampTask::Lamp3, table3_configs()[..1].to_vec());
    /// let rec = LampPromptRecord { id: "q1".into(), query: None, ranked_ids: vec![],
    ///                              prompt: "Rate it.".into(), unchanged: None, retries: 0 };
    /// let plan = LampPlan { cells: vec![(grid.configs[0], vec![rec], Default::default())], ids: vec!["q1".into()] };
    /// let golds = [LampGold { id: "q1".into(), output: "4".into() }];
    /// let r = &grid.training_records(&plan, &golds).unwrap()[0];
    /// assert_eq!((r.prompt.as_str(), r.target.as_str(), r.config.as_str()), ("Rate it.", "4", "base_k0"));
    /// ```
    pub fn training_records(
        &self,
        plan: &LampPlan,
        golds: &[LampGold],
    ) -> Result<Vec<pgraphrag_data::PromptRecord>> {
        let gold: HashMap<&str, &str> = golds
            .iter()
            .map(|g| (g.id.as_str(), g.output.as_str()))
            .collect();
        let mut out = Vec::new();
        for (config, records, _) in &plan.cells {
            for r in records {
                let target = gold.get(r.id.as_str()).ok_or_else(|| {
                    Error::InvalidInput(format!("question {:?} has no gold output", r.id))
                })?;
                let prompt = self.wrapper.wrap(r.prompt.clone());
                let record = pgraphrag_data::PromptRecord::from_prompt(
                    r.id.clone(),
                    config.to_string(),
                    &prompt,
                    *target,
                )
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "the prompt of question {:?} ({config}) is not a system + user chat nor a raw string",
                        r.id
                    ))
                })?;
                out.push(record);
            }
        }
        Ok(out)
    }

    /// Builds every cell's prompts. `summaries` maps a question's summary key
    /// ([`LampQuestion::summary_key`] under [`LampGrid::scope`]) to its summary; a summary cell needs it (an error otherwise), and a question
    /// without a summary gets the plain prompt in that cell (counted in its
    /// [`LampRunSummary::with_summary`] shortfall).
    pub fn plan<T: LampTokenizer + ?Sized>(
        &self,
        questions: &[LampQuestion],
        tok: &T,
        summaries: Option<&HashMap<String, String>>,
    ) -> Result<LampPlan> {
        let mut cells = Vec::with_capacity(self.configs.len());
        for &config in &self.configs {
            let s = match (config.summary, summaries) {
                (true, None) => {
                    return Err(Error::InvalidInput(format!(
                        "cell {config} needs user summaries; none were given"
                    )));
                }
                (true, s) => s,
                (false, _) => None,
            };
            let mut recipe = LampRecipe::new(self.task, config.k, self.max_length);
            recipe.summary_placement = self.placement;
            recipe.summary_scope = self.scope;
            let (records, summary) = if config.k == 0 {
                k0_prompts(questions, &recipe, tok, s)
            } else {
                lamp_prompts(questions, &recipe, tok, s)
            };
            cells.push((config, records, summary));
        }
        Ok(LampPlan {
            cells,
            ids: questions.iter().map(|q| q.id.clone()).collect(),
        })
    }

    /// Answers every cell once per seed through the cache (each distinct prompt generated
    /// once per seed; every answer committed the moment it finishes), reporting distinct
    /// prompts to `progress`.
    pub fn run<G: Generator>(
        &self,
        plan: &LampPlan,
        generator: &CachedGenerator<G>,
        seeds: &[u64],
        progress: &dyn Progress,
    ) -> Result<Vec<LampCellRun>> {
        let mut unique: Vec<String> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut map = Vec::with_capacity(plan.cells.len());
        for (_, records, _) in &plan.cells {
            let ids: Vec<usize> = records
                .iter()
                .map(|r| {
                    *index.entry(r.prompt.as_str()).or_insert_with(|| {
                        unique.push(r.prompt.clone());
                        unique.len() - 1
                    })
                })
                .collect();
            map.push(ids);
        }
        progress.start((unique.len() * seeds.len()) as u64, "prompts");
        let mut out = Vec::new();
        for &seed in seeds {
            let params = GenParams {
                seed,
                ..self.params.clone()
            };
            let started = Instant::now();
            let mut answers = Vec::with_capacity(unique.len());
            let (mut cached, mut generated) = (0usize, 0usize);
            for chunk in unique.chunks(self.batch.max(1)) {
                let prompts: Vec<Prompt> =
                    chunk.iter().map(|p| self.wrapper.wrap(p.clone())).collect();
                for (j, r) in generator
                    .generate_cached_batch(&prompts, &params)
                    .into_iter()
                    .enumerate()
                {
                    let (text, hit) = r.map_err(|e| {
                        Error::cached(
                            e,
                            || first_owner(plan, &map, answers.len() + j),
                            || format!("seed {seed}"),
                        )
                    })?;
                    if hit {
                        cached += 1;
                    } else {
                        generated += 1;
                    }
                    answers.push(text);
                }
                progress.advance(chunk.len() as u64);
                progress.message(&format!(
                    "seed {seed}: {cached} cached / {generated} generated in {:.0}s",
                    started.elapsed().as_secs_f64()
                ));
            }
            for ((config, _, _), ids) in plan.cells.iter().zip(&map) {
                out.push(LampCellRun {
                    config: *config,
                    seed,
                    outputs: ids.iter().map(|&i| answers[i].clone()).collect(),
                });
            }
        }
        progress.finish();
        Ok(out)
    }
}

/// k = 0: the input alone, or `{summary}` placed as the placement says with no items.
fn k0_prompts<T: LampTokenizer + ?Sized>(
    questions: &[LampQuestion],
    recipe: &LampRecipe,
    tok: &T,
    summaries: Option<&HashMap<String, String>>,
) -> (Vec<LampPromptRecord>, LampRunSummary) {
    let Some(map) = summaries else {
        let records = questions
            .iter()
            .map(|q| LampPromptRecord {
                id: q.id.clone(),
                query: None,
                ranked_ids: Vec::new(),
                prompt: q.input.clone(),
                unchanged: None,
                retries: 0,
            })
            .collect();
        let s = LampRunSummary {
            questions: questions.len(),
            built: questions.len(),
            ..Default::default()
        };
        return (records, s);
    };
    // With a summary and no items, the prompt builder places the summary alone.
    let empty: Vec<LampQuestion> = questions
        .iter()
        .map(|q| LampQuestion {
            profile: Vec::new(),
            ..q.clone()
        })
        .collect();
    lamp_prompts(&empty, recipe, tok, Some(map))
}

/// Who first needs a distinct prompt, for error messages.
fn first_owner(plan: &LampPlan, map: &[Vec<usize>], prompt: usize) -> String {
    for ids in map {
        if let Some(q) = ids.iter().position(|&p| p == prompt) {
            return plan.ids.get(q).cloned().unwrap_or_default();
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_round_trip_and_bad_names_are_errors() {
        for c in table3_configs() {
            assert_eq!(c.to_string().parse::<LampConfig>().unwrap(), c);
        }
        for bad in ["", "sum", "both_k1", "sum_kx", "base_k-1"] {
            assert!(bad.parse::<LampConfig>().is_err(), "{bad}");
        }
    }

    #[test]
    fn summary_cells_need_summaries() {
        struct Chars;
        impl LampTokenizer for Chars {
            fn input_ids(
                &self,
                t: &str,
            ) -> std::result::Result<Vec<u32>, pgraphrag_prompt::lamp::TokenizerError> {
                Ok(t.chars().map(u32::from).collect())
            }
            fn truncated_ids(
                &self,
                t: &str,
                _: i64,
            ) -> std::result::Result<Vec<u32>, pgraphrag_prompt::lamp::TokenizerError> {
                self.input_ids(t)
            }
            fn decode(
                &self,
                ids: &[u32],
            ) -> std::result::Result<String, pgraphrag_prompt::lamp::TokenizerError> {
                Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect())
            }
        }
        let grid = LampGrid::new(LampTask::Lamp4, table3_configs());
        let qs = vec![LampQuestion::new(
            "q",
            "Generate a headline for the following article: x",
        )];
        let e = grid.plan(&qs, &Chars, None).unwrap_err();
        assert!(e.to_string().contains("sum_k0 needs user summaries"), "{e}");
        let plan = LampGrid::new(
            LampTask::Lamp4,
            vec![LampConfig {
                k: 0,
                summary: false,
            }],
        )
        .plan(&qs, &Chars, None)
        .unwrap();
        assert_eq!(plan.cells[0].1[0].prompt, qs[0].input);
    }
}
