//! The key file: which bearer key belongs to which tenant.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::{Error, Result};

/// The tenants and their API keys, read from a TOML file with one table per tenant:
///
/// ```toml
/// [tenants.acme]
/// keys = ["acme-key-1", "acme-key-2"]
/// ```
///
/// ```
/// let keys = pgraphrag_serve::Keys::parse("[tenants.acme]\nkeys = [\"acme-key-1\"]\n", "KEYS.toml").unwrap();
/// assert_eq!(keys.tenant("acme-key-1"), Some("acme"));
/// assert_eq!(keys.tenant("nope"), None);
/// let shared = "[tenants.a]\nkeys = [\"same-key-1\"]\n[tenants.b]\nkeys = [\"same-key-1\"]\n";
/// assert!(pgraphrag_serve::Keys::parse(shared, "KEYS.toml").is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Keys {
    by_key: HashMap<String, String>,
    tenants: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tenants: HashMap<String, TenantKeys>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantKeys {
    keys: Vec<String>,
}

impl Keys {
    /// Reads and checks a key file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Keys {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Keys::parse(&text, &path.display().to_string())
    }

    /// Parses a key file's text (`name` is for messages). Refuses an empty file, an empty
    /// tenant name or key, a key shorter than 8 characters and a key given to two tenants.
    pub fn parse(text: &str, name: &str) -> Result<Self> {
        let bad = |message: String| Error::Keys {
            path: name.to_string(),
            message,
        };
        let file: File = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut keys = Keys::default();
        let mut tenants: Vec<_> = file.tenants.into_iter().collect();
        tenants.sort_by(|a, b| a.0.cmp(&b.0));
        for (tenant, t) in tenants {
            if tenant.trim().is_empty() {
                return Err(bad("a tenant has an empty name".into()));
            }
            if t.keys.is_empty() {
                return Err(bad(format!("tenant {tenant:?} has no key")));
            }
            for k in t.keys {
                if k.trim().len() < 8 {
                    return Err(bad(format!(
                        "a key of tenant {tenant:?} is shorter than 8 characters"
                    )));
                }
                if let Some(other) = keys.by_key.insert(k, tenant.clone()) {
                    return Err(bad(format!(
                        "one key is given to tenants {other:?} and {tenant:?}"
                    )));
                }
            }
            keys.tenants.push(tenant);
        }
        if keys.tenants.is_empty() {
            return Err(bad("no tenant: add a [tenants.NAME] table with keys".into()));
        }
        Ok(keys)
    }

    /// The tenant a key belongs to.
    pub fn tenant(&self, key: &str) -> Option<&str> {
        self.by_key.get(key).map(String::as_str)
    }

    /// Every tenant, by name.
    pub fn tenants(&self) -> &[String] {
        &self.tenants
    }
}
