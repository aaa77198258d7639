use serde::{Deserialize, Serialize};

/// One authored document: a review, a post, an email. The unit every profile is made of.
///
/// ```
/// let e = pgraphrag_core::Entry { author: "u1".into(), item: "p1".into(), title: Some("Great".into()),
///     text: Some("Loved it".into()), ..Default::default() };
/// assert_eq!(e.title_text(), "Great Loved it");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Stable id of the entry within its corpus (for PGraphRAG, the `doc_id`).
    pub id: usize,
    /// Who wrote it (user id).
    pub author: String,
    /// What it is about (product id, hotel id, ...).
    pub item: String,
    /// Title, if any (PGraphRAG: missing or empty titles are `None`).
    pub title: Option<String>,
    /// Body text, if any.
    pub text: Option<String>,
    /// Rating, if any.
    pub rating: Option<f64>,
    /// Time as seconds since the Unix epoch, if known (used by recency ranking).
    pub time: Option<i64>,
}

impl Entry {
    /// PGraphRAG's document text: `f"{title} {text}"`, where a missing field is the string
    /// `None`, exactly as the released notebook formats it ([`DocText::Notebook`]).
    pub fn title_text(&self) -> String {
        self.document(DocText::Notebook)
    }

    /// The document retrievers see for this entry under `how` (see [`DocText`]).
    ///
    /// ```
    /// use pgraphrag_core::{DocText, Entry};
    /// let e = Entry { text: Some("Loved it".into()), ..Default::default() };
    /// assert_eq!(e.document(DocText::Notebook), "None Loved it");
    /// assert_eq!(e.document(DocText::Clean), "Loved it");
    /// ```
    pub fn document(&self, how: DocText) -> String {
        how.render(self.title.as_deref(), self.text.as_deref())
    }
}

/// How a review's title and text become the one document a retriever ranks.
///
/// The released PGraphRAG code formats `f"{title} {text}"`, so a missing field becomes the
/// token `None` (and the query "none" matches every review without a title). The released
/// recipe keeps that for byte-identical rankings; the clean recipe and the live index leave
/// missing fields out.
///
/// ```
/// use pgraphrag_core::DocText;
/// assert_eq!(DocText::Notebook.render(None, Some("b")), "None b");
/// assert_eq!(DocText::Clean.render(Some("a"), Some("b")), "a b");
/// assert_eq!(DocText::Clean.render(Some(""), Some("b")), "b");
/// assert_eq!(DocText::Clean.render(None, None), "");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocText {
    /// `f"{title} {text}"` with a missing field written `None` (the released notebook).
    #[default]
    Notebook,
    /// The present, non-empty fields joined by one space; nothing for a missing field.
    Clean,
}

impl DocText {
    /// The document of a `title` and a `text`.
    pub fn render(self, title: Option<&str>, text: Option<&str>) -> String {
        match self {
            DocText::Notebook => format!("{} {}", title.unwrap_or("None"), text.unwrap_or("None")),
            DocText::Clean => match (
                title.filter(|t| !t.is_empty()),
                text.filter(|t| !t.is_empty()),
            ) {
                (Some(a), Some(b)) => format!("{a} {b}"),
                (Some(a), None) | (None, Some(a)) => a.to_string(),
                (None, None) => String::new(),
            },
        }
    }
}

/// An item (product) id, keeping its JSON type: `"123"` and `123` are different items, as
/// they are for the released Python code. Serialises untagged (a JSON string or integer).
/// The default is the empty string id.
///
/// ```
/// use pgraphrag_core::ItemId;
/// assert_ne!(ItemId::from("123"), ItemId::Int(123));
/// assert_eq!(ItemId::Int(123).to_string(), "123");
/// assert_eq!(ItemId::Int(123).normalized(), ItemId::from("123"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ItemId {
    /// A JSON string id.
    Str(String),
    /// A JSON integer id.
    Int(i64),
}

impl Default for ItemId {
    fn default() -> Self {
        ItemId::Str(String::new())
    }
}

impl ItemId {
    /// The id as a string item ([`ItemId::Int`] becomes its decimal text), the "clean" choice
    /// where `123` and `"123"` are one item.
    pub fn normalized(&self) -> ItemId {
        match self {
            ItemId::Str(_) => self.clone(),
            ItemId::Int(i) => ItemId::Str(i.to_string()),
        }
    }
}

