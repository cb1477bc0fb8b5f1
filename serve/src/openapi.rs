//! The OpenAPI contract, generated from the handlers' `#[utoipa::path]` annotations and the request
//! and response types (served at `/openapi.json`, checked by schemathesis: docs/serve.md).

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::errors::{ErrorBody, ErrorDetail};
use super::handlers as h;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "fpdb",
        description = "Real-time near-duplicate detection over HTTP: verified text near-duplicates (SimHash + exact Jaccard) unioned with exact DOI and title + year matches. Request bodies may be sent with `Content-Encoding: gzip` (limits apply to the decompressed size too). Errors are JSON with a stable `code` (docs/serve.md).",
    ),
    paths(
        h::put_document,
        h::post_documents,
        h::post_duplicates,
        h::post_duplicates_batch,
        h::get_document,
        h::post_documents_get,
        h::delete_document,
        h::post_documents_delete,
        h::get_group,
        h::get_document_duplicates,
        h::list_documents,
        h::list_groups,
        h::post_decision,
        h::get_decisions,
        h::delete_decision,
        h::get_group_by_key,
        h::get_review,
        h::get_stats,
        h::post_admin_backup,
        h::healthz,
        h::metrics,
        h::openapi_json,
    ),
    components(schemas(ErrorBody, ErrorDetail, super::schemas::DedupParam, super::schemas::WhereValue, fpdb::ReviewOrder)),
    modifiers(&Bearer),
)]
pub struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The token of the server's --token-file; required on writes, and on reads with --token-for-reads",
                    ))
                    .build(),
            ),
        );
    }
}

/// The contract as JSON text.
pub fn json() -> String {
    ApiDoc::openapi().to_pretty_json().unwrap_or_default()
}
