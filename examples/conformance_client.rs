//! The client the official conformance suite drives (`conformance client --command ...`):
//! one binary for every scenario, chosen by `MCP_CONFORMANCE_SCENARIO`, the server's URL as
//! the last argument, the scenario's data (if any) as JSON in `MCP_CONFORMANCE_CONTEXT`.
//!
//! ```text
//! conformance/check-client.sh                      # every scenario, against the baselines
//! MCP_CONFORMANCE_SCENARIO=tools_call cargo run --example conformance_client -- http://127.0.0.1:3000/mcp
//! ```
//!
//! Each scenario does what an application would: connect (the client negotiates the revision
//! itself), list, call. Input requests are answered by handlers registered once: forms are
//! accepted with the schema's defaults, sampling answers with a fixed text, roots are empty.
//! Exit status 0 when the scenario's calls succeeded, 1 otherwise (the suite grades the wire,
//! not the exit status, except where a scenario expects the client to fail).

use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use switchyard_client::{
    Client, ClientBuilder, ClientError, CreateMessageResult, ElicitAction, ElicitResult, ElicitationModes,
    IdentityProvider, OAuthConfig,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance_client <server-url>");
        std::process::exit(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => {}
        Err(e) => {
            eprintln!("scenario {scenario}: {e}");
            std::process::exit(1);
        }
    }
}

/// A `Client` the elicitation handler can call back into (sep-2322 calls an unrelated tool
/// between the rounds of another call).
type Later = Arc<OnceLock<Client>>;

async fn run(scenario: &str, url: &str) -> Result<(), ClientError> {
    let later: Later = Arc::default();
    let mut builder = builder(scenario, later.clone());
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(scenario)?);
    }
    let client = builder.connect_http(url).await?;
    let _ = later.set(client.clone());
    let outcome = scenario_calls(scenario, &client).await;
    client.close().await;
    outcome
}

fn builder(scenario: &str, later: Later) -> ClientBuilder {
    let isolation = scenario == "sep-2322-client-request-state";
    ClientBuilder::new("switchyard-conformance-client", env!("CARGO_PKG_VERSION"))
        .on_elicitation(ElicitationModes::FormAndUrl, move |_request| {
            let later = later.clone();
            async move {
                // While this call waits for input, another call on the same client must carry
                // none of its inputResponses or requestState.
                if isolation && let Some(client) = later.get() {
                    client.call_tool("test_mrtr_unrelated", json!({})).await.map_err(|e| {
                        switchyard_client::McpError::internal(format!("the unrelated call failed: {e}"))
                    })?;
                }
                // Accept with no values typed in: the client fills the schema's defaults.
                Ok(ElicitResult { action: ElicitAction::Accept, content: Some(Map::new()) })
            }
        })
        .on_sampling(|_request| async {
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": { "type": "text", "text": "A sampled answer." },
                "model": "conformance-model",
                "stopReason": "endTurn"
            }))
            .expect("a valid CreateMessageResult"))
        })
        .on_roots(|| async { Ok(Vec::new()) })
}

/// Sign-in as the auth scenarios expect of a native app: a loopback redirect URI, the
/// suite's client ID metadata document URL, pre-registered credentials where the scenario
/// hands them over. The "user" is a GET of the authorization URL whose redirect is read, not
/// followed (the suite's authorization server redirects at once).
fn oauth(scenario: &str) -> Result<OAuthConfig, ClientError> {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ClientError::Protocol(format!("an HTTP client: {e}")))?;
    let mut config = OAuthConfig::new("http://localhost:3000/callback", move |url: String| {
        let browser = browser.clone();
        async move {
            let response = browser.get(&url).send().await.map_err(|e| format!("GET {url}: {e}"))?;
            let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
            location
                .map(str::to_owned)
                .ok_or_else(|| format!("GET {url}: HTTP {} without a redirect", response.status()))
        }
    })
    .client_name("switchyard-conformance-client")
    .client_metadata_url("https://conformance-test.local/client-metadata.json");
    match scenario {
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => {
            let context = context()?;
            let text = |key: &str| context.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            return Ok(if scenario.ends_with("basic") {
                OAuthConfig::client_credentials(text("client_id"), text("client_secret"))
            } else {
                let algorithm = Some(text("signing_algorithm")).filter(|a| !a.is_empty()).unwrap_or("ES256".into());
                OAuthConfig::client_credentials_jwt(text("client_id"), text("private_key_pem"), algorithm)
            });
        }
        "auth/wif-jwt-bearer" => {
            let context = context()?;
            let text = |key: &str| context.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            let token = text("valid_jwt");
            let workload = OAuthConfig::workload_identity(move |_audience: String| {
                let token = token.clone();
                async move { Ok(token) }
            });
            return Ok(workload.pre_registered(text("client_id"), None));
        }
        "auth/enterprise-managed-authorization" => {
            let context = context()?;
            let text = |key: &str| context.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            let id_token = text("idp_id_token");
            let idp = IdentityProvider::new(text("idp_token_endpoint"), text("idp_client_id"), move |_: String| {
                let id_token = id_token.clone();
                async move { Ok(id_token) }
            });
            return Ok(OAuthConfig::enterprise_managed(idp, text("client_id"), Some(text("client_secret"))));
        }
        _ => {}
    }
    if scenario == "auth/pre-registration" {
        let context = context()?;
        let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
        let id = text("client_id").ok_or_else(|| ClientError::Protocol("no client_id in the context".into()))?;
        config = config.pre_registered(id, text("client_secret"));
    }
    Ok(config)
}

