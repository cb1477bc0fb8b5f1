//! Administration: the live backup (`POST /v1/admin/backup`), behind the token as writes are.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};

use super::body::body_of;
use super::{blocking, json, AppResult};
use crate::errors::ErrorBody;
use crate::schemas::{parse_json, BackupIn};
use crate::state::AppState;

/// A consistent copy of the database into a new directory on the server (`Db::backup`), made
/// while the server goes on serving and writing; answers when the copy is complete and durable.
#[utoipa::path(post, path = "/v1/admin/backup", tag = "service",
    request_body(content = BackupIn, content_type = "application/json"),
    responses(
        (status = 200, description = "The copy is complete and durable", body = fpdb::BackupReport),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 409, description = "The directory exists", body = ErrorBody),
        (status = 500, description = "Storage error (nothing is left at `dir`)", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn post_admin_backup(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let b: BackupIn = parse_json(&body)?;
    let db = s.db.clone();
    let r = blocking(move || Ok(db.backup(&b.dir)?)).await?;
    Ok(json(StatusCode::OK, &r))
}
