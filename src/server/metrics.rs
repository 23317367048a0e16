//! Prometheus metrics of the service, in the text exposition format.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::contract::{Decision, Outcome, Stage};
use crate::reload::ReloadReport;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabel {
    /// The rule's id as the ruleset holds it: counting a fired rule copies no text.
    rule: std::sync::Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabel {
    version: String,
}

/// Every metric the service exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    decisions: Family<OutcomeLabel, Counter>,
    rule_fired: Family<RuleLabel, Counter>,
    guard_vetoes: Family<RuleLabel, Counter>,
    model_calls: Counter,
    model_errors: Family<KindLabel, Counter>,
    model_latency: Histogram,
    decision_latency: Histogram,
    reloads: Family<ResultLabel, Counter>,
    last_reload_ok: Gauge,
    ruleset: Family<VersionLabel, Gauge>,
    bad_requests: Counter,
    busy: Counter,
    rules_read_bytes: Counter,
    watcher_up: Gauge,
    connections: Gauge,
    connections_closed: Family<ReasonLabel, Counter>,
    decision_log_dropped: Counter,
    shadow_decisions: Family<ResultLabel, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("turnout");
        let m = Metrics {
            decisions: Family::default(),
            rule_fired: Family::default(),
            guard_vetoes: Family::default(),
            model_calls: Counter::default(),
            model_errors: Family::default(),
            // 1 ms .. ~33 s
            model_latency: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            // 5 µs .. ~20 s: rules-only decisions take microseconds.
            decision_latency: Histogram::new(exponential_buckets(0.000_005, 2.5, 18)),
            reloads: Family::default(),
            last_reload_ok: Gauge::default(),
            ruleset: Family::default(),
            bad_requests: Counter::default(),
            busy: Counter::default(),
            rules_read_bytes: Counter::default(),
            watcher_up: Gauge::default(),
            connections: Gauge::default(),
            connections_closed: Family::default(),
            decision_log_dropped: Counter::default(),
            shadow_decisions: Family::default(),
            registry: Registry::default(),
        };
        registry.register("decisions", "Decisions by outcome", m.decisions.clone());
        registry.register(
            "rule_fired",
            "Pre-rules and search rules that fired",
            m.rule_fired.clone(),
        );
        registry.register(
            "guard_vetoes",
            "Calls dropped by each post-guard",
            m.guard_vetoes.clone(),
        );
        registry.register("model_calls", "Router model calls", m.model_calls.clone());
        registry.register(
            "model_errors",
            "Router model failures by kind (each ended in plain chat)",
            m.model_errors.clone(),
        );
        registry.register(
            "model_latency_seconds",
            "Router model call latency",
            m.model_latency.clone(),
        );
        registry.register(
            "decision_latency_seconds",
            "Time to decide one message",
            m.decision_latency.clone(),
        );
        registry.register(
            "reloads",
            "Rule reload attempts that changed or refused the rules",
            m.reloads.clone(),
        );
        registry.register(
            "last_reload_successful",
            "1 if the last reload attempt gave valid rules",
            m.last_reload_ok.clone(),
        );
        registry.register(
            "ruleset_info",
            "The ruleset version serving (value 1)",
            m.ruleset.clone(),
        );
        registry.register(
            "bad_requests",
            "Requests refused as malformed",
            m.bad_requests.clone(),
        );
        registry.register(
            "busy",
            "Requests answered 503 busy because the memory budget of bodies in flight (--body-budget) was spent",
            m.busy.clone(),
        );
        registry.register(
            "rules_read_bytes",
            "Bytes of rule files read by reloads (still while nothing changes)",
            m.rules_read_bytes.clone(),
        );
        registry.register(
            "watcher_up",
            "1 while changes to the rules directory are being seen",
            m.watcher_up.clone(),
        );
        registry.register(
            "connections",
            "Client connections open now",
            m.connections.clone(),
        );
        registry.register(
            "connections_closed",
            "Connections closed by the server, by reason: idle (the idle timeout), evicted (room for a new one at --max-connections), refused (at the cap with every connection busy)",
            m.connections_closed.clone(),
        );
        registry.register(
            "decision_log_dropped",
            "Decision log lines dropped: the queue was full (--decision-log-queue, --decision-log-queue-bytes) or the line could not be written",
            m.decision_log_dropped.clone(),
        );
        registry.register(
            "shadow_decisions",
            "Live requests the shadow rules (--shadow) decided, by result: same, different (what the user would see differs), dropped (the queue was full, --shadow-queue), unavailable (no valid shadow ruleset)",
            m.shadow_decisions.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Counts one decision.
    pub fn decision(&self, d: &Decision, seconds: f64) {
        let outcome = match d.outcome {
            Outcome::Chat => "chat",
            Outcome::Skill => "skill",
            Outcome::Tool => "tool",
        };
        self.decisions
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
        self.decision_latency.observe(seconds);
        for step in &d.trace {
            let Some(rule) = &step.rule else { continue };
            let label = RuleLabel { rule: rule.clone() };
            match step.stage {
                Stage::Guard => self.guard_vetoes.get_or_create(&label).inc(),
                _ => self.rule_fired.get_or_create(&label).inc(),
            };
        }
        if let Some(call) = &d.model_call {
            self.model_calls.inc();
            self.model_latency.observe(call.latency.as_secs_f64());
            if let Some(kind) = call.error {
                self.model_errors.get_or_create(&KindLabel { kind }).inc();
            }
        }
    }

    /// Counts a decision log line dropped.
    pub fn decision_log_dropped(&self) {
        self.decision_log_dropped.inc();
    }

    /// Counts one request the shadow rules decided (or could not): `same`, `different`,
    /// `dropped`, `unavailable`.
    pub fn shadow_decision(&self, result: &'static str) {
        self.shadow_decisions
            .get_or_create(&ResultLabel { result })
            .inc();
    }

    /// Makes the shadow's counters of these results (at 0), so that no later count adds a label:
    /// adding one takes the family's write lock, which the shadow's idle-priority thread must
    /// never hold while a request waits for it.
    pub fn shadow_results(&self, results: &[&'static str]) {
        for &result in results {
            drop(self.shadow_decisions.get_or_create(&ResultLabel { result }));
        }
    }

    /// Counts a refused request.
    pub fn bad_request(&self) {
        self.bad_requests.inc();
    }

    /// Counts a request refused because the body budget was spent.
    pub fn busy(&self) {
        self.busy.inc();
    }

    /// Records a reload attempt (unchanged directories are not counted).
    pub fn reload(&self, r: &ReloadReport) {
        self.last_reload_ok.set(i64::from(r.ok));
        if r.changed || !r.ok {
            let result = if r.ok { "success" } else { "failure" };
            self.reloads.get_or_create(&ResultLabel { result }).inc();
        }
        if let Some(version) = &r.version {
            self.ruleset.clear();
            self.ruleset
                .get_or_create(&VersionLabel {
                    version: version.clone(),
                })
                .set(1);
        }
    }

    /// Counts bytes of rule files read.
    pub fn rules_read(&self, bytes: u64) {
        self.rules_read_bytes.inc_by(bytes);
    }

    /// A connection was accepted.
    pub fn connection_opened(&self) {
        self.connections.inc();
    }

    /// A connection ended.
    pub fn connection_closed(&self) {
        self.connections.dec();
    }

    /// The server closed `n` connections for `reason`.
    pub fn connections_closed(&self, reason: &'static str, n: usize) {
        if n > 0 {
            self.connections_closed
                .get_or_create(&ReasonLabel { reason })
                .inc_by(n as u64);
        }
    }

    /// The text exposition, with the watcher's state as it is now.
    pub fn render(&self, watcher_up: bool) -> String {
        self.watcher_up.set(i64::from(watcher_up));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
