//! Compile time and start-up: a generated crate with T tools, once on Switchyard's
//! `#[mcp_tool]` and once on rmcp's `#[tool]`, built in release mode in a target directory of
//! their own (`target/bench-compile`).
//!
//! "Clean build" is the generated crate itself after `cargo clean -p` (its dependencies were
//! built once before, untimed): that is where the two macro systems differ. "Incremental" is
//! the rebuild after changing the body of one tool.

use crate::Res;
use crate::load_stdio::INITIALIZE;
use crate::proc::{SERVER_CPU, pinned};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The two generated crates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// `switchyard` with `#[mcp_tool]`.
    Ours,
    /// `rmcp` with `#[tool_router]` / `#[tool]`.
    Rmcp,
}

impl Framework {
    fn name(self) -> &'static str {
        match self {
            Framework::Ours => "gen-ours",
            Framework::Rmcp => "gen-rmcp",
        }
    }
}

/// The generated crates and their shared target directory.
pub struct Workbench {
    root: PathBuf,
    target: PathBuf,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

impl Workbench {
    /// Writes both crates with `tools` tools each under `target/bench-compile`.
    pub fn generate(tools: usize) -> Res<Workbench> {
        let ws = workspace_root();
        let root = ws.join("target").join("bench-compile");
        let target = root.join("target");
        for fw in [Framework::Ours, Framework::Rmcp] {
            let dir = root.join(fw.name());
            std::fs::create_dir_all(dir.join("src"))?;
            // The workspace lock file pins the same dependency versions as the harness.
            std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock"))?;
            write_if_changed(&dir.join("Cargo.toml"), &manifest(fw, &ws))?;
            write_if_changed(&dir.join("src").join("main.rs"), &source(fw, tools, 1))?;
        }
        Ok(Workbench { root, target })
    }

    fn cargo(&self, fw: Framework, args: &[&str]) -> Res<Duration> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = self.root.join(fw.name()).join("Cargo.toml");
        let start = Instant::now();
        // Both cores for the compiler (the harness itself is pinned to one).
        let out = pinned("0-1", Path::new(&cargo), args)
            .arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &self.target)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        let took = start.elapsed();
        if !out.status.success() {
            return Err(
                format!("cargo {args:?} for {} failed:\n{}", fw.name(), String::from_utf8_lossy(&out.stderr)).into()
            );
        }
        Ok(took)
    }

    /// Builds `fw` with its dependencies (untimed preparation).
    pub fn warm(&self, fw: Framework) -> Res<()> {
        self.cargo(fw, &["build", "--release", "--offline"])?;
        Ok(())
    }

    /// Removes the crate's own artifacts and times `cargo build --release`.
    pub fn clean_build(&self, fw: Framework) -> Res<Duration> {
        self.cargo(fw, &["clean", "--release", "--offline", "-p", fw.name()])?;
        self.cargo(fw, &["build", "--release", "--offline"])
    }

    /// Changes the body of one tool (`revision` goes into its text) and times the rebuild.
    pub fn touch_one_tool(&self, fw: Framework, tools: usize, revision: usize) -> Res<Duration> {
        let path = self.root.join(fw.name()).join("src").join("main.rs");
        std::fs::write(path, source(fw, tools, revision))?;
        self.cargo(fw, &["build", "--release", "--offline"])
    }

    /// The built server binary of `fw`.
    pub fn binary(&self, fw: Framework) -> PathBuf {
        self.target.join("release").join(fw.name())
    }
}

fn write_if_changed(path: &Path, text: &str) -> Res<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

fn manifest(fw: Framework, ws: &Path) -> String {
    let framework = match fw {
        Framework::Ours => {
            format!("switchyard = {{ package = \"switchyard-mcp\", path = {:?} }}", ws.join("runtime").display().to_string())
        }
        Framework::Rmcp => {
            r#"rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros", "transport-io"] }"#
                .to_owned()
        }
    };
    format!(
        "[package]\nname = \"{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n\
         [dependencies]\n{framework}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
         schemars = \"1\"\ntokio = {{ version = \"1\", features = [\"full\"] }}\n",
        fw.name()
    )
}

