//! The bench job's tests, which drive the whole [`super::JobRunner`] (beside the handler, not
//! inside it: the handler does not import the runner that calls it).
use super::bench::*;
use pgraphrag_data::RankingRecord;
use pgraphrag_eval::{Bench, CachedGenerator, GenerationCache};
use pgraphrag_llm::GgufModel;

use super::{Error, JobRunner, JobSpec, RankSpec, UnitOutcome, plan, test_model, test_split};
use pgraphrag_core::{NoProgress, Task};
use pgraphrag_prompt::pgraphrag::Mode;
use pgraphrag_retrieval::profile::ProfileRanker;

#[test]
fn units_out_of_order_fill_the_cache_and_the_bench_then_generates_nothing() {
    let Some(model) = test_model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let split_path = test_split(dir.path());
    let cache = dir.path().join("cache.sqlite");
    let bench = Bench::new(
        Task::Rating,
        pgraphrag_eval::pgraphrag_grid(&[Mode::None, Mode::User, Mode::Random], &[1]),
    );
    let rank = RankSpec::new(&split_path, Task::Rating, 7);
    let spec = BenchSpec::new(rank, bench.clone(), &model, cache.display().to_string());
    let id = spec.check().unwrap();
    let store = dir.path().join("jobs.sqlite").display().to_string();
    let planned = plan(&JobSpec::Bench(Box::new(spec.clone())), &store, 3).unwrap();
    assert_eq!(planned.units.len(), 3);
    let (mut a, mut b) = (JobRunner::sqlite("a"), JobRunner::sqlite("b"));
    // Out of order on two runners: the random reviews follow the one seeded stream.
    for (i, u) in [2, 0, 1].iter().enumerate() {
        let r = if i % 2 == 0 { &mut a } else { &mut b };
        let out = r.run(&planned.units[*u].payload).unwrap();
        assert!(matches!(out, UnitOutcome::Stored { .. }), "{out:?}");
    }
    assert_eq!(
        a.run(&planned.units[1].payload).unwrap(),
        UnitOutcome::AlreadyDone
    );

    // `pgraphrag bench`'s ranking and grid over every user, from the job's cache.
    let split = pgraphrag_data::load_split(&split_path).unwrap();
    let recipe = pgraphrag_eval::Recipe::ReleasedCode;
    let graph = recipe.graph(&split);
    let ranker = ProfileRanker::new(recipe.bm25(), spec.rank.profile_options());
    let ranked = pgraphrag_eval::rank_all(
        &split,
        &graph,
        recipe.id_policy(),
        Task::Rating,
        ranker,
        &NoProgress,
    )
    .unwrap();
    let profiles: Vec<_> = ranked
        .iter()
        .map(|p| RankingRecord::from_profile(p).to_profile())
        .collect();
    assert!(profiles.iter().any(|p| p.random.is_some()));
    let m = GgufModel::load(&model, spec.options()).unwrap();
    let cached = CachedGenerator::new(&m, id.clone(), GenerationCache::open(&cache).unwrap());
    let (outputs, stats) = bench.run(&profiles, &cached).unwrap();
    assert_eq!(stats.generated, 0, "{stats:?}");
    assert_eq!(stats.cache_hits, stats.unique_prompts);
    // The same answers as generating them in one run.
    let fresh = CachedGenerator::new(&m, id, GenerationCache::in_memory().unwrap());
    let (direct, s) = bench.run(&profiles, &fresh).unwrap();
    assert_eq!(s.generated, s.unique_prompts);
    assert_eq!(outputs, direct);
}

#[test]
fn unusable_grids_are_refused() {
    let rank = RankSpec::new("/d/s.json".as_ref(), Task::Title, 3);
    let empty = BenchSpec::new(rank.clone(), Bench::new(Task::Title, vec![]), "/m", "/c");
    assert!(empty.check().unwrap_err().to_string().contains("no cells"));
    let grid = pgraphrag_eval::pgraphrag_grid(&[Mode::None], &[1]);
    let mut other = BenchSpec::new(
        rank.clone(),
        Bench::new(Task::Title, grid.clone()),
        "/m",
        "/c",
    );
    other.rank.task = Task::Rating;
    assert!(
        other
            .check()
            .unwrap_err()
            .to_string()
            .contains("not the ranking's")
    );
    let mut summaries = BenchSpec::new(rank, Bench::new(Task::Title, grid), "/m", "/c");
    summaries
        .bench
        .item_summaries
        .insert("k".into(), "v".into());
    assert!(
        summaries
            .check()
            .unwrap_err()
            .to_string()
            .contains("item summaries")
    );
    let missing = BenchSpec::new(
        RankSpec::new("/d/s.json".as_ref(), Task::Title, 3),
        Bench::new(
            Task::Title,
            pgraphrag_eval::pgraphrag_grid(&[Mode::None], &[1]),
        ),
        "/no/such/model.gguf",
        "/c",
    );
    assert!(matches!(missing.check(), Err(Error::Input { .. })));
}
