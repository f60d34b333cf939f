//! The reference MCP server `server-everything` serving streamable HTTP on a free
//! loopback port ([`HttpEverything`]), and a listener that accepts connections and
//! never answers ([`Silent`]), for the tests of `url` servers.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use crate::mcp::everything_entry;

/// A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// server-everything over streamable HTTP (`node dist/index.js streamableHttp`,
/// its port from `PORT`), ready once it said it listens; killed when dropped.
pub struct HttpEverything {
    child: Option<Child>,
    port: u16,
}

impl HttpEverything {
    /// Starts it, or `None` (skipped loudly) when it is not installed.
    pub fn start() -> Option<HttpEverything> {
        let entry = everything_entry()?;
        let port = free_port();
        let mut child = Command::new("node")
            .arg(&entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut said = Vec::new();
        let ready = loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("listening on port") => break true,
                Some(Ok(line)) => said.push(line),
                _ => break false,
            }
        };
        assert!(
            ready,
            "server-everything did not start: {}",
            said.join("\n")
        );
        // Whatever it writes later is drained, so that it never blocks on a pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Some(HttpEverything {
            child: Some(child),
            port,
        })
    }

    /// Its endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Stops it (and waits for it to be gone): its port no longer answers.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A listener on 127.0.0.1 that accepts connections and never answers: a server
/// that hangs. It stops listening when dropped.
pub struct Silent {
    listener: TcpListener,
}

impl Silent {
    pub fn start() -> Silent {
        Silent {
            listener: TcpListener::bind("127.0.0.1:0").unwrap(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.listener.local_addr().unwrap())
    }
}
