//! Routes, shared state and the middleware stack (metrics outside, auth inside).

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use axum::{middleware, Router};
use fpdb::Db;
use tokio::sync::Semaphore;

use super::auth::{self, Auth};
use super::handlers as h;
use super::metrics::{self, Metrics};
use super::writer::Writer;
use super::ServeConfig;

pub struct AppState {
    pub db: Db,
    pub writer: Arc<Writer>,
    pub metrics: Arc<Metrics>,
    pub auth: Auth,
    pub bulk: Arc<Semaphore>,
    pub cfg: ServeConfig,
}

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/v1/documents/{key}",
            put(h::put_document).get(h::get_document).delete(h::delete_document),
        )
        .route("/v1/documents", post(h::post_documents))
        .route("/v1/duplicates", post(h::post_duplicates))
        .route("/v1/groups/{id}", get(h::get_group))
        .route("/v1/stats", get(h::get_stats))
        .route("/healthz", get(h::healthz))
        .route("/metrics", get(h::metrics))
        .route("/openapi.json", get(h::openapi_json))
        .fallback(h::not_found)
        .method_not_allowed_fallback(h::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.cfg.max_body_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_token))
        .layer(middleware::from_fn_with_state(state.clone(), metrics::track))
        .with_state(state)
}
