//! The real agents, installed from the npm registry at pinned versions
//! into a cache directory shared by every test run
//! (`$AILERON_AGENTS_CACHE`, default `~/.cache/aileron-test-agents`).
//!
//! When the registry cannot be reached the tests that need an agent are
//! skipped with a message, except in CI (`CI` set), where they fail.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// An agent's npm package at the version the tests pin.
#[derive(Clone, Copy, Debug)]
pub struct Package {
    pub name: &'static str,
    pub version: &'static str,
    /// The program in `node_modules/.bin`.
    pub bin: &'static str,
}

pub const CLAUDE_CODE: Package = Package {
    name: "@anthropic-ai/claude-code",
    version: "2.1.330",
    bin: "claude",
};
pub const CODEX: Package = Package {
    name: "@openai/codex",
    version: "0.169.0",
    bin: "codex",
};
pub const GEMINI_CLI: Package = Package {
    name: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
};
pub const OPENCODE: Package = Package {
    name: "opencode-ai",
    version: "1.18.33",
    bin: "opencode",
};

/// The reference filesystem MCP server (`aileron mcp`'s tests).
pub const MCP_FILESYSTEM: Package = Package {
    name: "@modelcontextprotocol/server-filesystem",
    version: "2026.8.31",
    bin: "mcp-server-filesystem",
};

pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("AILERON_AGENTS_CACHE") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    base.join("aileron-test-agents")
}

impl Package {
    /// The installed program, installing the package first if needed.
    /// `None` (after printing why) when it cannot be installed outside CI.
    pub fn installed(&self) -> Option<PathBuf> {
        let dir = cache_dir().join(format!(
            "{}_{}",
            self.name.replace(['/', '@'], "_"),
            self.version
        ));
        let bin = dir.join("node_modules/.bin").join(self.bin);
        // Written once the install finished, so a half-done one is not used.
        let done = dir.join(".installed");
        if done.exists() && bin.exists() {
            return Some(bin);
        }
        std::fs::create_dir_all(&dir).expect("create the agents' cache");
        // Several test binaries may install the same package at once: one
        // lock file per package, taken with flock(1).
        let lock = dir.join(".install.lock");
        let spec = format!("{}@{}", self.name, self.version);
        let out = Command::new("flock")
            .arg(&lock)
            .args([
                "sh",
                "-c",
                "[ -e \"$0\" ] || { npm \"$@\" && touch \"$0\"; }",
            ])
            .arg(&done)
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&dir)
            .arg(&spec)
            .output();
        match out {
            Ok(o) if o.status.success() && done.exists() && bin.exists() => Some(bin),
            Ok(o) => skip_or_fail(&format!(
                "npm install {spec} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => skip_or_fail(&format!("cannot run npm to install {spec}: {e}")),
        }
    }
}

pub fn skip_or_fail(why: &str) -> Option<PathBuf> {
    if std::env::var_os("CI").is_some() {
        panic!("{why} (the agents' tests are never skipped in CI)");
    }
    eprintln!("SKIPPED: {why}; the npm registry is needed for the real agents' tests");
    None
}
