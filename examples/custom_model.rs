//! A router model of your own, plugged in through `turnout::model::Model`.
//!
//! This one asks nobody: it calls the first offered tool whose id is written in the message
//! (`please run web_search for rust`), and otherwise no tool. A real backend would call an
//! in-house model here. The engine still owns the timeout (`router.timeout_ms`) and validates
//! whatever the backend returns, so a backend only has to talk to its model.
//!
//! ```sh
//! cargo run --example custom_model -- 'please run web_search for rust tutorials'
//! ```

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use turnout::model::{Model, ModelAnswer, ModelError, RawCall, RouterInput};

/// Calls the first tool named in the message.
struct ToolByName;

#[async_trait]
impl Model for ToolByName {
    fn name(&self) -> &str {
        "tool-by-name"
    }

    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        let message = input.message();
        // Only the tools available in this context are offered; nothing else may be called.
        let calls = input
            .tools
            .iter()
            .find(|t| message.contains(&*t.id))
            .map(|t| RawCall {
                tool: t.id.to_string(),
                // Arguments failing the tool's schema make the engine answer in plain chat.
                arguments: json!({"query": message}),
            })
            .into_iter()
            .collect();
        Ok(ModelAnswer {
            calls,
            ..Default::default()
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let message = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "please run web_search for rust tutorials".to_owned());
    let loaded = turnout::compile::load_dir("rules".as_ref());
    let rules = loaded.ruleset.ok_or("the rules in ./rules do not load")?;
    let request = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": message}]
    }))?;
    // Dependencies go in as trait objects: the service would hold an Arc<dyn Model>.
    let model: Arc<dyn Model> = Arc::new(ToolByName);
    let decision = turnout::engine::decide(
        &rules,
        &request,
        turnout::engine::Options::model(Some(model.as_ref())),
    )
    .await?;
    println!("{}", serde_json::to_string_pretty(&decision)?);
    Ok(())
}