async fn scenario_calls(scenario: &str, client: &Client) -> Result<(), ClientError> {
    if scenario.starts_with("auth/") {
        return call_every_tool(client).await;
    }
    match scenario {
        "initialize" => client.list_tools().await.map(drop),
        "tools_call" | "tools-call" | "sse-retry" | "elicitation-sep1034-client-defaults" => {
            call_every_tool(client).await
        }
        "request-metadata" | "json-schema-ref-no-deref" => client.list_tools().await.map(drop),
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let Some(focal) = tools.iter().find(|t| t.name == "json_schema_2020_12_tool") else {
                return Err(ClientError::Protocol("json_schema_2020_12_tool is not listed".into()));
            };
            client.call_tool("json_schema_echo", json!({ "schema": focal.input_schema })).await.map(drop)
        }
        "sep-2322-client-request-state" => {
            for tool in ["test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"] {
                client.call_tool(tool, json!({})).await?;
            }
            Ok(())
        }
        "http-standard-headers" => {
            call_every_tool(client).await?;
            if let Some(resource) = client.list_resources().await?.first() {
                client.read_resource(&resource.uri).await?;
            }
            if let Some(prompt) = client.list_prompts().await?.first() {
                client.get_prompt(&prompt.name, std::iter::empty::<(String, String)>()).await?;
            }
            Ok(())
        }
        "http-custom-headers" => {
            client.list_tools().await?;
            for call in context_tool_calls()? {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                client.call_tool(name, call.get("arguments").cloned().unwrap_or_else(|| json!({}))).await?;
            }
            Ok(())
        }
        "http-invalid-tool-headers" => call_every_tool(client).await,
        skills if skills.starts_with("sep-2640-client-") => skills_scenario(skills, client).await,
        other => Err(ClientError::Protocol(format!("scenario {other:?} is not supported by this client yet"))),
    }
}

/// The Skills extension as a host uses it (SEP-2640): list the skills, then, except in the
/// no-prefetch scenario (which grades that listing reads nothing), load each one as if the user
/// had activated it and read its supporting files. Loading verifies `SKILL.md` against the entry
/// (size, digest, frontmatter); a failure is an error exit, which the verify scenarios expect,
/// and nothing of that skill is read after it.
async fn skills_scenario(scenario: &str, client: &Client) -> Result<(), ClientError> {
    use switchyard_skills::client::{SkillError, list_skills, load_skill, server_declares_skills};
    let failed = |e: SkillError<ClientError>| match e {
        SkillError::Request { source, .. } => source,
        refused => ClientError::Protocol(refused.to_string()),
    };
    if !server_declares_skills(client.capabilities()) {
        return Err(ClientError::Protocol("the server does not declare io.modelcontextprotocol/skills".into()));
    }
    let skills = list_skills(client).await.map_err(failed)?;
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    for entry in &skills {
        let skill = load_skill(client, entry).await.map_err(failed)?;
        for file in skill.files() {
            skill.read(client, &file.uri).await.map_err(failed)?;
        }
    }
    Ok(())
}

/// Lists the tools and calls each with arguments made up from its schema.
async fn call_every_tool(client: &Client) -> Result<(), ClientError> {
    for tool in client.list_tools().await? {
        client.call_tool(&tool.name, sample_arguments(&tool.input_schema)).await?;
    }
    Ok(())
}

/// A value for each property of an object schema: `2` and `3` for the first numbers (the
/// suite's `add_numbers`), a word for strings, `true` for booleans.
fn sample_arguments(schema: &Value) -> Value {
    let mut numbers = [2, 3].into_iter().chain(std::iter::repeat(1));
    let properties = schema.get("properties").and_then(Value::as_object);
    let arguments: Map<String, Value> = properties
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| {
            let value = match property.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => json!(numbers.next()),
                Some("string") => json!("us-west1"),
                Some("boolean") => json!(true),
                _ => return None,
            };
            Some((name.clone(), value))
        })
        .collect();
    Value::Object(arguments)
}

/// `toolCalls` of the scenario's context: `[{"name":..,"arguments":{..}}]`.
fn context_tool_calls() -> Result<Vec<Value>, ClientError> {
    Ok(context()?.get("toolCalls").and_then(Value::as_array).cloned().unwrap_or_default())
}

/// The scenario's data, `MCP_CONFORMANCE_CONTEXT`.
fn context() -> Result<Value, ClientError> {
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .map_err(|_| ClientError::Protocol("MCP_CONFORMANCE_CONTEXT is not set".into()))?;
    serde_json::from_str(&context)
        .map_err(|e| ClientError::Protocol(format!("MCP_CONFORMANCE_CONTEXT is no JSON: {e}")))
}
