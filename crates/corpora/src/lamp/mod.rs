//! LaMP-format tasks built from real corpora: one question per target document, its profile
//! the author's other documents (only earlier ones where the data has times), a seeded split
//! of the authors into train, dev and test, and the gold outputs.
//!
//! * [`lamp4`] (news headline generation) and [`lamp6`] (email subject generation) from
//!   [`AuthoredDoc`](crate::AuthoredDoc)s;
//! * [`lamp3_from_split`] (product rating) from a PGraphRAG split;
//! * [`lamp3_from_movielens`] (movie rating) from MovieLens-100K.
//!
//! Every builder is deterministic: the same input and [`BuildOptions`] give the same output.

mod authored;
mod build;
mod ratings;

pub(crate) use authored::select;
pub use authored::{lamp4, lamp6};
pub use build::{
    BuildOptions, LAMP3_PREFIX, LAMP4_PREFIX, LAMP6_PREFIX, LampBuild, LampSet, SetStats,
    SplitName, SplitRatio, input, split_users,
};
pub use ratings::{
    MovieLens, MovieRating, lamp3_from_movielens, lamp3_from_split, movie_description,
    read_movielens,
};