impl std::fmt::Display for ItemId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemId::Str(s) => f.write_str(s),
            ItemId::Int(i) => write!(f, "{i}"),
        }
    }
}

impl From<&str> for ItemId {
    fn from(s: &str) -> Self {
        ItemId::Str(s.to_string())
    }
}
impl From<String> for ItemId {
    fn from(s: String) -> Self {
        ItemId::Str(s)
    }
}
impl From<i64> for ItemId {
    fn from(i: i64) -> Self {
        ItemId::Int(i)
    }
}

/// One retrieved entry of a [`RankedProfile`]: the entry, its item id with the JSON type, and
/// the retriever's score (`None` when it was not scored, e.g. the released notebook's single
/// unranked neighbour or the random review).
///
/// ```
/// let r = pgraphrag_core::RankedEntry::new(pgraphrag_core::Entry::default(), Some(0.5));
/// assert_eq!((r.item.to_string(), r.score), (String::new(), Some(0.5)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankedEntry {
    /// The entry (`entry.item` is the item id's text).
    pub entry: Entry,
    /// The item id with its JSON type.
    pub item: ItemId,
    /// The retriever's score, if ranked.
    pub score: Option<f64>,
}

impl RankedEntry {
    /// An entry whose item id is `entry.item` as a string id.
    pub fn new(entry: Entry, score: Option<f64>) -> Self {
        let item = ItemId::Str(entry.item.clone());
        RankedEntry { entry, item, score }
    }
}

impl From<Entry> for RankedEntry {
    /// An unscored entry ([`RankedEntry::new`] with no score).
    fn from(entry: Entry) -> Self {
        RankedEntry::new(entry, None)
    }
}

/// One target's ranked profile, the value every stage passes on: retrieval produces it
/// (`pgraphrag_retrieval::profile::ProfileRanker`), prompts consume it
/// (`pgraphrag_prompt::pgraphrag::PromptBuilder`), and a PGraphRAG ranking-file record is its
/// file form (`pgraphrag_data::RankingRecord::{from_profile, to_profile}`).
///
/// `user` and `neighbors` are ranked best first; a prompt with `k` uses the first `k` of each.
///
/// ```
/// use pgraphrag_core::{Entry, RankedEntry, RankedProfile};
/// let p = RankedProfile {
///     user_id: "u1".into(),
///     neighbors: vec![RankedEntry::new(Entry { text: Some("Great".into()), ..Default::default() }, Some(1.0))],
///     ..Default::default()
/// };
/// assert_eq!(p.neighbor_entries().next().unwrap().text.as_deref(), Some("Great"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankedProfile {
    /// The target user's id.
    pub user_id: String,
    /// The target review (`profile[0]`): its fields are quoted in a prompt's direction and
    /// are the gold answers.
    pub target: Entry,
    /// The target item's id with its JSON type.
    pub target_item: ItemId,
    /// The user's own reviews of other items, best first.
    pub user: Vec<RankedEntry>,
    /// Other users' reviews of the target item, best first.
    pub neighbors: Vec<RankedEntry>,
    /// A review of a random other user, if drawn.
    pub random: Option<RankedEntry>,
}

impl RankedProfile {
    /// The entries of [`RankedProfile::user`], best first.
    pub fn user_entries(&self) -> impl Iterator<Item = &Entry> {
        self.user.iter().map(|r| &r.entry)
    }
    /// The entries of [`RankedProfile::neighbors`], best first.
    pub fn neighbor_entries(&self) -> impl Iterator<Item = &Entry> {
        self.neighbors.iter().map(|r| &r.entry)
    }
}

/// A value with a score. Retrievers return `Scored<usize>` (an index and its score).
///
/// ```
/// let s = pgraphrag_core::Scored::new(3usize, 0.5);
/// assert_eq!((s.item, s.score), (3, 0.5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scored<T> {
    /// The value.
    pub item: T,
    /// Its score; higher is better.
    pub score: f64,
}

impl<T> Scored<T> {
    /// Pairs `item` with `score`.
    pub fn new(item: T, score: f64) -> Self {
        Scored { item, score }
    }
}

/// Sorts best first by score (stable: equal scores keep their input order). NaN sorts last.
///
/// ```
/// let mut v = vec![pgraphrag_core::Scored::new(0, 1.0), pgraphrag_core::Scored::new(1, 2.0)];
/// pgraphrag_core::sort_desc(&mut v);
/// assert_eq!(v[0].item, 1);
/// ```
pub fn sort_desc<T>(v: &mut [Scored<T>]) {
    v.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or_else(|| a.score.is_nan().cmp(&b.score.is_nan()))
    });
}

