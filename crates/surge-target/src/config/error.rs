//! Errors: configuration mistakes (each naming its flag) and failures to serve.
use std::fmt;

/// ConfigError is one invalid setting: the command-line flag it came from and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// flag is the setting's command-line spelling, e.g. `--service-time`.
    pub flag: String,
    /// message says what is wrong and what would be right.
    pub message: String,
}

impl ConfigError {
    /// new builds an error for the setting whose JSON key is `key` (`service_time` is reported
    /// as `--service-time`).
    pub fn new(key: &str, message: impl Into<String>) -> Self {
        Self { flag: flag_of(key), message: message.into() }
    }
}

/// flag_of turns a JSON key such as `service_time` into its flag, `--service-time`.
pub fn flag_of(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.flag, self.message)
    }
}

/// ConfigErrors is every mistake found in one configuration (never empty when returned as an
/// error); its text has one line per mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// TargetError is why [`crate::serve`] could not serve.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Config: the configuration is invalid (every mistake is listed).
    #[error("{0}")]
    Config(#[from] ConfigErrors),
    /// Bind: the listening socket could not be set up on the address.
    #[error("--bind: cannot listen on {addr}: {source}")]
    Bind {
        /// addr is the address asked for.
        addr: std::net::SocketAddr,
        /// source is the operating system's reason.
        source: std::io::Error,
    },
    /// Runtime: a server thread or its event loop could not be started.
    #[error("cannot start the server: {0}")]
    Runtime(std::io::Error),
    /// Internal: a server thread failed unexpectedly (a bug in surge-target).
    #[error("internal error: {0}")]
    Internal(String),
}
