//! `GET /openapi.json`: the OpenAPI document, derived from the handlers' annotations and the
//! bodies' types (utoipa), so it cannot drift from the code.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "pgraphrag serve",
        description = "Personalized context (PGraphRAG's user and neighbour scopes) and \
                       personalized OpenAI-compatible chat completions over a live profile \
                       index. See docs/serve.md."
    ),
    paths(
        crate::routes::put_document,
        crate::routes::delete_document,
        crate::routes::delete_user,
        crate::routes::context,
        crate::routes::chat_completions,
        crate::routes::healthz,
        crate::routes::metrics,
        openapi,
    ),
    modifiers(&Bearer)
)]
struct Api;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        let c = api.components.get_or_insert_with(Default::default);
        c.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A key of the server's key file (KEYS.toml); it names the tenant",
                    ))
                    .build(),
            ),
        );
    }
}

/// The service's OpenAPI document (what `GET /openapi.json` answers).
///
/// ```
/// let doc = pgraphrag_serve::openapi::document();
/// assert!(doc.paths.paths.contains_key("/v1/context"));
/// ```
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = Api::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "The OpenAPI 3.1 document of this service", body = Object)))]
pub(crate) async fn openapi() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(document())
}
