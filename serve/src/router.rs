//! Routes and the middleware stack (metrics and request ids outside, then admission, then auth).

use std::sync::Arc;

use axum::routing::{delete, get, post, put};
use axum::{middleware, Router};

use super::handlers as h;
use super::layers;
use super::limits;
use super::review;
use super::state::AppState;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/v1/documents/{key}",
            put(h::put_document).get(h::get_document).delete(h::delete_document),
        )
        .route("/v1/documents/{key}/duplicates", get(h::get_document_duplicates))
        .route("/v1/documents", post(h::post_documents).get(h::list_documents))
        .route("/v1/documents:get", post(h::post_documents_get))
        .route("/v1/documents:delete", post(h::post_documents_delete))
        .route("/v1/duplicates", post(h::post_duplicates))
        .route("/v1/duplicates:batch", post(h::post_duplicates_batch))
        .route("/v1/groups/{id}", get(h::get_group))
        .route("/v1/groups", get(h::list_groups))
        .route("/v1/decisions", post(h::post_decision).get(h::get_decisions))
        .route("/v1/decisions/{a}/{b}", delete(h::delete_decision))
        .route("/v1/groups/by-key/{key}", get(h::get_group_by_key))
        .route("/v1/review", get(h::get_review))
        .route("/review", get(review::page))
        .route("/review/{file}", get(review::asset))
        .route("/v1/stats", get(h::get_stats))
        .route("/v1/admin/backup", post(h::post_admin_backup))
        .route("/healthz", get(h::healthz))
        .route("/metrics", get(h::metrics))
        .route("/openapi.json", get(h::openapi_json))
        .fallback(h::not_found)
        .method_not_allowed_fallback(h::method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), layers::require_token))
        .layer(middleware::from_fn_with_state(state.clone(), limits::admit))
        .layer(middleware::from_fn_with_state(state.clone(), layers::track))
        .with_state(state)
}
