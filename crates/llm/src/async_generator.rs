//! The async generator path (feature `async`): [`AsyncGenerator`], implemented by
//! [`AsyncOpenAiClient`](crate::AsyncOpenAiClient), and [`Blocking`], which runs any blocking
//! [`Generator`] on tokio's blocking threads.

use std::future::Future;
use std::sync::Arc;

use pgraphrag_core::{Error, GenParams, Generator, Prompt, Result};

/// The async counterpart of [`Generator`]: one method, `generate(prompt, params)`, whose
/// future is `Send` so it can be `tokio::spawn`ed.
///
/// Implemented by [`AsyncOpenAiClient`](crate::AsyncOpenAiClient) (I/O-bound: awaiting the
/// server), by [`Blocking`] around any blocking [`Generator`] (CPU-bound: a local
/// [`GgufModel`](crate::GgufModel) runs on tokio's blocking threads), and by `&T` and
/// `Arc<T>` of an implementation. The method returns `impl Future`, so the trait is used
/// through generics, not `dyn`.
///
/// ```
/// use pgraphrag_core::{GenParams, Prompt, Result};
/// use pgraphrag_llm::AsyncGenerator;
///
/// /// Answers with the prompt's last message, upper-cased: a toy async generator.
/// struct Shout;
/// impl AsyncGenerator for Shout {
///     async fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
///         Ok(p.messages().last().map(|m| m.content.to_uppercase()).unwrap_or_default())
///     }
/// }
///
/// /// Generic over any async generator, like code written against `Generator`.
/// async fn answer(g: &impl AsyncGenerator, q: &str) -> Result<String> {
///     g.generate(&Prompt::user(q), &GenParams::default()).await
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<()> {
/// assert_eq!(answer(&Shout, "hi").await?, "HI");
/// # Ok(()) }
/// ```
pub trait AsyncGenerator {
    /// Generates a completion of `prompt` (see [`Generator::generate`]).
    fn generate(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> impl Future<Output = Result<String>> + Send;
}

impl<T: AsyncGenerator + Sync> AsyncGenerator for &T {
    fn generate(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> impl Future<Output = Result<String>> + Send {
        (**self).generate(prompt, params)
    }
}

impl<T: AsyncGenerator + Send + Sync> AsyncGenerator for Arc<T> {
    fn generate(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> impl Future<Output = Result<String>> + Send {
        (**self).generate(prompt, params)
    }
}

/// Any blocking [`Generator`] as an [`AsyncGenerator`]: each call runs on tokio's blocking
/// thread pool (`tokio::task::spawn_blocking`), so a local model's CPU-bound generation does
/// not stall the runtime's worker threads. Cheap to clone (the generator is shared).
///
/// Awaiting it outside a tokio runtime is an [`Error::InvalidInput`], not a panic; a panic
/// inside the generator comes back as an [`Error::Backend`].
///
/// ```
/// use pgraphrag_core::{GenParams, Generator, Prompt, Result};
/// use pgraphrag_llm::{AsyncGenerator, Blocking};
///
/// struct Echo;
/// impl Generator for Echo {
///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
///         Ok(format!("echo: {}", p.messages()[0].content))
///     }
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<()> {
/// let g = Blocking::new(Echo); // e.g. Blocking::new(GgufModel::load(..)?)
/// let text = g.generate(&Prompt::user("hi"), &GenParams::default()).await?;
/// assert_eq!(text, "echo: hi");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Blocking<G>(pub Arc<G>);

impl<G> Blocking<G> {
    /// Wraps `generator`.
    pub fn new(generator: G) -> Self {
        Blocking(Arc::new(generator))
    }

    /// The wrapped generator, for its blocking methods.
    ///
    /// ```
    /// # use pgraphrag_core::{GenParams, Generator, Prompt, Result};
    /// # struct Echo;
    /// # impl Generator for Echo {
    /// #     fn generate(&self, _: &Prompt, _: &GenParams) -> Result<String> { Ok("e".into()) }
    /// # }
    /// let g = pgraphrag_llm::Blocking::new(Echo);
    /// assert_eq!(g.get().generate(&Prompt::user("x"), &GenParams::default()).unwrap(), "e");
    /// ```
    pub fn get(&self) -> &G {
        &self.0
    }
}

impl<G: Generator + Send + Sync + 'static> Blocking<G> {
    /// [`Generator::generate_batch`] on the blocking thread pool: one result per prompt, in
    /// order (a backend that batches, like [`GgufModel`](crate::GgufModel), serves them
    /// together). A missing runtime or a panic gives the same error for every prompt.
    ///
    /// ```
    /// # use pgraphrag_core::{GenParams, Generator, Prompt, Result};
    /// # struct Echo;
    /// # impl Generator for Echo {
    /// #     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> { Ok(p.messages()[0].content.clone()) }
    /// # }
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let g = pgraphrag_llm::Blocking::new(Echo);
    /// let out = g.generate_batch(vec![Prompt::user("a"), Prompt::user("b")], &GenParams::default()).await;
    /// assert_eq!(out.into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(), ["a", "b"]);
    /// # }
    /// ```
    pub async fn generate_batch(
        &self,
        prompts: Vec<Prompt>,
        params: &GenParams,
    ) -> Vec<Result<String>> {
        let n = prompts.len();
        let g = Arc::clone(&self.0);
        let params = params.clone();
        match run_blocking(move || g.generate_batch(&prompts, &params)).await {
            Ok(out) => out,
            Err(e) => {
                let msg = pgraphrag_core::error_chain(&e);
                (0..n)
                    .map(|_| Err(Error::Backend(msg.clone().into())))
                    .collect()
            }
        }
    }
}

impl<G> Clone for Blocking<G> {
    fn clone(&self) -> Self {
        Blocking(Arc::clone(&self.0))
    }
}

impl<G> From<Arc<G>> for Blocking<G> {
    fn from(generator: Arc<G>) -> Self {
        Blocking(generator)
    }
}

impl<G: Generator + Send + Sync + 'static> AsyncGenerator for Blocking<G> {
    fn generate(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> impl Future<Output = Result<String>> + Send {
        let g = Arc::clone(&self.0);
        let (prompt, params) = (prompt.clone(), params.clone());
        async move { run_blocking(move || g.generate(&prompt, &params)).await? }
    }
}

/// Runs `f` on the current tokio runtime's blocking pool.
async fn run_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let handle = tokio::runtime::Handle::try_current().map_err(|e| {
        Error::InvalidInput(format!(
            "pgraphrag_llm::Blocking must be awaited inside a tokio runtime: {e}"
        ))
    })?;
    handle
        .spawn_blocking(f)
        .await
        .map_err(|e| Error::Backend(format!("the blocking generator failed: {e}").into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    struct Echo;
    impl Generator for Echo {
        fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
            Ok(p.messages()[0].content.clone())
        }
    }

    struct Panics;
    impl Generator for Panics {
        fn generate(&self, _: &Prompt, _: &GenParams) -> Result<String> {
            panic!("generator bug")
        }
    }

    #[test]
    fn outside_a_runtime_is_an_error_not_a_panic() {
        let g = Blocking::new(Echo);
        let out = g
            .generate(&Prompt::user("x"), &GenParams::default())
            .now_or_never()
            .expect("fails at once");
        assert!(
            matches!(&out, Err(Error::InvalidInput(m)) if m.contains("tokio runtime")),
            "{out:?}"
        );
    }

    #[tokio::test]
    async fn runs_on_the_blocking_pool_and_reports_panics() {
        let g = Blocking::new(Echo);
        let p = GenParams::default();
        assert_eq!(g.generate(&Prompt::user("a"), &p).await.unwrap(), "a");
        // Through &T and Arc<T>, and spawned (the future is Send + 'static once owned).
        let shared = Arc::new(g.clone());
        let task = tokio::spawn(async move {
            let by_ref = &shared;
            by_ref
                .generate(&Prompt::user("b"), &GenParams::default())
                .await
        });
        assert_eq!(task.await.unwrap().unwrap(), "b");
        let out = g
            .generate_batch(vec![Prompt::user("c"), Prompt::user("d")], &p)
            .await;
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].as_deref().unwrap(), "d");

        let bad = Blocking::new(Panics);
        let e = bad.generate(&Prompt::user("x"), &p).await.unwrap_err();
        assert!(e.to_string().contains("failed"), "{e}");
        let all = bad.generate_batch(vec![Prompt::user("x"); 3], &p).await;
        assert!(all.iter().all(|r| r.is_err()) && all.len() == 3);
    }
}
