//! Training checkpoints: one safetensors file holding the trainable parameters, the AdamW
//! moments and, in its metadata, where the run stands. Written to a temporary file and
//! renamed, so a checkpoint on disk is always whole.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use crate::error::{Result, TrainError};

const FORMAT: &str = "pgraphrag-train-checkpoint";
const VERSION: &str = "1";

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync, rename).
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    pgraphrag_data::write_atomic(path, |w| w.write_all(bytes)).map_err(|e| TrainError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// Where a run stands after a finished optimizer step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunState {
    /// Optimizer steps finished.
    pub step: u64,
    /// The epoch the next micro-batch belongs to.
    pub epoch: u64,
    /// The index (in that epoch's seeded order) of the next micro-batch.
    pub next_batch: u64,
    /// The best validation loss so far, as f32 bits (`None`: no validation yet).
    pub best_val: Option<f32>,
    /// Validations since the best one.
    pub evals_since_best: u64,
    /// The run stopped early (patience exhausted).
    pub stopped: bool,
    /// What the run is ([`crate::Objective::identity`] and the settings that fix its order).
    pub identity: String,
}

/// What a checkpoint holds.
pub(crate) struct Saved {
    pub params: Vec<Tensor>,
    pub m: Vec<Tensor>,
    pub v: Vec<Tensor>,
    pub adam_t: u64,
    pub state: RunState,
}

/// Writes a checkpoint: tensors `param/{name}`, `adam_m/{name}`, `adam_v/{name}`.
pub(crate) fn save(
    path: &Path,
    names: &[String],
    params: &[Tensor],
    (m, v, adam_t): (&[Tensor], &[Tensor], u64),
    st: &RunState,
) -> Result<()> {
    let mut tensors: Vec<(String, &Tensor)> = Vec::with_capacity(names.len() * 3);
    for (i, n) in names.iter().enumerate() {
        tensors.push((format!("param/{n}"), &params[i]));
        tensors.push((format!("adam_m/{n}"), &m[i]));
        tensors.push((format!("adam_v/{n}"), &v[i]));
    }
    let md = HashMap::from([
        ("format".to_string(), FORMAT.to_string()),
        ("format_version".into(), VERSION.into()),
        ("step".into(), st.step.to_string()),
        ("epoch".into(), st.epoch.to_string()),
        ("next_batch".into(), st.next_batch.to_string()),
        ("adam_t".into(), adam_t.to_string()),
        (
            "best_val_bits".into(),
            st.best_val
                .map_or("none".into(), |b| b.to_bits().to_string()),
        ),
        ("evals_since_best".into(), st.evals_since_best.to_string()),
        ("stopped".into(), st.stopped.to_string()),
        ("identity".into(), st.identity.clone()),
    ]);
    let bytes = safetensors::serialize(tensors.iter().map(|(n, t)| (n.as_str(), *t)), Some(md))
        .map_err(|e| TrainError::Checkpoint {
            path: path.to_path_buf(),
            reason: format!("serializing: {e}"),
        })?;
    write_file(path, &bytes)
}

/// Reads a checkpoint written by [`save`] for variables `names` with shapes `shapes`; every
/// inconsistency (not safetensors, truncated, another format, another run's identity, a
/// missing or mis-shaped tensor, non-finite values) is a [`TrainError::Checkpoint`].
/// Reads a safetensors file whole and returns its bytes and its metadata map; an unreadable
/// file is an I/O error, anything that is not safetensors goes through `bad` (the caller's
/// error for its kind of file: checkpoint or adapter).
pub(crate) fn read_with_metadata(
    path: &Path,
    bad: &dyn Fn(String) -> TrainError,
) -> Result<(Vec<u8>, HashMap<String, String>)> {
    let bytes = std::fs::read(path).map_err(|source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| {
        use safetensors::SafeTensorError as E;
        bad(match e {
            E::HeaderTooSmall | E::InvalidHeaderLength | E::MetadataIncompleteBuffer => format!(
                "truncated or padded: its {} bytes are not the header and the tensors its header \
                 describes ({e})",
                bytes.len()
            ),
            e => format!("not a readable safetensors file ({e})"),
        })
    })?;
    let md = meta.metadata().clone().unwrap_or_default();
    Ok((bytes, md))
}

/// [`read_with_metadata`] for a file of our own kind: metadata `format` must be `format` and
/// `format_version` be `version` (else `bad`'s error), and `base_model` be `base_model`
/// (else [`TrainError::BaseModelMismatch`], naming both).
pub(crate) fn read_for_model(
    path: &Path,
    bad: &dyn Fn(String) -> TrainError,
    (format, version): (&str, &str),
    base_model: &str,
) -> Result<(Vec<u8>, HashMap<String, String>)> {
    let (bytes, md) = read_with_metadata(path, bad)?;
    let get = |k: &str| meta_value(&md, k, bad);
    if get("format")? != format {
        return Err(bad(format!("metadata `format` is not `{format}`")));
    }
    let found = get("format_version")?;
    if found != version {
        return Err(bad(format!(
            "format version {found} (this build reads {version})"
        )));
    }
    let found = get("base_model")?;
    if found != base_model {
        return Err(TrainError::BaseModelMismatch {
            path: path.to_path_buf(),
            expected: base_model.to_string(),
            found,
        });
    }
    Ok((bytes, md))
}

