//! Where a model runs or trains: the one device choice of every crate with a candle path
//! (the generator, the dense encoder, training), and the CLI's `--device` syntax.

/// The CPU, or an NVIDIA GPU by ordinal (which needs the using crate's `cuda` feature).
///
/// ```
/// use pgraphrag_core::DeviceChoice;
/// assert_eq!(DeviceChoice::default(), DeviceChoice::Cpu);
/// assert_eq!("cuda:1".parse::<DeviceChoice>(), Ok(DeviceChoice::Cuda(1)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum DeviceChoice {
    /// The CPU (the default). Threads: `RAYON_NUM_THREADS`, or all cores.
    #[default]
    Cpu,
    /// The CUDA device with this ordinal.
    Cuda(usize),
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;

    /// `cpu`, `cuda` (ordinal 0) or `cuda:N`.
    ///
    /// ```
    /// use pgraphrag_core::DeviceChoice;
    /// assert_eq!("cpu".parse::<DeviceChoice>(), Ok(DeviceChoice::Cpu));
    /// assert_eq!("cuda".parse::<DeviceChoice>(), Ok(DeviceChoice::Cuda(0)));
    /// assert!("gpu".parse::<DeviceChoice>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| format!("unknown device `{s}`: use cpu, cuda or cuda:N")),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    /// The form [`FromStr`](std::str::FromStr) reads: `cpu` or `cuda:N`.
    ///
    /// ```
    /// use pgraphrag_core::DeviceChoice;
    /// assert_eq!(DeviceChoice::Cuda(0).to_string(), "cuda:0");
    /// assert_eq!(DeviceChoice::Cpu.to_string().parse(), Ok(DeviceChoice::Cpu));
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}
