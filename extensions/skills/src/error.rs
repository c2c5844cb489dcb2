use std::path::PathBuf;

/// Why a skills folder (or an embedded one) could not be loaded. Every message names the file
/// or folder at fault; [`LoadError::Several`] carries every problem found in one pass.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A skill breaks a rule of SEP-2640 or of the Agent Skills specification.
    #[error("{file}: {reason}")]
    Invalid {
        /// The file or folder at fault, as found (e.g. `skills/pdf-processing/SKILL.md`).
        file: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Several problems, each on its own line.
    #[error("{}", join(.0))]
    Several(Vec<LoadError>),
}

fn join(errors: &[LoadError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

impl LoadError {
    pub(crate) fn invalid(file: impl Into<String>, reason: impl Into<String>) -> Self {
        LoadError::Invalid { file: file.into(), reason: reason.into() }
    }

    /// `None` for no errors, the error itself for one, [`LoadError::Several`] for more.
    pub(crate) fn from_all(mut errors: Vec<LoadError>) -> Option<LoadError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(LoadError::Several(errors)),
        }
    }
}