/// Writes a K-RagRec file (the graph encoder or the "-Encoding" soft prompt): `tensors` with
/// metadata `md`, atomically; a serialization failure is [`TrainError::EncoderFile`].
pub(crate) fn write_encoder_file(
    path: &Path,
    tensors: &[(&str, &Tensor)],
    md: HashMap<String, String>,
) -> Result<()> {
    let bytes = safetensors::serialize(tensors.iter().copied(), Some(md)).map_err(|e| {
        TrainError::EncoderFile {
            path: path.to_path_buf(),
            reason: format!("serializing: {e}"),
        }
    })?;
    write_file(path, &bytes)
}

/// [`read_for_model`] for a K-RagRec file, which must also have been made over `features`
/// (else `bad`'s error, naming both).
pub(crate) fn read_for_features(
    path: &Path,
    bad: &dyn Fn(String) -> TrainError,
    format: (&str, &str),
    base_model: &str,
    features: &str,
) -> Result<(Vec<u8>, HashMap<String, String>)> {
    let (bytes, md) = read_for_model(path, bad, format, base_model)?;
    let f = meta_value(&md, "features", bad)?;
    if f != features {
        return Err(bad(format!(
            "trained on features `{f}`, not on `{features}`; use the index, sentence encoder and --ablation it was trained with"
        )));
    }
    Ok((bytes, md))
}

/// Removes tensor `key` from `tensors`: it must be there, be f32 of shape `shape` and hold
/// only finite values (else `bad`'s error, naming it).
pub(crate) fn take_tensor(
    tensors: &mut HashMap<String, Tensor>,
    key: &str,
    shape: &[usize],
    bad: &dyn Fn(String) -> TrainError,
) -> Result<Tensor> {
    let t = tensors
        .remove(key)
        .ok_or_else(|| bad(format!("tensor `{key}` is missing")))?;
    if t.dims() != shape || t.dtype() != DType::F32 {
        return Err(bad(format!(
            "tensor `{key}` is {:?} {:?}, expected f32 {shape:?}",
            t.dtype(),
            t.dims()
        )));
    }
    let finite = t
        .flatten_all()
        .and_then(|t| t.to_vec1::<f32>())
        .map(|v| v.iter().all(|x| x.is_finite()))
        .unwrap_or(false);
    if !finite {
        return Err(bad(format!("tensor `{key}` has non-finite values")));
    }
    Ok(t)
}

/// Metadata entry `k`, or `bad`'s error naming it as missing.
pub(crate) fn meta_value(
    md: &HashMap<String, String>,
    k: &str,
    bad: &dyn Fn(String) -> TrainError,
) -> Result<String> {
    md.get(k)
        .cloned()
        .ok_or_else(|| bad(format!("metadata `{k}` is missing")))
}

pub(crate) fn load(
    path: &Path,
    names: &[String],
    shapes: &[Vec<usize>],
    identity: &str,
    dev: &Device,
) -> Result<Saved> {
    let bad = |reason: String| TrainError::Checkpoint {
        path: path.to_path_buf(),
        reason,
    };
    let (bytes, md) = read_with_metadata(path, &bad)?;
    let get = |k: &str| meta_value(&md, k, &bad);
    if get("format")? != FORMAT || get("format_version")? != VERSION {
        return Err(bad(format!(
            "not a version-{VERSION} pgraphrag training checkpoint"
        )));
    }
    let found = get("identity")?;
    if found != identity {
        return Err(bad(format!(
            "it belongs to another run (`{found}`), not to this one (`{identity}`)"
        )));
    }
    let int = |k: &str| -> Result<u64> {
        get(k)?
            .parse()
            .map_err(|_| bad(format!("metadata `{k}` is not an integer")))
    };
    let best = get("best_val_bits")?;
    let best_val = match best.as_str() {
        "none" => None,
        s => Some(f32::from_bits(s.parse().map_err(|_| {
            bad("metadata `best_val_bits` is not an integer".into())
        })?)),
    };
    let state = RunState {
        step: int("step")?,
        epoch: int("epoch")?,
        next_batch: int("next_batch")?,
        best_val,
        evals_since_best: int("evals_since_best")?,
        stopped: get("stopped")? == "true",
        identity: found,
    };
    let adam_t = int("adam_t")?;
    let mut tensors = candle_core::safetensors::load_buffer(&bytes, dev)
        .map_err(|e| bad(format!("reading tensors: {e}")))?;
    let mut take = |prefix: &str, name: &str, shape: &[usize]| -> Result<Tensor> {
        take_tensor(&mut tensors, &format!("{prefix}/{name}"), shape, &bad)
    };
    let (mut params, mut m, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for (n, s) in names.iter().zip(shapes) {
        params.push(take("param", n, s)?);
        m.push(take("adam_m", n, s)?);
        v.push(take("adam_v", n, s)?);
    }
    if let Some(extra) = tensors.keys().next() {
        return Err(bad(format!("unexpected tensor `{extra}`")));
    }
    Ok(Saved {
        params,
        m,
        v,
        adam_t,
        state,
    })
}
