//! The API's metrics (`http_api_*`): requests and latency per route and status, SSE clients;
//! the middleware that records them (with the request timeout and CORS); `/metrics`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};
use types::EthSpec;

use crate::ApiContext;
use crate::error::HttpError;

/// Latency buckets (seconds): sub-millisecond reads of the head up to state downloads.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The API's metrics, registered in the node's registry.
#[derive(Debug, Clone)]
pub struct ApiMetrics {
    /// `http_api_requests_total{route, status}`.
    pub requests: IntCounterVec,
    /// `http_api_request_duration_seconds{route}`: time to the response head.
    pub latency: HistogramVec,
    /// `http_api_sse_clients`: open event streams.
    pub sse_clients: IntGauge,
    /// `http_api_sse_clients_dropped_total`: event streams closed because the client fell
    /// behind its buffer.
    pub sse_dropped: IntCounter,
    /// `http_api_sse_events_total{topic}`: events sent.
    pub sse_events: IntCounterVec,
    /// `http_api_request_timeouts_total`: requests answered 503 after the request timeout.
    pub timeouts: IntCounter,
}

impl ApiMetrics {
    /// Creates the metrics and registers them in `registry`.
    pub fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let requests = IntCounterVec::new(
            Opts::new(
                "http_api_requests_total",
                "Beacon API requests by route and status",
            ),
            &["route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_api_request_duration_seconds",
                "Beacon API time to the response head, by route",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["route"],
        )?;
        let sse_clients = IntGauge::new("http_api_sse_clients", "Open Beacon API event streams")?;
        let sse_dropped = IntCounter::new(
            "http_api_sse_clients_dropped_total",
            "Event streams closed because the client fell behind its buffer",
        )?;
        let sse_events = IntCounterVec::new(
            Opts::new("http_api_sse_events_total", "Events sent to event streams"),
            &["topic"],
        )?;
        let timeouts = IntCounter::new(
            "http_api_request_timeouts_total",
            "Beacon API requests answered 503 after the request timeout",
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(sse_clients.clone()))?;
        registry.register(Box::new(sse_dropped.clone()))?;
        registry.register(Box::new(sse_events.clone()))?;
        registry.register(Box::new(timeouts.clone()))?;
        Ok(Self {
            requests,
            latency,
            sse_clients,
            sse_dropped,
            sse_events,
            timeouts,
        })
    }
}

/// Around every request: CORS, the timeout, and the route's metrics.
pub(crate) async fn track<E: EthSpec>(
    State(ctx): State<Arc<ApiContext<E>>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let allow_origin = ctx.config.allow_origin.clone();
    if request.method() == Method::OPTIONS && allow_origin.is_some() {
        return cors(
            StatusCode::NO_CONTENT.into_response(),
            allow_origin.as_deref(),
        );
    }
    let start = Instant::now();
    let response = match tokio::time::timeout(ctx.config.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            ctx.metrics.timeouts.inc();
            HttpError::Unavailable(format!(
                "request timed out after {:?}",
                ctx.config.request_timeout
            ))
            .into_response()
        }
    };
    let elapsed = start.elapsed().as_secs_f64();
    ctx.metrics
        .latency
        .with_label_values(&[route.as_str()])
        .observe(elapsed);
    ctx.metrics
        .requests
        .with_label_values(&[route.as_str(), response.status().as_str()])
        .inc();
    cors(response, allow_origin.as_deref())
}

fn cors(mut response: Response, allow_origin: Option<&str>) -> Response {
    if let Some(origin) = allow_origin.and_then(|o| HeaderValue::from_str(o).ok()) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Content-Type, Accept, Eth-Consensus-Version"),
        );
    }
    response
}

fn registry_text(registry: &Registry) -> Response {
    let mut buffer = Vec::new();
    let encoder = TextEncoder::new();
    match encoder.encode(&registry.gather(), &mut buffer) {
        Ok(()) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, encoder.format_type().to_string())],
            buffer,
        )
            .into_response(),
        Err(e) => HttpError::internal(format!("metrics: {e}")).into_response(),
    }
}

/// `GET /metrics` on the API port.
pub(crate) async fn get_metrics<E: EthSpec>(State(ctx): State<Arc<ApiContext<E>>>) -> Response {
    registry_text(&ctx.metrics_registry)
}

/// `GET /metrics` on the metrics port.
pub(crate) async fn get_registry(State(registry): State<Registry>) -> Response {
    registry_text(&registry)
}