/// A row-major matrix of embeddings: `rows() x dim`.
///
/// ```
/// let e = pgraphrag_core::Embeddings::new(2, vec![1.0, 0.0, 0.0, 1.0]).unwrap();
/// assert_eq!(e.rows(), 2);
/// assert_eq!(e.row(1), &[0.0, 1.0]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embeddings {
    dim: usize,
    data: Vec<f32>,
}

impl Embeddings {
    /// Builds from a flat row-major buffer; errors if `data.len()` is not a multiple of `dim`.
    pub fn new(dim: usize, data: Vec<f32>) -> crate::Result<Self> {
        if dim == 0 || !data.len().is_multiple_of(dim) {
            return Err(crate::Error::InvalidInput(format!(
                "embedding buffer of {} floats is not a whole number of rows of dimension {dim}",
                data.len()
            )));
        }
        Ok(Embeddings { dim, data })
    }
    /// The dimension of each row.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// How many rows.
    pub fn rows(&self) -> usize {
        self.data.len() / self.dim
    }
    /// Row `i`. Panics if `i >= rows()`, like slice indexing.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
    /// The flat row-major buffer.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }
    /// Consumes self and returns the flat row-major buffer.
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }
}

/// Who speaks a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system message.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

/// What a [`crate::Generator`] is given: chat messages, to be formatted with the model's
/// chat template, or a raw string sent as is (e.g. PGraphRAG's hand-written Llama wrapper).
///
/// ```
/// let p = pgraphrag_core::Prompt::user("Hi").with_system("Be brief.");
/// assert_eq!(p.messages().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Prompt {
    /// Messages to format with the model's chat template.
    Chat(Vec<Message>),
    /// A pre-formatted string, passed to the model verbatim.
    Raw(String),
}

impl Prompt {
    /// A one-message user prompt.
    pub fn user(content: impl Into<String>) -> Self {
        Prompt::Chat(vec![Message {
            role: Role::User,
            content: content.into(),
        }])
    }
    /// Puts a system message first (replacing any existing one). A raw prompt is unchanged.
    pub fn with_system(self, content: impl Into<String>) -> Self {
        match self {
            Prompt::Chat(mut m) => {
                m.retain(|x| x.role != Role::System);
                m.insert(
                    0,
                    Message {
                        role: Role::System,
                        content: content.into(),
                    },
                );
                Prompt::Chat(m)
            }
            raw => raw,
        }
    }
    /// The messages (empty for a raw prompt).
    pub fn messages(&self) -> &[Message] {
        match self {
            Prompt::Chat(m) => m,
            Prompt::Raw(_) => &[],
        }
    }
}

/// Generation parameters. `temperature == 0.0` means greedy decoding.
///
/// ```
/// let p = pgraphrag_core::GenParams { max_tokens: 32, ..Default::default() };
/// assert_eq!(p.temperature, 0.0);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenParams {
    /// Most new tokens to generate.
    pub max_tokens: usize,
    /// Sampling temperature; `0.0` is greedy.
    pub temperature: f64,
    /// Nucleus sampling mass; `None` disables it.
    pub top_p: Option<f64>,
    /// Seed of the sampler.
    pub seed: u64,
    /// Extra stop strings (the model's own end-of-turn tokens always stop).
    pub stop: Vec<String>,
}

impl Default for GenParams {
    fn default() -> Self {
        GenParams {
            max_tokens: 256,
            temperature: 0.0,
            top_p: None,
            seed: 42,
            stop: Vec::new(),
        }
    }
}

/// The three parameters of `rank_bm25.BM25Okapi` (same names, same defaults), shared by the exact
/// per-list BM25 of `pgraphrag-retrieval` and the at-scale index of `pgraphrag-graph`.
///
/// ```
/// let p = pgraphrag_core::Bm25Params::default();
/// assert_eq!((p.k1, p.b, p.epsilon), (1.5, 0.75, 0.25));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    /// Term-frequency saturation (`k1`, default 1.5).
    pub k1: f64,
    /// Length normalisation (`b`, default 0.75).
    pub b: f64,
    /// Floor for negative idfs as a fraction of the average idf (`epsilon`, default 0.25).
    pub epsilon: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.5,
            b: 0.75,
            epsilon: 0.25,
        }
    }
}
