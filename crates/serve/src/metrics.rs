//! Request counters and latency histograms in the Prometheus text format (`GET /metrics`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// A gauge for [`Metrics::render`]: its name, its help text, and (labels, value) pairs
/// (labels written as Prometheus does: `{tenant="acme"}`, or empty).
pub type Gauge<'a> = (&'a str, &'a str, Vec<(String, f64)>);

/// The service's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    /// (route, method, status) -> requests.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// route -> latency histogram.
    latency: Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    /// Counts one request.
    pub fn record(&self, route: &str, method: &str, status: u16, took: Duration) {
        if let Ok(mut r) = self.requests.lock() {
            *r.entry((route.to_string(), method.to_string(), status))
                .or_default() += 1;
        }
        if let Ok(mut l) = self.latency.lock() {
            let h = l.entry(route.to_string()).or_default();
            let s = took.as_secs_f64();
            for (i, &b) in BUCKETS.iter().enumerate() {
                if s <= b {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += s;
        }
    }

    /// The Prometheus text exposition, with `gauges` (name, help, labelled values) appended.
    ///
    /// ```
    /// let m = pgraphrag_serve::metrics::Metrics::default();
    /// m.record("/v1/context", "POST", 200, std::time::Duration::from_micros(300));
    /// let text = m.render(&[]);
    /// assert!(text.contains("pgraphrag_requests_total{route=\"/v1/context\",method=\"POST\",status=\"200\"} 1"));
    /// assert!(text.contains("pgraphrag_request_seconds_bucket{route=\"/v1/context\",le=\"0.0005\"} 1"));
    /// ```
    pub fn render(&self, gauges: &[Gauge<'_>]) -> String {
        let mut out = String::new();
        out.push_str("# HELP pgraphrag_requests_total Requests answered.\n");
        out.push_str("# TYPE pgraphrag_requests_total counter\n");
        if let Ok(r) = self.requests.lock() {
            for ((route, method, status), n) in r.iter() {
                let _ = writeln!(
                    out,
                    "pgraphrag_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP pgraphrag_request_seconds Request latency.\n");
        out.push_str("# TYPE pgraphrag_request_seconds histogram\n");
        if let Ok(l) = self.latency.lock() {
            for (route, h) in l.iter() {
                for (i, b) in BUCKETS.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "pgraphrag_request_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {}",
                        h.counts[i]
                    );
                }
                let _ = writeln!(
                    out,
                    "pgraphrag_request_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                    h.count
                );
                let _ = writeln!(
                    out,
                    "pgraphrag_request_seconds_sum{{route=\"{route}\"}} {}",
                    h.sum
                );
                let _ = writeln!(
                    out,
                    "pgraphrag_request_seconds_count{{route=\"{route}\"}} {}",
                    h.count
                );
            }
        }
        for (name, help, values) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for (labels, v) in values {
                let _ = writeln!(out, "{name}{labels} {v}");
            }
        }
        out
    }
}
