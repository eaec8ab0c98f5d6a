//! A small MCP server on the `rmcp` crate, for the tests and the bench of
//! `aileron mcp` (stdio transport). Every call it receives is appended as a
//! JSON line to `$MCP_TEST_LOG`, when set, so that a test can tell whether
//! a call reached it.
//!
//! Tools: `read_note` (readOnlyHint), `write_note`, `wipe`
//! (destructiveHint), `echo` (answers the length of `text`), `crash` (the
//! server exits with status 3 mid-call), `sample` (asks the client's model:
//! `sampling/createMessage`), `reveal` (lists one more tool, `revealed`,
//! and says so: `notifications/tools/list_changed`). Any resource URI reads
//! as `contents of URI`; any prompt is one user message.
#![allow(deprecated)] // sampling, kept by MCP servers in use

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CreateMessageRequestParams, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    ListToolsResult, PaginatedRequestParams, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, Role, SamplingMessage,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
struct Notes {
    notes: Mutex<HashMap<String, String>>,
    revealed: AtomicBool,
}

fn tool(name: &str, annotations: Value) -> Tool {
    let mut t = json!({
        "name": name,
        "description": format!("the test server's {name}"),
        "inputSchema": {"type": "object"},
    });
    if !annotations.is_null() {
        t["annotations"] = annotations;
    }
    serde_json::from_value(t).expect("a tool")
}

fn record(method: &str, params: Value) {
    if let Some(path) = std::env::var_os("MCP_TEST_LOG") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("the call log");
        // One write, so that calls at once never mix their lines.
        let line = json!({"method": method, "params": params}).to_string() + "\n";
        f.write_all(line.as_bytes()).expect("the call log");
    }
}

fn text(s: impl Into<String>) -> Result<CallToolResponse, McpError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s.into())]).into())
}

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = vec![
            tool("read_note", json!({"readOnlyHint": true})),
            tool("write_note", Value::Null),
            tool("wipe", json!({"destructiveHint": true})),
            tool("echo", json!({"readOnlyHint": true})),
            tool("crash", Value::Null),
            tool("sample", Value::Null),
            tool("reveal", Value::Null),
        ];
        if self.revealed.load(Ordering::SeqCst) {
            tools.push(tool("revealed", Value::Null));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        record(
            "tools/call",
            json!({"name": request.name, "arguments": args}),
        );
        let arg = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut notes = self.notes.lock().unwrap();
        match request.name.as_ref() {
            "read_note" => text(notes.get(&arg("name")).cloned().unwrap_or_default()),
            "write_note" => {
                notes.insert(arg("name"), arg("text"));
                text("written")
            }
            "wipe" => {
                notes.clear();
                text("wiped")
            }
            "echo" => text(format!("{} bytes", arg("text").len())),
            "crash" => std::process::exit(3),
            "sample" => {
                drop(notes);
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
                match context.peer.create_message(params).await {
                    Ok(r) => text(format!("the model {} answered", r.model)),
                    Err(e) => text(format!("sampling failed: {e}")),
                }
            }
            "reveal" => {
                drop(notes);
                self.revealed.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("revealed")
            }
            "revealed" => text("you found it"),
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        record("resources/read", json!({"uri": request.uri}));
        let uri = request.uri.clone();
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            format!("contents of {uri}"),
            uri,
        )])
        .into())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        record("prompts/get", json!({"name": request.name}));
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("the prompt {}", request.name),
        )])
        .into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Notes::default().serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
