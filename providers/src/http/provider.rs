//! The one HTTP provider, generic over its wire protocol: a [`Wire`] says where a
//! protocol posts, with which headers, what body it sends and which mapper reads
//! the stream; [`HttpProvider`] is the [`Provider`] for any of them.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{ConfigError, HttpConfig, HttpRequest, client, shown_body, stream_sse, unserializable};
use crate::sse::StreamMapper;
use crate::{BoxFuture, ModelRequest, Provider, StreamCall};
use xcsh_machine::ProviderError;

/// A wire protocol: everything that tells one HTTP provider from another.
pub trait Wire: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// The provider's name as the user selects it ([`Provider::name`]).
    const NAME: &'static str;
    /// The endpoint path under the base URL.
    const PATH: &'static str;
    /// Reads the protocol's SSE events (a new one for each stream).
    type Mapper: StreamMapper + Default + Send + 'static;

    /// The protocol's settings for `config` (chosen once, when the provider is made).
    fn for_config(config: &HttpConfig) -> Self;
    /// The body sent to `model` for `request`: borrowed, its fields declared in key
    /// order.
    fn body<'a>(&self, model: &'a str, request: &'a ModelRequest) -> impl Serialize + 'a;
    /// The protocol's fixed headers.
    fn headers() -> Vec<(String, String)> {
        Vec::new()
    }
    /// The header that carries the API key: `Authorization: Bearer KEY` unless the
    /// protocol says otherwise (OpenAI and the servers that speak its protocols).
    fn auth(key: &str) -> (String, String) {
        ("authorization".to_string(), format!("Bearer {key}"))
    }
}

/// The [`Provider`] of wire protocol `W` over real HTTP.
#[derive(Debug, Clone)]
pub struct HttpProvider<W> {
    config: Arc<HttpConfig>,
    client: reqwest::Client,
    /// The protocol's settings, chosen from the configuration by [`Wire::for_config`].
    pub wire: W,
}

impl<W: Wire> HttpProvider<W> {
    pub fn new(config: HttpConfig) -> Result<HttpProvider<W>, ConfigError> {
        Ok(HttpProvider {
            client: client()?,
            wire: W::for_config(&config),
            config: Arc::new(config),
        })
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// The body this provider sends for `request`.
    pub fn body<'a>(&'a self, request: &'a ModelRequest) -> impl Serialize + 'a {
        self.wire.body(&self.config.model, request)
    }
}

impl<W: Wire> Provider for HttpProvider<W> {
    fn name(&self) -> &str {
        W::NAME
    }

    fn render_request(&self, request: &ModelRequest) -> Value {
        shown_body(&self.body(request))
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    /// One POST of the body to the endpoint, streamed through the protocol's mapper
    /// into `sink`. The body is serialized here, straight to the bytes sent (its
    /// fields are declared in key order, so these are the bytes of
    /// [`shown_body`]'s value); the request's `max_output_tokens` is enforced by the
    /// client too.
    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        let StreamCall {
            request,
            sink,
            cancel,
            ..
        } = call;
        let body = serde_json::to_string(&self.body(&request)).map_err(unserializable);
        let client = self.client.clone();
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let mut headers = W::headers();
            if let Some(key) = &config.api_key {
                headers.push(W::auth(key));
            }
            let request = HttpRequest {
                url: config.endpoint(W::PATH),
                headers,
                body: body?,
                max_output_tokens: Some(request.max_output_tokens),
            };
            let mut mapper = W::Mapper::default();
            stream_sse(&client, &config, request, &mut mapper, &sink, &cancel).await
        })
    }
}
