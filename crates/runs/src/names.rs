//! Spec fields stored by their command-line name (`"int8"`, `"-encoding"`, `"cuda:1"`), for
//! the types of lower crates that do not derive serde themselves.
use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

/// A type with one stable name per value.
pub(crate) trait Named: Sized {
    fn to_name(&self) -> String;
    fn from_name(s: &str) -> Result<Self, String>;
}

impl Named for pgraphrag_retrieval::dense::Precision {
    fn to_name(&self) -> String {
        self.name().into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        s.parse()
            .map_err(|e: pgraphrag_retrieval::Error| e.to_string())
    }
}

impl Named for pgraphrag_train::Ablation {
    fn to_name(&self) -> String {
        self.name().into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        Self::parse(s).map_err(|e| e.to_string())
    }
}

impl Named for pgraphrag_core::DeviceChoice {
    fn to_name(&self) -> String {
        self.to_string()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        s.parse()
    }
}

pub(crate) fn serialize<T: Named, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_name())
}

pub(crate) fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let s = String::deserialize(d)?;
    T::from_name(&s).map_err(D::Error::custom)
}

impl Named for pgraphrag_llm::LoraTarget {
    fn to_name(&self) -> String {
        self.name().into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        Self::from_name(s).ok_or_else(|| format!("unknown LoRA target {s:?}"))
    }
}

/// A list of [`Named`] values, as a list of names.
pub(crate) mod seq {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _, ser::SerializeSeq};

    use super::Named;

    pub(crate) fn serialize<T: Named, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&x.to_name())?;
        }
        seq.end()
    }

    pub(crate) fn deserialize<'de, T: Named, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<T>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|s| T::from_name(s).map_err(D::Error::custom))
            .collect()
    }
}

impl Named for pgraphrag_eval::multistage::RankerName {
    fn to_name(&self) -> String {
        self.name().into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        s.parse().map_err(|e: pgraphrag_eval::Error| e.to_string())
    }
}

impl Named for pgraphrag_eval::multistage::PrependStart {
    fn to_name(&self) -> String {
        use pgraphrag_eval::multistage::PrependStart as P;
        match self {
            P::Paper => "paper",
            P::All => "all",
            P::None => "none",
        }
        .into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        use pgraphrag_eval::multistage::PrependStart as P;
        match s {
            "paper" => Ok(P::Paper),
            "all" => Ok(P::All),
            "none" => Ok(P::None),
            other => Err(format!("prepend_start {other:?}: paper, all or none")),
        }
    }
}

/// An optional [`Named`] value, as a name or null.
pub(crate) mod option {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    use super::Named;

    pub(crate) fn serialize<T: Named, S: Serializer>(
        v: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(x) => s.serialize_some(&x.to_name()),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, T: Named, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| T::from_name(&s).map_err(D::Error::custom))
            .transpose()
    }
}

impl Named for pgraphrag_prompt::lamp::SummaryPlacement {
    fn to_name(&self) -> String {
        use pgraphrag_prompt::lamp::SummaryPlacement as P;
        match self {
            P::Prefix => "prefix",
            P::BeforeInput => "before-input",
        }
        .into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        use pgraphrag_prompt::lamp::SummaryPlacement as P;
        match s {
            "prefix" => Ok(P::Prefix),
            "before-input" => Ok(P::BeforeInput),
            other => Err(format!(
                "summary placement {other:?}: prefix or before-input"
            )),
        }
    }
}

impl Named for pgraphrag_metrics::rouge::RougeTokenizer {
    fn to_name(&self) -> String {
        use pgraphrag_metrics::rouge::RougeTokenizer as T;
        match self {
            T::Ascii => "ascii",
            T::Unicode => "unicode",
        }
        .into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        use pgraphrag_metrics::rouge::RougeTokenizer as T;
        match s {
            "ascii" => Ok(T::Ascii),
            "unicode" => Ok(T::Unicode),
            other => Err(format!("ROUGE tokenizer {other:?}: ascii or unicode")),
        }
    }
}

impl Named for pgraphrag_retrieval::dense::EncoderBackend {
    fn to_name(&self) -> String {
        use pgraphrag_retrieval::dense::EncoderBackend as B;
        match self {
            B::Native => "native",
            B::Candle => "candle",
        }
        .into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        use pgraphrag_retrieval::dense::EncoderBackend as B;
        match s {
            "native" => Ok(B::Native),
            "candle" => Ok(B::Candle),
            other => Err(format!("encoder backend {other:?}: native or candle")),
        }
    }
}

impl Named for pgraphrag_retrieval::dense::Pooling {
    fn to_name(&self) -> String {
        self.name().into()
    }
    fn from_name(s: &str) -> Result<Self, String> {
        s.parse()
            .map_err(|e: pgraphrag_retrieval::Error| e.to_string())
    }
}