/// The crate source: `tools` tools, each with its own argument struct, as a user would write
/// them in each framework. `revision` changes the body of tool 0 only.
pub fn source(fw: Framework, tools: usize, revision: usize) -> String {
    let mut s = String::new();
    let args = |s: &mut String, i: usize, derive: &str| {
        let _ = write!(
            s,
            "/// Arguments of tool_{i}.\n#[derive({derive})]\nstruct Args{i} {{\n    /// The text to use.\n    text: String,\n    \
             /// How many times.\n    count: Option<u32>,\n}}\n\n"
        );
    };
    let body = |i: usize| {
        let rev = if i == 0 { revision } else { 1 };
        format!("format!(\"tool_{i} r{rev}: {{}} x{{}}\", args.text, args.count.unwrap_or(1))")
    };
    match fw {
        Framework::Ours => {
            s.push_str("use switchyard::prelude::*;\n\n");
            for i in 0..tools {
                args(&mut s, i, "serde::Deserialize, schemars::JsonSchema");
                let _ = write!(
                    s,
                    "/// Tool number {i}.\n#[mcp_tool]\nasync fn tool_{i}(args: Args{i}) -> Result<String, ToolError> {{\n    \
                     Ok({})\n}}\n\n",
                    body(i)
                );
            }
            s.push_str(
                "#[tokio::main]\nasync fn main() -> std::process::ExitCode {\n    \
                 match Server::builder(\"gen-ours\", \"0\").build() {\n        \
                 Ok(server) => switchyard::cli::run(server).await,\n        \
                 Err(e) => { eprintln!(\"{e}\"); std::process::ExitCode::FAILURE }\n    }\n}\n",
            );
        }
        Framework::Rmcp => {
            s.push_str(
                "use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};\n\
                 use rmcp::model::{ServerCapabilities, ServerConfig};\n\
                 use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};\n\n",
            );
            for i in 0..tools {
                args(&mut s, i, "Debug, serde::Deserialize, schemars::JsonSchema");
            }
            s.push_str(
                "#[derive(Clone)]\nstruct Gen {\n    tool_router: ToolRouter<Self>,\n}\n\n#[tool_router]\nimpl Gen {\n",
            );
            s.push_str("    fn new() -> Self {\n        Gen { tool_router: Self::tool_router() }\n    }\n\n");
            for i in 0..tools {
                let _ = write!(
                    s,
                    "    /// Tool number {i}.\n    #[tool(description = \"Tool number {i}.\")]\n    \
                     async fn tool_{i}(&self, Parameters(args): Parameters<Args{i}>) -> String {{\n        {}\n    }}\n\n",
                    body(i)
                );
            }
            s.push_str(
                "}\n\n#[tool_handler]\nimpl ServerHandler for Gen {\n    fn get_info(&self) -> ServerConfig {\n        \
                 ServerConfig::new(ServerCapabilities::builder().enable_tools().build())\n    }\n}\n\n\
                 #[tokio::main]\nasync fn main() -> Result<(), Box<dyn std::error::Error>> {\n    \
                 let service = Gen::new().serve(rmcp::transport::stdio()).await?;\n    \
                 service.waiting().await?;\n    Ok(())\n}\n",
            );
        }
    }
    s
}

/// Time from spawning `program args` (pinned to the server CPU) to reading its answer to
/// `initialize` on stdout, in milliseconds.
pub fn startup_ms(program: &Path, args: &[&str]) -> Res<f64> {
    let start = Instant::now();
    let mut child =
        pinned(SERVER_CPU, program, args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "{INITIALIZE}")?;
    stdin.flush()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
    let took = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    if !line.contains("\"result\"") {
        return Err(format!("{}: no initialize result: {line}", program.display()).into());
    }
    Ok(took.as_secs_f64() * 1000.0)
}
